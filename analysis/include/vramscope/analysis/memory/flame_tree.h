#pragma once
// Flame trees of a live set: the allocations alive at a time, grouped root to leaf by stack
// frames, by NVTX range path, by category or by role of memory, with bytes and counts per node;
// and the difference between two times.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/analysis/memory/memory_roles.h"
#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

enum class FlameGrouping {
    /// stack frames, outermost (root) first; "(no stack)" without one, kPreExistingLabel for
    /// memory alive before recording began that came without a stack (MemoryKind::PreExisting)
    Stack,
    Nvtx,      ///< the allocation's NVTX range and its enclosing ranges, outermost first
    Category,  ///< memory kind, then size class ("<1 MiB", "1-64 MiB", "64 MiB-1 GiB", ">=1 GiB")
    /// roleLabel() of the allocation's role (MemoryRoles), then its stack frames as Stack does;
    /// without roles, one node kNoRolesLabel; an event the roles did not classify (another level)
    /// goes under kNotClassifiedLabel.
    Role,
};
/// The single node of a Role tree built without roles.
inline constexpr const char* kNoRolesLabel = "(no roles: the allocations were not classified)";
/// The stack node of memory alive before recording began that has no stack of its own (importers
/// add it as MemoryKind::PreExisting allocations at the first trace time).
inline constexpr const char* kPreExistingLabel = "(alive before the trace began, no stack)";
/// The role node of an allocation the roles did not classify.
inline constexpr const char* kNotClassifiedLabel = "(not classified)";
const char* toString(FlameGrouping grouping);

/// One node. Bytes and counts include the node's children. In a diff tree, bytes and counts are
/// (at the second time) - (at the first time) and may be negative; beforeBytes/afterBytes hold
/// the two sides.
struct FlameNode {
    std::string name;
    uint32_t parent = 0;             ///< index of the parent; the root's parent is itself (0)
    uint32_t depth = 0;              ///< 0 = root
    std::vector<uint32_t> children;  ///< sorted by bytes, largest first
    int64_t bytes = 0;
    int64_t count = 0;
    int64_t selfBytes = 0;  ///< bytes of allocations whose path ends at this node
    int64_t beforeBytes = 0;
    int64_t afterBytes = 0;
};

/// A tree of nodes; nodes[0] is the root ("all"). Plain data, ready for a Qt item model.
struct FlameTree {
    trace::DeviceIndex device{0};
    trace::MemoryLevel level = trace::MemoryLevel::Allocated;
    FlameGrouping grouping = FlameGrouping::Stack;
    trace::TimestampNs timeNs = 0;
    bool isDiff = false;
    trace::TimestampNs beforeTimeNs = 0;  ///< for a diff: the first time (timeNs is the second)
    std::vector<FlameNode> nodes;

    const FlameNode& root() const { return nodes.front(); }
    /// Names from the root's child down to node `i` (the root itself is left out).
    std::vector<std::string> path(uint32_t i) const;
};

/// Builds flame trees over one device's allocations at one level; rebuilds are fast as a cursor
/// moves: the live set comes from an AllocationIndex (at most one checkpoint interval replayed),
/// and grouping aggregates by distinct (stack | range | category) first, then walks each distinct
/// path once. Stack frames are interned into names on first use. Holds a reference to `data`,
/// which must outlive it. Not thread-safe (caches names): use one per thread, or FlameService.
/// The roles, when given, are shared read-only (DeviceAnalysis::roles).
class FlameTreeBuilder {
public:
    /// Builds its own index of (device, level).
    FlameTreeBuilder(const trace::TraceData& data, trace::DeviceIndex device,
                     trace::MemoryLevel level);
    /// Shares an index built elsewhere (e.g. DeviceAnalysis::index); `index` must not be null.
    /// `roles` (classified over the same index) feed FlameGrouping::Role; null = none.
    FlameTreeBuilder(const trace::TraceData& data, std::shared_ptr<const AllocationIndex> index,
                     std::shared_ptr<const MemoryRoles> roles = nullptr);

    const AllocationIndex& index() const { return *m_index; }
    /// Tree of the allocations alive at time t.
    FlameTree at(trace::TimestampNs t, FlameGrouping grouping);
    /// Tree of (alive at t2) - (alive at t1): what grew (positive) and what shrank (negative).
    FlameTree diff(trace::TimestampNs t1, trace::TimestampNs t2, FlameGrouping grouping);

private:
    struct Item {
        uint64_t key;  // stack id, range index, category id or (role slot, stack id)
        int64_t before, after, beforeCount, afterCount;
    };
    std::vector<Item> aggregate(const std::vector<uint32_t>& events, FlameGrouping grouping,
                                bool after, std::vector<Item> items);
    std::vector<std::string> pathOf(uint64_t key, FlameGrouping grouping);
    void appendStack(uint32_t stack, std::vector<std::string>& path);
    FlameTree build(const std::vector<Item>& items, FlameGrouping grouping, bool isDiff);

    const trace::TraceData& m_data;
    std::shared_ptr<const AllocationIndex> m_index;
    std::shared_ptr<const MemoryRoles> m_roles;
    std::vector<std::string> m_frameNames;  // lazily filled, "" = not yet
    std::vector<uint32_t> m_rangeParent;    // range index -> enclosing range + 1, 0 = none
    bool m_rangeParentsBuilt = false;
};

/// Time of the peak of the running bytes in `index` (first on ties); 0 when empty.
trace::TimestampNs peakTime(const trace::TraceData& data, const AllocationIndex& index);

/// Collapsed-stack text, one line per node with self bytes: "root-child;...;node bytes" (root
/// first, ';' inside names replaced by ':'), as flamegraph.pl and speedscope read. For a diff tree,
/// two numbers per line, "path before after" (flamegraph.pl's differential input).
std::string toFolded(const FlameTree& tree);

}  // namespace vramscope::analysis
