#pragma once
// Advice from the evidence (each piece states the numbers behind it) and the cost of a job.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/analysis/memory/leak.h"
#include "vramscope/analysis/memory/memory_roles.h"
#include "vramscope/analysis/memory/memory_summary.h"
#include "vramscope/analysis/memory/segments.h"
#include "vramscope/analysis/time/time_breakdown.h"

namespace vramscope::analysis {

enum class Severity { Info, Warning, Critical };
const char* toString(Severity severity);

/// One number behind a piece of advice.
struct Evidence {
    std::string name;  ///< snake_case key, e.g. "peak_fraction"
    double value = 0.0;
    std::string unit;  ///< "bytes", "ns", "fraction", "iterations", ...
};

/// One piece of advice. Rules: "oom", "peak-near-capacity", "leak", "exposed-communication",
/// "host-bound", "model-state", "memory-roles", and the training checklist's "mixed-precision",
/// "allocator-churn", "host-memory", "slow-down" (kChecklistRules).
struct Advice {
    std::string rule;
    Severity severity = Severity::Info;
    trace::RankId rank = trace::kUnknownRank;  ///< the rank it is about, -1 = the job
    trace::DeviceIndex device = trace::kHostDevice;
    std::string message;  ///< what was seen (with numbers and formulas) and what to try
    std::vector<Evidence> evidence;
};

/// Allocations alive at an OOM that share a stack (allocations without a stack form one group).
struct LiveGroup {
    std::string label;  ///< the first user frame of the stack, else its leaf frame, "(no stack)"
    uint64_t bytes = 0;
    uint64_t count = 0;
};

/// One out-of-memory event of a device and the memory at that moment.
struct OomFacts {
    trace::TimestampNs timeNs = 0;        ///< the rank's own clock
    trace::TimestampNs sinceStartNs = 0;  ///< from the rank's first event
    uint64_t requestedBytes = 0;
    uint64_t freeBytes = 0;        ///< reported by the producer, 0 = unknown
    int64_t allocatedBytes = -1;   ///< allocated curve's value at the OOM, -1 = unknown
    int64_t reservedBytes = -1;    ///< reserved curve's value at the OOM, -1 = unknown
    uint64_t liveAllocations = 0;  ///< allocations alive at the OOM (detail level)
    /// Largest free range inside the reserved segments alive at the OOM, and all such ranges
    /// together (segmentFreeSpaceAt, oom_diagnosis.h); -1 = unknown (no segment or block events).
    int64_t largestFreeBlockBytes = -1;
    int64_t segmentFreeBytes = -1;
    /// The reserved segments at the OOM (segmentLayoutAt): totals and the 10 largest; unknown,
    /// with the reason, when the trace gives no segments with blocks. largestFreeBlockBytes and
    /// segmentFreeBytes above are its totals when known.
    SegmentOverview segments;
    std::vector<LiveGroup> topLive;  ///< largest groups of the live set, at most 3
    /// The live set at the OOM by role of memory (memory_roles.h); nullopt without roles.
    std::optional<RolesAt> roles;
};

/// The training checklist's rules: each says, for every device it looks at, whether it fired,
/// found nothing, or could not be assessed and what is missing (AdviceAssessment), so that
/// `check` can pass or fail on them and `report` can say what it could not judge.
inline constexpr const char* kChecklistRules[] = {"mixed-precision", "allocator-churn",
                                                  "host-memory", "slow-down"};

/// What a checklist rule concluded on one device (or one rank's host, device = kHostDevice).
enum class AssessmentOutcome {
    Fired,        ///< the rule gave advice (see JobAnalysis::advice)
    Clear,        ///< the data was enough and showed nothing to fix
    NotAssessed,  ///< the data cannot support a verdict; `detail` says what is missing
};
/// "fired", "clear", "not assessed".
const char* toString(AssessmentOutcome outcome);

/// One checklist rule's conclusion on one device: with Fired / Clear the figure and formula it
/// rests on ("fp32 matmul time 2.1 ms / matmul time 40.3 ms = 5 % <= 50 %"), with NotAssessed
/// what is missing ("no matmul or convolution kernel in this trace").
struct AdviceAssessment {
    std::string rule;
    size_t input = SIZE_MAX;  ///< DeviceFacts::input
    trace::RankId rank = trace::kUnknownRank;
    trace::DeviceIndex device = trace::kHostDevice;
    AssessmentOutcome outcome = AssessmentOutcome::NotAssessed;
    Severity severity = Severity::Info;  ///< of the advice given when Fired
    std::string detail;
};

struct CommunicationSplit;  // straggler.h
struct PrecisionMix;        // precision.h
struct AllocatorChurn;      // allocator_churn.h
struct HostMemoryReport;    // host_memory.h
struct SlowDownReport;      // slow_down.h

/// What the advisor looks at for one device of one rank (filled from the analyses; plain data so
/// tests and callers can build it by hand).
struct DeviceFacts {
    size_t input = SIZE_MAX;  ///< index of the rank among the job's inputs, SIZE_MAX = unknown
    trace::RankId rank = trace::kUnknownRank;
    trace::DeviceIndex device{0};
    MemorySummary memory;  ///< capacity and peaks (capacityBytes 0 = unknown)
    bool hadOom = false;
    const std::vector<OomFacts>* ooms = nullptr;  ///< may be null
    const LeakReport* leak = nullptr;             ///< may be null
    const TimeBreakdown* breakdown = nullptr;     ///< may be null
    /// Communication split into waiting for the last rank and transfer (straggler.h); null when
    /// no collective of this GPU was matched across ranks.
    const CommunicationSplit* communication = nullptr;
    /// Bytes alive across all iterations (allocated by the end of the first iteration and not freed
    /// before the end of the last: weights, optimizer state, persistent buffers), less the leak's
    /// survivors among them (analysis::modelState); -1 = unknown.
    int64_t modelStateBytes = -1;
    /// The live set at the peak by role (memory_roles.h); null when roles are unknown.
    const RolesAt* rolesAtPeak = nullptr;
    /// Ranks of the job (the headers' world size, else the ranks present); the sharding advice
    /// names (N-1)/N with it when it is 2 or more.
    int32_t ranks = 0;
    /// The input lost events (DeviceAnalysis::partialInput): a checklist rule that finds data
    /// missing says it may be in the lost part.
    bool partialInput = false;
    /// The checklist's facts (null = not computed for this device; the rule then says so).
    const PrecisionMix* precision = nullptr;  ///< matmul / convolution kernel time by precision
    const AllocatorChurn* churn = nullptr;    ///< reserved segments made and freed per iteration
    /// The rank's host memory (set on one device of each rank: the rank's first device).
    const HostMemoryReport* host = nullptr;
    const SlowDownReport* slowDown = nullptr;  ///< iteration durations over the run
};

/// Thresholds of the rules (fractions are 0..1).
struct AdviceOptions {
    double peakFraction = kCapacityWarningShare;  ///< docs/DESIGN.md "The 80 % capacity rule"
    double criticalPeakFraction = 0.95;
    double exposedCommunicationFraction = 0.2;  ///< exposed communication / span
    double hostBoundFraction = 0.1;             ///< host-bound gap time / span
    double modelStateFraction = 0.8;            ///< model state / capacity
    /// Least evidence for the time rules (exposed-communication, host-bound): a fraction of a
    /// span shorter than this, or of fewer kernels, says nothing about a training job (one 50 us
    /// kernel would read as 100 % communication).
    /// A role is quoted in the memory-roles advice when it holds at least this share of the live
    /// set at the peak (activations freed in backward, optimizer state, persistent memory,
    /// parameters and gradients together).
    double roleShare = 0.2;
    int64_t minTimeSpanNs = 1'000'000;  ///< 1 ms
    uint64_t minTimeKernels = 2;

    // --- mixed-precision thresholds (precision.h) ---
    /// Fires when fp32 + tf32 time / classified matmul + convolution time is above this...
    double fullPrecisionMatmulShare = 0.5;
    /// ...and fp32 + tf32 matmul + convolution time / compute time is at least this: below it
    /// half precision would save little of the step (the time rules' 10 %, hostBoundFraction).
    double fullPrecisionComputeShare = 0.1;
    /// Not assessed when kernels of unknown precision hold more than this share of the matmul +
    /// convolution time (the verdict would rest on the minority that could be read)...
    double maxUnknownMatmulShare = 0.5;
    /// ...or with fewer classified matmul / convolution kernels, or less of their time, than
    /// this: a handful of tiny GEMMs (a toy step, a warm-up) says nothing about a training job.
    uint64_t minMatmulKernels = 10;
    int64_t minMatmulTimeNs = 100'000;  ///< 100 us

    // --- allocator-churn thresholds (allocator_churn.h) ---
    /// allocator-churn fires when segments are freed and reserved again inside more than this
    /// share of the iterations after the warm-up (a majority): a caching allocator that has found
    /// its working set reserves no more, and a one-off growth (a longer batch, fragmentation
    /// once) churns one iteration, not most of them.
    double churnIterationShare = 0.5;
    /// Fewest iterations after the warm-up for a verdict: "most" of one iteration is anecdote.
    size_t churnMinSteadyIterations = 2;

    // --- host-memory thresholds (host_memory.h) ---

    // --- slow-down thresholds (slow_down.h) ---
    /// slow-down fires when the median iteration of the last third of the iterations after the
    /// warm-up is longer than the first third's by more than the noise, max(slowDownMadFactor x
    /// 1.4826 x MAD, slowDownMinGrowth x median) of the first third: 1.4826 x MAD estimates the
    /// standard deviation of normal noise and is not moved by a few outliers (a checkpoint step),
    /// 3 of them make a false alarm rare; the 5 % floor keeps a perfectly steady run (MAD 0) from
    /// firing on a few microseconds, and is below what a user would chase.
    double slowDownMadFactor = 3.0;
    double slowDownMinGrowth = 0.05;
    /// Fewest iterations after the warm-up: two in each third, so a median is not one iteration.
    size_t slowDownMinIterations = 6;
};

/// Whether `breakdown` holds enough evidence for the time rules: span >= minTimeSpanNs and
/// kernels >= minTimeKernels.
bool enoughTimeEvidence(const TimeBreakdown& breakdown, const AdviceOptions& options = {});

/// Applies the rules to every device:
/// - oom (Critical): the device ran out of memory: the first OOM's request, time, allocated and
///   reserved bytes then, its cause (diagnoseOom: a limit below the device, fragmentation, a full
///   device, or unknown, with the numbers), and the largest groups of allocations alive then.
/// - peak-near-capacity: max(peak reserved, peak allocated) / capacity > peakFraction (Critical
///   at >= criticalPeakFraction or after an OOM): activation checkpointing, mixed precision, a
///   smaller micro-batch with gradient accumulation.
/// - leak: a Staircase verdict (Critical): growth per iteration, iterations to OOM, top survivors.
/// The time rules below fire only with enoughTimeEvidence().
/// - exposed-communication: exposed transfer / span > exposedCommunicationFraction, where exposed
///   transfer = exposed communication - exposed waiting for the last rank (the whole exposed
///   communication when no collective was matched across ranks): gradient accumulation to sync
///   less often, overlap communication with backward, bucket sizes. Waiting for a late rank is
///   the straggler rule's, since syncing less often does not make that rank earlier. Critical
///   above twice the threshold, but only when the waits are known for the whole job: with no
///   collective matched, or a partial job, it stays a Warning and says that part may be waiting.
/// - host-bound: host-bound gap time / span > hostBoundFraction: data loading (workers, pinned
///   memory, prefetch), launch overhead (CUDA graphs, larger kernels / fusion).
/// - model-state: model state / capacity > modelStateFraction (Critical above 1): model
///   parallelism (sharded optimizer / FSDP, tensor or pipeline parallelism).
/// - memory-roles (Info; Warning when peak-near-capacity fired): for each lever whose role holds
///   at least roleShare of the live set at the peak, the bytes and the lever: activations freed
///   in backward -> activation checkpointing (kept activations are named apart: checkpointing
///   does not free them); optimizer state -> sharding over N data-parallel ranks saves (N-1)/N
///   of it (ZeRO-1 / FSDP), or a lighter optimizer; persistent memory -> the same, as parameters
///   and optimizer state together; parameters + gradients -> mixed precision or model
///   parallelism. Needs rolesAtPeak.
/// - host-memory (Warning; once per rank, on the host, from DeviceFacts::host): the rank's host
///   memory (resident set, else the CPU allocator's total) climbs every iteration by the leak's
///   staircase rules (baselineTrend with JobAnalysisOptions::leak): slope, growth, peak, pinned
///   bytes, and the data-loader pitfalls (copy-on-read of Python objects in forked workers,
///   pin_memory buffers, tensors kept on the CPU). Clear on a sawtooth; not assessed without host
///   memory, with too few iterations, or with inconsistent growth (see host_memory.h).
/// - allocator-churn (Warning): reserved segments freed and allocated again inside more than
///   churnIterationShare of the iterations after the first (allocator_churn.h), with the
///   segment allocations, frees and bytes per iteration, the frees from torch.cuda.empty_cache,
///   and the device idle time in gaps holding a free when the trace has kernels: stop calling
///   torch.cuda.empty_cache() in the loop, PYTORCH_ALLOC_CONF=expandable_segments:True, steady
///   batch shapes. Needs reserved-level events with addresses and churnMinSteadyIterations.
/// - slow-down (Warning): iterations after the warm-up got slower (slow_down.h): late-third
///   median - early-third median > max(slowDownMadFactor x 1.4826 x MAD, slowDownMinGrowth x
///   median) of the early third; names the part that grew most (compute, communication
///   transfer, waiting for the last rank and who, copies, host-bound gaps, other idle) with its
///   medians, and what to look at for it. Needs kernels and slowDownMinIterations.
/// The checklist rules (kChecklistRules; each documented in its own header) run on every device
/// as well and, when `assessments` is given, append one AdviceAssessment per rule and device
/// they looked at (device order, then rule order).
/// - mixed-precision (Warning; precision.h): fp32 + tf32 matmul / convolution time / classified
///   matmul / convolution time > fullPrecisionMatmulShare and fp32 + tf32 time / compute time >=
///   fullPrecisionComputeShare: bf16 / fp16 autocast (about half the activation memory, 2x the
///   tf32 and 15-16x the fp32 tensor-core rate on A100 / H100). Clear at or below either share;
///   not assessed without matmul / convolution kernels, with unknown precision for more than
///   maxUnknownMatmulShare of their time, or below minMatmulKernels / minMatmulTimeNs.
/// Sorted by severity (Critical first), then rank, device.
std::vector<Advice> adviseOn(const std::vector<DeviceFacts>& devices,
                             const AdviceOptions& options = {},
                             std::vector<AdviceAssessment>* assessments = nullptr);

/// Sorts advice as adviseOn returns it: severity (Critical first), then rank, device; stable.
void sortAdvice(std::vector<Advice>& advice);

/// Inputs of the cost estimate.
struct CostInput {
    double gpuHourPrice = 0.0;   ///< price of one GPU for one hour, any currency
    int gpus = 0;                ///< GPUs in the job (ranks x devices in use)
    int64_t stepTimeNs = 0;      ///< one training step
    std::string stepTimeSource;  ///< e.g. "median iteration", "trace span"
    int64_t steps = 0;           ///< planned steps, or the steps seen
    std::string stepsSource;     ///< "planned", "observed"
    int64_t idleNs = 0;          ///< summed over devices
    int64_t spanNs = 0;          ///< summed over devices
};

/// GPU-hours = gpus x stepTime[h] x steps; cost = GPU-hours x price; idle cost = cost x (sum idle
/// / sum span), known only with kernels (sum span > 0). Print the amounts with formatAmount
/// (text_format.h) so the CLI and the GUI agree.
struct CostEstimate {
    CostInput input;
    /// Whether there is anything to price: GPUs > 0 and a step time > 0 (a snapshot without
    /// iterations or kernels has neither a step nor a kernel span). When false the amounts are
    /// 0 and must be shown as unknown, with unknownReason.
    bool known = false;
    std::string unknownReason;
    double hours = 0.0;     ///< stepTime x steps, wall hours
    double gpuHours = 0.0;  ///< gpus x hours
    double totalCost = 0.0;
    bool idleKnown = false;     ///< input.spanNs > 0; idleFraction and idleCost are 0 otherwise
    double idleFraction = 0.0;  ///< sum idle / sum span
    double idleCost = 0.0;
};
CostEstimate estimateCost(const CostInput& input);

}  // namespace vramscope::analysis
