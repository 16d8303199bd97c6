#pragma once
// Units for building test inputs and expectations: binary byte units (as vramscope prints them)
// and a millisecond in ns (trace time). Signed, like trace times and the analyses' byte figures,
// so that differences and negative values stay exact; a test converts where a field is unsigned.

#include <cstdint>

namespace vramscope::testdata {

inline constexpr int64_t kKiB = int64_t{1} << 10;
inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kGiB = int64_t{1} << 30;
/// 1 ms in ns.
inline constexpr int64_t kMs = 1'000'000;

}  // namespace vramscope::testdata
