#include "vramscope/analysis/live_set.h"

#include <algorithm>

namespace vramscope::analysis {

using trace::MemoryLevel;

std::vector<LiveAllocation> liveSetAt(const trace::TraceData& data, const AllocationIndex& index,
                                      TimestampNs t) {
    const auto& m = data.memory;
    const std::vector<uint32_t> alive = index.aliveEventsAt(t);
    std::vector<LiveAllocation> out;
    out.reserve(alive.size());
    for (uint32_t i : alive) {
        out.push_back(LiveAllocation{m.address[i], m.sizeBytes[i], m.timestampNs[i], m.stack[i],
                                     m.nvtxRange[i], m.kind[i], m.stream[i], i});
    }
    std::sort(out.begin(), out.end(), [](const LiveAllocation& a, const LiveAllocation& b) {
        if (a.sizeBytes != b.sizeBytes) {
            return a.sizeBytes > b.sizeBytes;
        }
        return a.address < b.address;
    });
    return out;
}

std::vector<LiveAllocation> liveSetAt(const trace::TraceData& data, DeviceIndex device,
                                      MemoryLevel level, TimestampNs t) {
    return liveSetAt(data, AllocationIndex(data, device, level), t);
}

MemoryLevel detailLevel(const trace::TraceData& data, DeviceIndex device) {
    const auto& m = data.memory;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.device[i] == device && m.level[i] == MemoryLevel::Allocated) {
            return MemoryLevel::Allocated;
        }
    }
    return MemoryLevel::Reserved;
}

}  // namespace vramscope::analysis
