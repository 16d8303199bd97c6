#pragma once
// Memory timelines drawn from a file's summaries (trace/summary.h) instead of its events: the
// same series, sources, peaks and pre-trace lift as buildMemoryTimelines, at the resolution of
// summary blocks, and the stored whole-file analyses read back.

#include <cstdint>
#include <optional>
#include <vector>

#include "vramscope/analysis/memory/leak.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/level_of_detail.h"
#include "vramscope/analysis/time/iterations.h"
#include "vramscope/trace/summary.h"

namespace vramscope::analysis {

/// One GPU's memory from summaries. Values are lifted (pre-trace memory added) like
/// MemoryTimeline's; blocks of a level are empty when the level has no series.
struct SummaryTimeline {
    DeviceIndex device{0};
    uint64_t capacityBytes = 0;  ///< from the header, 0 = unknown
    std::vector<trace::SummaryBlock> allocated;
    std::vector<trace::SummaryBlock> reserved;
    SeriesSource allocatedSource = SeriesSource::None;
    SeriesSource reservedSource = SeriesSource::None;
    int64_t peakAllocatedBytes = 0;
    TimestampNs peakAllocatedTimeNs = 0;
    int64_t peakReservedBytes = 0;
    TimestampNs peakReservedTimeNs = 0;
    int64_t allocatedPreTraceBytes = 0;
    int64_t reservedPreTraceBytes = 0;
    uint64_t memoryEvents = 0;
    /// False when a series had events out of order across batches (MemoryEnvelope::outOfOrder):
    /// then these figures may differ from buildMemoryTimelines' and a viewer reads the events.
    bool exact = true;
};

/// The timelines of every GPU the summary has a series or a header entry for, sorted by device,
/// by buildMemoryTimelines' rules (counter series win over event series; a negative running sum
/// is lifted by its deepest deficit). Formula source: memory_timeline.h.
std::vector<SummaryTimeline> summaryTimelines(const trace::TraceSummary& summary);

/// Reduces blocks over [t0, t1) into at most `buckets` LodBuckets of equal width, as
/// LodSeries::query does for steps: a bucket covers the value in force at its start and every
/// block that overlaps it (a block's min/max may stand for steps just outside the bucket: the
/// envelope is never narrower than the true one, and at most one block wider). Empty when
/// t1 <= t0 or buckets == 0.
std::vector<LodBucket> queryBlocks(const std::vector<trace::SummaryBlock>& blocks, TimestampNs t0,
                                   TimestampNs t1, size_t buckets);

/// The whole-file analyses of one device as a summary stores them (computed here from every
/// event: iterations (findIterations with default options), per-iteration baseline and peak and
/// the leak verdict (analyzeLeak)). What convert, synth and summarize store. One entry per GPU
/// buildMemoryTimelines gives. iterationStartNs/EndNs are the whole IterationSet; baselineBytes
/// and iterationPeakBytes are LeakReport::iterations, which leaves out iterations that end before
/// the memory curve's first step, so they align with the last iterations. growthBytes is
/// LeakReport::growthBytesPerIteration (round(slope) when Staircase, else 0).
std::vector<trace::DeviceAnalysisSummary> analysesForSummary(const trace::TraceData& data,
                                                             std::string_view analysedBy);

/// The stored analysis of `device`, nullptr when the summary has none (the agent stores none).
const trace::DeviceAnalysisSummary* storedAnalysis(const trace::TraceSummary& summary,
                                                   DeviceIndex device);

}  // namespace vramscope::analysis
