#include "analysis_views.h"

#include <QAction>
#include <QDockWidget>
#include <QScrollArea>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include "main_window.h"
#include "vramscope/widgets/advice_panel.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/gap_table_model.h"
#include "vramscope/widgets/leak_panel.h"
#include "vramscope/widgets/memory_plot.h"

namespace vramscope::app {

namespace {

QDockWidget* makeDock(MainWindow* window, QWidget* panel, const QString& title,
                      const QString& objectName) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(objectName);
    dock->setWidget(panel);
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
      m_advice(new widgets::AdvicePanel) {
    m_flameDock =
        makeDock(window, m_flame, tr("Allocation flame view"), QStringLiteral("FlameDock"));
    m_gapsDock = makeDock(window, m_gaps, tr("Idle gaps"), QStringLiteral("GapsDock"));
    m_leakDock = makeDock(window, m_leak, tr("Leak"), QStringLiteral("LeakDock"));
    m_adviceDock = makeDock(window, m_advice, tr("Advice and cost"), QStringLiteral("AdviceDock"));
    window->addDockWidget(Qt::BottomDockWidgetArea, m_flameDock);
    window->splitDockWidget(m_flameDock, m_gapsDock, Qt::Horizontal);
    window->tabifyDockWidget(m_gapsDock, m_leakDock);
    window->tabifyDockWidget(m_leakDock, m_adviceDock);
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
    bar->addSeparator();
    for (QDockWidget* dock : {m_flameDock, m_gapsDock, m_leakDock, m_adviceDock}) {
        bar->addAction(dock->toggleViewAction());
    }

    window->addView(QStringLiteral("flame"), [this] { showDock(m_flameDock); });
    window->addView(QStringLiteral("gaps"), [this] { showDock(m_gapsDock); });
    window->addView(QStringLiteral("leak"), [this] { showDock(m_leakDock); });
    window->addView(QStringLiteral("advice"), [this] { showDock(m_adviceDock); });
    window->addView(QStringLiteral("oom"), [this] { jumpToOom(); });
    window->addView(QStringLiteral("lanes"), [this] {
        finishAnalyses();
        m_window->centralTabs()->setCurrentWidget(m_lanesTab);
        m_dockPercent = 25;
        fitDocks();
    });

    connect(window, &MainWindow::jobChanged, this, &AnalysisViews::startAnalyses);
    connect(m_leak, &widgets::LeakPanel::survivorSelected, this,
            [this](widgets::GpuKey gpu, trace::StackId stack) {
                m_flameDock->show();
                m_flame->highlightStack(gpu, stack);
            });
}

AnalysisViews::~AnalysisViews() {
    if (m_worker) {
        m_worker->join();
    }
}

void AnalysisViews::startAnalyses(std::shared_ptr<const widgets::LoadedJob> job) {
    if (m_worker) {
        m_worker->join();  // the previous job's analyses; their result is dropped below
        m_worker.reset();
    }
    const uint64_t generation = ++m_generation;
    m_pending = std::make_shared<std::shared_ptr<const widgets::JobAnalyses>>();
    apply(nullptr);
    if (!job) {
        return;
    }
    m_window->statusBar()->showMessage(tr("Analysing the job..."));
    // Once the window has its size (the first turn of the event loop after a job arrives), the
    // bottom docks take their share of the height: little for the timeline, more for a panel.
    QTimer::singleShot(0, this, &AnalysisViews::fitDocks);
    auto pending = m_pending;
    m_worker = std::make_unique<std::thread>([this, job, pending, generation] {
        *pending = widgets::analyzeJob(job);
        QMetaObject::invokeMethod(
            this,
            [this, generation] {
                if (generation == m_generation) {
                    finishAnalyses();
                }
            },
            Qt::QueuedConnection);
    });
}

void AnalysisViews::finishAnalyses() {
    if (!m_worker) {
        return;
    }
    m_worker->join();
    m_worker.reset();
    apply(*m_pending);
    m_window->statusBar()->clearMessage();
}

void AnalysisViews::apply(std::shared_ptr<const widgets::JobAnalyses> analyses) {
    m_analyses = std::move(analyses);
    m_flame->setAnalyses(m_analyses);
    m_lanes->setAnalyses(m_analyses);
    m_gaps->setAnalyses(m_analyses);
    m_leak->setAnalyses(m_analyses);
    m_advice->setAnalyses(m_analyses);
    bool hasOom = false;
    if (m_analyses) {
        for (const widgets::GpuSeries& g : m_analyses->job->gpus) {
            hasOom = hasOom || !g.ooms.empty();
        }
        if (!m_analyses->problem.empty()) {
            m_window->statusBar()->showMessage(
                tr("Some analyses failed: %1").arg(QString::fromStdString(m_analyses->problem)),
                10000);
        }
    }
    m_jumpToOom->setEnabled(hasOom);
}

void AnalysisViews::jumpToOom() {
    finishAnalyses();
    m_window->centralTabs()->setCurrentIndex(0);
    showDock(m_flameDock);
    if (!m_flame->showOom()) {
        m_window->statusBar()->showMessage(tr("This job has no out-of-memory event."), 5000);
    }
}

void AnalysisViews::showDock(QDockWidget* dock) {
    finishAnalyses();
    dock->show();
    dock->raise();
    m_dockPercent = 45;  // room for the panel
    fitDocks();
}

void AnalysisViews::fitDocks() {
    m_window->resizeDocks({m_flameDock}, {m_window->height() * m_dockPercent / 100}, Qt::Vertical);
}

}  // namespace vramscope::app
