#pragma once
// Test helper: bytes alive on one GPU by replaying its memory events, written independently of
// AllocationIndex and FlameTreeBuilder so that tests can check their trees against it.

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis::test {

/// Allocated-level bytes alive at t on `device`: the memory events replayed in time order.
inline int64_t replayAlive(const trace::TraceData& d, trace::DeviceIndex device, int64_t t) {
    std::vector<size_t> order;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.device[i] == device && d.memory.level[i] == trace::MemoryLevel::Allocated &&
            d.memory.timestampNs[i] <= t) {
            order.push_back(i);
        }
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return d.memory.timestampNs[a] < d.memory.timestampNs[b];
    });
    std::map<uint64_t, int64_t> live;
    for (size_t i : order) {
        if (d.memory.action[i] == trace::MemoryAction::Alloc) {
            live[d.memory.address[i]] = int64_t(d.memory.sizeBytes[i]);
        } else {
            live.erase(d.memory.address[i]);
        }
    }
    int64_t bytes = 0;
    for (const auto& entry : live) {
        bytes += entry.second;
    }
    return bytes;
}

}  // namespace vramscope::analysis::test
