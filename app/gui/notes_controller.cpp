#include "notes_controller.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QThread>
#include <QTimer>
#include <QUndoStack>

#include <algorithm>
#include <set>

#include "analysis_views.h"
#include "main_window.h"
#include "vramscope/analysis/advice/auto_notes.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/details_panel.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/note_dialog.h"
#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/notes_model.h"
#include "vramscope/widgets/notes_panel.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/units.h"

namespace vramscope::app {

/// What the worker found for one job: the traces' identities and the sidecar's notes, or why
/// the notes stay in memory.
struct NotesController::Loaded {
    uint64_t generation = 0;
    std::vector<std::string> inputs;
    std::vector<std::string> rankPaths;
    std::string sidecar;  ///< where the notes live (empty: nowhere)
    std::vector<trace::TraceIdentity> identities;
    std::string identifyError;  ///< a file could not be hashed: notes stay in memory
    bool exists = false;
    std::string readError;  ///< the sidecar could not be read (it is left as it is)
    std::string refusal;    ///< the sidecar names other traces (it is left as it is)
    std::vector<trace::Note> notes;
    size_t skipped = 0;
};

namespace {

std::string userName() {
    QString name = qEnvironmentVariable("USER");
    if (name.isEmpty()) {
        name = qEnvironmentVariable("USERNAME");
    }
    return name.toStdString();
}

}  // namespace

NotesController::NotesController(MainWindow* window)
    : QObject(window),
      m_window(window),
      m_zoom(window->zoomState()),
      m_model(new widgets::NotesModel(this)),
      m_panel(new widgets::NotesPanel(m_model)),
      m_dock(new QDockWidget(tr("Notes"), window)),
      m_saveTimer(new QTimer(this)) {
    m_dock->setObjectName(QStringLiteral("NotesDock"));
    m_dock->setWidget(m_panel);
    window->addDockWidget(Qt::RightDockWidgetArea, m_dock);
    if (auto* details = window->findChild<QDockWidget*>(QStringLiteral("DetailsDock"))) {
        window->tabifyDockWidget(details, m_dock);
        details->raise();
    }
    m_saveTimer->setSingleShot(true);
    m_saveTimer->setInterval(kSaveDelayMs);
    connect(m_saveTimer, &QTimer::timeout, this, &NotesController::saveNow);
    createActions();
    createMenus();
    connectViews();
    connect(m_model, &widgets::NotesModel::notesChanged, this, &NotesController::onNotesChanged);
    connect(window, &MainWindow::jobChanged, this, &NotesController::onJobChanged);
    window->installEventFilter(this);
    keepInMemory({});
}

NotesController::~NotesController() {
    // The window is being torn down around us: write without telling it.
    if (m_dirty && !m_saveTo.isEmpty()) {
        (void)writeSidecar();
    }
    for (QThread* worker : findChildren<QThread*>()) {
        worker->wait();
    }
}

void NotesController::createActions() {
    m_addPoint = new QAction(tr("Add &Note at the Cursor"), this);
    m_addPoint->setShortcut(QKeySequence(Qt::Key_M));
    connect(m_addPoint, &QAction::triggered, this, [this] { addPointNote(); });
    m_addRange = new QAction(tr("Add Note for the &Selection"), this);
    m_addRange->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_M));
    connect(m_addRange, &QAction::triggered, this, [this] { addRangeNote(); });
    m_edit = new QAction(tr("&Edit Note…"), this);
    connect(m_edit, &QAction::triggered, this, [this] {
        const std::vector<std::string> ids = m_panel->selectedIds();
        if (!ids.empty()) {
            editNote(ids.front());
        }
    });
    m_delete = new QAction(tr("&Delete Note"), this);
    connect(m_delete, &QAction::triggered, this, &NotesController::deleteSelected);
    m_findings = new QAction(tr("&Place Notes for Findings"), this);
    m_findings->setToolTip(
        tr("Notes for the peaks, OOMs, a staircase, the worst straggler and "
           "the longest idle gap, marked as generated"));
    connect(m_findings, &QAction::triggered, this, [this] { placeFindings(); });
    m_undoAction = m_model->undoStack()->createUndoAction(this, tr("&Undo"));
    m_undoAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Z));
    m_redoAction = m_model->undoStack()->createRedoAction(this, tr("&Redo"));
    m_redoAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
    for (QAction* a : {m_addPoint, m_addRange, m_undoAction, m_redoAction}) {
        a->setShortcutContext(Qt::WindowShortcut);
        m_window->addAction(a);
    }
}

void NotesController::createMenus() {
    QMenuBar* bar = m_window->menuBar();
    QAction* viewMenu = nullptr;
    QAction* helpMenu = nullptr;
    QMenu* existingEdit = nullptr;
    for (QAction* a : bar->actions()) {
        const QString title = a->text().remove(QLatin1Char('&'));
        if (title == tr("Edit")) {
            existingEdit = a->menu();
        } else if (title == tr("View")) {
            viewMenu = a;
        } else if (title == tr("Help")) {
            helpMenu = a;
        }
    }
    // Undo and redo head the window's Edit menu (Copy Image is already there).
    if (existingEdit) {
        QAction* first = existingEdit->actions().value(0);
        existingEdit->insertAction(first, m_undoAction);
        existingEdit->insertAction(first, m_redoAction);
        existingEdit->insertSeparator(first);
    } else {
        auto* edit = new QMenu(tr("&Edit"), m_window);
        edit->addAction(m_undoAction);
        edit->addAction(m_redoAction);
        bar->insertMenu(viewMenu, edit);
    }
    auto* notes = new QMenu(tr("&Notes"), m_window);
    notes->setObjectName(QStringLiteral("NotesMenu"));
    notes->addAction(m_addPoint);
    notes->addAction(m_addRange);
    notes->addAction(m_edit);
    notes->addAction(m_delete);
    notes->addSeparator();
    notes->addAction(m_findings);
    notes->addSeparator();
    notes->addAction(m_dock->toggleViewAction());
    bar->insertMenu(helpMenu, notes);

    connect(m_panel, &widgets::NotesPanel::addRequested, this, [this] {
        const std::string id = m_zoom->hasSelection() ? addRangeNote() : addPointNote();
        if (!id.empty()) {
            editNote(id);
        }
    });
    connect(m_panel, &widgets::NotesPanel::editRequested, this,
            [this](const QString& id) { editNote(id.toStdString()); });
    connect(m_panel, &widgets::NotesPanel::deleteRequested, this, &NotesController::deleteSelected);
    connect(m_panel, &widgets::NotesPanel::findingsRequested, this, [this] { placeFindings(); });
    connect(m_panel, &widgets::NotesPanel::jumpRequested, this,
            [this](const QString& id) { jumpTo(id.toStdString()); });
}

void NotesController::connectViews() {
    connect(m_window->timeline(), &widgets::TimelineView::contextMenuRequested, this,
            &NotesController::showTimeMenu);
    connect(m_window->details(), &widgets::DetailsPanel::allocationNoteRequested, this,
            &NotesController::addAllocationNote);
    if (auto* views = m_window->findChild<AnalysisViews*>()) {
        connect(views->lanes(), &widgets::CommLanesView::contextMenuRequested, this,
                &NotesController::showTimeMenu);
        connect(views->flame(), &widgets::FlamePanel::noteRequested, this,
                [this](const trace::Note& note) { addNote(note); });
    }
}

void NotesController::onNotesChanged() {
    const std::vector<trace::Note>& notes = m_model->notes();
    m_window->timeline()->setNotes(notes);
    if (auto* views = m_window->findChild<AnalysisViews*>()) {
        views->lanes()->setNotes(notes);
        views->flame()->setNotes(notes);
    }
    if (!m_applying) {
        m_dirty = true;
        if (!m_saveTo.isEmpty()) {
            m_saveTimer->start();
        }
    }
}

void NotesController::keepInMemory(const QString& why) {
    m_saveTo.clear();
    m_panel->setInfo(why);
}

void NotesController::onJobChanged(std::shared_ptr<const analysis::JobModel> job) {
    saveNow();  // the previous job's notes, to its own sidecar
    m_saveTimer->stop();
    ++m_generation;
    m_job = std::move(job);
    m_identities.clear();
    m_dirty = false;
    m_model->setJob(m_job);
    // A .vscope file written by `convert --notes` carries its notes: shown unless a sidecar of
    // its own replaces them.
    m_applying = true;
    m_model->setNotes(m_job ? analysis::notesInTraces(*m_job) : std::vector<trace::Note>{});
    m_applying = false;
    const QStringList paths = m_window->currentPaths();
    std::vector<std::string> inputs;
    bool fromStdin = false;
    for (const QString& p : paths) {
        inputs.push_back(p.toStdString());
        fromStdin = fromStdin || p == QLatin1String("-");
    }
    if (!m_job || inputs.empty() || fromStdin) {
        keepInMemory(!m_job ? QString()
                     : fromStdin
                         ? tr("Notes of a trace read from standard input stay in memory: there "
                              "is no file to keep them beside.")
                         : tr("Notes of the bundled sample stay in memory: they are not saved."));
        emit sidecarApplied();
        return;
    }
    keepInMemory(tr("Reading the notes of this job…"));
    auto loaded = std::make_shared<Loaded>();
    loaded->generation = m_generation;
    loaded->inputs = inputs;
    for (const trace::RankTrace& r : m_job->job.ranks) {
        loaded->rankPaths.push_back(r.path);
    }
    // Hashing reads every byte of the traces: off the GUI thread.
    QThread* worker = QThread::create([loaded] {
        loaded->sidecar = trace::notesSidecarPath(loaded->inputs);
        trace::Result<std::vector<trace::TraceIdentity>> ids =
            trace::identifyTraces(loaded->rankPaths);
        if (!ids.ok()) {
            loaded->identifyError = ids.error().describe();
            return;
        }
        loaded->identities = std::move(ids.value());
        loaded->exists =
            !loaded->sidecar.empty() && QFileInfo::exists(QString::fromStdString(loaded->sidecar));
        if (!loaded->exists) {
            return;
        }
        trace::Result<trace::NotesDocument> doc =
            trace::readNotesFile(loaded->sidecar, &loaded->skipped);
        if (!doc.ok()) {
            loaded->readError = doc.error().describe();
            return;
        }
        const std::string name =
            QFileInfo(QString::fromStdString(loaded->sidecar)).fileName().toStdString();
        if (const trace::Status belongs =
                trace::checkNotesBelongTo(doc.value(), loaded->identities, name);
            !belongs.ok()) {
            loaded->refusal = belongs.error().describe();
            return;
        }
        loaded->notes = std::move(doc.value().notes);
    });
    worker->setParent(this);  // waited for when the window goes
    m_worker = worker;
    m_pending = loaded;
    connect(worker, &QThread::finished, this, [this, worker, loaded] {
        if (m_worker == worker) {
            m_worker = nullptr;
            m_pending.reset();
            applyLoaded(loaded);
        }
        worker->deleteLater();
    });
    worker->start();
}

void NotesController::waitForSidecar() {
    if (!m_worker) {
        return;
    }
    QThread* worker = m_worker;
    const std::shared_ptr<Loaded> loaded = m_pending;
    worker->wait();
    // The queued finished() then finds m_worker cleared and only deletes the thread.
    m_worker = nullptr;
    m_pending.reset();
    applyLoaded(loaded);
}

void NotesController::applyLoaded(const std::shared_ptr<Loaded>& loaded) {
    if (!loaded || loaded->generation != m_generation) {
        return;
    }
    const QString sidecar = QString::fromStdString(loaded->sidecar);
    QString problem;
    if (loaded->sidecar.empty() || !loaded->identifyError.empty()) {
        keepInMemory(tr("Notes stay in memory: %1")
                         .arg(loaded->identifyError.empty()
                                  ? tr("no place for a notes file beside these inputs.")
                                  : QString::fromStdString(loaded->identifyError)));
    } else if (!loaded->readError.empty() || !loaded->refusal.empty()) {
        problem =
            QString::fromStdString(loaded->refusal.empty() ? loaded->readError : loaded->refusal);
        keepInMemory(tr("Notes stay in memory: %1 is left as it is.").arg(sidecar));
    } else {
        m_identities = loaded->identities;
        m_saveTo = sidecar;
        m_panel->setInfo({});
        if (loaded->exists) {
            // Notes made while the traces were being hashed are kept beside the loaded ones;
            // those the files carried give way to the sidecar's.
            std::vector<trace::Note> notes = loaded->notes;
            const bool madeMeanwhile = m_dirty;
            for (trace::Note n : madeMeanwhile ? m_model->notes() : std::vector<trace::Note>{}) {
                n.id.clear();  // setNotes gives a fresh id where it clashes
                notes.push_back(std::move(n));
            }
            m_applying = true;
            m_model->setNotes(std::move(notes));
            m_applying = false;
            m_dirty = madeMeanwhile;
            m_window->statusBar()->showMessage(
                tr("%n note(s) loaded from %1.", nullptr, int(loaded->notes.size())).arg(sidecar),
                5000);
            if (loaded->skipped > 0) {
                problem = tr("%1: %n note(s) with a bad field were skipped.", nullptr,
                             int(loaded->skipped))
                              .arg(sidecar);
            }
        }
        if (m_dirty) {
            m_saveTimer->start();
        }
    }
    if (!problem.isEmpty()) {
        m_window->statusBar()->showMessage(problem, 15000);
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Notes not loaded"), problem,
                                    QMessageBox::Ok, m_window);
        box->setObjectName(QStringLiteral("NotesProblemBox"));
        box->setInformativeText(loaded->skipped > 0 && loaded->refusal.empty() &&
                                        loaded->readError.empty()
                                    ? QString()
                                    : tr("The file %1 is not changed; notes made now stay in "
                                         "memory.")
                                          .arg(sidecar));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    emit sidecarApplied();
}

trace::Status NotesController::writeSidecar() {
    trace::NotesDocument doc;
    doc.traces = m_identities;
    doc.notes = m_model->notes();
    const trace::Status written = trace::writeNotesFile(m_saveTo.toStdString(), doc);
    if (written.ok()) {
        m_dirty = false;
    }
    return written;
}

bool NotesController::saveNow() {
    m_saveTimer->stop();
    if (!m_dirty || m_saveTo.isEmpty()) {
        return true;
    }
    const trace::Status written = writeSidecar();
    if (!written.ok()) {
        m_window->statusBar()->showMessage(
            tr("Notes not saved: %1").arg(QString::fromStdString(written.error().describe())),
            15000);
        return false;
    }
    return true;
}

bool NotesController::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_window && event->type() == QEvent::Close) {
        saveNow();
    }
    return QObject::eventFilter(watched, event);
}

std::string NotesController::addNote(trace::Note note) {
    if (!m_job) {
        return {};
    }
    if (note.author.empty() && !note.generated) {
        note.author = userName();
    }
    if (note.createdUnixMs == 0) {
        note.createdUnixMs = QDateTime::currentMSecsSinceEpoch();
    }
    if (note.endNs < note.startNs) {
        std::swap(note.startNs, note.endNs);
    }
    if (note.title.empty() && note.text.empty()) {
        const QString at = widgets::noteTimeText(note, m_job->durationNs);
        note.title = (note.isRange() ? tr("Range %1") : tr("Note at %1")).arg(at).toStdString();
    }
    const std::string id = m_model->addNote(std::move(note));
    m_panel->selectNote(id);
    m_dock->show();
    m_dock->raise();
    m_window->statusBar()->showMessage(
        tr("Note %1 added; double-click it in the Notes dock to edit it, Ctrl+Z undoes.")
            .arg(m_model->rowOf(id) + 1),
        6000);
    return id;
}

std::string NotesController::addPointNote() {
    if (!m_job) {
        return {};
    }
    trace::Note note;
    if (m_zoom->hasCursor()) {
        note.startNs = m_zoom->cursorNs();
    } else if (m_zoom->selectedGpu().isValid()) {
        note.startNs = m_zoom->selectedTimeNs();
    } else {
        const widgets::TimeRange v = m_zoom->visibleRange();
        note.startNs = v.startNs + v.durationNs() / 2;
    }
    note.endNs = note.startNs;
    return addNote(std::move(note));
}

std::string NotesController::addRangeNote() {
    if (!m_job) {
        return {};
    }
    if (!m_zoom->hasSelection()) {
        m_window->statusBar()->showMessage(
            tr("Select a time range first (Shift+drag or right-drag), then Shift+M."), 6000);
        return {};
    }
    trace::Note note;
    note.startNs = m_zoom->selection().startNs;
    note.endNs = m_zoom->selection().endNs;
    return addNote(std::move(note));
}

int NotesController::placeFindings() {
    if (!m_job) {
        return 0;
    }
    const auto same = [](const trace::Note& a, const trace::Note& b) {
        return a.generated && a.kind == b.kind && a.startNs == b.startNs && a.endNs == b.endNs &&
               a.rankIndex == b.rankIndex && a.device == b.device;
    };
    std::vector<trace::Note> fresh;
    size_t already = 0;
    for (trace::Note n : analysis::autoNotes(*m_job)) {
        n.generated = true;
        const bool noted = std::any_of(m_model->notes().begin(), m_model->notes().end(),
                                       [&](const trace::Note& held) { return same(held, n); });
        if (noted) {
            ++already;
            continue;
        }
        n.id.clear();
        if (n.createdUnixMs == 0) {
            n.createdUnixMs = QDateTime::currentMSecsSinceEpoch();
        }
        fresh.push_back(std::move(n));
    }
    const int added = int(fresh.size());
    m_model->addNotes(std::move(fresh), tr("Place notes for findings"));
    m_window->statusBar()->showMessage(
        added == 0 && already == 0
            ? tr("No findings to note in this job.")
            : tr("%n note(s) placed for findings", nullptr, added) +
                  (already > 0 ? tr("; %n already noted.", nullptr, int(already))
                               : QStringLiteral(".")),
        6000);
    if (added > 0) {
        m_dock->show();
        m_dock->raise();
    }
    return added;
}

void NotesController::editNote(const std::string& id) {
    const trace::Note* note = m_model->find(id);
    if (!note) {
        return;
    }
    auto* dialog = new widgets::NoteDialog(*note, m_job, m_window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        if (m_model->editNote(dialog->note())) {
            m_panel->selectNote(dialog->note().id);
        }
    });
    dialog->open();
}

void NotesController::deleteSelected() {
    const std::vector<std::string> ids = m_panel->selectedIds();
    if (m_model->removeNotes(ids)) {
        m_window->statusBar()->showMessage(
            tr("%n note(s) deleted; Ctrl+Z brings them back.", nullptr, int(ids.size())), 6000);
    }
}

void NotesController::jumpTo(const std::string& id) {
    const trace::Note* note = m_model->find(id);
    if (!note) {
        return;
    }
    const int64_t start = note->startNs;
    const int64_t end = std::max(note->startNs, note->endNs);
    const widgets::TimeRange v = m_zoom->visibleRange();
    // The same span centred on the note; wider where a range would not fit in 80 % of it.
    const int64_t span = std::max(v.durationNs(), (end - start) * 5 / 4);
    const int64_t mid = start + (end - start) / 2;
    m_zoom->setVisibleRange({mid - span / 2, mid - span / 2 + span});
    if (note->isRange()) {
        m_zoom->setSelection({start, end});
    } else {
        m_zoom->clearSelection();
    }
    analysis::GpuKey gpu = m_zoom->selectedGpu();
    if (note->pinnedToGpu()) {
        gpu = {note->rankIndex, trace::DeviceIndex{note->device}};
    }
    if (m_job && m_job->gpu(gpu)) {
        m_zoom->setSelectedGpu(gpu, start);
    }
}

void NotesController::showTimeMenu(QPoint globalPos, int64_t timeNs, analysis::GpuKey gpu) {
    if (!m_job) {
        return;
    }
    auto* menu = new QMenu(m_window);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    const auto pin = [gpu](trace::Note& n) {
        if (gpu.isValid()) {
            n.rankIndex = gpu.rankIndex;
            n.device = toInt(gpu.device);
        }
    };
    menu->addAction(tr("Add Note Here"), this, [this, timeNs, pin] {
        trace::Note n;
        n.startNs = n.endNs = timeNs;
        pin(n);
        addNote(std::move(n));
    });
    QAction* forSelection = menu->addAction(tr("Add Note for the Selection"), this, [this, pin] {
        if (!m_zoom->hasSelection()) {
            return;
        }
        trace::Note n;
        n.startNs = m_zoom->selection().startNs;
        n.endNs = m_zoom->selection().endNs;
        pin(n);
        addNote(std::move(n));
    });
    forSelection->setEnabled(m_zoom->hasSelection());
    menu->addSeparator();
    QAction* clear =
        menu->addAction(tr("Clear the Selection"), this, [this] { m_zoom->clearSelection(); });
    clear->setEnabled(m_zoom->hasSelection());
    m_lastMenu = menu;
    menu->popup(globalPos);
}

void NotesController::addAllocationNote(int row) {
    const std::vector<widgets::LiveRow>& rows = m_window->details()->model()->rows();
    if (!m_job || row < 0 || size_t(row) >= rows.size()) {
        return;
    }
    const widgets::LiveRow& r = rows[size_t(row)];
    const analysis::GpuKey gpu = m_zoom->selectedGpu();
    trace::Note n;
    n.startNs = n.endNs = m_zoom->selectedTimeNs();
    if (gpu.isValid()) {
        n.rankIndex = gpu.rankIndex;
        n.device = toInt(gpu.device);
    }
    n.allocationAddress = r.address;
    // The row's age is measured back from the inspected time, the Details dock's time.
    n.allocationTimeNs = n.startNs - r.ageNs;
    n.title = tr("%1 at 0x%2")
                  .arg(widgets::formatBytes(double(r.sizeBytes)))
                  .arg(r.address, 0, 16)
                  .toStdString();
    n.text = r.where.toStdString();
    addNote(std::move(n));
}

}  // namespace vramscope::app
