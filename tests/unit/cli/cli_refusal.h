#pragma once
// A refused command line names what it refuses: the exit code, and the words of its message
// (the option, the bad value, the file). Only the exit code is no proof that the refusal was
// for the reason the test means.

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "cli_run.h"

namespace vramscope::app::test {

/// Success when `vramscope-cli ARGS...` exits with `code` and its standard error holds each of
/// `words`; on failure the exit code and the whole standard error are printed.
inline ::testing::AssertionResult refusedRun(const std::vector<std::string>& args, int code,
                                             std::initializer_list<std::string_view> words) {
    const CliRun r = run(args);
    if (r.code != code) {
        return ::testing::AssertionFailure()
               << "exit code " << r.code << ", expected " << code << "; stderr: " << r.err;
    }
    for (std::string_view w : words) {
        if (r.err.find(w) == std::string::npos) {
            return ::testing::AssertionFailure() << "no \"" << w << "\" in stderr: " << r.err;
        }
    }
    return ::testing::AssertionSuccess();
}

}  // namespace vramscope::app::test
