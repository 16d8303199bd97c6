#pragma once
// A time-ordered index of one device's allocations at one memory level, with each allocation paired
// to its free and periodic checkpoints of the live set, so "what is alive at time t" is answered by
// replaying at most one checkpoint interval instead of the whole trace.

#include <cstdint>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// A size read from a trace as signed bytes for running sums, capped at 2^52 (4 PiB) so that sums
/// of millions of damaged or absurd sizes cannot overflow int64.
inline int64_t allocationBytes(uint64_t sizeBytes) {
    return int64_t(sizeBytes < (1ull << 52) ? sizeBytes : (1ull << 52));
}

/// Immutable index over TraceData::memory for one (device, level). Holds no reference to the
/// trace after construction except through the event indices it returns. Thread-safe for concurrent
/// const queries.
///
/// Approach: events are stable-sorted by time ("positions" 0..size()-1). Each alloc is paired with
/// the first later free of the same address (an alloc at an address that is still open closes the
/// earlier one; a free with no open alloc is ignored). A checkpoint stores the positions of the
/// allocations alive after its position; checkpoints are at least max(kMinCheckpointSpacing, live
/// count) events apart, so the stored lists total at most about one entry per event, and a query
/// replays at most that many events. DeviceStatic memory (module globals) is left out, as in the
/// memory timeline.
class AllocationIndex {
public:
    static constexpr uint32_t kNever = UINT32_MAX;  ///< free position of a never-freed allocation
    static constexpr size_t kMinCheckpointSpacing = 16384;

    AllocationIndex() = default;
    AllocationIndex(const trace::TraceData& data, trace::DeviceIndex device,
                    trace::MemoryLevel level);

    trace::DeviceIndex device() const { return m_device; }
    trace::MemoryLevel level() const { return m_level; }
    /// Events (allocs and frees) of this device and level.
    size_t size() const { return m_order.size(); }
    bool empty() const { return m_order.empty(); }
    /// Index into TraceData::memory of the event at time-ordered position `pos`.
    uint32_t eventAt(size_t pos) const { return m_order[pos]; }
    /// Timestamp of the event at `pos` (ns).
    trace::TimestampNs timeAt(size_t pos) const { return m_time[pos]; }
    bool isAlloc(size_t pos) const { return m_free[pos] != kFreeEvent; }
    /// For an alloc at `pos`: the position of its free, or kNever. Undefined for a free event.
    uint32_t freePosition(size_t pos) const { return m_free[pos]; }
    /// Number of events at or before time t (the position just after t).
    size_t positionAfter(trace::TimestampNs t) const;
    /// Positions of the allocations alive after the first `pos` events were applied, ascending.
    std::vector<uint32_t> alivePositionsAfter(size_t pos) const;
    /// Indices into TraceData::memory of the allocations alive at time t (allocated at or before
    /// t and not freed at or before t), in time order of allocation.
    std::vector<uint32_t> aliveEventsAt(trace::TimestampNs t) const;

private:
    static constexpr uint32_t kFreeEvent = UINT32_MAX - 1;
    trace::DeviceIndex m_device{0};
    trace::MemoryLevel m_level = trace::MemoryLevel::Allocated;
    std::vector<uint32_t> m_order;            // position -> memory event index
    std::vector<trace::TimestampNs> m_time;   // position -> timestamp
    std::vector<uint32_t> m_free;             // position -> free position / kNever / kFreeEvent
    std::vector<uint32_t> m_checkpointPos;    // ascending, first is 0
    std::vector<uint32_t> m_checkpointStart;  // offsets into m_checkpointAlive, size+1
    std::vector<uint32_t> m_checkpointAlive;  // concatenated ascending alive positions
};

}  // namespace vramscope::analysis
