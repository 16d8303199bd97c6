#pragma once
// The Details dock: what is alive on the clicked GPU at the clicked time, and the role of memory
// and the stack of the allocation selected in that list.

#include <QWidget>

#include <vector>

#include "vramscope/widgets/live_set_model.h"

class QLabel;
class QListView;
class QStringListModel;
class QTableView;

namespace vramscope::widgets {

/// Shows a LiveSetModel (largest first) with a heading, and the role (roleLines) and full stack of
/// the selected row.
/// GUI thread only; it is handed finished rows and computes nothing.
class DetailsPanel : public QWidget {
    Q_OBJECT
public:
    explicit DetailsPanel(QWidget* parent = nullptr);

    /// Shows `rows` under `heading` (e.g. "rank 0 · GPU 0 at 1.20 s: 312 allocations, 6.1 GiB").
    void setLiveSet(const QString& heading, std::vector<LiveRow> rows);
    /// Empties the list and shows `message` instead.
    void clear(const QString& message);

    /// The heading (or the message of clear()) as shown, rich text.
    QString headingText() const;

    LiveSetModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    /// The stack shown for the selected row, innermost frame first.
    QStringList shownStack() const;
    /// The role lines shown for the selected row (roleLines), empty without a selection.
    QString shownRole() const;

signals:
    /// "Add note for this allocation" was chosen in the context menu of row `row` of model().
    void allocationNoteRequested(int row);

private:
    void showStackOf(int row);

    QLabel* m_heading = nullptr;
    QTableView* m_table = nullptr;
    LiveSetModel* m_model = nullptr;
    QLabel* m_role = nullptr;
    QLabel* m_stackHeading = nullptr;
    QListView* m_stack = nullptr;
    QStringListModel* m_stackModel = nullptr;
};

}  // namespace vramscope::widgets
