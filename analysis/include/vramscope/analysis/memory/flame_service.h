#pragma once
// Flame trees computed on demand (at a cursor time, over a selection) for the GPUs of a job
// model, safe to call from any thread, with a small cache of recent trees.

#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>

#include "vramscope/analysis/memory/flame_tree.h"

namespace vramscope::analysis {

/// Serves flame trees of several GPUs. Each GPU has one FlameTreeBuilder (over the allocation
/// index the analyses built) behind its own mutex, so two threads asking about different GPUs
/// do not wait on each other; the last kCacheSize trees are kept, so going back and forth
/// between two times (peak, cursor, OOM) costs nothing. Trees are returned as shared immutable
/// values; callers asking the same at once get one tree, built once. Thread-safe; GPUs are added
/// while the model is built, before it is shared.
class FlameService {
public:
    static constexpr size_t kCacheSize = 16;

    /// Registers GPU `key` over `data` (which must outlive the service) and `index`; `roles`
    /// (classified over `index`, may be null) feed FlameGrouping::Role.
    void add(int rankIndex, trace::DeviceIndex device, const trace::TraceData& data,
             std::shared_ptr<const AllocationIndex> index,
             std::shared_ptr<const MemoryRoles> roles = nullptr);
    /// Whether the GPU was registered.
    bool has(int rankIndex, trace::DeviceIndex device) const;
    /// Tree of the allocations alive at `timeNs` (the rank's trace time); nullptr for a GPU that
    /// was not registered.
    std::shared_ptr<const FlameTree> at(int rankIndex, trace::DeviceIndex device,
                                        trace::TimestampNs timeNs, FlameGrouping grouping) const;
    /// Tree of (alive at t2) - (alive at t1), trace time; nullptr for an unknown GPU.
    std::shared_ptr<const FlameTree> diff(int rankIndex, trace::DeviceIndex device,
                                          trace::TimestampNs t1, trace::TimestampNs t2,
                                          FlameGrouping grouping) const;
    /// Trees built so far (cache misses), for tests and benchmarks.
    size_t treesBuilt() const;

private:
    struct Gpu {
        std::unique_ptr<FlameTreeBuilder> builder;
        std::unique_ptr<std::mutex> mutex;
    };
    struct Request {
        int rankIndex;
        trace::DeviceIndex device;
        FlameGrouping grouping;
        bool isDiff;
        trace::TimestampNs t1;
        trace::TimestampNs t2;
        bool operator==(const Request&) const = default;
    };
    std::shared_ptr<const FlameTree> serve(const Request& request) const;
    /// The cached tree of `request`, moved to the front, or nullptr; m_cacheMutex must be held.
    std::shared_ptr<const FlameTree> cached(const Request& request) const;

    std::map<std::pair<int, trace::DeviceIndex>, Gpu> m_gpus;  // fixed once the model is shared
    mutable std::mutex m_cacheMutex;
    mutable std::list<std::pair<Request, std::shared_ptr<const FlameTree>>>
        m_cache;  // newest first
    mutable size_t m_built = 0;
};

}  // namespace vramscope::analysis
