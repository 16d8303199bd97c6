// Opening where a trace goes: files (with the lock that keeps two processes off one file),
// unwritable paths, and Unix sockets whose reader goes away.

#include "trace_output.h"
#include "test_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

using namespace vramscope::capture;

namespace {

using vramscope::testdata::readFile;

std::string makeOutputDir() {
    return vramscope::testdata::uniqueTempDir("vramscope-output");
}

}  // namespace

TEST(TraceOutput, CreatesDirectoriesAndMovesAsideWhenTheFileIsHeld) {
    const std::string dir = makeOutputDir();
    const std::string path = dir + "/a/b/job-rank0.vscope";
    OpenedOutput first = openTraceOutput({OutputKind::Directory, dir}, path, 11);
    ASSERT_TRUE(first.sink) << first.error;
    EXPECT_EQ(first.path, path);
    ASSERT_TRUE(first.sink->write("abc").ok());
    // The same rank twice in one job: the second process must not cut the first one's trace.
    OpenedOutput second = openTraceOutput({OutputKind::Directory, dir}, path, 12);
    ASSERT_TRUE(second.sink) << second.error;
    EXPECT_EQ(second.path, dir + "/a/b/job-rank0-pid12.vscope");
    first.sink.reset();
    EXPECT_EQ(readFile(path), "abc");
}

TEST(TraceOutput, ReportsAnUnwritablePath) {
    const OpenedOutput out =
        openTraceOutput({OutputKind::File, "/proc/self/x.vscope"}, "/proc/self/none/x.vscope", 1);
    EXPECT_FALSE(out.sink);
    EXPECT_NE(out.error.find("/proc/self/none"), std::string::npos) << out.error;
}

TEST(TraceOutput, StreamsToAListeningUnixSocket) {
    const std::string dir = makeOutputDir();
    const std::string path = dir + "/live.sock";
    const int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(listen(listener, 1), 0);
    OpenedOutput out = openTraceOutput({OutputKind::UnixSocket, path}, path, 1);
    ASSERT_TRUE(out.sink) << out.error;
    const int conn = accept(listener, nullptr, nullptr);
    ASSERT_GE(conn, 0);
    ASSERT_TRUE(out.sink->write("frame").ok());
    char buf[16] = {};
    EXPECT_EQ(read(conn, buf, sizeof(buf)), 5);
    EXPECT_STREQ(buf, "frame");
    // The viewer goes away: writing fails with an error, and no SIGPIPE reaches the process.
    close(conn);
    bool failed = false;
    for (int i = 0; i < 100 && !failed; ++i) {
        failed = !out.sink->write(std::string(65536, 'x')).ok();
    }
    EXPECT_TRUE(failed);
    close(listener);
    const OpenedOutput none = openTraceOutput({OutputKind::UnixSocket, path}, path, 1);
    EXPECT_FALSE(none.sink);
}
