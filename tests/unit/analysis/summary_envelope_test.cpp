// Summaries against the full-event analyses: summarizeTrace's envelopes must give what
// analysis::buildMemoryTimelines computes from every event (peaks, lift, per-block min/max,
// recomputed here from the timeline's steps) on every real input openTrace loads and on
// synthetic jobs; and readTraceFrames with memoryFramesUpTo(t) must give the live set at t that
// the whole file gives.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "realdata.h"
#include "realdata_paths.h"
#include "small_frames_fixture.h"
#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::analysis {
namespace {

namespace fs = std::filesystem;
using trace::MemoryEnvelope;
using trace::MemoryLevel;
using trace::SeriesOrigin;
using trace::TraceSummary;

/// One level of one timeline against the summary's envelope of the same origin.
void expectLevelMatches(const TraceSummary& sum, DeviceIndex device, MemoryLevel level,
                        const StepSeries& series, SeriesSource source, int64_t preTraceBytes,
                        uint64_t unmatched, int64_t peak, TimestampNs peakTime) {
    SCOPED_TRACE(std::string("device ") + std::to_string(toInt(device)) +
                 (level == MemoryLevel::Allocated ? " allocated" : " reserved"));
    if (source == SeriesSource::None) {
        EXPECT_EQ(sum.envelope(device, level, SeriesOrigin::MemoryEvents), nullptr);
        EXPECT_EQ(sum.envelope(device, level, SeriesOrigin::ProducerCounter), nullptr);
        return;
    }
    const bool events = source == SeriesSource::MemoryEvents;
    const MemoryEnvelope* env = sum.envelope(
        device, level, events ? SeriesOrigin::MemoryEvents : SeriesOrigin::ProducerCounter);
    ASSERT_NE(env, nullptr);
    const int64_t lift = -env->lowestBytes;
    EXPECT_EQ(lift, events ? preTraceBytes : 0);
    if (events) {
        EXPECT_EQ(env->unmatchedFrees, unmatched);
    }
    EXPECT_EQ(env->outOfOrder, 0u);
    EXPECT_EQ(env->totalSteps, series.size());
    EXPECT_EQ(env->peakBytes + lift, peak);
    EXPECT_EQ(env->peakTimeNs, peakTime);
    // Every block covers the next `steps` steps of the timeline; its figures are recomputed here.
    size_t at = 0;
    for (const trace::SummaryBlock& b : env->blocks) {
        ASSERT_GE(b.steps, 1u);
        ASSERT_LE(at + b.steps, series.size());
        const auto first = series.bytes.begin() + static_cast<ptrdiff_t>(at);
        const auto last = first + b.steps;
        EXPECT_EQ(b.startNs, series.timeNs[at]);
        EXPECT_EQ(b.endNs, series.timeNs[at + b.steps - 1]);
        EXPECT_EQ(b.minBytes + lift, *std::min_element(first, last));
        EXPECT_EQ(b.maxBytes + lift, *std::max_element(first, last));
        EXPECT_EQ(b.firstBytes + lift, *first);
        EXPECT_EQ(b.lastBytes + lift, *(last - 1));
        at += b.steps;
    }
    EXPECT_EQ(at, series.size());
}

void expectSummaryMatchesTimelines(const trace::TraceData& data) {
    const TraceSummary sum = trace::summarizeTrace(data);
    for (const MemoryTimeline& tl : buildMemoryTimelines(data)) {
        expectLevelMatches(sum, tl.device, MemoryLevel::Allocated, tl.allocated, tl.allocatedSource,
                           tl.allocatedPreTraceBytes, tl.allocatedUnmatchedFrees,
                           tl.peakAllocatedBytes, tl.peakAllocatedTimeNs);
        expectLevelMatches(sum, tl.device, MemoryLevel::Reserved, tl.reserved, tl.reservedSource,
                           tl.reservedPreTraceBytes, tl.reservedUnmatchedFrees,
                           tl.peakReservedBytes, tl.peakReservedTimeNs);
    }
}

/// Every file under the real-data folder (licences and the README left out).
std::vector<std::string> realdataFiles() {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(realdata::kDir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string p = it->path().string();
        if (it->is_regular_file() && p.find("/LICENSES/") == std::string::npos &&
            it->path().filename() != "README.md") {
            out.push_back(p);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(SummaryEnvelope, AgreesWithTheTimelinesOnEveryRealInput) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDir + "/README.md");
    size_t checked = 0;
    size_t withMemory = 0;
    for (const std::string& path : realdataFiles()) {
        auto t = trace::openTrace(path);
        if (!t.ok()) {
            continue;  // not a single trace (an archive of ranks, a folder's README, ...)
        }
        SCOPED_TRACE(path);
        expectSummaryMatchesTimelines(t->data);
        ++checked;
        withMemory += t->data.memory.size() > 0 || t->data.counters.size() > 0 ? 1 : 0;
    }
    EXPECT_GE(checked, 10u);
    EXPECT_GE(withMemory, 5u);
}

TEST(SummaryEnvelope, AgreesWithTheTimelinesOnSyntheticJobs) {
    SyntheticJobSpec spec;
    spec.ranks = 3;
    spec.iterations = 12;
    spec.activationsPerIteration = 300;  // more steps than one block holds per iteration
    spec.leakBytesPerIteration = 64ull << 20;
    spec.leakRank = 1;
    const auto job = generateSyntheticJob(spec);
    ASSERT_EQ(job.size(), 3u);
    for (const auto& rank : job) {
        SCOPED_TRACE("rank " + std::to_string(toInt(rank.header.rank)));
        expectSummaryMatchesTimelines(rank);
        const TraceSummary sum = trace::summarizeTrace(rank);
        // The allocated series spans several blocks, so block boundaries are exercised.
        const MemoryEnvelope* env = sum.envelope(
            rank.header.devices.at(0).index, MemoryLevel::Allocated, SeriesOrigin::MemoryEvents);
        ASSERT_NE(env, nullptr);
        EXPECT_GT(env->blocks.size(), 3u);
        // Both sides above share the running-sum rule (trace/memory_running_sum.h); the peaks
        // must also be the generator's formulas (synthetic_job.h): allocated W + O + A x a +
        // N x L_r, reserved that rounded up to whole segments of g bytes.
        const bool leaks = toInt(rank.header.rank) == spec.leakRank;
        const int64_t allocated =
            int64_t(spec.weightBytes + spec.optimizerBytes) +
            int64_t(spec.activationsPerIteration) * int64_t(spec.activationBytes) +
            (leaks ? int64_t(spec.iterations) * int64_t(spec.leakBytesPerIteration) : 0);
        const int64_t g = int64_t(spec.segmentBytes);
        EXPECT_EQ(env->peakBytes, allocated);
        const MemoryEnvelope* reserved = sum.envelope(
            rank.header.devices.at(0).index, MemoryLevel::Reserved, SeriesOrigin::MemoryEvents);
        ASSERT_NE(reserved, nullptr);
        EXPECT_EQ(reserved->peakBytes, (allocated + g - 1) / g * g);
    }
}

TEST(SummaryEnvelope, FramesUpToATimeGiveTheLiveSetOfTheWholeFile) {
    VRAMSCOPE_REQUIRE_INPUT(test::smallFramesInput());
    const test::SmallFramesFile file("summary_envelope_live");
    ASSERT_TRUE(file.ok()) << file.problem;
    const trace::TraceData& data = file.data;
    ASSERT_GT(data.memory.size(), 1000u);
    const std::string& path = file.path;
    std::vector<TimestampNs> times(data.memory.timestampNs);
    std::sort(times.begin(), times.end());
    std::vector<TimestampNs> probes = {times[times.size() / 10], times[times.size() / 2],
                                       times[times.size() * 9 / 10], times.back()};
    for (const auto& e : file.summary.memory) {
        probes.push_back(e.peakTimeNs);
    }
    for (TimestampNs t : probes) {
        SCOPED_TRACE("t = " + std::to_string(t));
        auto part = trace::readTraceFrames(path, file.summary, trace::memoryFramesUpTo(t));
        ASSERT_TRUE(part.ok()) << part.error().describe();
        EXPECT_TRUE(part->report.complete) << part->report.summary();
        if (t < times[times.size() / 2]) {
            EXPECT_LT(part->data.memory.size(), data.memory.size());  // only what t needs
        }
        for (const auto& d : data.header.devices) {
            for (MemoryLevel level : {MemoryLevel::Allocated, MemoryLevel::Reserved}) {
                const auto want = liveSetAt(data, d.index, level, t);
                const auto got = liveSetAt(part->data, d.index, level, t);
                ASSERT_EQ(got.size(), want.size());
                for (size_t i = 0; i < want.size(); ++i) {
                    EXPECT_EQ(got[i].address, want[i].address);
                    EXPECT_EQ(got[i].sizeBytes, want[i].sizeBytes);
                    EXPECT_EQ(got[i].allocTimeNs, want[i].allocTimeNs);
                    EXPECT_EQ(got[i].stack, want[i].stack);
                    EXPECT_EQ(got[i].kind, want[i].kind);
                }
            }
        }
    }
}

}  // namespace
}  // namespace vramscope::analysis
