#pragma once
// The per-event rule of a memory series (running sum of allocs and frees), shared by
// analysis::buildMemoryTimelines and the summaries the writer stores (trace/summary.h), so that
// both give the same curve.

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "vramscope/trace/trace_data.h"

namespace vramscope::trace {

/// Whether a memory event of `kind` belongs on a memory timeline: DeviceStatic memory (module
/// globals, 15-byte `__unnamed_N`; docs/DESIGN.md "Two levels of GPU memory") is noise there and
/// is left out.
constexpr bool isTimelineMemoryKind(MemoryKind kind) noexcept {
    return kind != MemoryKind::DeviceStatic;
}

/// A producer's byte counter sample as whole bytes: counter values are doubles in the file; a
/// byte total is a whole, non-negative number (rounded; negative, NaN or above ~2^63 gives 0).
constexpr int64_t counterBytes(double value) noexcept {
    return value > 0 && value < 9.2e18 ? static_cast<int64_t>(value + 0.5) : 0;
}

/// Running sum of one memory series, one event at a time (events in time order). An alloc adds
/// its size; a free of an address alive here subtracts the size recorded at its alloc (the free's
/// own size is not trusted); a free of an address not alive (allocated before the trace began, or
/// a producer without addresses) subtracts its own size and counts as unmatched. Holds only the
/// live addresses. Single-threaded value type.
class MemoryRunningSum {
public:
    /// Applies one event and returns the sum after it (bytes; may go below 0, see lowest()).
    int64_t apply(MemoryAction action, uint64_t address, uint64_t sizeBytes) {
        if (action == MemoryAction::Alloc) {
            m_live[address] = sizeBytes;
            m_sum += static_cast<int64_t>(sizeBytes);
        } else if (auto it = m_live.find(address); it != m_live.end()) {
            m_sum -= static_cast<int64_t>(it->second);
            m_live.erase(it);
        } else {
            m_sum -= static_cast<int64_t>(sizeBytes);
            ++m_unmatched;
        }
        m_lowest = std::min(m_lowest, m_sum);
        return m_sum;
    }
    int64_t sum() const { return m_sum; }
    /// Lowest sum after any event so far, 0 when it never went below 0: -lowest() is the least
    /// memory that must have been alive before the trace began (the timelines lift by it).
    int64_t lowest() const { return m_lowest; }
    uint64_t unmatchedFrees() const { return m_unmatched; }
    size_t liveAllocations() const { return m_live.size(); }

private:
    std::unordered_map<uint64_t, uint64_t> m_live;  // address -> size at alloc
    int64_t m_sum = 0;
    int64_t m_lowest = 0;
    uint64_t m_unmatched = 0;
};

}  // namespace vramscope::trace
