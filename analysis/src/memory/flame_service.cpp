#include "vramscope/analysis/memory/flame_service.h"

namespace vramscope::analysis {

void FlameService::add(int rankIndex, trace::DeviceIndex device, const trace::TraceData& data,
                       std::shared_ptr<const AllocationIndex> index,
                       std::shared_ptr<const MemoryRoles> roles) {
    Gpu gpu;
    gpu.builder = std::make_unique<FlameTreeBuilder>(data, std::move(index), std::move(roles));
    gpu.mutex = std::make_unique<std::mutex>();
    m_gpus[{rankIndex, device}] = std::move(gpu);
}

bool FlameService::has(int rankIndex, trace::DeviceIndex device) const {
    return m_gpus.count({rankIndex, device}) > 0;
}

std::shared_ptr<const FlameTree> FlameService::at(int rankIndex, trace::DeviceIndex device,
                                                  trace::TimestampNs timeNs,
                                                  FlameGrouping grouping) const {
    return serve({rankIndex, device, grouping, false, timeNs, timeNs});
}

std::shared_ptr<const FlameTree> FlameService::diff(int rankIndex, trace::DeviceIndex device,
                                                    trace::TimestampNs t1, trace::TimestampNs t2,
                                                    FlameGrouping grouping) const {
    return serve({rankIndex, device, grouping, true, t1, t2});
}

size_t FlameService::treesBuilt() const {
    std::lock_guard lock(m_cacheMutex);
    return m_built;
}

std::shared_ptr<const FlameTree> FlameService::cached(const Request& r) const {
    for (auto it = m_cache.begin(); it != m_cache.end(); ++it) {
        if (it->first == r) {
            m_cache.splice(m_cache.begin(), m_cache, it);  // most recently used first
            return m_cache.front().second;
        }
    }
    return nullptr;
}

std::shared_ptr<const FlameTree> FlameService::serve(const Request& r) const {
    const auto gpu = m_gpus.find({r.rankIndex, r.device});
    if (gpu == m_gpus.end()) {
        return nullptr;
    }
    {
        std::lock_guard lock(m_cacheMutex);
        if (auto tree = cached(r)) {
            return tree;
        }
    }
    // The builder caches frame names as it goes: one caller per GPU at a time.
    std::lock_guard gpuLock(*gpu->second.mutex);
    {
        // Another caller may have built this very tree while we waited for the GPU: hand out
        // that one, so that one request is built once and every caller gets the same tree.
        std::lock_guard lock(m_cacheMutex);
        if (auto tree = cached(r)) {
            return tree;
        }
    }
    FlameTreeBuilder& b = *gpu->second.builder;
    auto tree = std::make_shared<const FlameTree>(r.isDiff ? b.diff(r.t1, r.t2, r.grouping)
                                                           : b.at(r.t1, r.grouping));
    std::lock_guard lock(m_cacheMutex);
    ++m_built;
    m_cache.emplace_front(r, tree);
    if (m_cache.size() > kCacheSize) {
        m_cache.pop_back();
    }
    return tree;
}

}  // namespace vramscope::analysis
