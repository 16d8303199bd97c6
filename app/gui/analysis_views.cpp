#include "analysis_views.h"

#include <QAction>
#include <QDockWidget>
#include <QMenuBar>
#include <QScrollArea>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>

#include "main_window.h"
#include "vramscope/widgets/advice_panel.h"
#include "vramscope/widgets/collectives_table.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/gap_table_model.h"
#include "vramscope/widgets/leak_panel.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/segment_panel.h"
#include "vramscope/widgets/top_kernels_table.h"

namespace vramscope::app {

namespace {

/// A dock holding `panel`. Panels taller than their share of the window (the leak panel's chart
/// and tables, the advice panel's cost form, the flame view's controls in a small window) scroll
/// inside the dock instead of pushing the bottom dock area, and with it every tab in that area,
/// above its share: the timeline keeps the room (window_layout.h). Where the dock has room, the
/// panel fills it and nothing scrolls.
QDockWidget* makeDock(MainWindow* window, QWidget* panel, const QString& title,
                      const QString& objectName) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(objectName);
    auto* scroll = new QScrollArea;
    scroll->setWidget(panel);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    dock->setWidget(scroll);
    return dock;
}

}  // namespace

AnalysisViews::AnalysisViews(MainWindow* window)
    : QObject(window),
      m_window(window),
      m_flame(new widgets::FlamePanel(window->zoomState())),
      m_lanes(new widgets::CommLanesView(window->zoomState())),
      m_collectives(new widgets::CollectivesPanel(window->zoomState())),
      m_gaps(new widgets::GapsPanel(window->zoomState())),
      m_leak(new widgets::LeakPanel(window->zoomState())),
      m_advice(new widgets::AdvicePanel),
      m_segments(new widgets::SegmentPanel(window->zoomState())),
      m_topKernels(new widgets::TopKernelsPanel) {
    m_flameDock =
        makeDock(window, m_flame, tr("Allocation flame view"), QStringLiteral("FlameDock"));
    m_gapsDock = makeDock(window, m_gaps, tr("Idle gaps"), QStringLiteral("GapsDock"));
    m_leakDock = makeDock(window, m_leak, tr("Leak"), QStringLiteral("LeakDock"));
    m_adviceDock = makeDock(window, m_advice, tr("Advice and cost"), QStringLiteral("AdviceDock"));
    m_segmentsDock = makeDock(window, m_segments, tr("Segments"), QStringLiteral("SegmentsDock"));
    m_topKernelsDock =
        makeDock(window, m_topKernels, tr("Top kernels"), QStringLiteral("TopKernelsDock"));
    // Tabbed together at the bottom by the window's default layout (window_layout.h).
    for (QDockWidget* dock :
         {m_flameDock, m_gapsDock, m_leakDock, m_adviceDock, m_segmentsDock, m_topKernelsDock}) {
        window->addDockWidget(Qt::BottomDockWidgetArea, dock);
    }

    // The lanes share the VRAM plots' time axis: same margins, scrolled when there are many GPUs.
    m_lanes->setMargins(widgets::MemoryPlot::defaultLeftMargin(window->fontMetrics()), 16);
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_lanes);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_lanesTab = scroll;
    window->addCentralTab(m_lanesTab, tr("Communication lanes"));

    // The collectives' bandwidth, tabbed with the other analysis docks; a selected row zooms
    // every time view to its longest occurrence.
    m_collectivesDock =
        makeDock(window, m_collectives, tr("Collectives"), QStringLiteral("CollectivesDock"));
    window->addDockWidget(Qt::BottomDockWidgetArea, m_collectivesDock);

    // In the menu bar's free right end rather than a toolbar row of its own: the row is height
    // the timeline keeps.
    auto* bar = new QToolBar(tr("Analysis"), window);
    bar->setObjectName(QStringLiteral("AnalysisToolBar"));
    bar->setIconSize(QSize(16, 16));
    window->menuBar()->setCornerWidget(bar, Qt::TopRightCorner);
    m_jumpToOom = bar->addAction(tr("Jump to OOM"), this, &AnalysisViews::jumpToOom);
    m_jumpToOom->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_J));
    m_jumpToOom->setToolTip(
        tr("Show the first out-of-memory event and what was alive there (Ctrl+J)"));
    m_jumpToOom->setEnabled(false);
    bar->addAction(window->stackByRoleAction());
    bar->addSeparator();
    for (QDockWidget* dock :
         {m_flameDock, m_gapsDock, m_leakDock, m_adviceDock, m_segmentsDock, m_topKernelsDock}) {
        bar->addAction(dock->toggleViewAction());
    }
    bar->addAction(m_collectivesDock->toggleViewAction());

    window->addView(QStringLiteral("flame"), [this] { showDock(m_flameDock); });
    window->addView(QStringLiteral("flame-role"), [this] {
        m_flame->setGrouping(analysis::FlameGrouping::Role);
        showDock(m_flameDock);
    });
    window->addView(QStringLiteral("gaps"), [this] { showDock(m_gapsDock); });
    window->addView(QStringLiteral("leak"), [this] { showDock(m_leakDock); });
    window->addView(QStringLiteral("advice"), [this] { showDock(m_adviceDock); });
    window->addView(QStringLiteral("segments"), [this] { showDock(m_segmentsDock); });
    window->addView(QStringLiteral("top-kernels"), [this] { showDock(m_topKernelsDock); });
    window->addView(QStringLiteral("oom"), [this] { jumpToOom(); });
    window->addView(QStringLiteral("collectives"), [this] { showDock(m_collectivesDock); });
    window->addView(QStringLiteral("lanes"),
                    [this] { m_window->centralTabs()->setCurrentWidget(m_lanesTab); });

    connect(window, &MainWindow::jobChanged, this, &AnalysisViews::apply);
    connect(window, &MainWindow::layoutReset, this, &AnalysisViews::raiseFrontTab);
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
    m_collectives->setJob(m_job);
    m_gaps->setJob(m_job);
    m_leak->setJob(m_job);
    m_advice->setJob(m_job);
    m_segments->setJob(m_job);
    m_topKernels->setJob(m_job);
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
        // Kernels but no memory on any GPU (an Nsight Systems report taken without
        // --cuda-memory-usage, a profile without profile_memory): the memory plots would be
        // empty, so the window opens on the communication lanes.
        const bool anyMemory =
            std::any_of(m_job->gpus.begin(), m_job->gpus.end(),
                        [](const analysis::GpuSeries& g) { return g.memory.hasData(); });
        if (!anyMemory && !m_job->kernels.empty()) {
            m_window->centralTabs()->setCurrentWidget(m_lanesTab);
        }
        raiseFrontTab();
    }
    m_jumpToOom->setEnabled(hasOom);
}

void AnalysisViews::raiseFrontTab() {
    if (!m_job) {
        m_flameDock->raise();
        return;
    }
    bool hasOom = false;
    for (const analysis::GpuSeries& g : m_job->gpus) {
        hasOom = hasOom || !g.ooms.empty();
    }
    const bool anyMemory =
        std::any_of(m_job->gpus.begin(), m_job->gpus.end(),
                    [](const analysis::GpuSeries& g) { return g.memory.hasData(); });
    // The analysis tab in front is the one with something to show: without kernels the idle gaps
    // have nothing to list (the segments at an OOM, else the leak verdict); without memory the
    // flame view has nothing (the idle gaps); else what is alive (the flame).
    if (m_job->kernels.empty()) {
        (hasOom ? m_segmentsDock : m_leakDock)->raise();
    } else {
        (anyMemory ? m_flameDock : m_gapsDock)->raise();
    }
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
    // Asked for by name (a --view, Jump to OOM): the panel gets room to be read, 45 % of the
    // window's height, as a shown view should.
    m_window->resizeDocks({m_flameDock}, {m_window->height() * 45 / 100}, Qt::Vertical);
}

}  // namespace vramscope::app
