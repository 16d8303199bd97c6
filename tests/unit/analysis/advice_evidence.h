#pragma once
// Test helper: reading one number behind a piece of advice.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "vramscope/analysis/advice/advice.h"

namespace vramscope::analysis::test {

/// The value of the evidence `name` of `a`; NaN, and a test failure, when `a` has none.
inline double evidence(const Advice& a, const std::string& name) {
    for (const Evidence& e : a.evidence) {
        if (e.name == name) {
            return e.value;
        }
    }
    ADD_FAILURE() << "no evidence " << name << " in " << a.rule;
    return NAN;
}

}  // namespace vramscope::analysis::test
