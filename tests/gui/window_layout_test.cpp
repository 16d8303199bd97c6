// The main window's default layout: the timeline keeps most of the window at common screen sizes,
// View > Reset Layout brings the default back after docks were moved, a state saved by an older
// layout is not restored, and a job without memory events opens on the communication lanes.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QTabWidget>

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "job_loader.h"
#include "main_window.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/details_panel.h"
#include "vramscope/widgets/heat_strip.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/zoom_state.h"
#include "window_layout.h"
#include "window_test_support.h"

using namespace vramscope;

namespace {

using window_test::bundledSample;

using window_test::settle;

/// Share of the window's area taken by the central widget (the tabs of the timeline and lanes),
/// from the two widgets' geometries.
double centreShare(const app::MainWindow& window) {
    const QSize c = window.centralWidget()->size();
    return double(c.width()) * c.height() / (double(window.width()) * window.height());
}

/// Where each dock is: its area, whether it shows, and the docks tabbed with it.
struct DockPlace {
    Qt::DockWidgetArea area;
    bool visible;
    bool floating;
    std::set<QString> tabbedWith;
    bool operator==(const DockPlace&) const = default;
};

std::map<QString, DockPlace> places(app::MainWindow& window) {
    std::map<QString, DockPlace> out;
    for (QDockWidget* d : window.findChildren<QDockWidget*>()) {
        DockPlace p{window.dockWidgetArea(d), d->isVisible(), d->isFloating(), {}};
        for (QDockWidget* t : window.tabifiedDockWidgets(d)) {
            p.tabbedWith.insert(t->objectName());
        }
        out[d->objectName()] = p;
    }
    return out;
}

class WindowLayout : public ::testing::TestWithParam<QSize> {};

}  // namespace

TEST_P(WindowLayout, TheTimelineTakesAtLeastHalfTheWindow) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    ASSERT_FALSE(window.layoutRestored()) << "tests run with their own, empty settings";
    window.setJob(job);
    window.resize(GetParam());
    window.show();
    settle();
    ASSERT_EQ(window.size(), GetParam());
    EXPECT_GE(centreShare(window), 0.5)
        << "centre " << window.centralWidget()->width() << "x" << window.centralWidget()->height();
    // The analysis docks start tabbed: one of them shows, the others are tabs behind it.
    const auto* flame = window.findChild<QDockWidget*>(QStringLiteral("FlameDock"));
    ASSERT_TRUE(flame);
    EXPECT_EQ(window.tabifiedDockWidgets(const_cast<QDockWidget*>(flame)).size(),
              6);  // the 7 bottom docks of window_layout.cpp
    EXPECT_EQ(window.dockWidgetArea(const_cast<QDockWidget*>(flame)), Qt::BottomDockWidgetArea);
}

INSTANTIATE_TEST_SUITE_P(CommonScreens, WindowLayout,
                         ::testing::Values(QSize(1366, 768), QSize(1920, 1080), QSize(2560, 1440)));

TEST(WindowLayout, ResetLayoutAfterMovingDocksGivesTheDefaultAgain) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.setJob(job);
    window.resize(1600, 1000);
    window.show();
    settle();
    const std::map<QString, DockPlace> before = places(window);
    const QSize centreBefore = window.centralWidget()->size();
    ASSERT_GE(before.size(), 7u);

    auto* flame = window.findChild<QDockWidget*>(QStringLiteral("FlameDock"));
    auto* details = window.findChild<QDockWidget*>(QStringLiteral("DetailsDock"));
    auto* leak = window.findChild<QDockWidget*>(QStringLiteral("LeakDock"));
    auto* devices = window.findChild<QDockWidget*>(QStringLiteral("DevicesDock"));
    ASSERT_TRUE(flame && details && leak && devices);
    window.addDockWidget(Qt::RightDockWidgetArea, flame);
    window.addDockWidget(Qt::TopDockWidgetArea, leak);
    details->hide();
    devices->setFloating(true);
    window.resizeDocks({leak}, {500}, Qt::Vertical);
    settle();
    ASSERT_NE(places(window), before);

    auto* reset = window.findChild<QAction*>(QStringLiteral("ResetLayoutAction"));
    ASSERT_TRUE(reset);
    reset->trigger();
    settle();
    EXPECT_EQ(places(window), before);
    // The same sizes, within the few pixels of a splitter handle.
    EXPECT_NEAR(window.centralWidget()->width(), centreBefore.width(), 8);
    EXPECT_NEAR(window.centralWidget()->height(), centreBefore.height(), 8);
    EXPECT_FALSE(flame->visibleRegion().isEmpty()) << "the sample's front tab is the flame view";
}

TEST(WindowLayout, AStateSavedByAnOlderLayoutIsNotRestored) {
    QByteArray oldState;
    {
        app::MainWindow window;
        window.resize(1400, 900);
        window.show();
        settle();
        auto* flame = window.findChild<QDockWidget*>(QStringLiteral("FlameDock"));
        window.addDockWidget(Qt::TopDockWidgetArea, flame);
        oldState = window.saveState(app::kWindowStateVersion - 1);
        ASSERT_TRUE(window.restoreState(window.saveState(app::kWindowStateVersion),
                                        app::kWindowStateVersion));
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/state"), oldState);
    {
        app::MainWindow window;
        EXPECT_FALSE(window.layoutRestored());
        auto* flame = window.findChild<QDockWidget*>(QStringLiteral("FlameDock"));
        EXPECT_EQ(window.dockWidgetArea(flame), Qt::BottomDockWidgetArea);
        window.show();
        settle();
        window.close();  // saves this layout's state
    }
    {
        app::MainWindow window;
        EXPECT_TRUE(window.layoutRestored()) << "a state of this version comes back";
    }
    settings.remove(QStringLiteral("window/state"));
    settings.remove(QStringLiteral("window/geometry"));
}

TEST(WindowLayout, AJobWithoutMemoryEventsOpensOnTheLanesAndSaysWhyTheDetailsAreEmpty) {
    const std::string path = realdata::kDlrmJob;
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto loaded = app::loadJobModel({path});
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    app::MainWindow window;
    window.setJob(loaded.value());
    window.resize(1366, 768);
    window.show();
    settle();
    EXPECT_EQ(window.centralTabs()->tabText(window.centralTabs()->currentIndex()),
              QStringLiteral("Communication lanes"));
    // The realdata README: 8 NCCL kernels per rank, no [memory] events. The details say so and
    // name where allocation events come from.
    const QString text = window.details()->headingText();
    EXPECT_TRUE(text.contains(QStringLiteral("no allocation events"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("profile_memory=True"))) << text.toStdString();
}

namespace {

/// A synthetic job of `ranks` ranks, one 80 GiB GPU each (analysis/synthetic_job.h).
std::shared_ptr<const analysis::JobModel> synthetic(int ranks) {
    analysis::SyntheticJobSpec spec;
    spec.ranks = ranks;
    spec.iterations = 4;
    trace::Job job;
    int r = 0;
    for (trace::TraceData& d : analysis::generateSyntheticJob(spec)) {
        trace::RankTrace rt;
        rt.path = "rank" + std::to_string(r++) + ".vscope";
        rt.trace.data = std::move(d);
        job.ranks.push_back(std::move(rt));
    }
    auto built = analysis::buildJobModel(std::move(job), "synth");
    EXPECT_TRUE(built.ok());
    return built.ok() ? built.value() : nullptr;
}

}  // namespace

TEST(TimelineLayout, NoPlotIsPaintedOverTheHeatStripOfSixteenGpus) {
    const auto first = bundledSample();
    const auto job = synthetic(16);
    ASSERT_TRUE(first && job);
    app::MainWindow window;
    window.resize(1920, 1080);
    window.show();
    window.setJob(first);  // a job open before, as when the user opens a second one
    settle();
    window.setJob(job);
    settle();
    window.zoomState()->setSelectedGpu(job->gpus.at(5).key, 0);
    settle();
    widgets::TimelineView* timeline = window.timeline();
    ASSERT_TRUE(timeline->isCompact());
    const widgets::HeatStrip* heat = timeline->heatStrip();
    const QRect strip(heat->mapTo(timeline, QPoint(0, 0)), heat->size());
    int shown = 0;
    for (const widgets::MemoryPlot* p : timeline->findChildren<widgets::MemoryPlot*>()) {
        if (!p->isVisible()) {
            continue;
        }
        ++shown;
        const QRect r(p->mapTo(timeline, QPoint(0, 0)), p->size());
        EXPECT_FALSE(r.intersects(strip)) << "plot at " << r.y() << ".." << r.bottom() << ", strip "
                                          << strip.y() << ".." << strip.bottom();
    }
    EXPECT_EQ(shown, 1);
}

TEST(TimelineLayout, StackedPlotsKeepAReadableHeightAndTheTimelineScrolls) {
    const auto job = synthetic(8);
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.timeline()->setLayoutMode(widgets::TimelineView::LayoutMode::Stacked);
    window.setJob(job);
    window.resize(1366, 768);
    window.show();
    settle();
    ASSERT_EQ(window.timeline()->plots().size(), 8u);
    // A title line and five lines of axis: what two memory labels and the peak label need.
    const int readable = 6 * window.fontMetrics().height();
    for (const widgets::MemoryPlot* p : window.timeline()->plots()) {
        EXPECT_GE(p->height(), readable);
    }
    const auto* scroll = window.timeline()->findChild<QScrollArea*>();
    ASSERT_TRUE(scroll);
    EXPECT_GT(scroll->verticalScrollBar()->maximum(), 0) << "8 plots do not fit in 768 px";
}

TEST(TimelineLayout, CapacityAboveTheAxisIsMarkedAtThePlotsTopEdge) {
    // The sample's GPU 0: peak 18 GiB of 80 GiB (resources/README.md), so neither the capacity
    // nor the 80 % line (64 GiB, by hand) is within the memory axis at the default zoom.
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.setJob(job);
    window.resize(1600, 1000);
    window.show();
    settle();
    const widgets::MemoryPlot* plot = window.timeline()->plots().front();
    ASSERT_LT(plot->yAxis->range().upper, 64.0 * (1ll << 30));
    const QCPItemText* marker = plot->offScaleMarker();
    ASSERT_TRUE(marker);
    EXPECT_TRUE(marker->visible());
    EXPECT_TRUE(marker->text().contains(QStringLiteral("capacity 80.0 GiB")))
        << marker->text().toStdString();
    EXPECT_TRUE(marker->text().contains(QStringLiteral("64.0 GiB")))
        << marker->text().toStdString();
    // Scaled to capacity the lines are on screen and the marker goes.
    window.timeline()->setScaleToCapacity(true);
    EXPECT_GE(plot->yAxis->range().upper, 80.0 * (1ll << 30));
    EXPECT_FALSE(marker->visible());
}
