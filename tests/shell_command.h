#pragma once
// Running a shell command from a test (the CLI binary behind a pipe, external checkers such as
// pdftotext) and collecting what it printed.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

namespace vramscope::testdata {

/// What a shell command printed on standard output, and its exit code (-1 when it did not exit
/// normally or could not be started).
struct ShellRun {
    int code = -1;
    std::string out;
};

/// Runs `command` with /bin/sh (popen); standard error stays the test's unless the command
/// redirects it ("2>&1").
inline ShellRun runShell(const std::string& command) {
    ShellRun r;
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen(command.c_str(), "r"), pclose);
    if (!p) {
        return r;
    }
    std::array<char, 65536> buf{};
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p.get())) > 0) {
        r.out.append(buf.data(), n);
    }
    const int status = pclose(p.release());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace vramscope::testdata
