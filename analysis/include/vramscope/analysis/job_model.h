#pragma once
// The job model: everything the viewer shows of one opened job, built once by buildJobModel() off
// the GUI thread (traces -> timelines on the job's time axis -> analyses -> per-GPU indexes) and
// then shared read-only as std::shared_ptr<const JobModel> with every view. Plain C++: the GUI
// draws it, tests check it without Qt.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/allocation_index.h"
#include "vramscope/analysis/check_rules.h"
#include "vramscope/analysis/job_analysis.h"
#include "vramscope/analysis/kernel_lanes.h"
#include "vramscope/analysis/level_of_detail.h"
#include "vramscope/analysis/live_set.h"
#include "vramscope/analysis/memory_summary.h"
#include "vramscope/analysis/memory_timeline.h"
#include "vramscope/trace/job.h"
#include "vramscope/trace/progress.h"

namespace vramscope::analysis {

class FlameService;

/// Identifies one GPU of a job: the rank's position in JobModel::ranks and the device index.
struct GpuKey {
    int rankIndex = -1;
    trace::DeviceIndex device{0};
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

/// Memory of one GPU as drawn: both levels on job time (ns from the job start), reduced for
/// drawing, and their summary (peaks in job time).
struct GpuSeries {
    GpuKey key;
    trace::RankId rank = trace::kUnknownRank;
    std::string deviceName;  ///< e.g. "NVIDIA H200", empty when the trace does not say
    MemorySummary memory;    ///< capacity and peaks, times in job time
    LodSeries allocated;
    LodSeries reserved;
    SeriesSource allocatedSource = SeriesSource::None;
    SeriesSource reservedSource = SeriesSource::None;
    std::vector<OomMark> ooms;
    int colorIndex = 0;  ///< position in the job, used to pick its colour

    /// Bytes in use at job time t (bytesInUseAt over the two curves).
    int64_t bytesInUseAt(int64_t t) const;
};

/// One rank as the viewer shows it.
struct RankInfo {
    trace::RankId rank = trace::kUnknownRank;
    std::string path;
    std::string host;
    int64_t toJobNs = 0;  ///< job time = rank trace time + toJobNs
    std::vector<RangeSpan> ranges;
};

/// Allocation-level views of one GPU that has allocation events. Times are the rank's trace time.
struct GpuMemoryAnalysis {
    GpuKey key;
    trace::MemoryLevel level = trace::MemoryLevel::Allocated;  ///< the level with allocation detail
    int64_t peakTimeNs = 0;  ///< peak of `level` (analysis::peakTime), trace time
    /// Whether the allocations alive at a time can be rebuilt at `level` (liveSetEvidence); when
    /// not, flame trees and live sets of this GPU are empty for that reason, not for lack of
    /// memory.
    LiveSetEvidence liveSet;
    /// Iterations, leak verdict, model state and the allocation index of this GPU (points into
    /// JobModel::analysis; never null).
    const DeviceAnalysis* device = nullptr;

    const LeakReport& leak() const { return device->leak; }
    const AllocationIndex& index() const { return *device->index; }
};

/// Kernel lanes of one GPU that ran kernels. Times are the rank's trace time.
struct GpuKernelAnalysis {
    GpuKey key;
    KernelLaneIndex lanes;
    const TimeBreakdown* breakdown = nullptr;  ///< points into JobModel::analysis
};

/// The job's time axis: job time 0 is the earliest event of any rank on the common axis (trace
/// time + RankTrace::clockOffsetNs); durationNs reaches the latest (at least 1); toJobNs[i] is
/// rank i's job time minus its trace time. buildJobModel and `convert --notes` both use it.
struct JobTimeAxis {
    int64_t originNs = 0;
    int64_t durationNs = 1;
    std::vector<int64_t> toJobNs;  ///< parallel to Job::ranks
};
JobTimeAxis jobTimeAxis(const trace::Job& job);

/// One opened job. Immutable once built; every member is safe to read from any thread, and
/// `flames` is itself thread-safe. Keeps the traces alive (the indexes refer to their events).
struct JobModel {
    std::string title;  ///< e.g. the file or directory name
    trace::Job job;
    std::vector<RankInfo> ranks;  ///< parallel to job.ranks
    std::vector<GpuSeries> gpus;  ///< every GPU with a memory timeline, by rank then device
    int64_t durationNs = 0;       ///< job time runs from 0 to durationNs
    int64_t originNs = 0;         ///< trace time (on the common axis) that job time 0 stands for
    /// Sentences about what could not be loaded or was lost (file, where, what was kept).
    std::vector<std::string> problems;

    /// analyzeJob over the ranks in order (DeviceAnalysis::input = GpuKey::rankIndex), each with
    /// clock offset RankInfo::toJobNs, so collective times are job time.
    JobAnalysis analysis;
    std::vector<GpuMemoryAnalysis> memory;   ///< GPUs with allocation events, by rank then device
    std::vector<GpuKernelAnalysis> kernels;  ///< GPUs with kernels, by rank then device
    /// Cost inputs as observed (price 0); a view prices them on a copy.
    CostInput cost;
    /// The CI rules (CheckRules::defaults(), as `vramscope-cli check` runs them) on `analysis`:
    /// what passed, failed, or could not be checked and why.
    std::vector<RuleResult> checks;
    /// Why analyzeJob failed, empty when it did not (the timelines are there all the same).
    std::string analysisProblem;
    /// Flame trees and live sets at any time, on demand, over the GPUs of `memory`.
    std::shared_ptr<FlameService> flames;

    const GpuSeries* gpu(GpuKey key) const;
    const GpuMemoryAnalysis* memoryOf(GpuKey key) const;
    const GpuKernelAnalysis* kernelsOf(GpuKey key) const;
    const CollectiveMatch& collectives() const { return analysis.collectives; }
    const std::vector<Advice>& advice() const { return analysis.advice; }
    /// Converts job time to the rank's own trace time.
    int64_t toRankNs(int rankIndex, int64_t jobNs) const {
        return jobNs - ranks[static_cast<size_t>(rankIndex)].toJobNs;
    }
};

/// trace::Progress: the share of the work done (0..1) and what is being done ("Analysing 8
/// ranks"); the build stops when it returns false.
using ModelProgress = trace::Progress;

/// Builds the model of `job`: the job time axis (0 = the earliest event of any rank after its
/// clockOffsetNs), per GPU the memory timelines (buildMemoryTimelines, made by analyzeJob once)
/// moved to job time and reduced with LodSeries, ranges and OOM marks; the analyses (analyzeJob
/// with `options`, price 0 for the cost inputs); per GPU with allocation events the index and
/// peak time of its detail level; per GPU with kernels the lane index; the default CI rules
/// (evaluateRules); the load problems in words. Takes seconds on tens of millions of events: call
/// it off the GUI thread (it touches no Qt object).
///
/// Errors: cancellation (ErrorCode::Cancelled) when `progress` returned false. An analysis
/// failure (an invalid iteration regex) is not an error: analysisProblem says why, and the
/// timelines are kept.
trace::Result<std::shared_ptr<const JobModel>> buildJobModel(trace::Job job, std::string title,
                                                             const ModelProgress& progress = {},
                                                             JobAnalysisOptions options = {});

}  // namespace vramscope::analysis
