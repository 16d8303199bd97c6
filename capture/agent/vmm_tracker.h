#pragma once
// The driver's virtual memory management calls as reserved memory: PyTorch's expandable segments
// reserve address space and back it with physical pages by cuMemCreate + cuMemMap, and give them
// back by cuMemUnmap + cuMemRelease (docs/DESIGN.md "Capture: PyTorch allocator facts"); CUPTI's
// memory records do not show these pages, the API callbacks do. A mapped range is a reserved
// allocation at its address on the device its handle was created for; an unmap frees every range it
// covers (a range it covers only in part is freed whole and its kept parts allocated again, so that
// every free matches an alloc by address and size).
//
// Thread-safe (one mutex; the calls are rare: one per 2 or 20 MiB page). No CUDA headers.

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::capture {

class VmmTracker {
public:
    /// cuMemCreate succeeded: `handle` holds `bytes` of physical memory on `device` (-1: not a
    /// device allocation, e.g. host memory).
    void created(uint64_t handle, uint64_t bytes, int32_t device);
    /// cuMemRelease succeeded.
    void released(uint64_t handle);
    /// cuMemMap succeeded: one Reserved alloc of `bytes` at `address` appended to `out`, on the
    /// handle's device (`fallbackDevice` for a handle not seen created, e.g. imported); nothing
    /// for host memory.
    void mapped(uint64_t address, uint64_t bytes, uint64_t handle, int32_t fallbackDevice,
                trace::TimestampNs t, std::vector<trace::MemoryEvent>& out);
    /// cuMemUnmap succeeded: frees (and re-allocations of kept parts) appended to `out`.
    void unmapped(uint64_t address, uint64_t bytes, trace::TimestampNs t,
                  std::vector<trace::MemoryEvent>& out);

    size_t mappedRanges() const;

private:
    struct Range {
        uint64_t bytes = 0;
        int32_t device = 0;
    };
    struct Handle {
        uint64_t bytes = 0;
        int32_t device = 0;
    };

    mutable std::mutex m_mutex;
    std::unordered_map<uint64_t, Handle> m_handles;
    std::map<uint64_t, Range> m_ranges;  ///< by start address
};

}  // namespace vramscope::capture
