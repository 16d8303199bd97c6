#pragma once
// Every analysis of a job in one call: per device iterations, leak verdict, time breakdown and
// model state; across ranks the collectives; then advice and cost. What `vramscope-cli report`,
// `check` and the GUI's summary panels show.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/collectives/collective_bandwidth.h"
#include "vramscope/analysis/collectives/collectives.h"
#include "vramscope/analysis/collectives/straggler.h"
#include "vramscope/analysis/memory/allocator_churn.h"
#include "vramscope/analysis/memory/leak.h"
#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/memory/memory_roles.h"
#include "vramscope/analysis/memory/memory_summary.h"
#include "vramscope/analysis/memory/operator_memory.h"
#include "vramscope/analysis/memory/precision.h"
#include "vramscope/analysis/time/iterations.h"
#include "vramscope/analysis/time/slow_down.h"
#include "vramscope/analysis/time/time_breakdown.h"
#include "vramscope/analysis/time/top_kernels.h"
#include "vramscope/trace/error.h"
#include "vramscope/trace/progress.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// What every surface (report, check, the GUI's views) says of a job in which no GPU recorded
/// anything (gpusRecorded() == 0: a CPU-only profile, an empty trace, a trace whose header lists
/// the machine's GPUs that the traced process never used), instead of an empty table.
inline constexpr const char* kNoGpuMessage = "no GPU in this trace";
/// The same when the reader lost part of the input (a cut or corrupt file): the GPU events may be
/// in the part that could not be read, so absence is not shown.
inline constexpr const char* kNoGpuInReadPartMessage =
    "no GPU in the part of the trace that could be read";

/// The analyses of one device of one rank. Times are in the rank's own clock.
struct DeviceAnalysis {
    size_t input = 0;  ///< index of the rank in the inputs given to analyzeJob
    trace::RankId rank = trace::kUnknownRank;
    trace::DeviceIndex device{0};
    /// Capacity and peaks (rank trace time); memory.hasData() = memory events or counters.
    MemorySummary memory;
    /// memory.capacityBytes is JobAnalysisOptions::capacityBytes: the trace names none.
    bool capacityGiven = false;
    /// The input lost events (a DataLoss of severity data_loss or error): what was kept may miss
    /// an OOM, a higher peak or iterations, so a rule that passes on it proves nothing.
    bool partialInput = false;
    /// Allocations of the detail level (detailLevel) paired with their frees; shared with the
    /// flame trees and live sets so that it is built once per device. Never null.
    std::shared_ptr<const AllocationIndex> index;
    /// The device's reserved segments (Reserved-level index) when `index` is the Allocated level
    /// and the device has Reserved events, for segmentLayoutAt; null otherwise.
    std::shared_ptr<const AllocationIndex> segments;
    bool hadOom = false;
    std::vector<OomFacts> ooms;  ///< the device's OOM events in time order, with the memory then
    IterationSet iterations;
    LeakReport leak;
    std::optional<TimeBreakdown> breakdown;  ///< nullopt without kernels on the device
    /// Names of the kernels before and after each of breakdown->gaps (same order).
    std::vector<std::pair<std::string, std::string>> gapKernelNames;
    /// Communication split into waiting for the last rank and transfer; nullopt when none of this
    /// GPU's collectives was matched across ranks.
    std::optional<CommunicationSplit> communication;
    /// Whether the live set can be rebuilt (liveSetEvidence at the detail level). When it cannot,
    /// nothing that pairs frees with allocations is built: model state is -1 and the leak report
    /// has no survivors (its verdict, from the memory curve, stands).
    LiveSetEvidence liveSet;
    /// Bytes alive across all iterations less the leak's part (see modelState and
    /// DeviceFacts::modelStateBytes); -1 = unknown (fewer than kModelStateMinIterations iterations,
    /// or the live set unknown).
    int64_t modelStateBytes = -1;
    /// What of the bytes alive across all iterations is the leak and was left out of
    /// modelStateBytes (LeakReport::firstIterationLeakBytes); 0 when modelStateBytes is -1.
    int64_t modelStateExcludedLeakBytes = 0;
    /// Role of every allocation of the detail level (memory_roles.h); null when the live set is
    /// unknown (roles pair frees with allocations by address) or the device has no allocations.
    std::shared_ptr<const MemoryRoles> roles;
    /// The live set at the peak of the detail level's curve (MemorySummary's allocated peak, or
    /// the reserved one when only segments were recorded), by role; nullopt without roles.
    std::optional<RolesAt> rolesAtPeak;
    /// The same at each iteration's own peak, in iteration order (iterations the curve covers).
    std::vector<IterationRoles> iterationRoles;
    /// Memory per operator at the detail level, peak columns at memory.detailPeakTimeNs();
    /// nullopt when no allocation's stack holds an operator frame (only profiler traces with CPU
    /// ops have them).
    std::optional<OperatorMemoryTable> operators;

    // --- mixed-precision facts (precision.h) ---
    /// Matmul / convolution kernel time by precision; nullopt without kernels on the device.
    std::optional<PrecisionMix> precision;

    // --- allocator-churn facts (allocator_churn.h) ---
    /// Reserved segments made and freed per iteration (allocatorChurn).
    AllocatorChurn churn;

    // --- host-memory facts (host_memory.h; on the rank's first device) ---
    /// The rank's host memory (analyzeHostMemory over this device's iterations); set on the
    /// rank's first device only, null on the others.
    std::shared_ptr<const HostMemoryReport> host;

    // --- slow-down facts (slow_down.h) ---
    /// Iteration periods over the run and their parts (slowDown; set in crossRankFacts, since
    /// the waits need the job's matched collectives).
    SlowDownReport slowDown;
    /// Kernel time per name and per category on this GPU (topKernels); nullopt without kernels.
    std::optional<DeviceKernelTimes> kernelTimes;
};

/// Whether the trace recorded anything on the device: memory (events or counters) or kernels. A
/// GPU only listed in a header (deviceProperties of the machine) recorded nothing.
inline bool deviceRecorded(const DeviceAnalysis& d) {
    return d.memory.hasData() || d.breakdown.has_value();
}

struct JobAnalysisOptions {
    IterationOptions iterations;
    LeakOptions leak;
    BreakdownOptions breakdown;
    AdviceOptions advice;
    StragglerOptions straggler;
    std::optional<double> gpuHourPrice;  ///< cost only when set
    std::optional<int64_t> plannedSteps;
    /// Capacity of every GPU whose trace names none (PyTorch snapshots carry no capacity), bytes;
    /// 0 = none. A capacity the trace names wins.
    uint64_t capacityBytes = 0;
    /// Inputs (ranks) analysed at once, each on its own thread; 0 = one per hardware thread,
    /// 1 = on the calling thread only. Results do not depend on it.
    int threads = 0;
    /// Link peak for the communication verdicts (--link-bandwidth).
    CollectiveBandwidthOptions bandwidth;
};

struct JobAnalysis {
    std::vector<DeviceAnalysis> devices;  ///< input order, then device
    CollectiveMatch collectives;          ///< empty with fewer than two ranks with collectives
    /// Bandwidth of every collective of every rank, summaries and per-GPU verdicts
    /// (collectiveBandwidth over the inputs and `collectives`).
    CollectiveBandwidthReport bandwidth;
    /// Ranks present against the world size the headers name; cross-rank facts of a partial job
    /// speak of the ranks present only.
    JobCoverage coverage;
    /// The rank last most often in the matched collectives and its evidence (findStraggler);
    /// nullopt when no collective had a last rank. Named in the advice only when
    /// straggler->meetsEvidence.
    std::optional<StragglerFinding> straggler;
    std::vector<Advice> advice;
    /// What each checklist rule (kChecklistRules) concluded on each device, device order then
    /// rule order: fired, clear, or not assessed with what is missing.
    std::vector<AdviceAssessment> assessments;
    std::optional<CostEstimate> cost;
};

/// GPUs of the job with deviceRecorded(); 0 means the job is to be described as kNoGpuMessage.
size_t gpusRecorded(const JobAnalysis& job);

/// trace::Progress, called before each device with the share of the work done (0..1, summed over
/// the inputs) and no stage text, never from two threads at once though possibly from a worker
/// thread; returning false cancels.
using AnalysisProgress = trace::Progress;

/// Analyses every device of every input (devices with memory events, kernels or a header entry),
/// several inputs at once (JobAnalysisOptions::threads); results are in input order whatever the
/// threads.
/// Peaks come from buildMemoryTimelines; each OOM gets the allocated and reserved curves' values
/// at its time and the three largest stack groups of the detail level's live set then. Model state:
/// as modelState. Cost (when a price is given): GPUs = devices with kernels or memory
/// events; step time = median of the devices' median iteration durations, else the longest kernel
/// span ("trace span"); steps = planned, else the most iterations seen on a device, else 1; idle
/// and span summed over devices. Errors: an invalid iteration regex; cancellation when
/// `progress` returned false.
///
/// `timelines`, when given, receives each device's memory timeline (one vector per input, in
/// device order), so a caller that draws them need not build them a second time.
trace::Result<JobAnalysis> analyzeJob(
    const std::vector<RankInput>& inputs, const JobAnalysisOptions& options = {},
    const AnalysisProgress& progress = {},
    std::vector<std::vector<MemoryTimeline>>* timelines = nullptr);

/// The segment layout of `d` at time t (the rank's trace time) from its indices: segmentLayoutAt
/// (segments.h) when the device has segments and blocks; otherwise unknown, with the reason (no
/// reserved segments recorded, or no allocator blocks). `data` is the trace `d` was built from.
SegmentLayout segmentLayoutAt(const trace::TraceData& data, const DeviceAnalysis& d,
                              trace::TimestampNs t);

/// Fewest iterations for a model state: a leak is recognised by allocations alive two iterations
/// after the one they were made in (LeakReport survivors, looked for in iterations 1 to n - 3),
/// so with fewer a tensor kept every iteration cannot be told from weights or optimizer state.
inline constexpr size_t kModelStateMinIterations = 4;

/// Memory the job holds for good (weights, optimizer state, buffers), in bytes.
struct ModelState {
    int64_t bytes = -1;             ///< -1 = unknown (fewer than kModelStateMinIterations)
    int64_t excludedLeakBytes = 0;  ///< the leak's part, left out of `bytes`
};

/// Model state: the bytes of the detail level's allocations made by the end of the first
/// iteration and not freed before the end of the last, less those that the leak analysis
/// identifies as the leak (`leak.firstIterationLeakBytes`: of these allocations, the ones with the
/// stack and size of a survivor group, i.e. the same tensor kept every iteration). A leak that
/// keeps tensors from the first iteration on is no model state, whatever the leak verdict says of
/// the curve. `index` is the AllocationIndex `leak` was built on. {-1, 0} with fewer than
/// kModelStateMinIterations iterations.
ModelState modelState(const trace::TraceData& data, const AllocationIndex& index,
                      const IterationSet& iterations, const LeakReport& leak);

}  // namespace vramscope::analysis
