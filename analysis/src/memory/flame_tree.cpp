#include "vramscope/analysis/memory/flame_tree.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "vramscope/analysis/memory/leak.h"

namespace vramscope::analysis {

using trace::TimestampNs;

const char* toString(FlameGrouping grouping) {
    switch (grouping) {
        case FlameGrouping::Stack:
            return "stack";
        case FlameGrouping::Nvtx:
            return "nvtx";
        case FlameGrouping::Category:
            return "category";
        case FlameGrouping::Role:
            return "role";
    }
    return "stack";
}

std::vector<std::string> FlameTree::path(uint32_t i) const {
    std::vector<std::string> out;
    while (i != 0 && i < nodes.size()) {
        out.push_back(nodes[i].name);
        i = nodes[i].parent;
    }
    std::reverse(out.begin(), out.end());
    return out;
}

namespace {

constexpr const char* kSizeClass[] = {"<1 MiB", "1-64 MiB", "64 MiB-1 GiB", ">=1 GiB"};

uint32_t sizeClass(uint64_t bytes) {
    if (bytes < (1ull << 20)) {
        return 0;
    }
    if (bytes < (64ull << 20)) {
        return 1;
    }
    return bytes < (1ull << 30) ? 2 : 3;
}

// Role keys: (role slot << 32) | stack id. Slots 0..kMemoryRoleCount-1 are MemoryRole values;
// these two stand for "no roles at all" and "not classified by the roles given".
constexpr uint64_t kNoRolesSlot = kMemoryRoleCount;
constexpr uint64_t kNotClassifiedSlot = kMemoryRoleCount + 1;

// Stack key of stackless memory alive before recording began: no stack id reaches it (ids index
// TraceData::stacks), so it cannot meet a real stack.
constexpr uint32_t kPreExistingStackKey = 0xffffffffu;

/// The stack part of an event's key: its stack id, or kPreExistingStackKey for stackless
/// pre-existing memory, so that it is told apart from allocations the producer gave no stack.
uint32_t stackKey(const trace::MemoryEvents& m, uint32_t e) {
    const uint32_t stack = toInt(m.stack[e]);
    return stack == 0 && m.kind[e] == trace::MemoryKind::PreExisting ? kPreExistingStackKey : stack;
}

}  // namespace

FlameTreeBuilder::FlameTreeBuilder(const trace::TraceData& data, trace::DeviceIndex device,
                                   trace::MemoryLevel level)
    : FlameTreeBuilder(data, std::make_shared<const AllocationIndex>(data, device, level)) {}

FlameTreeBuilder::FlameTreeBuilder(const trace::TraceData& data,
                                   std::shared_ptr<const AllocationIndex> index,
                                   std::shared_ptr<const MemoryRoles> roles)
    : m_data(data), m_index(std::move(index)), m_roles(std::move(roles)) {}

std::vector<FlameTreeBuilder::Item> FlameTreeBuilder::aggregate(const std::vector<uint32_t>& events,
                                                                FlameGrouping grouping, bool after,
                                                                std::vector<Item> items) {
    std::unordered_map<uint64_t, size_t> slot;
    slot.reserve(items.size() * 2 + 64);
    for (size_t i = 0; i < items.size(); ++i) {
        slot.emplace(items[i].key, i);
    }
    const trace::MemoryEvents& m = m_data.memory;
    for (uint32_t e : events) {
        uint64_t key = 0;
        switch (grouping) {
            case FlameGrouping::Stack:
                key = stackKey(m, e);
                break;
            case FlameGrouping::Nvtx:
                key = m.nvtxRange[e];
                break;
            case FlameGrouping::Category:
                key = uint32_t(m.kind[e]) * 4 + sizeClass(m.sizeBytes[e]);
                break;
            case FlameGrouping::Role: {
                // Without roles every allocation lands in one node: no stack below it, since a
                // stack split under "no roles" would read as a role view that is not there.
                if (!m_roles) {
                    key = kNoRolesSlot << 32;
                    break;
                }
                const RoleRule rule = m_roles->ruleOfEvent(e);
                const uint64_t role =
                    rule == RoleRule::NotClassified ? kNotClassifiedSlot : uint64_t(roleOf(rule));
                key = (role << 32) | stackKey(m, e);
                break;
            }
        }
        auto [it, inserted] = slot.try_emplace(key, items.size());
        if (inserted) {
            items.push_back(Item{key, 0, 0, 0, 0});
        }
        Item& item = items[it->second];
        if (after) {
            item.after += allocationBytes(m.sizeBytes[e]);
            item.afterCount += 1;
        } else {
            item.before += allocationBytes(m.sizeBytes[e]);
            item.beforeCount += 1;
        }
    }
    return items;
}

void FlameTreeBuilder::appendStack(uint32_t stack, std::vector<std::string>& path) {
    if (stack == kPreExistingStackKey) {
        path.push_back(kPreExistingLabel);
        return;
    }
    if (stack == 0 || stack >= m_data.stacks.size() || m_data.stacks[stack].empty()) {
        path.push_back("(no stack)");
        return;
    }
    m_frameNames.resize(m_data.frames.size());
    const std::vector<trace::FrameId>& frames = m_data.stacks[stack];
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
        if (toInt(*it) >= m_frameNames.size()) {
            path.push_back("?");
            continue;
        }
        std::string& name = m_frameNames[toInt(*it)];
        if (name.empty()) {
            name = frameLabel(m_data, *it);
        }
        path.push_back(name);
    }
}

std::vector<std::string> FlameTreeBuilder::pathOf(uint64_t key, FlameGrouping grouping) {
    std::vector<std::string> path;
    if (grouping == FlameGrouping::Category) {
        path.push_back(trace::toString(trace::MemoryKind(key / 4)));
        path.push_back(kSizeClass[key % 4]);
        return path;
    }
    if (grouping == FlameGrouping::Stack) {
        appendStack(uint32_t(key), path);
        return path;
    }
    if (grouping == FlameGrouping::Role) {
        const uint64_t slot = key >> 32;
        if (slot == kNoRolesSlot) {
            path.push_back(kNoRolesLabel);
            return path;
        }
        path.push_back(slot == kNotClassifiedSlot ? kNotClassifiedLabel
                                                  : roleLabel(MemoryRole(slot)));
        appendStack(uint32_t(key & 0xffffffffu), path);
        return path;
    }
    // NVTX: the range and the ranges enclosing it on its thread, outermost first.
    const trace::RangeEvents& r = m_data.ranges;
    if (key == 0 || key > r.size()) {
        path.push_back("(no range)");
        return path;
    }
    if (!m_rangeParentsBuilt) {
        m_rangeParentsBuilt = true;
        m_rangeParent.assign(r.size(), 0);
        std::vector<uint32_t> order(r.size());
        for (uint32_t i = 0; i < r.size(); ++i) {
            order[i] = i;
        }
        std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
            if (r.threadId[a] != r.threadId[b]) {
                return r.threadId[a] < r.threadId[b];
            }
            if (r.startNs[a] != r.startNs[b]) {
                return r.startNs[a] < r.startNs[b];
            }
            return r.endNs[a] > r.endNs[b];
        });
        std::vector<uint32_t> open;
        for (size_t k = 0; k < order.size(); ++k) {
            const uint32_t i = order[k];
            if (k > 0 && r.threadId[order[k - 1]] != r.threadId[i]) {
                open.clear();
            }
            while (!open.empty() && r.endNs[open.back()] <= r.startNs[i]) {
                open.pop_back();
            }
            if (!open.empty()) {
                m_rangeParent[i] = open.back() + 1;
            }
            open.push_back(i);
        }
    }
    for (uint32_t i = uint32_t(key - 1), guard = 0;; ++guard) {
        path.push_back(std::string(m_data.string(r.name[i])));
        if (m_rangeParent[i] == 0 || guard > 256) {
            break;
        }
        i = m_rangeParent[i] - 1;
    }
    std::reverse(path.begin(), path.end());
    return path;
}

FlameTree FlameTreeBuilder::build(const std::vector<Item>& items, FlameGrouping grouping,
                                  bool isDiff) {
    FlameTree tree;
    tree.device = m_index->device();
    tree.level = m_index->level();
    tree.grouping = grouping;
    tree.isDiff = isDiff;
    tree.nodes.push_back(FlameNode{"all", 0, 0, {}, 0, 0, 0, 0, 0});
    std::map<std::pair<uint32_t, std::string>, uint32_t> childOf;
    for (const Item& item : items) {
        const int64_t bytes = isDiff ? item.after - item.before : item.after;
        const int64_t count = isDiff ? item.afterCount - item.beforeCount : item.afterCount;
        uint32_t node = 0;
        auto addTo = [&](uint32_t i) {
            FlameNode& n = tree.nodes[i];
            n.bytes += bytes;
            n.count += count;
            n.beforeBytes += item.before;
            n.afterBytes += item.after;
        };
        addTo(0);
        for (std::string& name : pathOf(item.key, grouping)) {
            auto [it, inserted] = childOf.try_emplace({node, name}, uint32_t(tree.nodes.size()));
            if (inserted) {
                const uint32_t depth = tree.nodes[node].depth + 1;
                tree.nodes.push_back(FlameNode{std::move(name), node, depth, {}, 0, 0, 0, 0, 0});
                tree.nodes[node].children.push_back(it->second);
            }
            node = it->second;
            addTo(node);
        }
        tree.nodes[node].selfBytes += bytes;
    }
    for (FlameNode& n : tree.nodes) {
        std::sort(n.children.begin(), n.children.end(), [&](uint32_t a, uint32_t b) {
            const FlameNode& x = tree.nodes[a];
            const FlameNode& y = tree.nodes[b];
            return x.bytes != y.bytes ? x.bytes > y.bytes : x.name < y.name;
        });
    }
    return tree;
}

FlameTree FlameTreeBuilder::at(TimestampNs t, FlameGrouping grouping) {
    FlameTree tree =
        build(aggregate(m_index->aliveEventsAt(t), grouping, true, {}), grouping, false);
    tree.timeNs = t;
    return tree;
}

FlameTree FlameTreeBuilder::diff(TimestampNs t1, TimestampNs t2, FlameGrouping grouping) {
    std::vector<Item> items = aggregate(m_index->aliveEventsAt(t1), grouping, false, {});
    items = aggregate(m_index->aliveEventsAt(t2), grouping, true, std::move(items));
    FlameTree tree = build(items, grouping, true);
    tree.beforeTimeNs = t1;
    tree.timeNs = t2;
    return tree;
}

TimestampNs peakTime(const trace::TraceData& data, const AllocationIndex& index) {
    int64_t bytes = 0;
    int64_t best = -1;
    TimestampNs when = 0;
    for (size_t p = 0; p < index.size(); ++p) {
        const int64_t size = allocationBytes(data.memory.sizeBytes[index.eventAt(p)]);
        bytes = index.isAlloc(p) ? bytes + size : std::max<int64_t>(0, bytes - size);
        // Several events at one time apply together: the value holds once the last one is in.
        if ((p + 1 == index.size() || index.timeAt(p + 1) != index.timeAt(p)) && bytes > best) {
            best = bytes;
            when = index.timeAt(p);
        }
    }
    return when;
}

std::string toFolded(const FlameTree& tree) {
    std::string out;
    if (tree.nodes.empty()) {
        return out;
    }
    std::vector<std::string> prefix;
    std::function<void(uint32_t)> visit = [&](uint32_t i) {
        const FlameNode& n = tree.nodes[i];
        if (i != 0) {
            std::string name = n.name;
            std::replace(name.begin(), name.end(), ';', ':');
            std::replace(name.begin(), name.end(), '\n', ' ');
            prefix.push_back(std::move(name));
        }
        int64_t selfBefore = n.beforeBytes;
        int64_t selfAfter = n.afterBytes;
        for (uint32_t c : n.children) {
            selfBefore -= tree.nodes[c].beforeBytes;
            selfAfter -= tree.nodes[c].afterBytes;
        }
        const bool emit = tree.isDiff ? (selfBefore != 0 || selfAfter != 0) : n.selfBytes > 0;
        if (emit && !prefix.empty()) {
            for (size_t k = 0; k < prefix.size(); ++k) {
                if (k > 0) {
                    out += ';';
                }
                out += prefix[k];
            }
            if (tree.isDiff) {
                out += ' ' + std::to_string(selfBefore) + ' ' + std::to_string(selfAfter) + '\n';
            } else {
                out += ' ' + std::to_string(n.selfBytes) + '\n';
            }
        }
        for (uint32_t c : n.children) {
            visit(c);
        }
        if (i != 0) {
            prefix.pop_back();
        }
    };
    visit(0);
    return out;
}

}  // namespace vramscope::analysis
