#pragma once
// Statistics over samples that several analyses share (internal to analysis).

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace vramscope::analysis {

/// Median of `values` (taken by copy, reordered): the middle value, or for an even count the mean
/// of the two middle ones, for integers rounded toward the lower one and computed without
/// overflow. 0 for no values.
template <typename T>
T median(std::vector<T> values) {
    if (values.empty()) {
        return T{};
    }
    const auto half = static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), values.begin() + half, values.end());
    const T upper = values[static_cast<size_t>(half)];
    if (values.size() % 2 == 1) {
        return upper;
    }
    const T lower = *std::max_element(values.begin(), values.begin() + half);
    if constexpr (std::is_floating_point_v<T>) {
        return (lower + upper) / 2;
    } else {
        return lower + (upper - lower) / 2;
    }
}

}  // namespace vramscope::analysis
