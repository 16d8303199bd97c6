#pragma once
// Running vramscope-cli in-process for the CLI tests: exit code and both streams, and a fresh
// temporary folder per test.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_command.h"

namespace vramscope::app::test {

/// What one command printed and returned.
struct CliRun {
    int code = -1;
    std::string out;
    std::string err;
};

/// Runs `vramscope-cli ARGS...` (args without the program name) through runCli.
inline CliRun run(const std::vector<std::string>& args) {
    std::ostringstream out;
    std::ostringstream err;
    CliRun r;
    r.code = runCli(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

/// An empty folder of the running test's own (suite, name and process id in its name), created
/// afresh; the test removes it when it is done.
inline std::filesystem::path tempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::filesystem::path p = std::filesystem::temp_directory_path() /
                              ("vramscope_cli_" + std::to_string(::getpid()) + "_" +
                               info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p;
}

}  // namespace vramscope::app::test
