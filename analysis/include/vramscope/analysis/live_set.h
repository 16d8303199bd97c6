#pragma once
// Live sets: the allocations alive on a device at a time.

#include <cstdint>
#include <vector>

#include "vramscope/analysis/allocation_index.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

using trace::DeviceIndex;
using trace::TimestampNs;

/// An allocation alive at the queried time.
struct LiveAllocation {
    uint64_t address = 0;
    uint64_t sizeBytes = 0;
    TimestampNs allocTimeNs = 0;
    trace::StackId stack{0};
    uint32_t nvtxRange = 0;  ///< 1-based range index, 0 = none
    trace::MemoryKind kind = trace::MemoryKind::Unknown;
    uint64_t stream = 0;
    size_t eventIndex = 0;  ///< index of the alloc event in TraceData::memory
};

/// Allocations of `level` on `device` alive at time t: allocated at or before t and not freed at
/// or before t (events stable-sorted by time; an address reused after a free is a new allocation;
/// an alloc of an address already alive replaces it; a free with no matching alloc is ignored).
/// DeviceStatic memory is left out, as in buildMemoryTimelines, so the sizes sum to the
/// event-sourced timeline's value at t when no memory predates the trace. Sorted largest first,
/// then by address. Builds an AllocationIndex, O(n log n) in events: to query one device many
/// times, build the index once and use the overload below.
std::vector<LiveAllocation> liveSetAt(const trace::TraceData& data, DeviceIndex device,
                                      trace::MemoryLevel level, TimestampNs t);

/// Same, from a prebuilt index of the device and level (replays at most one checkpoint interval
/// of the index; see allocation_index.h). `data` must be the trace the index was built from.
std::vector<LiveAllocation> liveSetAt(const trace::TraceData& data, const AllocationIndex& index,
                                      TimestampNs t);

/// The level with allocation-level detail on `device`: Allocated when it has allocated events,
/// otherwise Reserved.
trace::MemoryLevel detailLevel(const trace::TraceData& data, DeviceIndex device);

}  // namespace vramscope::analysis
