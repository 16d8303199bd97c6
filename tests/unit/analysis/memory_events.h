#pragma once
// Test helper: appends one hand-written memory event to a trace, for the analysis tests that build
// their inputs event by event (live sets, timelines, summaries).

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis::test {

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

}  // namespace vramscope::analysis::test
