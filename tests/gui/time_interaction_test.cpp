// The one time <-> pixel mapping and the one mouse/wheel navigation of the five time views.
#include <QApplication>
#include <QMouseEvent>
#include <QWheelEvent>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "panels_fixture.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/heat_strip.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/range_lane.h"
#include "vramscope/widgets/time_axis_bar.h"
#include "vramscope/widgets/time_interaction.h"
#include "vramscope/widgets/time_mapper.h"

using namespace vramscope;
using analysis::GpuKey;
using widgets::TimeInteraction;
using widgets::TimeMapper;
using widgets::TimeRange;
using widgets::ZoomState;

TEST(TimeMapper, MapsBothWaysByTheLinearFormula) {
    // 2,000 ns over 500 px: 4 ns per px, startNs at x = 100.
    const TimeMapper m{{1000, 3000}, 100.0, 600.0};
    EXPECT_DOUBLE_EQ(m.widthPx(), 500.0);
    EXPECT_DOUBLE_EQ(m.spanNs(), 2000.0);
    EXPECT_DOUBLE_EQ(m.nsPerPixel(), 4.0);
    EXPECT_EQ(m.timeAt(100.0), 1000);
    EXPECT_EQ(m.timeAt(600.0), 3000);
    EXPECT_EQ(m.timeAt(225.0), 1500);  // 125 px * 4
    EXPECT_EQ(m.timeAt(50.0), 800);    // left of the plot: before startNs, not clamped
    EXPECT_EQ(m.timeAt(700.0), 3400);  // right of it: after endNs
    // Half a ns rounds away from zero on both sides of startNs.
    EXPECT_EQ(m.timeAt(100.125), 1001);
    EXPECT_EQ(m.timeAt(99.875), 999);
    EXPECT_EQ(m.timeAt(100.1), 1000);  // 0.4 ns
    EXPECT_EQ(m.durationAt(-10.0), -40);
    EXPECT_EQ(m.durationAt(0.3), 1);  // 1.2 ns
    EXPECT_DOUBLE_EQ(m.xAt(1000), 100.0);
    EXPECT_DOUBLE_EQ(m.xAt(3000), 600.0);
    EXPECT_DOUBLE_EQ(m.xAt(1500), 225.0);
    EXPECT_DOUBLE_EQ(m.xAt(1001), 100.25);  // not rounded to a pixel
    EXPECT_DOUBLE_EQ(m.xAt(0), -150.0);
    EXPECT_TRUE(m.contains(100.0));
    EXPECT_TRUE(m.contains(600.0));
    EXPECT_FALSE(m.contains(99.9));
    EXPECT_FALSE(m.contains(600.1));
}

TEST(TimeMapper, RoundTripsWithinHalfANanosecond) {
    // Coarse (3,000 ns per px) and fine (0.1 ns per px) views.
    for (const TimeMapper m :
         {TimeMapper{{-2'000'000, 1'000'000}, 80.0, 1080.0}, TimeMapper{{500, 600}, 0.0, 1000.0}}) {
        for (int64_t t = m.range.startNs; t <= m.range.endNs; t += m.range.durationNs() / 97) {
            EXPECT_EQ(m.timeAt(m.xAt(t)), t);
        }
        const double halfNsInPx = 0.5 * m.widthPx() / m.spanNs();
        for (double x = m.left; x <= m.right; x += 7.3) {
            EXPECT_LE(std::abs(m.xAt(m.timeAt(x)) - x), halfNsInPx + 1e-9) << x;
        }
    }
}

TEST(TimeMapper, DegenerateSpansNeverDivideByZero) {
    const TimeMapper collapsed{{0, 1000}, 200.0, 200.0};  // a plot squeezed to nothing
    EXPECT_DOUBLE_EQ(collapsed.widthPx(), 1.0);
    EXPECT_EQ(collapsed.timeAt(201.0), 1000);
    const TimeMapper inverted{{0, 1000}, 300.0, 200.0};  // margins wider than the widget
    EXPECT_DOUBLE_EQ(inverted.widthPx(), 1.0);
    const TimeMapper empty{{5, 5}, 0.0, 100.0};
    EXPECT_DOUBLE_EQ(empty.spanNs(), 1.0);
    EXPECT_DOUBLE_EQ(empty.xAt(5), 0.0);
    EXPECT_DOUBLE_EQ(empty.xAt(6), 100.0);
    EXPECT_TRUE(std::isfinite(empty.xAt(INT64_C(1) << 40)));
}

TEST(TimeInteraction, WheelFactorIsTheStepPerNotch) {
    EXPECT_DOUBLE_EQ(TimeInteraction::wheelZoomFactor(120), 0.8);
    EXPECT_DOUBLE_EQ(TimeInteraction::wheelZoomFactor(-240), 1.0 / 0.64);
    EXPECT_DOUBLE_EQ(TimeInteraction::wheelZoomFactor(60), std::sqrt(0.8));
    EXPECT_DOUBLE_EQ(TimeInteraction::wheelZoomFactor(0), 1.0);
}

namespace {

/// Time under x for a view whose plot runs from `left` over `width` px: the linear formula,
/// written out here rather than taken from TimeMapper.
int64_t timeUnder(TimeRange r, double left, double width, double x) {
    return r.startNs + std::llround((x - left) * static_cast<double>(r.durationNs()) / width);
}

/// One of the five views, with the plot span it was given (or, for the QCustomPlot views, the
/// axis rectangle QCustomPlot laid out), a y inside it and the GPU the cursor should carry there.
struct View {
    std::string name;
    QWidget* widget = nullptr;
    double left = 0;
    double width = 0;
    double y = 0;
    analysis::GpuKey cursorGpu;
};

void sendMouse(QWidget* w, QEvent::Type type, QPointF pos, Qt::MouseButton button,
               Qt::MouseButtons buttons, Qt::KeyboardModifiers mods = Qt::NoModifier) {
    QMouseEvent e(type, pos, w->mapToGlobal(pos), button, buttons, mods);
    QApplication::sendEvent(w, &e);
}

void drag(QWidget* w, QPointF from, const std::vector<QPointF>& path, Qt::MouseButton button,
          Qt::KeyboardModifiers mods = Qt::NoModifier) {
    sendMouse(w, QEvent::MouseButtonPress, from, button, button, mods);
    for (QPointF p : path) {
        sendMouse(w, QEvent::MouseMove, p, Qt::NoButton, button, mods);
    }
    sendMouse(w, QEvent::MouseButtonRelease, path.empty() ? from : path.back(), button,
              Qt::NoButton, mods);
}

bool sendWheel(QWidget* w, QPointF pos, QPoint angleDelta) {
    QWheelEvent e(pos, w->mapToGlobal(pos), QPoint(), angleDelta, Qt::NoButton, Qt::NoModifier,
                  Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &e);
    return e.isAccepted();
}

/// The five time views on one ZoomState, shown offscreen at known sizes and margins.
struct Views {
    std::shared_ptr<const analysis::JobModel> job;
    ZoomState zoom;
    std::unique_ptr<widgets::MemoryPlot> plot;
    std::unique_ptr<widgets::CommLanesView> lanes;
    std::unique_ptr<widgets::HeatStrip> heat;
    std::unique_ptr<widgets::RangeLane> ranges;
    std::unique_ptr<widgets::TimeAxisBar> axis;
    std::vector<View> all;
    TimeRange full;
    TimeRange zoomed;  ///< 40 % of the job from 20 % on: zooms and pans below stay inside it

    Views() {
        analysis::SyntheticJobSpec spec;
        spec.ranks = 2;
        spec.iterations = 4;
        job = panels_test::makeJob(analysis::generateSyntheticJob(spec));
        full = {0, job->durationNs};
        zoomed = {job->durationNs / 5, job->durationNs / 5 + job->durationNs * 2 / 5};
        zoom.setFullRange(full);
        const analysis::GpuKey gpu0 = job->gpus.at(0).key;

        plot = std::make_unique<widgets::MemoryPlot>(job, gpu0, &zoom);
        plot->setLeftMargin(100);
        plot->resize(900, 220);
        lanes = std::make_unique<widgets::CommLanesView>(&zoom);
        lanes->setJob(job);
        lanes->setMargins(300, 20);  // wider than any lane label, so 300 is the left edge
        lanes->resize(1000, 400);
        heat = std::make_unique<widgets::HeatStrip>(&zoom);
        heat->setGpus(job, {gpu0, job->gpus.at(1).key});
        heat->setMargins(90, 10);
        heat->resize(800, heat->height());
        ranges = std::make_unique<widgets::RangeLane>(&zoom);
        ranges->setRank(job, 0);
        ranges->setMargins(120, 30);
        ranges->resize(1100, ranges->height());
        axis = std::make_unique<widgets::TimeAxisBar>(&zoom);
        axis->setMargins(70, 16);
        axis->resize(700, axis->height());
        for (QWidget* w : std::initializer_list<QWidget*>{plot.get(), lanes.get(), heat.get(),
                                                          ranges.get(), axis.get()}) {
            w->show();
        }
        QApplication::processEvents();
        plot->replot();  // lays the axis rectangle out for the current size
        axis->replot();

        all.push_back({"MemoryPlot", plot.get(), double(plot->axisRect()->left()),
                       double(plot->axisRect()->width()), double(plot->axisRect()->center().y()),
                       gpu0});
        all.push_back({"CommLanesView", lanes.get(), 300, 1000 - 300 - 20,
                       lanes->lanes().at(0).top + 2.0, lanes->lanes().at(0).key});
        all.push_back({"HeatStrip", heat.get(), 90, 800 - 90 - 10, 5, gpu0});
        // Below the rows: a click there hits no range (a click on one zooms to it).
        all.push_back(
            {"RangeLane", ranges.get(), 120, 1100 - 120 - 30, ranges->height() - 1.0, {}});
        all.push_back({"TimeAxisBar",
                       axis.get(),
                       double(axis->axisRect()->left()),
                       double(axis->axisRect()->width()),
                       axis->height() / 2.0,
                       {}});
    }
};

}  // namespace

TEST(TimeInteraction, QCustomPlotViewsMapLikeTheirAxis) {
    Views v;
    ASSERT_TRUE(v.ranges->isVisible()) << "the synthetic job has iterations";
    v.zoom.setVisibleRange(v.zoomed);
    // QCustomPlot's own pixel -> coordinate conversion is an independent reference.
    for (QCustomPlot* plot : std::initializer_list<QCustomPlot*>{v.plot.get(), v.axis.get()}) {
        plot->replot();
        const TimeMapper m = plot == v.plot.get() ? v.plot->mapper() : v.axis->mapper();
        for (double x : {m.left, m.left + 123.5, m.right}) {
            EXPECT_EQ(m.timeAt(x), std::llround(plot->xAxis->pixelToCoord(x)));
            EXPECT_NEAR(m.xAt(m.timeAt(x)), x, 1e-6 + 0.5 / m.nsPerPixel());
        }
    }
    // The other views' spans are the margins they were given.
    EXPECT_DOUBLE_EQ(v.lanes->mapper().left, 300.0);
    EXPECT_DOUBLE_EQ(v.lanes->mapper().right, 980.0);
    EXPECT_DOUBLE_EQ(v.heat->mapper().left, 90.0);
    EXPECT_DOUBLE_EQ(v.heat->mapper().right, 790.0);
    EXPECT_DOUBLE_EQ(v.ranges->mapper().left, 120.0);
    EXPECT_DOUBLE_EQ(v.ranges->mapper().right, 1070.0);
}

TEST(TimeInteraction, WheelZoomsAroundTheTimeUnderThePointerOnEveryView) {
    Views v;
    for (const View& view : v.all) {
        SCOPED_TRACE(view.name);
        for (const int delta : {120, -240, 60}) {
            v.zoom.setVisibleRange(v.zoomed);
            const double x = view.left + 0.25 * view.width + 0.5;
            const auto anchor = static_cast<double>(timeUnder(v.zoomed, view.left, view.width, x));
            const double f = std::pow(0.8, delta / 120.0);
            const TimeRange expected{
                std::llround(anchor - (anchor - static_cast<double>(v.zoomed.startNs)) * f),
                std::llround(anchor + (static_cast<double>(v.zoomed.endNs) - anchor) * f)};
            EXPECT_TRUE(sendWheel(view.widget, {x, view.y}, {0, delta}));
            EXPECT_EQ(v.zoom.visibleRange(), expected) << delta;
        }
        // A sideways turn is not a zoom (the filter passes it on to the view and its parents).
        v.zoom.setVisibleRange(v.zoomed);
        sendWheel(view.widget, {view.left + 50, view.y}, {120, 0});
        EXPECT_EQ(v.zoom.visibleRange(), v.zoomed);
    }
}

TEST(TimeInteraction, LeftDragPansByTheDraggedTimeOnEveryView) {
    Views v;
    for (const View& view : v.all) {
        SCOPED_TRACE(view.name);
        v.zoom.setVisibleRange(v.zoomed);
        const QPointF from(view.left + 200, view.y);
        const double nsPerPx = static_cast<double>(v.zoomed.durationNs()) / view.width;
        sendMouse(view.widget, QEvent::MouseButtonPress, from, Qt::LeftButton, Qt::LeftButton);
        sendMouse(view.widget, QEvent::MouseMove, from + QPointF(100, 0), Qt::NoButton,
                  Qt::LeftButton);
        // Dragged right by 100 px: the view shows 100 px worth of earlier time.
        const int64_t d1 = std::llround(100 * nsPerPx);
        EXPECT_EQ(v.zoom.visibleRange(), (TimeRange{v.zoomed.startNs - d1, v.zoomed.endNs - d1}));
        sendMouse(view.widget, QEvent::MouseMove, from + QPointF(-150.5, 2), Qt::NoButton,
                  Qt::LeftButton);
        sendMouse(view.widget, QEvent::MouseButtonRelease, from + QPointF(-150.5, 2),
                  Qt::LeftButton, Qt::NoButton);
        // Measured from the press, not from the previous move.
        const int64_t d2 = std::llround(150.5 * nsPerPx);
        EXPECT_EQ(v.zoom.visibleRange(), (TimeRange{v.zoomed.startNs + d2, v.zoomed.endNs + d2}));
        EXPECT_FALSE(v.zoom.hasSelection());
    }
}

TEST(TimeInteraction, MovesWithinTheThresholdNeitherPanNorSelect) {
    Views v;
    const double t = TimeInteraction::kDragThresholdPx;
    EXPECT_DOUBLE_EQ(t, 3.0);
    for (const View& view : v.all) {
        SCOPED_TRACE(view.name);
        v.zoom.setVisibleRange(v.zoomed);
        v.zoom.clearSelection();
        const QPointF from(view.left + 300, view.y);
        drag(view.widget, from, {from + QPointF(t, 0), from + QPointF(-t, t), from + QPointF(t, t)},
             Qt::LeftButton);
        EXPECT_EQ(v.zoom.visibleRange(), v.zoomed);
        drag(view.widget, from, {from + QPointF(t, -t)}, Qt::LeftButton, Qt::ShiftModifier);
        EXPECT_FALSE(v.zoom.hasSelection());
        // One pixel more starts the pan.
        drag(view.widget, from, {from + QPointF(t + 1, 0)}, Qt::LeftButton);
        const int64_t d =
            std::llround((t + 1) * static_cast<double>(v.zoomed.durationNs()) / view.width);
        EXPECT_EQ(v.zoom.visibleRange(), (TimeRange{v.zoomed.startNs - d, v.zoomed.endNs - d}));
    }
}

TEST(TimeInteraction, ShiftOrRightDragSelectsAndARightClickClears) {
    Views v;
    for (const View& view : v.all) {
        SCOPED_TRACE(view.name);
        for (const auto& [button, mods] : {std::pair{Qt::LeftButton, Qt::ShiftModifier},
                                           std::pair{Qt::RightButton, Qt::NoModifier}}) {
            v.zoom.setVisibleRange(v.zoomed);
            v.zoom.clearSelection();
            const QPointF from(view.left + 250.25, view.y);
            const QPointF to(view.left + 90, view.y + 1);
            drag(view.widget, from, {from + QPointF(40, 0), to}, button, mods);
            EXPECT_EQ(v.zoom.visibleRange(), v.zoomed);
            // Normalised: the drag went right to left.
            EXPECT_EQ(v.zoom.selection(),
                      (TimeRange{timeUnder(v.zoomed, view.left, view.width, to.x()),
                                 timeUnder(v.zoomed, view.left, view.width, from.x())}));
        }
        drag(view.widget, {view.left + 10, view.y}, {}, Qt::RightButton);
        EXPECT_FALSE(v.zoom.hasSelection());
    }
}

TEST(TimeInteraction, DoubleClickShowsTheWholeJobOnEveryView) {
    Views v;
    for (const View& view : v.all) {
        SCOPED_TRACE(view.name);
        v.zoom.setVisibleRange(v.zoomed);
        // As Qt delivers it: press, release, double click, release.
        const QPointF at(view.left + 400, view.y);
        drag(view.widget, at, {}, Qt::LeftButton);
        sendMouse(view.widget, QEvent::MouseButtonDblClick, at, Qt::LeftButton, Qt::LeftButton);
        sendMouse(view.widget, QEvent::MouseButtonRelease, at, Qt::LeftButton, Qt::NoButton);
        EXPECT_EQ(v.zoom.visibleRange(), v.full);
    }
}

TEST(TimeInteraction, CursorFollowsThePointerOverThePlotOnly) {
    Views v;
    for (const View& view : v.all) {
        SCOPED_TRACE(view.name);
        v.zoom.setVisibleRange(v.zoomed);
        const double x = view.left + 333.7;
        sendMouse(view.widget, QEvent::MouseMove, {x, view.y}, Qt::NoButton, Qt::NoButton);
        ASSERT_TRUE(v.zoom.hasCursor());
        EXPECT_EQ(v.zoom.cursorNs(), timeUnder(v.zoomed, view.left, view.width, x));
        EXPECT_EQ(v.zoom.cursorGpu(), view.cursorGpu);
        sendMouse(view.widget, QEvent::MouseMove, {view.left + view.width, view.y}, Qt::NoButton,
                  Qt::NoButton);
        EXPECT_EQ(v.zoom.cursorNs(), v.zoomed.endNs);
        // Over the labels in the left margin there is no time to point at.
        sendMouse(view.widget, QEvent::MouseMove, {view.left - 5, view.y}, Qt::NoButton,
                  Qt::NoButton);
        EXPECT_FALSE(v.zoom.hasCursor());
        sendMouse(view.widget, QEvent::MouseMove, {x, view.y}, Qt::NoButton, Qt::NoButton);
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(view.widget, &leave);
        EXPECT_FALSE(v.zoom.hasCursor());
    }
}

TEST(TimeInteraction, ClicksGoToTheView) {
    Views v;
    v.zoom.setVisibleRange(v.zoomed);
    // A plot click picks its GPU and the time under the pointer (within the threshold).
    const View& plot = v.all[0];
    const QPointF at(plot.left + 210, plot.y);
    drag(plot.widget, at, {at + QPointF(2, 0)}, Qt::LeftButton);
    EXPECT_EQ(v.zoom.selectedGpu(), plot.cursorGpu);
    EXPECT_EQ(v.zoom.selectedTimeNs(), timeUnder(v.zoomed, plot.left, plot.width, at.x() + 2));
    // A heat strip click picks the GPU of the row under it (row 1: y from 16 to 30).
    const View& heat = v.all[2];
    drag(heat.widget, {heat.left + 40, 20}, {}, Qt::LeftButton);
    EXPECT_EQ(v.zoom.selectedGpu(), v.job->gpus.at(1).key);
    EXPECT_EQ(v.zoom.selectedTimeNs(), timeUnder(v.zoomed, heat.left, heat.width, heat.left + 40));
    // A range lane click zooms to the iteration under it, with 1/50 of its length either side.
    v.zoom.resetZoom();
    const View& lane = v.all[3];
    const analysis::RangeSpan* it = nullptr;
    for (const analysis::RangeSpan& s : v.job->ranks[0].ranges) {
        if (s.kind == trace::RangeKind::Iteration && (!it || s.startNs < it->startNs)) {
            it = &s;
        }
    }
    ASSERT_NE(it, nullptr);
    const double mid = lane.left + (static_cast<double>(it->startNs + it->endNs) / 2.0 -
                                    static_cast<double>(v.full.startNs)) *
                                       lane.width / static_cast<double>(v.full.durationNs());
    drag(lane.widget, {mid, 5}, {}, Qt::LeftButton);
    const int64_t pad = std::max<int64_t>(1, (it->endNs - it->startNs) / 50);
    EXPECT_EQ(v.zoom.visibleRange(), (TimeRange{it->startNs - pad, it->endNs + pad}));
}
