#include "analysis_views.h"

#include <QAction>
#include <QDockWidget>
#include <QScrollArea>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>

#include "main_window.h"
#include "vramscope/widgets/advice_panel.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/gap_table_model.h"
#include "vramscope/widgets/leak_panel.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/segment_panel.h"

namespace vramscope::app {

namespace {

/// A dock holding `panel`. Panels taller than their share of the window (the leak panel's chart
/// and tables, the advice panel's cost form) scroll inside the dock instead of pushing the bottom
/// dock area, and with it every tab in that area, above its share: the timeline keeps the room.
QDockWidget* makeDock(MainWindow* window, QWidget* panel, const QString& title,
                      const QString& objectName, bool scrolls = false) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(objectName);
    if (scrolls) {
        auto* scroll = new QScrollArea;
        scroll->setWidget(panel);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        dock->setWidget(scroll);
    } else {
        dock->setWidget(panel);
    }
    return dock;
}

}  // namespace

AnalysisViews::AnalysisViews(MainWindow* window)
    : QObject(window),
      m_window(window),
      m_flame(new widgets::FlamePanel(window->zoomState())),
      m_lanes(new widgets::CommLanesView(window->zoomState())),
      m_gaps(new widgets::GapsPanel(window->zoomState())),
      m_leak(new widgets::LeakPanel(window->zoomState())),
      m_advice(new widgets::AdvicePanel),
      m_segments(new widgets::SegmentPanel(window->zoomState())) {
    m_flameDock =
        makeDock(window, m_flame, tr("Allocation flame view"), QStringLiteral("FlameDock"));
    m_gapsDock = makeDock(window, m_gaps, tr("Idle gaps"), QStringLiteral("GapsDock"));
    m_leakDock = makeDock(window, m_leak, tr("Leak"), QStringLiteral("LeakDock"), true);
    m_adviceDock =
        makeDock(window, m_advice, tr("Advice and cost"), QStringLiteral("AdviceDock"), true);
    m_segmentsDock = makeDock(window, m_segments, tr("Segments"), QStringLiteral("SegmentsDock"));
    window->addDockWidget(Qt::BottomDockWidgetArea, m_flameDock);
    window->splitDockWidget(m_flameDock, m_gapsDock, Qt::Horizontal);
    window->tabifyDockWidget(m_gapsDock, m_leakDock);
    window->tabifyDockWidget(m_leakDock, m_adviceDock);
    window->tabifyDockWidget(m_adviceDock, m_segmentsDock);
    m_gapsDock->raise();

    // The lanes share the VRAM plots' time axis: same margins, scrolled when there are many GPUs.
    m_lanes->setMargins(widgets::MemoryPlot::defaultLeftMargin(window->fontMetrics()), 16);
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_lanes);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_lanesTab = scroll;
    window->addCentralTab(m_lanesTab, tr("Communication lanes"));

    auto* bar = window->addToolBar(tr("Analysis"));
    bar->setObjectName(QStringLiteral("AnalysisToolBar"));
    m_jumpToOom = bar->addAction(tr("Jump to OOM"), this, &AnalysisViews::jumpToOom);
    m_jumpToOom->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_J));
    m_jumpToOom->setToolTip(
        tr("Show the first out-of-memory event and what was alive there (Ctrl+J)"));
    m_jumpToOom->setEnabled(false);
    bar->addAction(window->stackByRoleAction());
    bar->addSeparator();
    for (QDockWidget* dock : {m_flameDock, m_gapsDock, m_leakDock, m_adviceDock, m_segmentsDock}) {
        bar->addAction(dock->toggleViewAction());
    }

    window->addView(QStringLiteral("flame"), [this] { showDock(m_flameDock); });
    window->addView(QStringLiteral("flame-role"), [this] {
        m_flame->setGrouping(analysis::FlameGrouping::Role);
        showDock(m_flameDock);
    });
    window->addView(QStringLiteral("gaps"), [this] { showDock(m_gapsDock); });
    window->addView(QStringLiteral("leak"), [this] { showDock(m_leakDock); });
    window->addView(QStringLiteral("advice"), [this] { showDock(m_adviceDock); });
    window->addView(QStringLiteral("segments"), [this] { showDock(m_segmentsDock); });
    window->addView(QStringLiteral("oom"), [this] { jumpToOom(); });
    window->addView(QStringLiteral("lanes"), [this] {
        m_window->centralTabs()->setCurrentWidget(m_lanesTab);
        m_dockPercent = 25;
        fitDocks();
    });

    connect(window, &MainWindow::jobChanged, this, &AnalysisViews::apply);
    connect(m_leak, &widgets::LeakPanel::survivorSelected, this,
            [this](analysis::GpuKey gpu, trace::StackId stack) {
                m_flameDock->show();
                m_flame->highlightStack(gpu, stack);
            });
}

AnalysisViews::~AnalysisViews() = default;

void AnalysisViews::apply(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    m_flame->setJob(m_job);
    m_lanes->setJob(m_job);
    m_gaps->setJob(m_job);
    m_leak->setJob(m_job);
    m_advice->setJob(m_job);
    m_segments->setJob(m_job);
    bool hasOom = false;
    if (m_job) {
        for (const analysis::GpuSeries& g : m_job->gpus) {
            hasOom = hasOom || !g.ooms.empty();
        }
        if (!m_job->analysisProblem.empty()) {
            m_window->statusBar()->showMessage(
                tr("Some analyses failed: %1").arg(QString::fromStdString(m_job->analysisProblem)),
                10000);
        }
        // Without kernels the idle gaps have nothing to list: the bottom right shows the segments
        // at an OOM, else the leak verdict.
        if (m_job->kernels.empty()) {
            (hasOom ? m_segmentsDock : m_leakDock)->raise();
        } else {
            m_gapsDock->raise();
        }
        // Kernels but no memory on any GPU (an Nsight Systems report taken without
        // --cuda-memory-usage, a profile without profile_memory): the memory plots would be
        // empty, so the window opens on the communication lanes.
        const bool anyMemory =
            std::any_of(m_job->gpus.begin(), m_job->gpus.end(),
                        [](const analysis::GpuSeries& g) { return g.memory.hasData(); });
        if (!anyMemory && !m_job->kernels.empty()) {
            m_window->centralTabs()->setCurrentWidget(m_lanesTab);
        }
        // Once the window has its size (the first turn of the event loop after a job arrives),
        // the bottom docks take their share of the height.
        QTimer::singleShot(0, this, &AnalysisViews::fitDocks);
    }
    m_jumpToOom->setEnabled(hasOom);
}

void AnalysisViews::jumpToOom() {
    m_window->centralTabs()->setCurrentIndex(0);
    showDock(m_flameDock);
    if (!m_flame->showOom()) {
        m_window->statusBar()->showMessage(tr("This job has no out-of-memory event."), 5000);
    }
}

void AnalysisViews::showDock(QDockWidget* dock) {
    dock->show();
    dock->raise();
    m_dockPercent = 45;  // room for the panel
    fitDocks();
}

void AnalysisViews::fitDocks() {
    m_window->resizeDocks({m_flameDock}, {m_window->height() * m_dockPercent / 100}, Qt::Vertical);
}

}  // namespace vramscope::app
