// Live viewing from the terminal: `replay` serves a recording on a socket, `attach` records it,
// `watch --alert` raises check's rules while the replay runs.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <thread>

#include "cli_refusal.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "vramscope/trace/live.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app::test {
namespace {

namespace fs = std::filesystem;

const std::string kSample = std::string(VRAMSCOPE_SOURCE_DIR) + "/resources/sample/";

/// A 0700 folder for the sockets of one test (live sockets refuse any other mode).
fs::path socketDir(const fs::path& tmp) {
    fs::path d = tmp / "sockets";
    fs::create_directories(d);
    ::chmod(d.c_str(), 0700);
    return d;
}

/// Waits up to 10 s for `path` to appear.
bool waitForFile(const fs::path& path) {
    for (int i = 0; i < 1000 && !fs::exists(path); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return fs::exists(path);
}

/// The earliest and latest event time of a trace.
std::pair<int64_t, int64_t> span(const trace::TraceData& d) {
    int64_t lo = INT64_MAX;
    int64_t hi = INT64_MIN;
    for (auto* v : {&d.memory.timestampNs, &d.kernels.startNs, &d.collectives.startNs,
                    &d.ranges.startNs, &d.counters.timestampNs}) {
        for (int64_t t : *v) {
            lo = std::min(lo, t);
            hi = std::max(hi, t);
        }
    }
    return {lo, hi};
}

/// Every row of every table of `got` equals the first rows of `want` (all of them when
/// `whole`): a recording is the source or a prefix of it, table by table.
void expectPrefixOf(const trace::TraceData& got, const trace::TraceData& want, bool whole) {
    auto prefix = [&](const auto& g, const auto& w, const char* what) {
        ASSERT_LE(g.size(), w.size()) << what;
        if (whole) {
            EXPECT_EQ(g.size(), w.size()) << what;
        }
        for (size_t i = 0; i < g.size(); ++i) {
            ASSERT_EQ(g[i], w[i]) << what << " row " << i;
        }
    };
    prefix(got.memory.timestampNs, want.memory.timestampNs, "memory time");
    prefix(got.memory.address, want.memory.address, "memory address");
    prefix(got.memory.sizeBytes, want.memory.sizeBytes, "memory size");
    prefix(got.memory.stack, want.memory.stack, "memory stack");
    prefix(got.memory.nvtxRange, want.memory.nvtxRange, "memory NVTX range");
    prefix(got.kernels.startNs, want.kernels.startNs, "kernel start");
    prefix(got.kernels.endNs, want.kernels.endNs, "kernel end");
    prefix(got.kernels.name, want.kernels.name, "kernel name");
    prefix(got.collectives.startNs, want.collectives.startNs, "collective start");
    prefix(got.collectives.bytes, want.collectives.bytes, "collective bytes");
    prefix(got.ranges.startNs, want.ranges.startNs, "range start");
    prefix(got.ranges.name, want.ranges.name, "range name");
    prefix(got.counters.timestampNs, want.counters.timestampNs, "counter time");
    EXPECT_EQ(got.strings, want.strings);
    EXPECT_EQ(got.stacks, want.stacks);
    EXPECT_EQ(got.header.pid, want.header.pid);
    EXPECT_EQ(got.header.host, want.header.host);
}

trace::TraceData load(const std::string& path) {
    auto t = trace::openTrace(path);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().describe());
    return t.ok() ? std::move(t.value().data) : trace::TraceData{};
}

TEST(LiveCli, AttachRecordsTheReplay) {
    const fs::path tmp = tempDir();
    const fs::path dir = socketDir(tmp);
    const std::string sock = (dir / "replay-1.sock").string();
    const std::string src = kSample + "sample-rank1.vscope";
    const std::string out = (tmp / "recorded.vscope").string();
    auto replay = std::async(std::launch::async, [&] {
        return run({"replay", src, "--socket", sock, "--speed", "max", "--wait-viewers", "1"});
    });
    ASSERT_TRUE(waitForFile(sock));
    // attach runs until the replay has served everything and closes (the job ended).
    const CliRun a = run({"attach", sock, "-o", out});
    const CliRun r = replay.get();
    EXPECT_EQ(r.code, kExitSuccess) << r.err;
    ASSERT_EQ(a.code, kExitSuccess) << a.err;
    EXPECT_NE(a.err.find("the job ended"), std::string::npos) << a.err;
    EXPECT_NE(r.err.find("0 frame(s) dropped"), std::string::npos) << r.err;
    const trace::TraceData want = load(src);
    const trace::TraceData got = load(out);
    ASSERT_GT(want.eventCount(), 1000u);
    expectPrefixOf(got, want, true);
    EXPECT_FALSE(fs::exists(sock)) << "the replay removes its socket";
}

TEST(LiveCli, EarlyDetachKeepsData) {
    const fs::path tmp = tempDir();
    const fs::path dir = socketDir(tmp);
    const std::string sock = (dir / "replay-2.sock").string();
    const std::string src = kSample + "sample-rank0.vscope";
    const trace::TraceData want = load(src);
    const auto [first, last] = span(want);
    // Paced so the replay lasts about 4 s; the viewer leaves after 1 s.
    const double speed = double(last - first) / 4e9;
    const std::string out = (tmp / "part.vscope").string();
    auto replay = std::async(std::launch::async, [&] {
        return run({"replay", src, "--socket", sock, "--speed", std::to_string(speed) + "x",
                    "--wait-viewers", "1", "--linger", "0s"});
    });
    ASSERT_TRUE(waitForFile(sock));
    const CliRun a = run({"attach", sock, "--duration", "1s", "-o", out});
    ASSERT_EQ(a.code, kExitSuccess) << a.err;
    EXPECT_NE(a.err.find("duration reached"), std::string::npos) << a.err;
    const CliRun r = replay.get();
    EXPECT_EQ(r.code, kExitSuccess) << r.err;
    const trace::TraceData got = load(out);
    EXPECT_GT(got.memory.size(), 0u);
    EXPECT_LT(got.memory.size(), want.memory.size());
    expectPrefixOf(got, want, false);
}

TEST(LiveCli, ListAndAttachByPid) {
    const fs::path tmp = tempDir();
    const fs::path dir = socketDir(tmp);
    ::setenv("VRAMSCOPE_LIVE_DIR", dir.c_str(), 1);
    const std::string src = kSample + "sample-rank2.vscope";
    const trace::TraceData want = load(src);
    const auto [first, last] = span(want);
    const std::string speed = std::to_string(double(last - first) / 3e9) + "x";  // about 3 s
    auto replay = std::async(std::launch::async, [&] {
        return run({"replay", src, "--speed", speed, "--linger", "0s"});
    });
    // The replay's socket is named after this process (it runs in-process here).
    const fs::path sock =
        dir / (trace::live::hostName() + "-" + std::to_string(::getpid()) + ".sock");
    ASSERT_TRUE(waitForFile(sock));
    const CliRun list = run({"attach", "--list"});
    EXPECT_EQ(list.code, kExitSuccess) << list.err;
    // The hello is the source's header: its pid and host, and the socket serving it.
    EXPECT_NE(list.out.find("pid " + std::to_string(want.header.pid)), std::string::npos)
        << list.out;
    EXPECT_NE(list.out.find(sock.string()), std::string::npos) << list.out;
    const std::string out = (tmp / "bypid.vscope").string();
    const CliRun a = run({"attach", std::to_string(::getpid()), "--duration", "500ms", "-o", out});
    EXPECT_EQ(a.code, kExitSuccess) << a.err;
    expectPrefixOf(load(out), want, false);
    const CliRun none = run({"attach", "999999999"});
    EXPECT_EQ(none.code, kExitUnreadable);
    EXPECT_NE(none.err.find("no live job with pid 999999999"), std::string::npos) << none.err;
    replay.get();
    ::unsetenv("VRAMSCOPE_LIVE_DIR");
}

TEST(LiveCli, WatchAlertsOnH200Leak) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptLeakSnapshot);
    const fs::path tmp = tempDir();
    const fs::path dir = socketDir(tmp);
    const std::string sock = (dir / "leak-1.sock").string();
    // The snapshot itself: PyTorch's own trace of a job that keeps every micro-batch's logits.
    const trace::TraceData want = load(realdata::kGptLeakSnapshot);
    const auto [first, last] = span(want);
    ASSERT_GT(last, first);
    const double speed = double(last - first) / 8e9;  // about 8 s of replay
    std::atomic<bool> replayDone{false};
    auto replay = std::async(std::launch::async, [&] {
        CliRun r = run({"replay", realdata::kGptLeakSnapshot, "--socket", sock, "--speed",
                        std::to_string(speed) + "x", "--wait-viewers", "1", "--linger", "0s"});
        replayDone = true;
        return r;
    });
    ASSERT_TRUE(waitForFile(sock));
    const CliRun w = run({"watch", sock, "--alert", "--interval", "250ms", "--plain"});
    const bool beforeEnd = !replayDone.load();
    EXPECT_EQ(w.code, kExitCheckFailed) << w.out << w.err;
    EXPECT_NE(w.out.find("ALERT fail-on-leak"), std::string::npos) << w.out;
    EXPECT_NE(w.out.find("staircase"), std::string::npos) << w.out;
    EXPECT_TRUE(beforeEnd) << "the alert came only after the replay ended";
    replay.get();
}

TEST(LiveCli, WatchQuietOnHealthyRank) {
    const fs::path tmp = tempDir();
    const fs::path dir = socketDir(tmp);
    const std::string sock = (dir / "healthy-1.sock").string();
    // Rank 0 of the bundled sample: no leak (rank 1 leaks), not the straggler (rank 3).
    const std::string src = kSample + "sample-rank0.vscope";
    const auto [first, last] = span(load(src));
    const std::string speed = std::to_string(double(last - first) / 3e9) + "x";  // about 3 s
    auto replay = std::async(std::launch::async, [&] {
        return run({"replay", src, "--socket", sock, "--speed", speed, "--wait-viewers", "1",
                    "--linger", "0s"});
    });
    ASSERT_TRUE(waitForFile(sock));
    // The staircase rule only: one rank alone cannot tell its waiting for the straggler from its
    // transfers, so check's exposed-communication rule fails on it (as `check` does on the file).
    const CliRun w =
        run({"watch", sock, "--alert", "--fail-on-leak", "--interval", "250ms", "--plain"});
    replay.get();
    EXPECT_EQ(w.code, kExitSuccess) << w.out << w.err;
    EXPECT_EQ(w.out.find("ALERT"), std::string::npos) << w.out;
    // The last refresh shows the whole rank: its 10 iterations, as the sample's command made it.
    EXPECT_NE(w.out.find("iteration 10"), std::string::npos) << w.out;
}

TEST(LiveCli, BadTargetsAndOptionsSayWhy) {
    EXPECT_TRUE(refusedRun({"attach"}, kExitUsage, {"attach: no target given"}));
    EXPECT_TRUE(refusedRun({"watch"}, kExitUsage, {"watch: no target given"}));
    EXPECT_TRUE(refusedRun({"replay"}, kExitUsage, {"replay takes one FILE"}));
    const CliRun speed = run({"replay", kSample + "sample-rank0.vscope", "--speed", "fast"});
    EXPECT_EQ(speed.code, kExitUsage);
    EXPECT_NE(speed.err.find("--speed needs a factor"), std::string::npos) << speed.err;
    const CliRun junk = run({"attach", "not-a-pid"});
    EXPECT_EQ(junk.code, kExitUnreadable);
    EXPECT_NE(junk.err.find("neither a pid"), std::string::npos) << junk.err;
    const fs::path tmp = tempDir();
    const fs::path dir = socketDir(tmp);
    const CliRun gone = run({"attach", (dir / "nobody-1.sock").string()});
    EXPECT_EQ(gone.code, kExitUnreadable);
    EXPECT_NE(gone.err.find("no live job at this socket"), std::string::npos) << gone.err;
    trace::live::ServerOptions serving;
    serving.socketPath = (dir / "x-1.sock").string();
    auto server = trace::live::LiveServer::start(serving);
    ASSERT_TRUE(server.ok()) << server.error().describe();
    ::chmod(dir.c_str(), 0755);  // others could now reach the socket: the viewer refuses it
    const CliRun open = run({"attach", serving.socketPath});
    EXPECT_EQ(open.code, kExitUnreadable);
    EXPECT_NE(open.err.find("mode 0755"), std::string::npos) << open.err;
    ::chmod(dir.c_str(), 0700);
    const CliRun notSocket = run({"attach", (tmp / "plain.sock").string()});
    EXPECT_EQ(notSocket.code, kExitUnreadable);
    const CliRun step = run({"replay", kSample + "sample-rank0.vscope", "--step", "0s"});
    EXPECT_EQ(step.code, kExitUsage);
    EXPECT_NE(step.err.find("--step needs at least 1ms"), std::string::npos) << step.err;
    const CliRun rulesAlone = run({"watch", "all", "--fail-on-leak"});
    EXPECT_EQ(rulesAlone.code, kExitUsage);
    EXPECT_NE(rulesAlone.err.find("take effect with --alert"), std::string::npos) << rulesAlone.err;
}

}  // namespace
}  // namespace vramscope::app::test
