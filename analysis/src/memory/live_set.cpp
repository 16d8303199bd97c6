#include "vramscope/analysis/memory/live_set.h"

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

LiveSetEvidence liveSetEvidence(const trace::TraceData& data, DeviceIndex device,
                                MemoryLevel level) {
    LiveSetEvidence e;
    const auto& m = data.memory;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.device[i] != device || m.level[i] != level ||
            m.action[i] != trace::MemoryAction::Alloc ||
            m.kind[i] == trace::MemoryKind::PreExisting) {
            continue;
        }
        ++e.allocations;
        e.allocationsWithoutAddress += m.address[i] == 0 ? 1 : 0;
    }
    const std::string what = level == MemoryLevel::Allocated ? "allocations" : "segments";
    if (e.allocations == 0) {
        e.reason = "it has no " + what + " (" + trace::toString(level) +
                   " memory events), so what is alive at a time is not recorded";
    } else if (e.allocationsWithoutAddress > 0) {
        e.reason = std::to_string(e.allocationsWithoutAddress) + " of its " +
                   std::to_string(e.allocations) + " " + what +
                   " carry no address (the producer did not record one), so frees cannot be "
                   "paired with them and what is alive at a time cannot be rebuilt";
    }
    e.known = e.reason.empty();
    return e;
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
