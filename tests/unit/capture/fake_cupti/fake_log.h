#pragma once
// One line per event into the file named by $FAKECUPTI_LOG, shared by the fake libcupti, the fake
// libcuda and the harness: each line is one write(2) to a file opened O_APPEND, so lines of several
// threads and libraries never interleave and everything written before a SIGKILL is kept.
//
// Line format: an event word, then key=value pairs separated by single spaces, e.g.
//   flush tid=4711 flags=1 enter_ns=123 exit_ns=456
// tid is the kernel thread id (gettid), times are CLOCK_MONOTONIC ns.

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace vramscope::fake {

/// The calling thread's kernel id (what gettid(2) returns).
inline long threadId() {
    return static_cast<long>(::syscall(SYS_gettid));
}

/// CLOCK_MONOTONIC in ns.
inline int64_t monotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// The log file's descriptor, -1 when $FAKECUPTI_LOG is unset.
inline int logFd() {
    static const int fd = [] {
        const char* path = std::getenv("FAKECUPTI_LOG");
        return path == nullptr ? -1 : ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }();
    return fd;
}

/// Appends one printf-formatted line (a newline is added) to $FAKECUPTI_LOG; nothing when the
/// variable is unset. Async-signal-unsafe only through vsnprintf; never allocates.
__attribute__((format(printf, 1, 2))) inline void logLine(const char* format, ...) {
    const int fd = logFd();
    if (fd < 0) {
        return;
    }
    char line[512];
    va_list args;
    va_start(args, format);
    int n = std::vsnprintf(line, sizeof(line) - 1, format, args);
    va_end(args);
    if (n < 0) {
        return;
    }
    if (n > static_cast<int>(sizeof(line)) - 2) {
        n = static_cast<int>(sizeof(line)) - 2;
    }
    line[n] = '\n';
    const ssize_t ignored = ::write(fd, line, static_cast<size_t>(n) + 1);
    (void)ignored;
}

}  // namespace vramscope::fake

/// logLine when there is a log: without one its arguments (a gettid call among them) are not
/// even evaluated, so that the benchmark measures the agent, not the fake's log.
#define FAKE_LOG(...)                                \
    do {                                             \
        if (::vramscope::fake::logFd() >= 0) {       \
            ::vramscope::fake::logLine(__VA_ARGS__); \
        }                                            \
    } while (0)
