#pragma once
// File > Attach to Running Job…: this user's live jobs (trace::live::listSockets and each one's
// hello), grouped by job id; the user picks one rank, several, or a whole job.

#include <QDialog>
#include <QStringList>

class QTreeWidget;
class QLabel;

namespace vramscope::app {

class AttachDialog : public QDialog {
    Q_OBJECT
public:
    explicit AttachDialog(QWidget* parent = nullptr);

    /// The sockets of the chosen processes (a job's row stands for all its ranks).
    QStringList selectedSockets() const;
    /// Lists the live jobs again (done once on construction); sockets of dead processes are
    /// removed on the way.
    void refresh();
    /// Rows listed (processes), for tests.
    int processCount() const;

private:
    QTreeWidget* m_tree = nullptr;
    QLabel* m_status = nullptr;
};

}  // namespace vramscope::app
