// Notes in the main window (offscreen): M and Shift+M make the note at the cursor and over the
// selection, Ctrl+Z / Ctrl+Shift+Z undo and redo it, a right click on a plot offers "Add Note
// Here", a note from an allocation row names that allocation, the sidecar written beside a
// trace reloads into a new window, and a sidecar of another trace is refused with a message
// naming it.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <gtest/gtest.h>

#include "job_loader.h"
#include "main_window.h"
#include "notes_controller.h"
#include "vramscope/analysis/advice/auto_notes.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/widgets/details_panel.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/note_dialog.h"
#include "vramscope/widgets/notes_model.h"
#include "vramscope/widgets/notes_panel.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/zoom_state.h"

using namespace vramscope;

namespace {

analysis::SyntheticJobSpec oneRank() {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 5;
    spec.leakBytesPerIteration = 32ull << 20;
    spec.leakRank = 0;
    return spec;
}

/// A one-rank synthetic trace written to `dir`/name; returns its path.
std::string writeTrace(const QTemporaryDir& dir, const QString& name,
                       analysis::SyntheticJobSpec spec = oneRank()) {
    const std::string path = dir.filePath(name).toStdString();
    const std::vector<trace::TraceData> traces = analysis::generateSyntheticJob(spec);
    EXPECT_TRUE(trace::writeTraceFile(path, traces.front()).ok());
    return path;
}

/// Opens `paths` in `window` as the GUI does once loaded, and waits for the notes beside them.
void openIn(app::MainWindow& window, const std::vector<std::string>& paths) {
    auto loaded = paths.empty() ? app::loadBundledSample() : app::loadJobModel(paths);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    QStringList list;
    for (const std::string& p : paths) {
        list.append(QString::fromStdString(p));
    }
    window.setJob(loaded.value(), list);
    window.findChild<app::NotesController*>()->waitForSidecar();
}

app::NotesController* notesOf(app::MainWindow& window) {
    return window.findChild<app::NotesController*>();
}

void showActive(app::MainWindow& window) {
    window.resize(1300, 850);
    window.show();
    window.activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window));
}

}  // namespace

TEST(NotesWindow, TheDockIsTabbedWithDetailsAndTheMenusAreThere) {
    app::MainWindow window;
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("NotesDock"));
    ASSERT_NE(dock, nullptr);
    EXPECT_EQ(dock->windowTitle(), QStringLiteral("Notes"));
    auto* details = window.findChild<QDockWidget*>(QStringLiteral("DetailsDock"));
    EXPECT_TRUE(window.tabifiedDockWidgets(details).contains(dock));
    QStringList menus;
    for (QAction* a : window.menuBar()->actions()) {
        menus.append(a->text().remove(QLatin1Char('&')));
    }
    EXPECT_EQ(menus,
              (QStringList{QStringLiteral("File"), QStringLiteral("Edit"), QStringLiteral("View"),
                           QStringLiteral("Notes"), QStringLiteral("Help")}));
}

TEST(NotesWindow, MAndShiftMMakeNotesAtTheCursorAndTheSelection) {
    app::MainWindow window;
    openIn(window, {});  // the bundled sample: notes in memory
    showActive(window);
    app::NotesController* notes = notesOf(window);
    EXPECT_TRUE(notes->sidecarPath().isEmpty());
    EXPECT_TRUE(notes->panel()->info().contains(QStringLiteral("in memory")));
    widgets::ZoomState* zoom = window.zoomState();
    const int64_t d = window.job()->durationNs;
    const analysis::GpuKey gpu = window.job()->gpus.front().key;
    zoom->setCursor(d / 3, gpu);
    QTest::keyClick(&window, Qt::Key_M);
    ASSERT_EQ(notes->model()->notes().size(), 1u);
    trace::Note point = notes->model()->notes().front();
    EXPECT_EQ(point.startNs, d / 3);
    EXPECT_EQ(point.endNs, d / 3);
    EXPECT_FALSE(point.pinnedToGpu()) << "M marks the time on every GPU, as in Perfetto";
    EXPECT_EQ(point.id, "n1");

    // Shift+M without a selection adds nothing; with one, a range over it.
    zoom->clearSelection();
    QTest::keyClick(&window, Qt::Key_M, Qt::ShiftModifier);
    EXPECT_EQ(notes->model()->notes().size(), 1u);
    zoom->setSelection({d / 5, d / 2});
    QTest::keyClick(&window, Qt::Key_M, Qt::ShiftModifier);
    ASSERT_EQ(notes->model()->notes().size(), 2u);
    const trace::Note range = notes->model()->notes().front();  // starts first: note 1
    EXPECT_EQ(range.startNs, d / 5);
    EXPECT_EQ(range.endNs, d / 2);

    // Without a cursor, M notes the clicked time of the selected GPU.
    zoom->clearCursor();
    zoom->setSelectedGpu(gpu, d / 4);
    QTest::keyClick(&window, Qt::Key_M);
    ASSERT_EQ(notes->model()->notes().size(), 3u);
    EXPECT_EQ(notes->model()->notes()[1].startNs, d / 4);

    // The views draw them: all three on the plot.
    EXPECT_EQ(window.timeline()->plots().front()->noteMarks().size(), 3u);

    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
    EXPECT_EQ(notes->model()->notes().size(), 2u);
    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
    EXPECT_TRUE(notes->model()->notes().empty());
    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    ASSERT_EQ(notes->model()->notes().size(), 1u);
    EXPECT_EQ(notes->model()->notes().front(), point);
}

TEST(NotesWindow, ARightClickOnAPlotAddsANoteForThatGpu) {
    app::MainWindow window;
    openIn(window, {});
    showActive(window);
    widgets::MemoryPlot* plot = window.timeline()->plots().front();
    QApplication::processEvents();
    const QPoint at(plot->mapper().left + 200, plot->height() / 2);
    const int64_t t = plot->mapper().timeAt(at.x());
    QTest::mouseClick(plot, Qt::RightButton, Qt::NoModifier, at);
    app::NotesController* notes = notesOf(window);
    QMenu* menu = notes->lastContextMenu();
    ASSERT_NE(menu, nullptr);
    QAction* here = nullptr;
    for (QAction* a : menu->actions()) {
        if (a->text() == QStringLiteral("Add Note Here")) {
            here = a;
        }
    }
    ASSERT_NE(here, nullptr);
    here->trigger();
    menu->close();
    ASSERT_EQ(notes->model()->notes().size(), 1u);
    const trace::Note n = notes->model()->notes().front();
    EXPECT_EQ(n.startNs, t);
    EXPECT_EQ(n.rankIndex, plot->gpu().rankIndex);
    EXPECT_EQ(n.device, toInt(plot->gpu().device));
}

TEST(NotesWindow, ANoteFromAnAllocationRowNamesThatAllocation) {
    QTemporaryDir dir;
    const std::string path = writeTrace(dir, QStringLiteral("run.vscope"));
    app::MainWindow window;
    openIn(window, {path});
    const analysis::GpuKey gpu = window.job()->gpus.front().key;
    const int64_t t = window.job()->durationNs / 2;
    window.zoomState()->setSelectedGpu(gpu, t);
    const std::vector<widgets::LiveRow>& rows = window.details()->model()->rows();
    ASSERT_FALSE(rows.empty());
    emit window.details()->allocationNoteRequested(0);
    ASSERT_EQ(notesOf(window)->model()->notes().size(), 1u);
    const trace::Note n = notesOf(window)->model()->notes().front();
    EXPECT_EQ(n.allocationAddress, rows[0].address);
    EXPECT_EQ(n.startNs, t);
    // The allocation's own event, found in the trace: the last alloc of that address at or
    // before the inspected time, in job time.
    const trace::TraceData& data = window.job()->job.ranks[0].trace.data;
    const int64_t rankT = window.job()->toRank(0, t);
    int64_t allocAt = -1;
    for (size_t i = 0; i < data.memory.size(); ++i) {
        if (data.memory.address[i] == rows[0].address &&
            data.memory.action[i] == trace::MemoryAction::Alloc &&
            data.memory.timestampNs[i] <= rankT) {
            allocAt = data.memory.timestampNs[i];
        }
    }
    ASSERT_GE(allocAt, 0);
    EXPECT_EQ(n.allocationTimeNs, allocAt + window.job()->ranks[0].toJobNs);
}

TEST(NotesWindow, ASavedSidecarReloadsInANewWindow) {
    QTemporaryDir dir;
    const std::string path = writeTrace(dir, QStringLiteral("run.vscope"));
    const QString sidecar = QString::fromStdString(trace::notesSidecarPath({path}));
    std::vector<trace::Note> made;
    {
        app::MainWindow window;
        openIn(window, {path});
        app::NotesController* notes = notesOf(window);
        EXPECT_EQ(notes->sidecarPath(), sidecar);
        const int64_t d = window.job()->durationNs;
        window.zoomState()->setCursor(d / 4, {});
        notes->addPointNote();
        window.zoomState()->setSelection({d / 3, d / 2});
        notes->addRangeNote();
        trace::Note edited = notes->model()->notes().back();
        edited.title = "the leak starts";
        edited.text = "grows 32 MiB\nper iteration";
        edited.color = "#0072b2";
        edited.rankIndex = 0;
        edited.device = toInt(window.job()->gpus.front().key.device);
        ASSERT_TRUE(notes->model()->editNote(edited));
        made = notes->model()->notes();
        // Written about a second after the last change.
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(sidecar), 10000);
    }
    ASSERT_EQ(made.size(), 2u);
    app::MainWindow again;
    openIn(again, {path});
    EXPECT_EQ(notesOf(again)->model()->notes(), made);
    EXPECT_EQ(notesOf(again)->model()->undoStack()->count(), 0);
    // Drawn: the range pinned to the GPU is on its plot.
    EXPECT_EQ(again.timeline()->plots().front()->noteMarks().size(), 2u);
}

TEST(NotesWindow, ASidecarOfAnotherTraceIsRefusedWithAMessageNamingIt) {
    QTemporaryDir dir;
    const std::string path = writeTrace(dir, QStringLiteral("run.vscope"));
    analysis::SyntheticJobSpec other = oneRank();
    other.iterations = 4;
    const std::string otherPath = writeTrace(dir, QStringLiteral("other.vscope"), other);
    // A sidecar written for other.vscope, moved beside run.vscope.
    auto otherId = trace::identifyTrace(otherPath);
    ASSERT_TRUE(otherId.ok());
    trace::NotesDocument doc;
    doc.traces = {otherId.value()};
    trace::Note n;
    n.id = "n1";
    n.title = "not for this trace";
    doc.notes = {n};
    const std::string sidecar = trace::notesSidecarPath({path});
    ASSERT_TRUE(trace::writeNotesFile(sidecar, doc).ok());
    QFile file(QString::fromStdString(sidecar));
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QByteArray before = file.readAll();
    file.close();

    app::MainWindow window;
    openIn(window, {path});
    app::NotesController* notes = notesOf(window);
    EXPECT_TRUE(notes->model()->notes().empty());
    const QString name = QFileInfo(QString::fromStdString(sidecar)).fileName();
    EXPECT_TRUE(window.statusBar()->currentMessage().contains(name))
        << window.statusBar()->currentMessage().toStdString();
    auto* box = window.findChild<QMessageBox*>(QStringLiteral("NotesProblemBox"));
    ASSERT_NE(box, nullptr);
    EXPECT_TRUE(box->text().contains(name)) << box->text().toStdString();
    // Notes made now are not written over the other trace's sidecar.
    notes->addPointNote();
    EXPECT_TRUE(notes->sidecarPath().isEmpty());
    EXPECT_TRUE(notes->saveNow());
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    EXPECT_EQ(file.readAll(), before);
}

TEST(NotesWindow, FindingsArePlacedOnceAndUndoneInOneStep) {
    QTemporaryDir dir;
    const std::string path = writeTrace(dir, QStringLiteral("run.vscope"));
    app::MainWindow window;
    openIn(window, {path});
    app::NotesController* notes = notesOf(window);
    notes->addPointNote();
    const int added = notes->placeFindings();
    // The synthetic job peaks on its one GPU: at least the peak is a finding.
    EXPECT_GE(added, 1);
    const size_t after = notes->model()->notes().size();
    EXPECT_EQ(after, size_t(added) + 1);
    for (const trace::Note& n : notes->model()->notes()) {
        if (n.generated) {
            EXPECT_FALSE(n.kind.empty());
        }
    }
    EXPECT_EQ(notes->placeFindings(), 0) << "no duplicates of generated notes already there";
    EXPECT_EQ(notes->model()->notes().size(), after);
    notes->model()->undoStack()->undo();
    ASSERT_EQ(notes->model()->notes().size(), 1u);
    EXPECT_FALSE(notes->model()->notes().front().generated);
}

TEST(NotesWindow, NotesCarriedInTheTraceShowUntilASidecarReplacesThem) {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("converted.vscope")).toStdString();
    std::vector<trace::TraceData> traces = analysis::generateSyntheticJob(oneRank());
    // As `convert --notes` writes it: one note of every GPU in the first rank's file.
    trace::Note carried;
    carried.id = "n1";
    carried.title = "carried in the file";
    carried.startNs = carried.endNs = 2'000'000;
    traces.front().annotations = analysis::annotationsForRank({carried}, 0, 0);
    ASSERT_EQ(traces.front().annotations.size(), 1u);
    ASSERT_TRUE(trace::writeTraceFile(path, traces.front()).ok());
    {
        app::MainWindow window;
        openIn(window, {path});
        const std::vector<trace::Note>& shown = notesOf(window)->model()->notes();
        ASSERT_EQ(shown.size(), 1u);
        EXPECT_EQ(shown.front().title, "carried in the file");
    }
    // A sidecar of its own wins.
    auto id = trace::identifyTrace(path);
    ASSERT_TRUE(id.ok());
    trace::NotesDocument doc;
    doc.traces = {id.value()};
    trace::Note own;
    own.id = "n1";
    own.title = "from the sidecar";
    doc.notes = {own};
    ASSERT_TRUE(trace::writeNotesFile(trace::notesSidecarPath({path}), doc).ok());
    app::MainWindow window;
    openIn(window, {path});
    const std::vector<trace::Note>& shown = notesOf(window)->model()->notes();
    ASSERT_EQ(shown.size(), 1u);
    EXPECT_EQ(shown.front().title, "from the sidecar");
}

TEST(NotesWindow, ADirectoryJobKeepsItsNotesInsideAndDoesNotReadThemAsATrace) {
    QTemporaryDir dir;
    ASSERT_TRUE(QDir(dir.path()).mkdir(QStringLiteral("job")));
    analysis::SyntheticJobSpec spec = oneRank();
    spec.ranks = 2;
    std::vector<trace::TraceData> traces = analysis::generateSyntheticJob(spec);
    const QString jobDir = dir.filePath(QStringLiteral("job"));
    for (size_t r = 0; r < traces.size(); ++r) {
        const QString file = QDir(jobDir).filePath(QStringLiteral("rank%1.vscope").arg(r));
        ASSERT_TRUE(trace::writeTraceFile(file.toStdString(), traces[r]).ok());
    }
    {
        app::MainWindow window;
        openIn(window, {jobDir.toStdString()});
        EXPECT_EQ(notesOf(window)->sidecarPath(), QDir(jobDir).filePath("vscope-notes.json"));
        notesOf(window)->addPointNote();
        EXPECT_TRUE(notesOf(window)->saveNow());
    }
    ASSERT_TRUE(QFile::exists(QDir(jobDir).filePath("vscope-notes.json")));
    app::MainWindow again;
    openIn(again, {jobDir.toStdString()});
    EXPECT_TRUE(again.job()->job.skipped.empty()) << "the sidecar is not an input";
    EXPECT_EQ(again.job()->job.ranks.size(), 2u);
    EXPECT_EQ(notesOf(again)->model()->notes().size(), 1u);
}

TEST(NotesWindow, EditingInTheDialogIsOneUndoStep) {
    app::MainWindow window;
    openIn(window, {});
    app::NotesController* notes = notesOf(window);
    const int64_t d = window.job()->durationNs;
    window.zoomState()->setCursor(d / 2, {});
    const std::string id = notes->addPointNote();
    const trace::Note before = *notes->model()->find(id);
    notes->editNote(id);
    auto* dialog = window.findChild<widgets::NoteDialog*>();
    ASSERT_NE(dialog, nullptr);
    dialog->titleEdit()->setText(QStringLiteral("the point of it"));
    dialog->gpuBox()->setCurrentIndex(1);  // the first GPU after "All GPUs"
    dialog->rangeBox()->setChecked(true);
    dialog->endBox()->setValue(dialog->endBox()->maximum());  // the job's end
    dialog->accept();
    const trace::Note* after = notes->model()->find(id);
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->title, "the point of it");
    EXPECT_EQ(after->startNs, before.startNs) << "an untouched time keeps its exact ns";
    // Entered in the dialog's unit, to a millionth of the job.
    EXPECT_NEAR(double(after->endNs), double(d), double(d) / 1e6 + 1);
    const analysis::GpuKey first = window.job()->gpus.front().key;
    EXPECT_EQ(after->rankIndex, first.rankIndex);
    EXPECT_EQ(after->device, toInt(first.device));
    EXPECT_EQ(after->author, before.author);
    notes->model()->undoStack()->undo();
    EXPECT_EQ(*notes->model()->find(id), before);
}
