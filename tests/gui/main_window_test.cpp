// The main window on the bundled sample and on real traces: one plot per GPU, plotted data equal
// to a replay of the events written here and to the sample's formulas, shared zoom, details equal
// to an independent replay, screenshots.
#include <QApplication>
#include <QDockWidget>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "job_loader.h"
#include "main_window.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/details_panel.h"
#include "vramscope/widgets/device_tree_model.h"
#include "vramscope/widgets/heat_strip.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/zoom_state.h"
#include "window_test_support.h"

using namespace vramscope;

namespace {

using window_test::bundledSample;

/// (rank index, device) of every GPU a rank's trace mentions in its header, memory events or
/// memory counters: what should get a plot.
std::set<std::pair<int, trace::DeviceIndex>> gpusMentioned(const trace::Job& job) {
    std::set<std::pair<int, trace::DeviceIndex>> out;
    for (size_t r = 0; r < job.ranks.size(); ++r) {
        const trace::TraceData& d = job.ranks[r].trace.data;
        for (const trace::DeviceInfo& dev : d.header.devices) {
            out.insert({static_cast<int>(r), dev.index});
        }
        for (size_t i = 0; i < d.memory.size(); ++i) {
            if (toInt(d.memory.device[i]) >= 0) {
                out.insert({static_cast<int>(r), d.memory.device[i]});
            }
        }
        for (size_t i = 0; i < d.counters.size(); ++i) {
            if (d.counters.kind[i] != trace::CounterKind::Generic &&
                toInt(d.counters.device[i]) >= 0) {
                out.insert({static_cast<int>(r), d.counters.device[i]});
            }
        }
    }
    return out;
}

std::pair<double, double> graphMinMax(const QCPGraph* graph) {
    double lo = std::numeric_limits<double>::max();
    double hi = std::numeric_limits<double>::lowest();
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
        lo = std::min(lo, it->value);
        hi = std::max(hi, it->value);
    }
    return {lo, hi};
}

/// Allocations of `level` on `device` alive at `t`, replayed from the raw events here: events
/// taken in time order (ties in file order), an alloc at or before t adds its address, a free at
/// or before t removes it. Returns (size, address) pairs, sorted.
std::vector<std::pair<uint64_t, uint64_t>> replayLiveSet(const trace::TraceData& d,
                                                         trace::DeviceIndex device,
                                                         trace::MemoryLevel level, int64_t t) {
    std::vector<size_t> order;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.device[i] == device && d.memory.level[i] == level &&
            d.memory.timestampNs[i] <= t) {
            order.push_back(i);
        }
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return d.memory.timestampNs[a] < d.memory.timestampNs[b];
    });
    std::map<uint64_t, uint64_t> live;
    for (size_t i : order) {
        if (d.memory.action[i] == trace::MemoryAction::Alloc) {
            live[d.memory.address[i]] = d.memory.sizeBytes[i];
        } else {
            live.erase(d.memory.address[i]);
        }
    }
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const auto& [address, size] : live) {
        out.emplace_back(size, address);
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// One level's curve on `device`, replayed here from the raw memory events (the expected values
/// of the plots; the analysis library is not asked): events stable-sorted by time; an alloc adds
/// its size under its address, a free takes away what its address holds (its own size when the
/// address holds nothing); DeviceStatic memory is left out, as the timeline's contract says;
/// events at one time give one step, the value after all of them. Returns (time, bytes) steps.
std::vector<std::pair<int64_t, int64_t>> replayCurve(const trace::TraceData& d,
                                                     trace::DeviceIndex device,
                                                     trace::MemoryLevel level) {
    std::vector<size_t> order;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.device[i] == device && d.memory.level[i] == level &&
            d.memory.kind[i] != trace::MemoryKind::DeviceStatic) {
            order.push_back(i);
        }
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return d.memory.timestampNs[a] < d.memory.timestampNs[b];
    });
    std::map<uint64_t, int64_t> live;
    std::vector<std::pair<int64_t, int64_t>> steps;
    int64_t bytes = 0;
    for (size_t i : order) {
        const uint64_t address = d.memory.address[i];
        if (d.memory.action[i] == trace::MemoryAction::Alloc) {
            live[address] = int64_t(d.memory.sizeBytes[i]);
            bytes += int64_t(d.memory.sizeBytes[i]);
        } else if (const auto it = live.find(address); it != live.end()) {
            bytes -= it->second;
            live.erase(it);
        } else {
            bytes -= int64_t(d.memory.sizeBytes[i]);
        }
        const int64_t t = d.memory.timestampNs[i];
        if (!steps.empty() && steps.back().first == t) {
            steps.back().second = bytes;
        } else {
            steps.emplace_back(t, bytes);
        }
    }
    return steps;
}

/// The spec the bundled sample was made with (resources/README.md): 4 ranks, 10 iterations, rank
/// 1 leaks 512 MiB per iteration, rank 3 straggles, defaults otherwise.
analysis::SyntheticJobSpec sampleSpec() {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 4;
    spec.iterations = 10;
    spec.leakBytesPerIteration = 512ull << 20;
    spec.leakRank = 1;
    spec.stragglerRank = 3;
    spec.seed = 1;
    return spec;
}

using window_test::settle;

}  // namespace

TEST(MainWindow, ShowsOnePlotPerGpuOfTheSample) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.setJob(job);
    window.resize(1400, 900);
    window.show();
    settle();
    const std::set<std::pair<int, trace::DeviceIndex>> expected = gpusMentioned(job->job);
    ASSERT_FALSE(expected.empty());
    const auto& plots = window.timeline()->plots();
    if (static_cast<int>(expected.size()) > widgets::TimelineView::kCompactThreshold) {
        EXPECT_TRUE(window.timeline()->isCompact());
        window.timeline()->setLayoutMode(widgets::TimelineView::LayoutMode::Stacked);
    }
    std::set<std::pair<int, trace::DeviceIndex>> plotted;
    for (const widgets::MemoryPlot* plot : window.timeline()->plots()) {
        plotted.insert({plot->gpu().rankIndex, plot->gpu().device});
    }
    EXPECT_EQ(plotted, expected);
    EXPECT_EQ(plots.size(), expected.size());
}

TEST(MainWindow, PlottedMinAndMaxEqualTheReplayedEventsWhenZoomedOut) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.timeline()->setLayoutMode(widgets::TimelineView::LayoutMode::Stacked);
    window.setJob(job);
    window.resize(1400, 900);
    window.show();
    settle();
    // The sample's figures from synthetic_job.h: allocated starts at the weights W and peaks at
    // W + O + A a + N L_r; reserved grows in segments of g from ceil(W / g) g to
    // ceil(peak / g) g.
    const analysis::SyntheticJobSpec spec = sampleSpec();
    const auto roundUp = [&](uint64_t b) {
        return int64_t((b + spec.segmentBytes - 1) / spec.segmentBytes * spec.segmentBytes);
    };
    ASSERT_EQ(window.timeline()->plots().size(), size_t(spec.ranks));
    for (widgets::MemoryPlot* plot : window.timeline()->plots()) {
        const auto& data = job->job.ranks[static_cast<size_t>(plot->gpu().rankIndex)].trace.data;
        ASSERT_EQ(data.counters.size(), 0u) << "the sample's curves come from its events alone";
        const int rank = toInt(data.header.rank);
        const uint64_t leak = rank == spec.leakRank ? spec.leakBytesPerIteration : 0;
        const uint64_t peak = spec.weightBytes + spec.optimizerBytes +
                              spec.activationsPerIteration * spec.activationBytes +
                              spec.iterations * leak;
        const std::pair<int64_t, int64_t> formula[] = {{int64_t(spec.weightBytes), int64_t(peak)},
                                                       {roundUp(spec.weightBytes), roundUp(peak)}};
        const trace::MemoryLevel levels[] = {trace::MemoryLevel::Allocated,
                                             trace::MemoryLevel::Reserved};
        const QCPGraph* graphs[] = {plot->allocatedGraph(), plot->reservedGraph()};
        for (int l = 0; l < 2; ++l) {
            SCOPED_TRACE("rank " + std::to_string(rank) + ", " + graphs[l]->name().toStdString());
            const auto steps = replayCurve(data, plot->gpu().device, levels[l]);
            ASSERT_FALSE(steps.empty());
            int64_t lo = steps.front().second, hi = lo;
            for (const auto& [t, bytes] : steps) {
                lo = std::min(lo, bytes);
                hi = std::max(hi, bytes);
            }
            EXPECT_EQ(std::make_pair(lo, hi), formula[l]) << "the replay disagrees with the spec";
            const auto [plotLo, plotHi] = graphMinMax(graphs[l]);
            EXPECT_EQ(plotHi, static_cast<double>(hi));
            EXPECT_EQ(plotLo, static_cast<double>(lo));
        }
    }
}

TEST(MainWindow, ZoomingOnePlotMovesAll) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.timeline()->setLayoutMode(widgets::TimelineView::LayoutMode::Stacked);
    window.setJob(job);
    window.resize(1400, 900);
    window.show();
    settle();
    const auto& plots = window.timeline()->plots();
    ASSERT_GE(plots.size(), 2u) << "the sample should have more than one GPU";
    widgets::MemoryPlot* first = plots.front();
    const QCPRange before = plots.back()->xAxis->range();
    const QPointF pos(first->axisRect()->center());
    QWheelEvent wheel(pos, first->mapToGlobal(pos), QPoint(), QPoint(0, 360), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(first, &wheel);
    settle();
    const QCPRange after = first->xAxis->range();
    EXPECT_LT(after.size(), before.size() * 0.6);
    for (const widgets::MemoryPlot* plot : plots) {
        EXPECT_DOUBLE_EQ(plot->xAxis->range().lower, after.lower);
        EXPECT_DOUBLE_EQ(plot->xAxis->range().upper, after.upper);
    }
    const widgets::TimeRange visible = window.zoomState()->visibleRange();
    EXPECT_DOUBLE_EQ(after.lower, static_cast<double>(visible.startNs));
    // Dragging the last plot pans every plot by the same amount.
    widgets::MemoryPlot* last = plots.back();
    const QPoint c = last->axisRect()->center();
    QTest::mousePress(last, Qt::LeftButton, Qt::NoModifier, c);
    QTest::mouseMove(last, c + QPoint(100, 0));
    QTest::mouseRelease(last, Qt::LeftButton, Qt::NoModifier, c + QPoint(100, 0));
    settle();
    EXPECT_LT(first->xAxis->range().lower, after.lower);
    EXPECT_DOUBLE_EQ(first->xAxis->range().lower, last->xAxis->range().lower);
}

TEST(MainWindow, ZoomedInPlotsShowTheExactSteps) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.setJob(job);
    window.resize(1400, 900);
    window.show();
    settle();
    widgets::MemoryPlot* plot = window.timeline()->plots().front();
    const analysis::GpuKey gpu = plot->gpu();
    const trace::TraceData& data = job->job.ranks[static_cast<size_t>(gpu.rankIndex)].trace.data;
    // The steps replayed from the events here; the sample has allocated-level events.
    const auto steps = replayCurve(data, gpu.device, trace::MemoryLevel::Allocated);
    ASSERT_GE(steps.size(), 4u);
    const size_t mid = steps.size() / 2;
    const int64_t toJob = job->ranks[static_cast<size_t>(gpu.rankIndex)].toJobNs;
    window.zoomState()->setVisibleRange(
        {steps[mid].first + toJob - 1, steps[mid + 1].first + toJob + 1});
    settle();
    EXPECT_TRUE(plot->showsExactSteps());
    QCPGraph* graph = plot->allocatedGraph();
    bool found = false;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
        found |= it->key == static_cast<double>(steps[mid + 1].first + toJob) &&
                 it->value == static_cast<double>(steps[mid + 1].second);
    }
    EXPECT_TRUE(found) << "the step at " << steps[mid + 1].first << " ns is drawn exactly";
}

TEST(MainWindow, DetailsListTheLiveSetOfTheClickedTime) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.setJob(job);
    window.resize(1400, 900);
    window.show();
    settle();
    const analysis::GpuSeries& gpu = job->gpus.back();
    const trace::TraceData& data =
        job->job.ranks[static_cast<size_t>(gpu.key.rankIndex)].trace.data;
    // Which level carries allocations is decided here from the events themselves.
    bool hasAllocated = false;
    for (size_t i = 0; i < data.memory.size(); ++i) {
        hasAllocated |= data.memory.device[i] == gpu.key.device &&
                        data.memory.level[i] == trace::MemoryLevel::Allocated;
    }
    const trace::MemoryLevel level =
        hasAllocated ? trace::MemoryLevel::Allocated : trace::MemoryLevel::Reserved;
    for (double share : {0.1, 0.5, 0.9}) {
        const auto jobT = static_cast<int64_t>(share * static_cast<double>(job->durationNs));
        window.zoomState()->setSelectedGpu(gpu.key, jobT);
        const int64_t rankT = jobT - job->ranks[static_cast<size_t>(gpu.key.rankIndex)].toJobNs;
        const auto expected = replayLiveSet(data, gpu.key.device, level, rankT);
        std::vector<std::pair<uint64_t, uint64_t>> shown;
        const auto& rows = window.details()->model()->rows();
        for (const widgets::LiveRow& r : rows) {
            shown.emplace_back(r.sizeBytes, r.address);
        }
        for (size_t i = 1; i < rows.size(); ++i) {
            EXPECT_GE(rows[i - 1].sizeBytes, rows[i].sizeBytes) << "largest first";
        }
        std::sort(shown.begin(), shown.end());
        EXPECT_EQ(shown, expected) << "at " << share * 100 << " % of the job";
    }
}

TEST(MainWindow, UncheckingAGpuRemovesItsPlot) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.timeline()->setLayoutMode(widgets::TimelineView::LayoutMode::Stacked);
    window.setJob(job);
    const size_t all = window.timeline()->plots().size();
    ASSERT_GE(all, 2u);
    const std::vector<analysis::GpuKey> keep{job->gpus.back().key};
    window.deviceModel()->setCheckedGpus(keep);
    ASSERT_EQ(window.timeline()->plots().size(), 1u);
    EXPECT_EQ(window.timeline()->plots().front()->gpu(), keep[0]);
}

TEST(MainWindow, CompactLayoutShowsEveryGpuInTheHeatStrip) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.timeline()->setLayoutMode(widgets::TimelineView::LayoutMode::Compact);
    window.setJob(job);
    window.resize(1400, 900);
    window.show();
    settle();
    EXPECT_TRUE(window.timeline()->isCompact());
    ASSERT_EQ(window.timeline()->heatStrip()->rowCount(), static_cast<int>(job->gpus.size()));
    EXPECT_EQ(window.timeline()->plots().size(), 1u);
    // Picking another GPU replaces the plot; the old one must not stay painted (over the heat
    // strip) until its deferred delete runs.
    window.zoomState()->setSelectedGpu(job->gpus.back().key, 0);
    settle();
    int visiblePlots = 0;
    for (const widgets::MemoryPlot* p : window.timeline()->findChildren<widgets::MemoryPlot*>()) {
        visiblePlots += p->isVisible() ? 1 : 0;
    }
    EXPECT_EQ(visiblePlots, 1);
}

TEST(MainWindow, TheBottomDocksLeaveTheTimelineMostOfTheHeight) {
    const auto job = bundledSample();
    ASSERT_TRUE(job);
    app::MainWindow window;
    window.setJob(job);
    window.resize(1600, 1000);
    window.show();
    settle();
    // The analysis docks start at 28 % of the window's height (AnalysisViews); none of the
    // tabified panels may force the area taller, whatever its own minimum.
    const auto* flame = window.findChild<QDockWidget*>(QStringLiteral("FlameDock"));
    const auto* leak = window.findChild<QDockWidget*>(QStringLiteral("LeakDock"));
    ASSERT_TRUE(flame && leak);
    EXPECT_LE(flame->height(), window.height() * 30 / 100);
    EXPECT_GE(window.timeline()->height(), window.height() / 2);
}
