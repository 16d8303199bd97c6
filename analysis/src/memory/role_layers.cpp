#include "vramscope/analysis/memory/role_layers.h"

#include <algorithm>

namespace vramscope::analysis {

int64_t RoleLayers::layerBytesAt(size_t k, TimestampNs t) const {
    if (k >= tops.size()) {
        return 0;
    }
    const int64_t top = tops[k].series().valueAt(t);
    return k == 0 ? top : top - tops[k - 1].series().valueAt(t);
}

RoleLayers buildRoleLayers(const RoleSeries& series, int64_t offsetNs) {
    RoleLayers out;
    const size_t n = series.timeNs.size();
    std::vector<TimestampNs> times(n);
    for (size_t i = 0; i < n; ++i) {
        times[i] = series.timeNs[i] + offsetNs;
    }
    std::vector<int64_t> running(n, 0);
    for (const MemoryRole role : kRoleStackOrder) {
        const std::vector<int64_t>& bytes = series.bytes[size_t(role)];
        if (bytes.size() != n ||
            std::none_of(bytes.begin(), bytes.end(), [](int64_t b) { return b != 0; })) {
            continue;
        }
        StepSeries top;
        top.timeNs = times;
        top.bytes.resize(n);
        for (size_t i = 0; i < n; ++i) {
            running[i] += bytes[i];
            top.bytes[i] = running[i];
        }
        out.roles.push_back(role);
        out.tops.emplace_back(std::move(top));
    }
    return out;
}

}  // namespace vramscope::analysis
