#pragma once
// Test helpers: append one hand-written memory event to a trace, for the analysis tests that
// build their inputs event by event (live sets, timelines, summaries, segments, OOMs).

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis::test {

/// Short names for the two actions, for tables of hand-written events.
inline constexpr trace::MemoryAction kAlloc = trace::MemoryAction::Alloc;
inline constexpr trace::MemoryAction kFree = trace::MemoryAction::Free;

/// Appends an alloc or free of `sizeBytes` at `address`, time `t` (ns), to `d.memory`. Defaults:
/// the allocated level, GPU 0, no stack, a pool allocation (what cudaMallocAsync gives).
inline void addMemory(trace::TraceData& d, trace::TimestampNs t, uint64_t address,
                      uint64_t sizeBytes, trace::MemoryAction action,
                      trace::MemoryLevel level = trace::MemoryLevel::Allocated,
                      trace::DeviceIndex device = trace::DeviceIndex{0},
                      trace::StackId stack = trace::StackId{0},
                      trace::MemoryKind kind = trace::MemoryKind::Pool) {
    trace::MemoryEvent e;
    e.timestampNs = t;
    e.address = address;
    e.sizeBytes = sizeBytes;
    e.action = action;
    e.level = level;
    e.device = device;
    e.stack = stack;
    e.kind = kind;
    d.memory.append(e);
}

/// The same for a plain device allocation (MemoryKind::Device: a cudaMalloc'd segment of the
/// caching allocator, or a block in one) on GPU 0 without a stack, on `stream`.
inline void addDeviceMemory(trace::TraceData& d, trace::TimestampNs t, uint64_t address,
                            uint64_t sizeBytes, trace::MemoryAction action,
                            trace::MemoryLevel level, uint64_t stream = 0) {
    trace::MemoryEvent e;
    e.timestampNs = t;
    e.address = address;
    e.sizeBytes = sizeBytes;
    e.action = action;
    e.level = level;
    e.kind = trace::MemoryKind::Device;
    e.stream = stream;
    d.memory.append(e);
}

}  // namespace vramscope::analysis::test
