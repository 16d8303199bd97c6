// Peaks, iterations and leak verdicts drawn from a file's stored summaries (written with the
// analyses, read back with readTraceSummary, then summaryTimelines and storedAnalysis) equal what
// the full events give (buildMemoryTimelines, findIterations and analyzeLeak run here), on every
// real input openTrace loads and on synthetic jobs (a sawtooth and a staircase leak).

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "realdata.h"
#include "vramscope/analysis/model/summary_timeline.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::analysis {
namespace {

namespace fs = std::filesystem;

/// The summary path's series source: the summary knows counters and events only; an importer's
/// rebuilt counter is a counter there.
SeriesSource summarySource(SeriesSource full) {
    return full == SeriesSource::RebuiltFromBytes ? SeriesSource::ProducerCounter : full;
}

/// Writes `data` with its analyses to a temporary file and reads its summaries back.
trace::TraceSummary storedSummaryOf(const trace::TraceData& data, const std::string& tag) {
    const fs::path path = fs::temp_directory_path() /
                          ("vramscope-sumeq-" + std::to_string(::getpid()) + "-" + tag + ".vscope");
    const auto written =
        trace::writeTraceFile(path.string(), data, {}, analysesForSummary(data, "test"));
    EXPECT_TRUE(written.ok()) << written.error().describe();
    auto read = trace::readTraceSummary(path.string());
    fs::remove(path);
    EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.error().describe());
    if (!read.ok()) {
        return {};
    }
    EXPECT_TRUE(read->found);
    EXPECT_TRUE(read->summary.final);
    return std::move(read->summary);
}

/// The comparison itself: every figure the summary path gives against the full events.
void expectSameAsFullEvents(const trace::TraceData& data, const std::string& tag) {
    const trace::TraceSummary summary = storedSummaryOf(data, tag);
    const auto full = buildMemoryTimelines(data);
    const auto fromSummary = summaryTimelines(summary);
    ASSERT_EQ(fromSummary.size(), full.size());
    for (size_t i = 0; i < full.size(); ++i) {
        const MemoryTimeline& f = full[i];
        const SummaryTimeline& s = fromSummary[i];
        SCOPED_TRACE("device " + std::to_string(toInt(f.device)));
        ASSERT_EQ(s.device, f.device);
        EXPECT_EQ(s.capacityBytes, f.capacityBytes);
        EXPECT_EQ(s.allocatedSource, summarySource(f.allocatedSource));
        EXPECT_EQ(s.reservedSource, summarySource(f.reservedSource));
        ASSERT_TRUE(s.exact);
        EXPECT_EQ(s.peakAllocatedBytes, f.peakAllocatedBytes);
        EXPECT_EQ(s.peakReservedBytes, f.peakReservedBytes);
        if (f.peakAllocatedBytes != 0) {
            EXPECT_EQ(s.peakAllocatedTimeNs, f.peakAllocatedTimeNs);
        }
        if (f.peakReservedBytes != 0) {
            EXPECT_EQ(s.peakReservedTimeNs, f.peakReservedTimeNs);
        }
        EXPECT_EQ(s.allocatedPreTraceBytes, f.allocatedPreTraceBytes);
        EXPECT_EQ(s.reservedPreTraceBytes, f.reservedPreTraceBytes);
        // Steps counted independently: the blocks hold every step of the full series.
        uint64_t steps = 0;
        for (const auto& b : s.allocated) {
            steps += b.steps;
        }
        EXPECT_EQ(steps, f.allocated.size());

        auto iterations = findIterations(data, f.device);
        ASSERT_TRUE(iterations.ok());
        const LeakReport leak = analyzeLeak(data, f.device, *iterations);
        const trace::DeviceAnalysisSummary* stored = storedAnalysis(summary, f.device);
        ASSERT_NE(stored, nullptr);
        EXPECT_EQ(stored->iterationSource, toString(iterations->source));
        ASSERT_EQ(stored->iterationStartNs.size(), iterations->count());
        ASSERT_EQ(stored->iterationEndNs.size(), iterations->count());
        for (size_t k = 0; k < iterations->count(); ++k) {
            EXPECT_EQ(stored->iterationStartNs[k], iterations->iterations[k].startNs);
            EXPECT_EQ(stored->iterationEndNs[k], iterations->iterations[k].endNs);
        }
        ASSERT_EQ(stored->baselineBytes.size(), leak.iterations.size());
        for (size_t k = 0; k < leak.iterations.size(); ++k) {
            EXPECT_EQ(stored->baselineBytes[k], leak.iterations[k].baselineBytes);
            EXPECT_EQ(stored->iterationPeakBytes[k], leak.iterations[k].peakBytes);
        }
        EXPECT_EQ(stored->leakVerdict, toString(leak.verdict));
        EXPECT_EQ(stored->growthBytes, leak.growthBytesPerIteration);
    }
}

TEST(SummaryEquivalence, SyntheticSawtoothAndStaircaseLeakMatchFullEvents) {
    SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 12;
    spec.leakBytesPerIteration = 64ull << 20;
    spec.leakRank = 1;
    spec.trainingPhases = true;
    for (int r = 0; r < spec.ranks; ++r) {
        SCOPED_TRACE("rank " + std::to_string(r));
        const trace::TraceData data = generateSyntheticRank(spec, r);
        expectSameAsFullEvents(data, "synth" + std::to_string(r));
        // The verdicts the generator was built to give (synthetic_job.h), read from the summary.
        const trace::TraceSummary summary = storedSummaryOf(data, "verdict");
        const auto* a = storedAnalysis(summary, trace::DeviceIndex{r % spec.gpusPerNode});
        ASSERT_NE(a, nullptr);
        EXPECT_EQ(a->leakVerdict, r == 1 ? "staircase" : "sawtooth");
        EXPECT_EQ(a->iterationStartNs.size(), size_t(spec.iterations));
    }
}

TEST(SummaryEquivalence, EveryRealInputMatchesFullEvents) {
    const fs::path root = VRAMSCOPE_REALDATA_DIR;
    VRAMSCOPE_REQUIRE_INPUT(root);
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && trace::isJobMemberName(name) &&
            !trace::isArchiveName(name)) {
            files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 15u);
    size_t compared = 0;
    for (const auto& path : files) {
        SCOPED_TRACE(path);
        auto loaded = trace::openTrace(path);
        if (!loaded.ok()) {
            continue;  // several processes in one export, or not a trace: openTrace says so
        }
        expectSameAsFullEvents(loaded->data, std::to_string(compared));
        ++compared;
    }
    EXPECT_GE(compared, 15u);
}

}  // namespace
}  // namespace vramscope::analysis
