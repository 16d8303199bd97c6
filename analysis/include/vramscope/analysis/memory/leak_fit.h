#pragma once
// What a leak chart draws beside the baselines: the fitted line, and where the allocations of a
// surviving stack were made.

#include <cstdint>

#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/analysis/memory/leak.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// baseline(position) ~= interceptBytes + slopeBytesPerIteration x position, position = 0 for the
/// first iteration of LeakReport::iterations.
struct LeakFitLine {
    double interceptBytes = 0.0;
    double slopeBytesPerIteration = 0.0;
    double at(double position) const { return interceptBytes + slopeBytesPerIteration * position; }
};

/// The line through the report's baselines with its Theil-Sen slope and the usual Theil-Sen
/// intercept, the median of (baseline_i - slope x i) (Sen 1968). Zero line when there are no
/// iterations.
LeakFitLine leakFitLine(const LeakReport& report);

/// Where allocations of one stack were made on a device: the first and last allocation times (ns,
/// the trace's clock), how many and how many bytes.
struct StackAllocations {
    trace::TimestampNs firstNs = 0;
    trace::TimestampNs lastNs = 0;
    uint64_t count = 0;
    uint64_t bytes = 0;
};

/// The allocations with `stack` in `index` (one device and level) that are still alive at
/// `aliveAtNs` (pass INT64_MAX for all of them, freed or not). O(events).
StackAllocations allocationsOfStack(const trace::TraceData& data, const AllocationIndex& index,
                                    trace::StackId stack, trace::TimestampNs aliveAtNs);

}  // namespace vramscope::analysis
