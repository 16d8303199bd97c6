// A window of a file read on its own (readTraceFrames over framesOverlapping, from
// windowReadStart) and anchored with anchorWindowMemory must show, at every step inside the
// window, the value the whole file's timeline has there (buildMemoryTimelines over every event,
// computed here independently of the summaries).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "realdata.h"
#include "vramscope/analysis/memory_timeline.h"
#include "vramscope/analysis/summary_window.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::analysis {
namespace {

namespace fs = std::filesystem;

const std::string kRealdata = VRAMSCOPE_REALDATA_DIR;

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
    const std::string input = kRealdata + "/MAGMA27_assignment2-systems/memory_snapshot.pickle";
    VRAMSCOPE_REQUIRE_INPUT(input);
    auto full = trace::openTrace(input);
    ASSERT_TRUE(full.ok()) << full.error().describe();
    const trace::TraceData& data = full->data;
    ASSERT_GT(data.memory.size(), 1000u);
    const std::string path =
        (fs::temp_directory_path() / "vramscope_summary_window.vscope").string();
    trace::WriterOptions opt;
    opt.eventsPerChunk = 128;
    ASSERT_TRUE(trace::writeTraceFile(path, data, opt).ok());
    auto sum = trace::readTraceSummary(path);
    ASSERT_TRUE(sum.ok());
    ASSERT_TRUE(sum->found);
    const auto whole = buildMemoryTimelines(data);

    std::vector<TimestampNs> times(data.memory.timestampNs);
    std::sort(times.begin(), times.end());
    size_t compared = 0;
    // Windows in the middle and at the end, a few hundred events wide: most memory alive in them
    // was allocated long before.
    for (double at : {0.3, 0.6, 0.95}) {
        const size_t i = static_cast<size_t>(at * static_cast<double>(times.size() - 400));
        const TimestampNs t0 = times[i];
        const TimestampNs t1 = times[i + 300];
        SCOPED_TRACE("window [" + std::to_string(t0) + ", " + std::to_string(t1) + "]");
        const TimestampNs from = windowReadStart(sum->summary, t0);
        EXPECT_LE(from, t0);
        auto part = trace::readTraceFrames(path, sum->summary, trace::framesOverlapping(from, t1));
        ASSERT_TRUE(part.ok()) << part.error().describe();
        EXPECT_LT(part->data.memory.size(), data.memory.size());  // a window, not the file
        const WindowAnchor anchor = anchorWindowMemory(part->data, sum->summary, from, t1);
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
    EXPECT_GT(compared, 300u);
    fs::remove(path);
}

TEST(SummaryWindow, WithoutAnchoringTheWindowMissesEarlierMemory) {
    // The same read without anchorWindowMemory: the check above must be able to fail.
    const std::string input = kRealdata + "/MAGMA27_assignment2-systems/memory_snapshot.pickle";
    VRAMSCOPE_REQUIRE_INPUT(input);
    auto full = trace::openTrace(input);
    ASSERT_TRUE(full.ok()) << full.error().describe();
    const std::string path =
        (fs::temp_directory_path() / "vramscope_summary_window_raw.vscope").string();
    trace::WriterOptions opt;
    opt.eventsPerChunk = 128;
    ASSERT_TRUE(trace::writeTraceFile(path, full->data, opt).ok());
    auto sum = trace::readTraceSummary(path);
    ASSERT_TRUE(sum.ok());
    std::vector<TimestampNs> times(full->data.memory.timestampNs);
    std::sort(times.begin(), times.end());
    const TimestampNs t0 = times[times.size() * 6 / 10];
    const TimestampNs t1 = times[times.size() * 6 / 10 + 300];
    auto part = trace::readTraceFrames(path, sum->summary, trace::framesOverlapping(t0, t1));
    ASSERT_TRUE(part.ok());
    const auto whole = buildMemoryTimelines(full->data);
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
    fs::remove(path);
}

}  // namespace
}  // namespace vramscope::analysis
