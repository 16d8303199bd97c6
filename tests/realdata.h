#pragma once
// What a test does when a real input from ../shared/realdata (VRAMSCOPE_REALDATA_DIR) or the
// python3 its independent replay needs is missing: it skips, so a developer without the shared
// folder still gets a green run, except where VRAMSCOPE_REQUIRE_REALDATA is set in the
// environment (CI, see .ci/run): there a missing input is a failure, never a green skip.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace vramscope_test {

/// True when VRAMSCOPE_REQUIRE_REALDATA is set to anything but "" or "0".
inline bool realdataRequired() {
    const char* v = std::getenv("VRAMSCOPE_REQUIRE_REALDATA");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
}

/// True when `python3` runs (the snapshot tests' replay, tests/tools/snapshot_replay.py, needs it).
inline bool pythonAvailable() {
    return std::system("python3 -c pass >/dev/null 2>&1") == 0;
}

}  // namespace vramscope_test

/// Skips the test (fails it under VRAMSCOPE_REQUIRE_REALDATA) when `path` does not exist. Use in
/// a test body (it returns from the function).
#define VRAMSCOPE_REQUIRE_INPUT(path)                                                          \
    if (!std::filesystem::exists(path)) {                                                      \
        if (vramscope_test::realdataRequired()) {                                              \
            FAIL() << "real input missing: " << (path) << " (VRAMSCOPE_REQUIRE_REALDATA set)"; \
        }                                                                                      \
        GTEST_SKIP() << "real input missing: " << (path) << " (see ../shared/realdata)";       \
    }

/// Same for python3, needed by the tests that check against an independent Python replay.
#define VRAMSCOPE_REQUIRE_PYTHON()                                                \
    if (!vramscope_test::pythonAvailable()) {                                     \
        if (vramscope_test::realdataRequired()) {                                 \
            FAIL() << "python3 is missing (VRAMSCOPE_REQUIRE_REALDATA set)";      \
        }                                                                         \
        GTEST_SKIP() << "python3 is missing (needed for the independent replay)"; \
    }
