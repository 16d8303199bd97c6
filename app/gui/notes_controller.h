#pragma once
// The notes of the open job in the main window: the Notes dock, the Notes and Edit menus (add,
// edit, delete, undo, redo, notes for findings), the context menus that add notes, the views'
// markers, and the sidecar beside the trace that keeps them.

#include <QMenu>
#include <QObject>
#include <QPointer>
#include <QString>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"
#include "vramscope/widgets/zoom_state.h"

class QAction;
class QDockWidget;
class QThread;
class QTimer;

namespace vramscope::widgets {
class NotesModel;
class NotesPanel;
}  // namespace vramscope::widgets

namespace vramscope::app {

class MainWindow;

/// Owns the notes model of the window's job and keeps every view's markers in step with it.
/// When a job opened from files arrives, a worker thread hashes its trace files
/// (trace::identifyTrace) and reads trace::notesSidecarPath(inputs); the notes are shown when the
/// sidecar belongs to those traces (trace::checkNotesBelongTo) and refused with a message
/// naming the file when not. Changes are written back about a second after the last one and when
/// the window closes or another job opens; the bundled sample, standard input and refused
/// sidecars keep their notes in memory. A QObject child of the window; GUI thread only.
class NotesController : public QObject {
    Q_OBJECT
public:
    /// Milliseconds between the last change and the sidecar being written.
    static constexpr int kSaveDelayMs = 1000;

    explicit NotesController(MainWindow* window);
    ~NotesController() override;

    widgets::NotesModel* model() const { return m_model; }
    widgets::NotesPanel* panel() const { return m_panel; }
    QDockWidget* dock() const { return m_dock; }
    QAction* addPointAction() const { return m_addPoint; }
    QAction* addRangeAction() const { return m_addRange; }
    QAction* findingsAction() const { return m_findings; }
    QAction* undoAction() const { return m_undoAction; }
    QAction* redoAction() const { return m_redoAction; }
    /// The context menu last opened on a plot or a lane (for tests); null before the first.
    QMenu* lastContextMenu() const { return m_lastMenu; }

    /// The sidecar the notes are written to; empty while they stay in memory.
    const QString& sidecarPath() const { return m_saveTo; }
    /// Waits for the current job's sidecar to be identified and read, and applies it now (the
    /// screenshot path renders right after loading; tests).
    void waitForSidecar();
    /// Writes unsaved changes now. False (and a status bar message naming the file) when the
    /// write failed; true when written or nothing was to be written.
    bool saveNow();

    /// M: a point note at the cursor, else at the selected GPU's clicked time, else at the middle
    /// of the visible range; for every GPU. Returns its id.
    std::string addPointNote();
    /// Shift+M: a range note for the selection, for every GPU; empty (and a status bar hint)
    /// without a selection.
    std::string addRangeNote();
    /// A note at `timeNs` (a point) or over `range` (when not empty), pinned to `gpu` when it is
    /// valid; author and creation time are filled in. Returns its id.
    std::string addNote(trace::Note note);
    /// Places notes for the analyses' findings (analysis::autoNotes) as one undo step, leaving
    /// out findings already noted by a generated note of the same kind, time and GPU. Returns
    /// how many were added.
    int placeFindings();
    /// Opens the edit dialog of the note (window-modal, not blocking); the change is one undo
    /// step when accepted.
    void editNote(const std::string& id);
    /// Centres the visible range on the note, selects its range (a point clears the selection)
    /// and its GPU at its start.
    void jumpTo(const std::string& id);

signals:
    /// A sidecar was applied (loaded, refused or found absent) for the current job.
    void sidecarApplied();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Loaded;
    void createActions();
    void createMenus();
    void connectViews();
    void onJobChanged(std::shared_ptr<const analysis::JobModel> job);
    void applyLoaded(const std::shared_ptr<Loaded>& loaded);
    void onNotesChanged();
    void showTimeMenu(QPoint globalPos, int64_t timeNs, analysis::GpuKey gpu);
    void addAllocationNote(int row);
    void deleteSelected();
    void keepInMemory(const QString& why);
    /// Writes the notes to m_saveTo; clears m_dirty when written.
    trace::Status writeSidecar();

    MainWindow* m_window;
    widgets::ZoomState* m_zoom;
    widgets::NotesModel* m_model;
    widgets::NotesPanel* m_panel;
    QDockWidget* m_dock;
    QTimer* m_saveTimer;
    QAction* m_addPoint = nullptr;
    QAction* m_addRange = nullptr;
    QAction* m_edit = nullptr;
    QAction* m_delete = nullptr;
    QAction* m_findings = nullptr;
    QAction* m_undoAction = nullptr;
    QAction* m_redoAction = nullptr;
    QPointer<QMenu> m_lastMenu;

    std::shared_ptr<const analysis::JobModel> m_job;
    uint64_t m_generation = 0;  ///< one per job; a worker's result for an older one is dropped
    QThread* m_worker = nullptr;
    std::shared_ptr<Loaded> m_pending;  ///< the running worker's result, filled by it
    QString m_saveTo;                   ///< sidecar path once the traces are identified
    std::vector<trace::TraceIdentity> m_identities;
    bool m_dirty = false;
    bool m_applying = false;  ///< setNotes from a sidecar: not a change to save
};

}  // namespace vramscope::app
