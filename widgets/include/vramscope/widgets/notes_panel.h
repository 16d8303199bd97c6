#pragma once
// The Notes dock: the notes of the job in number order, with buttons to add, edit, delete and
// place notes for what the analyses found.

#include <QWidget>

#include <string>
#include <vector>

class QLabel;
class QToolButton;
class QTableView;

namespace vramscope::widgets {

class NotesModel;

/// Lists a NotesModel (not owned) and turns the user's gestures into requests: a click asks to
/// jump to the note, a double-click or Edit to edit it, the Delete key or Delete to remove the
/// selected notes. It changes nothing itself; the owner (the app's notes controller) acts. GUI
/// thread only.
class NotesPanel : public QWidget {
    Q_OBJECT
public:
    explicit NotesPanel(NotesModel* model, QWidget* parent = nullptr);

    QTableView* table() const { return m_table; }
    /// Ids of the selected notes, in row order.
    std::vector<std::string> selectedIds() const;
    /// Selects the note with `id` (and scrolls to it); nothing when it is not listed.
    void selectNote(const std::string& id);
    /// A line under the list (e.g. that notes stay in memory); empty hides it.
    void setInfo(const QString& text);
    QString info() const;

    QToolButton* addButton() const { return m_add; }
    QToolButton* editButton() const { return m_edit; }
    QToolButton* deleteButton() const { return m_delete; }
    QToolButton* findingsButton() const { return m_findings; }

signals:
    void jumpRequested(const QString& id);
    void editRequested(const QString& id);
    void deleteRequested();
    void addRequested();
    void findingsRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void updateButtons();

    NotesModel* m_model;
    QTableView* m_table;
    QLabel* m_info;
    QToolButton* m_add;
    QToolButton* m_edit;
    QToolButton* m_delete;
    QToolButton* m_findings;
};

}  // namespace vramscope::widgets
