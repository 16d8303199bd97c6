#pragma once
// The job model: everything the viewer and the CLI's presenting commands (report, check, review,
// render, export) show of one opened job, built once by buildJobModel() off the GUI thread
// (traces -> analyses -> timelines on the job's time axis -> per-GPU indexes) and then shared
// read-only as std::shared_ptr<const JobModel>. Plain C++: the GUI draws it, the CLI prints it,
// tests check it without Qt.
//
// Two clocks (docs/ARCHITECTURE.md, "Clocks"): a rank's own clock is its trace's timestamps as
// the producer stamped them; the job's clock is ns from the job's earliest event (job time 0).
// JobModel::toJob and JobModel::toRank convert between them; every time field below says which
// clock it is on.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/advice/check_rules.h"
#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/memory/memory_summary.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/model/level_of_detail.h"
#include "vramscope/analysis/time/kernel_lanes.h"
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

/// An NVTX range or iteration on the job's clock (ns from the job's earliest event).
struct RangeSpan {
    int64_t startNs = 0;
    int64_t endNs = 0;
    std::string name;
    uint32_t depth = 0;
    trace::RangeKind kind = trace::RangeKind::Nvtx;
};

/// A failed allocation, on the job's clock.
struct OomMark {
    int64_t timeNs = 0;
    uint64_t requestedBytes = 0;
};

/// Memory of one GPU as drawn: both levels on the job's clock, reduced for drawing, and their
/// summary (the analysis's DeviceAnalysis::memory moved to the job's clock).
struct GpuSeries {
    GpuKey key;
    trace::RankId rank = trace::kUnknownRank;
    std::string deviceName;  ///< e.g. "NVIDIA H200", empty when the trace does not say
    /// Capacity and peaks, times on the job's clock: DeviceAnalysis::memory of this GPU shifted
    /// by toJob (computed once, in analyzeJob); summarizeMemory of the timeline only when the
    /// analysis failed.
    MemorySummary memory;
    LodSeries allocated;
    LodSeries reserved;
    SeriesSource allocatedSource = SeriesSource::None;
    SeriesSource reservedSource = SeriesSource::None;
    std::vector<OomMark> ooms;
    int colorIndex = 0;  ///< position in the job, used to pick its colour

    /// Bytes in use at job-clock time t (bytesInUseAt over the two curves).
    int64_t bytesInUseAt(int64_t t) const;
};

/// One rank as the viewer shows it.
struct RankInfo {
    trace::RankId rank = trace::kUnknownRank;
    std::string path;
    std::string host;
    /// Job clock minus this rank's clock (ns): -JobModel::originNs for every rank, as the
    /// producers' clocks are shared by a job's ranks (trace::RankTrace). Use JobModel::toJob /
    /// toRank rather than adding it by hand.
    int64_t toJobNs = 0;
    std::vector<RangeSpan> ranges;
};

/// Allocation-level views of one GPU that has allocation events. Times are on the rank's clock.
struct GpuMemoryAnalysis {
    GpuKey key;
    trace::MemoryLevel level = trace::MemoryLevel::Allocated;  ///< the level with allocation detail
    /// Peak of `level` in the allocation index (analysis::peakTime over device->index), on the
    /// rank's clock: where a flame tree or live set "at the peak" looks.
    int64_t peakTimeNs = 0;
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

/// Kernel lanes of one GPU that ran kernels. Times are on the rank's clock.
struct GpuKernelAnalysis {
    GpuKey key;
    KernelLaneIndex lanes;
    const TimeBreakdown* breakdown = nullptr;  ///< points into JobModel::analysis
};

/// The job's time axis: job time 0 is the earliest event of any rank (the ranks' clocks are one
/// clock, trace::RankTrace); durationNs reaches the latest (at least 1); toJobNs[i] is rank i's
/// job clock minus its own clock (= -originNs). buildJobModel and `convert --notes` both use it.
struct JobTimeAxis {
    int64_t originNs = 0;  ///< the earliest event, on the ranks' clock
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
    int64_t durationNs = 0;       ///< the job's clock runs from 0 to durationNs
    int64_t originNs = 0;         ///< the ranks' clock reading that job time 0 stands for
    /// Sentences about what could not be loaded or was lost (file, where, what was kept).
    std::vector<std::string> problems;

    /// analyzeJob over the ranks in order (DeviceAnalysis::input = GpuKey::rankIndex), each with
    /// RankInput::clockOffsetNs = RankInfo::toJobNs: per-device facts (peaks, iterations, OOMs,
    /// breakdowns) are on the rank's clock, cross-rank facts (collectives, waits, stragglers) on
    /// the job's clock.
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
    /// A time on rank `rankIndex`'s own clock (its trace's timestamps) on the job's clock (ns
    /// from the job's earliest event). `rankIndex` indexes `ranks`.
    int64_t toJob(int rankIndex, int64_t rankNs) const {
        return rankNs + ranks[static_cast<size_t>(rankIndex)].toJobNs;
    }
    /// A time on the job's clock on rank `rankIndex`'s own clock; the inverse of toJob.
    int64_t toRank(int rankIndex, int64_t jobNs) const {
        return jobNs - ranks[static_cast<size_t>(rankIndex)].toJobNs;
    }
};

/// trace::Progress: the share of the work done (0..1) and what is being done ("Analysing 8
/// ranks"); the build stops when it returns false.
using ModelProgress = trace::Progress;

/// Builds the model of `job`: the job time axis (0 = the earliest event of any rank), per GPU the
/// memory timelines (buildMemoryTimelines, made by analyzeJob once) moved to the job's clock and
/// reduced with LodSeries, ranges and OOM marks; the analyses (analyzeJob with `options`; without
/// a gpuHourPrice, price 0 for the cost inputs); per GPU with allocation events the index and
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
