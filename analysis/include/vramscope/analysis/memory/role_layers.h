#pragma once
// The memory of one device stacked by role of memory, for a stacked area plot: one layer per
// role present, each the running sum of its role and every role below it, reduced for drawing.

#include <array>
#include <cstdint>
#include <vector>

#include "vramscope/analysis/memory/memory_roles.h"
#include "vramscope/analysis/model/level_of_detail.h"

namespace vramscope::analysis {

/// Order of the layers, bottom first: what lives for the whole job at the bottom (parameters,
/// persistent, optimizer state), then what lives for a step (gradients, activations, inputs,
/// temporaries), unknown on top, so that a growing unknown share shows at the top edge.
inline constexpr std::array<MemoryRole, kMemoryRoleCount> kRoleStackOrder = {
    MemoryRole::Parameters,  MemoryRole::Persistent,  MemoryRole::OptimizerState,
    MemoryRole::Gradients,   MemoryRole::Activations, MemoryRole::Inputs,
    MemoryRole::Temporaries, MemoryRole::Unknown,
};

/// Stacked layers of one device. tops[k] is the step series (time shifted by the offset given to
/// buildRoleLayers, bytes) of roles[0] + ... + roles[k]; tops.back() is the device's total at the
/// roles' level. Immutable once built; thread-safe for const use (LodSeries queries are const).
struct RoleLayers {
    std::vector<MemoryRole> roles;  ///< roles with bytes at some time, in kRoleStackOrder
    std::vector<LodSeries> tops;    ///< parallel to roles

    bool empty() const { return roles.empty(); }
    /// Bytes of roles[k] alone at time t (tops[k] - tops[k - 1]); t on the shifted axis.
    int64_t layerBytesAt(size_t k, TimestampNs t) const;
};

/// Stacks `series` (buildRoleSeries) in kRoleStackOrder, leaving out roles that never hold a byte;
/// `offsetNs` is added to every time (e.g. RankInfo::toJobNs, trace time to job time). O(roles x
/// points) time and memory: one LodSeries per role present.
RoleLayers buildRoleLayers(const RoleSeries& series, int64_t offsetNs);

}  // namespace vramscope::analysis
