#include "vramscope/analysis/memory/memory_roles.h"

// The bytes of each role over time: the live set by role at chosen times, and the running
// series a stacked plot draws (memory_roles.h).

#include <algorithm>

namespace vramscope::analysis {

using trace::TimestampNs;

RolesAt MemoryRoles::rolesAt(const trace::TraceData& data, const AllocationIndex& index,
                             TimestampNs t) const {
    RolesAt out;
    out.timeNs = t;
    for (const uint32_t e : index.aliveEventsAt(t)) {
        const RoleRule rule = ruleOfEvent(e);
        const int64_t b = allocationBytes(data.memory.sizeBytes[e]);
        out.bytes[roleOf(rule)] += b;
        out.ruleBytes[size_t(rule)] += b;
        if (rule == RoleRule::ActivationKept) {
            out.keptActivationBytes += b;
        }
        ++out.allocations;
    }
    return out;
}

std::vector<RolesAt> MemoryRoles::rolesAtTimes(const trace::TraceData& data,
                                               const AllocationIndex& index,
                                               const std::vector<TimestampNs>& times) const {
    // Each position's rule and the bytes it adds (alloc) or takes (its paired free).
    std::vector<RoleRule> ruleAtPos(index.size(), RoleRule::NotClassified);
    std::vector<int64_t> deltaAtPos(index.size(), 0);
    for (size_t p = 0; p < index.size(); ++p) {
        if (!index.isAlloc(p)) {
            continue;
        }
        const uint32_t e = index.eventAt(p);
        const int64_t b = allocationBytes(data.memory.sizeBytes[e]);
        ruleAtPos[p] = ruleOfEvent(e);
        deltaAtPos[p] = b;
        if (const uint32_t f = index.freePosition(p); f != AllocationIndex::kNever) {
            ruleAtPos[f] = ruleAtPos[p];
            deltaAtPos[f] = -b;
        }
    }
    std::vector<RolesAt> out;
    out.reserve(times.size());
    std::array<int64_t, kRoleRuleCount> running{};
    int64_t alive = 0;
    size_t p = 0;
    for (const TimestampNs t : times) {
        for (; p < index.size() && index.timeAt(p) <= t; ++p) {
            running[size_t(ruleAtPos[p])] += deltaAtPos[p];
            // A free counts when it closes an allocation of the index (its rule was set).
            alive += index.isAlloc(p) ? 1 : (ruleAtPos[p] != RoleRule::NotClassified ? -1 : 0);
        }
        RolesAt r;
        r.timeNs = t;
        r.ruleBytes = running;
        r.allocations = uint64_t(std::max<int64_t>(alive, 0));
        for (size_t rule = 0; rule < kRoleRuleCount; ++rule) {
            r.bytes[roleOf(RoleRule(rule))] += running[rule];
        }
        r.keptActivationBytes = running[size_t(RoleRule::ActivationKept)];
        out.push_back(r);
    }
    return out;
}

RoleSeries buildRoleSeries(const trace::TraceData& data, const AllocationIndex& index,
                           const MemoryRoles& roles) {
    RoleSeries s;
    std::array<int64_t, kMemoryRoleCount> running{};
    // For each position: the role and bytes it adds (alloc) or takes away (its paired free); a
    // free with no allocation in the index changes nothing alive (bytes 0).
    std::vector<MemoryRole> roleAtPos(index.size(), MemoryRole::Unknown);
    std::vector<int64_t> deltaAtPos(index.size(), 0);
    for (size_t p = 0; p < index.size(); ++p) {
        if (!index.isAlloc(p)) {
            continue;
        }
        const uint32_t e = index.eventAt(p);
        const MemoryRole r = roles.roleOfEvent(e);
        const int64_t b = allocationBytes(data.memory.sizeBytes[e]);
        roleAtPos[p] = r;
        deltaAtPos[p] = b;
        if (const uint32_t f = index.freePosition(p); f != AllocationIndex::kNever) {
            roleAtPos[f] = r;
            deltaAtPos[f] = -b;
        }
    }
    for (size_t p = 0; p < index.size(); ++p) {
        if (deltaAtPos[p] == 0) {
            continue;
        }
        running[size_t(roleAtPos[p])] += deltaAtPos[p];
        const TimestampNs t = index.timeAt(p);
        if (!s.timeNs.empty() && s.timeNs.back() == t) {
            for (size_t r = 0; r < kMemoryRoleCount; ++r) {
                s.bytes[r].back() = running[r];
            }
            continue;
        }
        s.timeNs.push_back(t);
        for (size_t r = 0; r < kMemoryRoleCount; ++r) {
            s.bytes[r].push_back(running[r]);
        }
    }
    return s;
}

}  // namespace vramscope::analysis
