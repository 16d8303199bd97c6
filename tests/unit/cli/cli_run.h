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
#include "test_files.h"

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
    return testdata::freshTestDir("vramscope_cli");
}

}  // namespace vramscope::app::test
