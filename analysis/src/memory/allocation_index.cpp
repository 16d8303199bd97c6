#include "vramscope/analysis/memory/allocation_index.h"

#include <algorithm>
#include <unordered_map>

namespace vramscope::analysis {

using trace::MemoryAction;
using trace::MemoryKind;

AllocationIndex::AllocationIndex(const trace::TraceData& data, trace::DeviceIndex device,
                                 trace::MemoryLevel level)
    : m_device(device), m_level(level) {
    const trace::MemoryEvents& mem = data.memory;
    const size_t n = std::min(mem.size(), size_t(UINT32_MAX - 2));
    for (size_t i = 0; i < n; ++i) {
        if (mem.device[i] == device && mem.level[i] == level &&
            mem.kind[i] != MemoryKind::DeviceStatic) {
            m_order.push_back(uint32_t(i));
        }
    }
    const bool sorted = std::is_sorted(m_order.begin(), m_order.end(), [&](uint32_t a, uint32_t b) {
        return mem.timestampNs[a] < mem.timestampNs[b];
    });
    if (!sorted) {
        std::stable_sort(m_order.begin(), m_order.end(), [&](uint32_t a, uint32_t b) {
            return mem.timestampNs[a] < mem.timestampNs[b];
        });
    }
    const size_t count = m_order.size();
    m_time.resize(count);
    m_free.assign(count, kNever);
    std::unordered_map<uint64_t, uint32_t> open;
    open.reserve(1024);
    // Live set maintained as a vector with swap-removal, for the checkpoints.
    std::vector<uint32_t> live;
    std::vector<uint32_t> slot(count, 0);
    auto removeLive = [&](uint32_t q) {
        const uint32_t s = slot[q];
        live[s] = live.back();
        slot[live[s]] = s;
        live.pop_back();
    };
    uint32_t lastCheckpoint = 0;
    m_checkpointPos.push_back(0);
    m_checkpointStart.push_back(0);
    for (size_t p = 0; p < count; ++p) {
        const uint32_t e = m_order[p];
        m_time[p] = mem.timestampNs[e];
        if (p - lastCheckpoint >= std::max<size_t>(kMinCheckpointSpacing, live.size())) {
            lastCheckpoint = uint32_t(p);
            std::vector<uint32_t> sortedLive = live;
            std::sort(sortedLive.begin(), sortedLive.end());
            m_checkpointPos.push_back(lastCheckpoint);
            m_checkpointStart.push_back(uint32_t(m_checkpointAlive.size()));
            m_checkpointAlive.insert(m_checkpointAlive.end(), sortedLive.begin(), sortedLive.end());
        }
        if (mem.action[e] == MemoryAction::Alloc) {
            auto [it, inserted] = open.try_emplace(mem.address[e], uint32_t(p));
            if (!inserted) {  // the earlier allocation at this address was never freed: close it
                m_free[it->second] = uint32_t(p);
                removeLive(it->second);
                it->second = uint32_t(p);
            }
            slot[p] = uint32_t(live.size());
            live.push_back(uint32_t(p));
        } else {
            m_free[p] = kFreeEvent;
            auto it = open.find(mem.address[e]);
            if (it != open.end()) {
                m_free[it->second] = uint32_t(p);
                removeLive(it->second);
                open.erase(it);
            }
        }
    }
    m_checkpointStart.push_back(uint32_t(m_checkpointAlive.size()));
}

size_t AllocationIndex::positionAfter(trace::TimestampNs t) const {
    return size_t(std::upper_bound(m_time.begin(), m_time.end(), t) - m_time.begin());
}

std::vector<uint32_t> AllocationIndex::alivePositionsAfter(size_t pos) const {
    std::vector<uint32_t> out;
    if (m_order.empty()) {
        return out;
    }
    pos = std::min(pos, m_order.size());
    const size_t c =
        size_t(std::upper_bound(m_checkpointPos.begin(), m_checkpointPos.end(), uint32_t(pos)) -
               m_checkpointPos.begin()) -
        1;
    for (uint32_t i = m_checkpointStart[c]; i < m_checkpointStart[c + 1]; ++i) {
        const uint32_t q = m_checkpointAlive[i];
        if (m_free[q] >= pos) {
            out.push_back(q);
        }
    }
    for (size_t q = m_checkpointPos[c]; q < pos; ++q) {
        if (m_free[q] != kFreeEvent && m_free[q] >= pos) {
            out.push_back(uint32_t(q));
        }
    }
    return out;
}

std::vector<uint32_t> AllocationIndex::aliveEventsAt(trace::TimestampNs t) const {
    std::vector<uint32_t> out = alivePositionsAfter(positionAfter(t));
    for (uint32_t& q : out) {
        q = m_order[q];
    }
    return out;
}

}  // namespace vramscope::analysis
