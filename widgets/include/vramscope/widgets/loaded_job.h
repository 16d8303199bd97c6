#pragma once
// What the GUI shows of one opened job: the traces and the analyses computed from them, as plain
// immutable values on the job's common time axis. Built off the GUI thread, then shared read-only
// (std::shared_ptr<const LoadedJob>) with every view.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/analysis/level_of_detail.h"
#include "vramscope/analysis/memory_timeline.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::widgets {

/// Identifies one GPU of a job: the rank's position in LoadedJob::ranks and the device index.
struct GpuKey {
    int rankIndex = -1;
    trace::DeviceIndex device = 0;
    bool isValid() const { return rankIndex >= 0; }
    bool operator==(const GpuKey&) const = default;
};

/// An NVTX range or iteration in job time (ns from the job start).
struct RangeSpan {
    int64_t startNs = 0;
    int64_t endNs = 0;
    std::string name;
    uint32_t depth = 0;
    trace::RangeKind kind = trace::RangeKind::Nvtx;
};

/// A failed allocation, in job time.
struct OomMark {
    int64_t timeNs = 0;
    uint64_t requestedBytes = 0;
};

/// Memory of one GPU: the analysis' timeline, with both levels reduced for drawing. All times are
/// job time (ns from the job start).
struct GpuSeries {
    GpuKey key;
    int32_t rank = trace::kUnknownRank;
    std::string deviceName;      ///< e.g. "NVIDIA H200", empty when the trace does not say
    uint64_t capacityBytes = 0;  ///< 0 = unknown
    analysis::LodSeries allocated;
    analysis::LodSeries reserved;
    analysis::SeriesSource allocatedSource = analysis::SeriesSource::None;
    analysis::SeriesSource reservedSource = analysis::SeriesSource::None;
    int64_t peakAllocatedBytes = 0;
    int64_t peakAllocatedTimeNs = 0;
    int64_t peakReservedBytes = 0;
    int64_t peakReservedTimeNs = 0;
    uint64_t memoryEvents = 0;
    std::vector<OomMark> ooms;
    int colorIndex = 0;  ///< position in the job, used to pick its colour
};

/// One rank as the GUI shows it.
struct RankInfo {
    int32_t rank = trace::kUnknownRank;
    std::string path;
    std::string host;
    int64_t toJobNs = 0;  ///< job time = rank trace time + toJobNs
    std::vector<RangeSpan> ranges;
};

/// A loaded job. `job` keeps every rank's TraceData for analyses that need the raw events.
struct LoadedJob {
    std::string title;  ///< e.g. the file or directory name
    trace::Job job;
    std::vector<RankInfo> ranks;  ///< parallel to job.ranks
    std::vector<GpuSeries> gpus;  ///< by rank, then device
    int64_t durationNs = 0;       ///< job time runs from 0 to durationNs
    int64_t originNs = 0;         ///< trace time (on the common axis) that job time 0 stands for
    /// Sentences about what could not be loaded or was lost (file, where, what was kept).
    std::vector<std::string> problems;

    const GpuSeries* gpu(GpuKey key) const {
        for (const GpuSeries& g : gpus) {
            if (g.key == key) {
                return &g;
            }
        }
        return nullptr;
    }
    /// Converts job time to the rank's own trace time.
    int64_t toRankNs(int rankIndex, int64_t jobNs) const {
        return jobNs - ranks[static_cast<size_t>(rankIndex)].toJobNs;
    }
};

}  // namespace vramscope::widgets
