#pragma once
// Advice from the evidence (each piece states the numbers behind it) and the cost of a job.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/analysis/leak.h"
#include "vramscope/analysis/time_breakdown.h"

namespace vramscope::analysis {

enum class Severity { Info, Warning, Critical };
const char* toString(Severity severity);

/// One number behind a piece of advice.
struct Evidence {
    std::string name;  ///< snake_case key, e.g. "peak_fraction"
    double value = 0.0;
    std::string unit;  ///< "bytes", "ns", "fraction", "iterations", ...
};

/// One piece of advice. Rules: "peak-near-capacity", "leak", "exposed-communication",
/// "host-bound", "model-state".
struct Advice {
    std::string rule;
    Severity severity = Severity::Info;
    int32_t rank = -1;  ///< the rank it is about, -1 = the job
    trace::DeviceIndex device = trace::kHostDevice;
    std::string message;  ///< what was seen (with numbers and formulas) and what to try
    std::vector<Evidence> evidence;
};

/// What the advisor looks at for one device of one rank (filled from the analyses; plain data so
/// tests and callers can build it by hand).
struct DeviceFacts {
    int32_t rank = -1;
    trace::DeviceIndex device = 0;
    uint64_t capacityBytes = 0;  ///< 0 = unknown
    int64_t peakAllocatedBytes = 0;
    int64_t peakReservedBytes = 0;
    bool hadOom = false;
    const LeakReport* leak = nullptr;          ///< may be null
    const TimeBreakdown* breakdown = nullptr;  ///< may be null
    /// Bytes alive across all iterations (allocated by the end of the first iteration and not freed
    /// before the end of the last: weights, optimizer state, persistent buffers); -1 = unknown.
    int64_t modelStateBytes = -1;
};

/// Thresholds of the rules (fractions are 0..1).
struct AdviceOptions {
    double peakFraction = 0.8;  ///< DESIGN.md rule of thumb: peak below 80 % of capacity
    double criticalPeakFraction = 0.95;
    double exposedCommunicationFraction = 0.2;  ///< exposed communication / span
    double hostBoundFraction = 0.1;             ///< host-bound gap time / span
    double modelStateFraction = 0.8;            ///< model state / capacity
};

/// Applies the rules to every device:
/// - peak-near-capacity: max(peak reserved, peak allocated) / capacity > peakFraction (Critical
///   at >= criticalPeakFraction or after an OOM): activation checkpointing, mixed precision, a
///   smaller micro-batch with gradient accumulation.
/// - leak: a Staircase verdict (Critical): growth per iteration, iterations to OOM, top survivors.
/// - exposed-communication: exposed communication / span > exposedCommunicationFraction:
///   gradient accumulation to sync less often, overlap communication with backward, bucket sizes.
/// - host-bound: host-bound gap time / span > hostBoundFraction: data loading (workers, pinned
///   memory, prefetch), launch overhead (CUDA graphs, larger kernels / fusion).
/// - model-state: model state / capacity > modelStateFraction (Critical above 1): model
///   parallelism (sharded optimizer / FSDP, tensor or pipeline parallelism).
/// Sorted by severity (Critical first), then rank, device.
std::vector<Advice> adviseOn(const std::vector<DeviceFacts>& devices,
                             const AdviceOptions& options = {});

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

/// cost = gpus x price x stepTime[h] x steps; idle cost = cost x (sum idle / sum span).
struct CostEstimate {
    CostInput input;
    double hours = 0.0;  ///< stepTime x steps, wall hours
    double totalCost = 0.0;
    double idleFraction = 0.0;
    double idleCost = 0.0;
};
CostEstimate estimateCost(const CostInput& input);

}  // namespace vramscope::analysis
