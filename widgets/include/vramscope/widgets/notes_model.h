#pragma once
// The notes of the open job as a table for the Notes dock, with every change (add, edit, delete)
// an undoable command on the model's QUndoStack.

#include <QAbstractTableModel>

#include <memory>
#include <string>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"

class QUndoStack;

namespace vramscope::widgets {

/// Holds the notes of one job in the display order (noteDisplayLess: row k is note number k+1),
/// as plain values. Changes made through addNote / addNotes / editNote / removeNotes go on
/// undoStack() and can be undone and redone; setNotes (a job or a sidecar loaded) resets the
/// stack. Ids are "n1", "n2", ... and stay unique: a new note gets one more than the highest
/// "n<number>" id held. GUI thread only; owns its undo stack.
class NotesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NumberColumn = 0, TitleColumn, TimeColumn, GpuColumn, AuthorColumn, ColumnCount };
    /// The note's id (QString) on every column.
    static constexpr int IdRole = Qt::UserRole + 1;

    explicit NotesModel(QObject* parent = nullptr);
    ~NotesModel() override;

    /// The job whose GPU names and duration the table uses to write GPUs and times; may be null.
    void setJob(std::shared_ptr<const analysis::JobModel> job);

    /// Replaces every note (e.g. read from a sidecar) and clears the undo history. Notes without
    /// an id, or with an id already taken, get a new one.
    void setNotes(std::vector<trace::Note> notes);
    /// All notes, in the display order.
    const std::vector<trace::Note>& notes() const { return m_notes; }
    /// The note with `id`, or null.
    const trace::Note* find(const std::string& id) const;
    /// Row of the note with `id`, or -1.
    int rowOf(const std::string& id) const;

    /// Adds `note` as one undo step ("Add note"); an empty or taken id is replaced by a new one.
    /// Returns the id it was added under.
    std::string addNote(trace::Note note);
    /// Adds all of `notes` as one undo step named `what` (e.g. "Place notes for findings").
    /// Returns their ids, in the order given.
    std::vector<std::string> addNotes(std::vector<trace::Note> notes, const QString& what);
    /// Replaces the note with `note.id` by `note` as one undo step; false when no note has that
    /// id or nothing changed.
    bool editNote(const trace::Note& note);
    /// Removes the notes with these ids as one undo step; false when none of them is held.
    bool removeNotes(const std::vector<std::string>& ids);

    QUndoStack* undoStack() const { return m_undo; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

signals:
    /// Any change of the notes: a command done, undone or redone, or setNotes.
    void notesChanged();

private:
    class Command;
    friend class Command;
    /// The commands' one way in: replaces the notes with these ids by `after` (missing ids are
    /// added, ids absent from `after` removed) and re-sorts.
    void apply(const std::vector<std::string>& ids, const std::vector<trace::Note>& after);
    std::string nextId();
    QString gpuText(const trace::Note& note) const;

    std::vector<trace::Note> m_notes;
    std::shared_ptr<const analysis::JobModel> m_job;
    QUndoStack* m_undo;
    int m_lastNumber = 0;  ///< highest n<number> id handed out or held
};

}  // namespace vramscope::widgets
