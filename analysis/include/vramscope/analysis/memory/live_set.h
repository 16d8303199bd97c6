#pragma once
// Live sets: the allocations alive on a device at a time.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/analysis/memory/allocation_index.h"
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

/// Whether the allocations alive at a time can be rebuilt from a device's memory events.
struct LiveSetEvidence {
    bool known = false;
    uint64_t allocations = 0;  ///< alloc events of the level (PreExisting excluded)
    uint64_t allocationsWithoutAddress = 0;
    std::string reason;  ///< why not, as a sentence without the GPU's name; empty when known
};

/// The rule: a live set pairs each free with its allocation by address, so it is known only when
/// the device has allocation events of `level` and every one of them carries an address (0 is
/// never a device pointer: importers write 0 when the producer gave none, e.g. PyTorch profiler
/// traces from before Addr was recorded). Without addresses the totals may still be right (the
/// running sum of sizes, or the producer's counters) while the live set is not: replaying would
/// keep one allocation per address. PreExisting memory (synthetic, at address 0) does not count.
/// DeviceStatic memory counts like any allocation. O(n) in the trace's memory events.
LiveSetEvidence liveSetEvidence(const trace::TraceData& data, DeviceIndex device,
                                trace::MemoryLevel level);

/// The level with allocation-level detail on `device`: Allocated when it has allocated events,
/// otherwise Reserved.
trace::MemoryLevel detailLevel(const trace::TraceData& data, DeviceIndex device);

}  // namespace vramscope::analysis
