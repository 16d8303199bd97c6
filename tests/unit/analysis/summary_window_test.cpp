// A window of a file read on its own (readTraceFrames over framesOverlapping, from
// windowReadStart) and anchored with anchorWindowMemory must show, at every step inside the
// window, the value the whole file's timeline has there (buildMemoryTimelines over every event,
// computed here independently of the summaries).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>
#include <vector>

#include "small_frames_fixture.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/summary_window.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::analysis {
namespace {

const MemoryTimeline* timelineOf(const std::vector<MemoryTimeline>& all, DeviceIndex device) {
    for (const auto& t : all) {
        if (t.device == device) {
            return &t;
        }
    }
    return nullptr;
}

/// Every step of `window` inside [t0, t1] has the whole-file value; returns the steps compared.
size_t expectSameSteps(const StepSeries& window, const StepSeries& whole, TimestampNs t0,
                       TimestampNs t1) {
    size_t compared = 0;
    for (size_t i = 0; i < window.size(); ++i) {
        const TimestampNs t = window.timeNs[i];
        if (t < t0 || t > t1) {
            continue;
        }
        EXPECT_EQ(window.bytes[i], whole.valueAt(t)) << "at t = " << t;
        ++compared;
    }
    return compared;
}

TEST(SummaryWindow, AnchoredWindowShowsTheWholeFilesLevels) {
    VRAMSCOPE_REQUIRE_INPUT(test::smallFramesInput());
    const test::SmallFramesFile file("summary_window");
    ASSERT_TRUE(file.ok()) << file.problem;
    const trace::TraceData& data = file.data;
    ASSERT_GT(data.memory.size(), 1000u);
    const std::string& path = file.path;
    const trace::TraceSummary& summary = file.summary;
    const auto whole = buildMemoryTimelines(data);

    std::vector<TimestampNs> times(data.memory.timestampNs);
    std::sort(times.begin(), times.end());
    size_t compared = 0;
    size_t windows = 0;
    // Windows of 100 distinct times throughout the file, kept only where the whole file's allocated
    // bytes never drop to zero inside them: there a window read alone cannot find its level by
    // lifting its own deficit, so only the memory alive before it (the anchor) gives the right
    // values. Many events share a time (the memory alive when the snapshot began): step over
    // distinct times.
    times.erase(std::unique(times.begin(), times.end()), times.end());
    ASSERT_GT(times.size(), 400u);
    for (size_t i = times.size() / 10; i + 100 < times.size() && windows < 6;
         i += times.size() / 40) {
        const TimestampNs t0 = times[i];
        const TimestampNs t1 = times[i + 100];
        int64_t lowest = std::numeric_limits<int64_t>::max();
        for (const auto& t : whole) {
            lowest = std::min(lowest, t.allocated.valueAt(t0));
            for (size_t k = 0; k < t.allocated.size(); ++k) {
                if (t.allocated.timeNs[k] >= t0 && t.allocated.timeNs[k] <= t1) {
                    lowest = std::min(lowest, t.allocated.bytes[k]);
                }
            }
        }
        if (lowest <= 0) {
            continue;
        }
        ++windows;
        SCOPED_TRACE("window [" + std::to_string(t0) + ", " + std::to_string(t1) + "]");
        const TimestampNs from = windowReadStart(summary, t0);
        EXPECT_LE(from, t0);
        auto part = trace::readTraceFrames(path, summary, trace::framesOverlapping(from, t1));
        ASSERT_TRUE(part.ok()) << part.error().describe();
        EXPECT_LT(part->data.memory.size(), data.memory.size());  // a window, not the file
        const WindowAnchor anchor = anchorWindowMemory(part->data, summary, from, t1);
        EXPECT_EQ(anchor.unanchoredSeries, 0);
        EXPECT_GT(anchor.anchoredSeries, 0);
        const auto windowed = buildMemoryTimelines(part->data);
        for (const auto& w : windowed) {
            const MemoryTimeline* f = timelineOf(whole, w.device);
            ASSERT_NE(f, nullptr);
            compared += expectSameSteps(w.allocated, f->allocated, t0, t1);
            compared += expectSameSteps(w.reserved, f->reserved, t0, t1);
        }
    }
    EXPECT_GE(windows, 2u);
    EXPECT_GT(compared, 200u);
}

TEST(SummaryWindow, WithoutAnchoringTheWindowMissesEarlierMemory) {
    // The same read without anchorWindowMemory: the check above must be able to fail.
    VRAMSCOPE_REQUIRE_INPUT(test::smallFramesInput());
    const test::SmallFramesFile file("summary_window_raw");
    ASSERT_TRUE(file.ok()) << file.problem;
    std::vector<TimestampNs> times(file.data.memory.timestampNs);
    std::sort(times.begin(), times.end());
    const TimestampNs t0 = times[times.size() * 6 / 10];
    const TimestampNs t1 = times[times.size() * 6 / 10 + 300];
    auto part = trace::readTraceFrames(file.path, file.summary, trace::framesOverlapping(t0, t1));
    ASSERT_TRUE(part.ok());
    const auto whole = buildMemoryTimelines(file.data);
    const auto windowed = buildMemoryTimelines(part->data);
    size_t differing = 0;
    for (const auto& w : windowed) {
        const MemoryTimeline* f = timelineOf(whole, w.device);
        ASSERT_NE(f, nullptr);
        for (size_t i = 0; i < w.allocated.size(); ++i) {
            const TimestampNs t = w.allocated.timeNs[i];
            if (t >= t0 && t <= t1 && w.allocated.bytes[i] != f->allocated.valueAt(t)) {
                ++differing;
            }
        }
    }
    EXPECT_GT(differing, 0u);
}

TEST(SummaryWindow, AnchoredWindowOfASyntheticRankKeepsItsWeights) {
    // The synthetic rank allocates its weights and optimizer state first and never frees them
    // (synthetic_job.h): late windows hold none of those allocations, so without the anchor their
    // levels would start near 0 instead of above the model state.
    SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 12;
    spec.activationsPerIteration = 300;
    trace::TraceData data = generateSyntheticRank(spec, 0);
    // Memory alone: a frame holds rows of every table at once, and kernel rows run far ahead of
    // memory rows in time, which widens every frame's span (so a window would read most of the
    // file).
    data.kernels = {};
    data.collectives = {};
    data.ranges = {};
    data.counters = {};
    // And in time order (the generator appends allocations and frees in separate passes).
    std::vector<size_t> order(data.memory.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&data](size_t a, size_t b) {
        return data.memory.timestampNs[a] < data.memory.timestampNs[b];
    });
    trace::MemoryEvents sorted;
    for (size_t r : order) {
        sorted.append(data.memory.at(r));
    }
    data.memory = std::move(sorted);
    const std::string path =
        (std::filesystem::temp_directory_path() / "vramscope_summary_window_synth.vscope").string();
    trace::WriterOptions opt;
    opt.eventsPerChunk = 256;
    ASSERT_TRUE(trace::writeTraceFile(path, data, opt).ok());
    auto sum = trace::readTraceSummary(path);
    ASSERT_TRUE(sum.ok());
    ASSERT_TRUE(sum->found);
    const auto whole = buildMemoryTimelines(data);
    ASSERT_EQ(whole.size(), 1u);
    const StepSeries& allocated = whole[0].allocated;
    ASSERT_GT(allocated.size(), 2000u);
    size_t compared = 0;
    for (double at : {0.5, 0.8}) {
        // 600 steps: more than two blocks, so a block starts among the window's own events and
        // the read needs no widening (windowReadStart would reach back to the few-step reserved
        // series' block, near the file's start, where the weights were allocated).
        const size_t i = static_cast<size_t>(at * static_cast<double>(allocated.size() - 700));
        const TimestampNs t0 = allocated.timeNs[i];
        const TimestampNs t1 = allocated.timeNs[i + 600];
        auto part = trace::readTraceFrames(path, sum->summary, trace::framesOverlapping(t0, t1));
        ASSERT_TRUE(part.ok()) << part.error().describe();
        ASSERT_LT(part->data.memory.size(), data.memory.size() / 2);
        const WindowAnchor anchor = anchorWindowMemory(part->data, sum->summary, t0, t1);
        EXPECT_GE(anchor.anchoredSeries, 1);
        const auto windowed = buildMemoryTimelines(part->data);
        ASSERT_EQ(windowed.size(), 1u);
        compared += expectSameSteps(windowed[0].allocated, allocated, t0, t1);
    }
    EXPECT_GT(compared, 900u);
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace vramscope::analysis
