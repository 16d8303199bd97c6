#pragma once
// The iterations of a hand-built trace, for tests whose analyses take them as input.

#include <gtest/gtest.h>

#include "vramscope/analysis/time/iterations.h"

namespace vramscope::analysis::test {

/// What findIterations finds on GPU 0 of `d` with its default options; none, and a failed check,
/// when it fails.
inline IterationSet iterationsOnGpu0(const trace::TraceData& d) {
    auto its = findIterations(d, trace::DeviceIndex{0});
    EXPECT_TRUE(its.ok());
    return its.ok() ? std::move(its).value() : IterationSet{};
}

}  // namespace vramscope::analysis::test
