#include "vramscope/analysis/live_set.h"

#include <algorithm>
#include <unordered_map>

namespace vramscope::analysis {

using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;

std::vector<LiveAllocation> liveSetAt(const trace::TraceData& data, DeviceIndex device,
                                      MemoryLevel level, TimestampNs t) {
    const auto& m = data.memory;
    std::vector<uint32_t> indices;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.device[i] == device && m.level[i] == level && m.timestampNs[i] <= t &&
            m.kind[i] != MemoryKind::DeviceStatic) {
            indices.push_back(static_cast<uint32_t>(i));
        }
    }
    auto byTime = [&](uint32_t a, uint32_t b) { return m.timestampNs[a] < m.timestampNs[b]; };
    if (!std::is_sorted(indices.begin(), indices.end(), byTime)) {
        std::stable_sort(indices.begin(), indices.end(), byTime);
    }
    std::unordered_map<uint64_t, LiveAllocation> live;
    for (uint32_t i : indices) {
        if (m.action[i] == MemoryAction::Alloc) {
            live[m.address[i]] =
                LiveAllocation{m.address[i],   m.sizeBytes[i], m.timestampNs[i], m.stack[i],
                               m.nvtxRange[i], m.kind[i],      m.stream[i],      i};
        } else {
            live.erase(m.address[i]);
        }
    }
    std::vector<LiveAllocation> out;
    out.reserve(live.size());
    for (auto& [address, a] : live) {
        out.push_back(a);
    }
    std::sort(out.begin(), out.end(), [](const LiveAllocation& a, const LiveAllocation& b) {
        if (a.sizeBytes != b.sizeBytes) {
            return a.sizeBytes > b.sizeBytes;
        }
        return a.address < b.address;
    });
    return out;
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
