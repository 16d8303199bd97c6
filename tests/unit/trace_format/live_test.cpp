// Live viewing transport (trace/live.h): the socket directory checks, finding and cleaning
// sockets, the framing helpers, and LiveServer with prompt, late, stalled and foreign viewers.

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>

#include "refusal.h"
#include "vramscope/trace/live.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;
using live::LiveServer;
using ::vramscope::test::refused;

/// A fresh 0700 directory for the running test.
fs::path privateDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    fs::path p = fs::temp_directory_path() /
                 ("vramscope_live_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(p);
    fs::create_directories(p);
    ::chmod(p.c_str(), 0700);
    return p;
}

/// A small trace: `batches` batches of `perBatch` memory events with a named stack each.
TraceData batchOf(TraceData& tables, int batch, int perBatch) {
    TraceData d;
    for (int i = 0; i < perBatch; ++i) {
        const int n = batch * perBatch + i;
        MemoryEvent e;
        e.timestampNs = 1000 + n * 10;
        e.address = 0x1000 + uint64_t(n) * 512;
        e.sizeBytes = 512 + uint64_t(n % 7);
        e.action = n % 2 == 0 ? MemoryAction::Alloc : MemoryAction::Free;
        const FrameId f = tables.internFrame(
            {tables.intern("op" + std::to_string(n % 13)), tables.intern("model.py"), 10});
        e.stack = tables.internStack({f});
        d.memory.append(e);
    }
    return d;
}

/// Writes a header and `batches` batches through `sink`; returns what a file of it holds.
TraceData writeBatches(std::unique_ptr<ByteSink> sink, int batches, int perBatch,
                       WriterOptions options = {}) {
    TraceWriter writer(std::move(sink), options);
    TraceData tables;  // the string, frame and stack tables only: they grow, events do not stay
    tables.header.producer = "live-test";
    tables.header.host = "testhost";
    tables.header.pid = 4242;
    EXPECT_TRUE(writer.writeHeader(tables.header).ok());
    MemoryEvents all;
    for (int b = 0; b < batches; ++b) {
        TraceData events = batchOf(tables, b, perBatch);
        TraceData step = tables;
        step.memory = events.memory;
        EXPECT_TRUE(writer.writeEvents(step).ok());
        for (size_t i = 0; i < events.memory.size(); ++i) {
            all.append(events.memory.at(i));
        }
    }
    EXPECT_TRUE(writer.finish().ok());
    tables.memory = std::move(all);
    return tables;
}

/// A sink that forwards to a server it does not own.
struct Forward final : ByteSink {
    LiveServer& to;
    explicit Forward(LiveServer& s) : to(s) {}
    Status write(std::string_view bytes) override { return to.write(bytes); }
};

/// Reads `fd` on a thread of its own until EOF or `ms` without data.
std::future<std::string> readAsync(int fd, int ms = 10000);

/// Reads from `fd` until EOF or `ms` without data.
std::string readAll(int fd, int ms = 5000) {
    std::string out;
    char buf[65536];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) {
            break;
        }
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            break;
        }
        out.append(buf, size_t(n));
    }
    return out;
}

std::future<std::string> readAsync(int fd, int ms) {
    return std::async(std::launch::async, [fd, ms] { return readAll(fd, ms); });
}

uint64_t lossOf(const TraceData& d, LossCounter c) {
    uint64_t n = 0;
    for (const auto& l : d.dataLoss) {
        n += l.counter == c ? l.count : 0;
    }
    return n;
}

TEST(LiveDirectory, AcceptsOnlyAPrivateDirectoryOfThisUser) {
    const fs::path dir = privateDir();
    EXPECT_TRUE(live::checkSocketDirectory(dir).ok());

    ::chmod(dir.c_str(), 0755);
    Status open = live::checkSocketDirectory(dir);
    ASSERT_FALSE(open.ok());
    EXPECT_NE(open.error().message.find("mode 0755"), std::string::npos) << open.error().message;
    EXPECT_EQ(open.error().file, dir.string());
    ::chmod(dir.c_str(), 0700);

    const fs::path link = dir.string() + "-link";
    fs::remove(link);
    fs::create_directory_symlink(dir, link);
    Status linked = live::checkSocketDirectory(link);
    ASSERT_FALSE(linked.ok());
    EXPECT_NE(linked.error().message.find("symbolic link"), std::string::npos);
    fs::remove(link);

    Status missing = live::checkSocketDirectory(dir / "nope");
    EXPECT_TRUE(refused(missing, ErrorCode::Io,
                        {"nope", "cannot use the live socket directory", "No such file"}));

    // prepare creates a missing directory 0700, and refuses (never repairs) a wrong mode.
    const fs::path made = dir / "made";
    ASSERT_TRUE(live::prepareSocketDirectory(made).ok());
    struct stat st {};
    ASSERT_EQ(::lstat(made.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    ::chmod(made.c_str(), 0770);
    EXPECT_TRUE(refused(live::prepareSocketDirectory(made), ErrorCode::Invalid,
                        {made.string(), "has mode 0770: others may reach it (it must be 0700)"}));
    fs::remove_all(dir);
}

TEST(LiveDirectory, RefusesADirectoryOfAnotherOwner) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to give a directory to another user";
    }
    const fs::path dir = privateDir();
    ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
    Status s = live::checkSocketDirectory(dir);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("belongs to uid 65534"), std::string::npos)
        << s.error().message;
    // And a server will not start there.
    live::ServerOptions o;
    o.socketPath = (dir / "x-1.sock").string();
    EXPECT_TRUE(refused(LiveServer::start(o), ErrorCode::Invalid, {"belongs to uid 65534"}));
    fs::remove_all(dir);
}

TEST(LiveDirectory, SocketNamesStayInsideTheDirectory) {
    EXPECT_EQ(live::socketPath("/d", "node-3.cluster", 77), "/d/node-3.cluster-77.sock");
    EXPECT_EQ(live::socketPath("/d", "../../etc/x y", 5), "/d/.._.._etc_x_y-5.sock");
    EXPECT_EQ(live::socketPath("/d", "", 5), "/d/host-5.sock");
}

TEST(LiveSockets, ListsLiveOnesAndRemovesStaleOnes) {
    const fs::path dir = privateDir();
    // A stale socket: bound by a process that is gone (a child that exited).
    const pid_t child = ::fork();
    if (child == 0) {
        ::_exit(0);
    }
    ASSERT_GT(child, 0);
    ::waitpid(child, nullptr, 0);
    const std::string stale = live::socketPath(dir, live::hostName(), child);
    {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strcpy(a.sun_path, stale.c_str());
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        ::close(fd);  // the file stays: what a SIGKILLed producer leaves
    }
    live::ServerOptions o;
    o.socketPath = live::socketPath(dir, live::hostName(), ::getpid());
    auto server = LiveServer::start(o);
    ASSERT_TRUE(server.ok()) << server.error().describe();
    struct stat st {};
    ASSERT_EQ(::lstat(o.socketPath.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);

    std::vector<std::string> removed;
    auto listed = live::listSockets(dir, true, &removed);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ(listed->front().pid, ::getpid());
    EXPECT_TRUE(listed->front().alive);
    ASSERT_EQ(removed.size(), 1u);
    EXPECT_EQ(removed[0], stale);
    EXPECT_FALSE(fs::exists(stale));

    // A second producer on a live socket is refused; the socket is removed when the server goes.
    EXPECT_TRUE(refused(LiveServer::start(o), ErrorCode::Invalid,
                        {o.socketPath, "another live producer already serves this socket"}));
    server.value().reset();
    EXPECT_FALSE(fs::exists(o.socketPath));
    fs::remove_all(dir);
}

TEST(LiveFraming, WholeFramesPrefixEndsOnFrameBoundaries) {
    std::string bytes;
    writeBatches(makeStringSink(bytes), 3, 50);
    // The frame ends, walked independently from the lengths in the frame heads.
    std::vector<size_t> ends{kPreambleBytes};
    for (size_t at = kPreambleBytes; at < bytes.size();) {
        const auto* u = reinterpret_cast<const unsigned char*>(bytes.data() + at);
        const uint32_t len = u[0] | (u[1] << 8) | (u[2] << 16) | (uint32_t(u[3]) << 24);
        at += kFrameHeadBytes + len + kFrameTailBytes;
        ends.push_back(at);
    }
    ASSERT_EQ(ends.back(), bytes.size());
    EXPECT_EQ(live::wholeFramesPrefix(std::string_view(bytes).substr(0, 5)), 0u);
    for (size_t cut = kPreambleBytes; cut <= bytes.size(); ++cut) {
        const size_t want = *std::prev(std::upper_bound(ends.begin(), ends.end(), cut));
        ASSERT_EQ(live::wholeFramesPrefix(std::string_view(bytes).substr(0, cut)), want) << cut;
    }
}

TEST(LiveFraming, DataLossFrameReadsBackAsTheCounter) {
    std::string bytes;
    writeBatches(makeStringSink(bytes), 1, 10);
    bytes += live::dataLossFrame(17, "slow viewer");
    auto loaded = readTraceBytes(bytes, "stream");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_EQ(lossOf(loaded->data, LossCounter::LiveFramesDropped), 17u);
    EXPECT_EQ(loaded->data.memory.size(), 10u);
}

TEST(LiveServer, PromptAndLateViewersReceiveTheWholeStream) {
    const fs::path dir = privateDir();
    live::ServerOptions o;
    o.socketPath = (dir / "h-1.sock").string();
    o.backlogBytes = 0;  // keep all: a late viewer gets everything
    auto server = LiveServer::start(o);
    ASSERT_TRUE(server.ok()) << server.error().describe();
    auto early = live::connectSocket(o.socketPath);
    ASSERT_TRUE(early.ok()) << early.error().describe();
    ASSERT_TRUE(server.value()->waitForViewers(1, 5000));

    std::string file;  // the same writes, into memory, as the reference
    struct Tee final : ByteSink {
        LiveServer& s;
        std::string& f;
        Tee(LiveServer& a, std::string& b) : s(a), f(b) {}
        Status write(std::string_view bytes) override {
            f.append(bytes);
            return s.write(bytes);
        }
    };
    const TraceData source = writeBatches(std::make_unique<Tee>(*server.value(), file), 20, 200);
    auto late = live::connectSocket(o.socketPath);
    ASSERT_TRUE(late.ok());
    ASSERT_TRUE(server.value()->waitForViewers(2, 5000));
    auto readEarly = readAsync(early.value());
    auto readLate = readAsync(late.value());
    ASSERT_TRUE(server.value()->drain(10000));
    server.value().reset();  // closes the viewers: their reads end
    const std::string a = readEarly.get();
    const std::string b = readLate.get();
    ::close(early.value());
    ::close(late.value());
    EXPECT_EQ(a, file);
    EXPECT_EQ(b, file);
    auto loaded = readTraceBytes(b, "late");
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->data.memory.timestampNs, source.memory.timestampNs);
    EXPECT_EQ(loaded->data.memory.stack, source.memory.stack);
    EXPECT_EQ(loaded->data.strings, source.strings);
    fs::remove_all(dir);
}

TEST(LiveServer, AStalledViewerNeverBlocksTheProducerAndLearnsWhatItLost) {
    const fs::path dir = privateDir();
    live::ServerOptions o;
    o.socketPath = (dir / "h-2.sock").string();
    o.queueBytesPerViewer = 256 << 10;
    auto server = LiveServer::start(o);
    ASSERT_TRUE(server.ok());
    auto viewer = live::connectSocket(o.socketPath);
    ASSERT_TRUE(viewer.ok());
    // A small receive buffer, and nothing read while the producer writes.
    const int small = 4096;
    ::setsockopt(viewer.value(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    ASSERT_TRUE(server.value()->waitForViewers(1, 5000));
    WriterOptions w;
    w.compress = false;  // ~20 B per event: 400 batches of 2000 events are ~16 MiB
    writeBatches(std::make_unique<Forward>(*server.value()), 400, 2000, w);
    // The producer is done (no write blocked); the viewer fell behind and frames were dropped.
    const live::ServerStats st = server.value()->stats();
    EXPECT_GT(st.framesDropped, 0u);
    EXPECT_GT(st.framesWritten, st.framesDropped);
    auto reading = readAsync(viewer.value());
    EXPECT_TRUE(server.value()->drain(10000));  // queues the viewer's DataLoss frame, sends all
    server.value().reset();
    const std::string got = reading.get();
    ::close(viewer.value());
    auto loaded = readTraceBytes(got, "stalled viewer");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_FALSE(loaded->report.truncated);
    // What it lost is what the server counted, and what it got are whole frames.
    EXPECT_EQ(lossOf(loaded->data, LossCounter::LiveFramesDropped), st.framesDropped);
    EXPECT_LT(loaded->data.memory.size(), 400u * 2000u);
    fs::remove_all(dir);
}

TEST(LiveServer, RefusesAViewerOfAnotherUser) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to run a viewer as another user (setuid)";
    }
    const fs::path dir = privateDir();
    live::ServerOptions o;
    o.socketPath = (dir / "h-3.sock").string();
    auto server = LiveServer::start(o);
    ASSERT_TRUE(server.ok());
    writeBatches(std::make_unique<Forward>(*server.value()), 2, 10);
    // Open the path to the other user so that only SO_PEERCRED stands in its way.
    ::chmod(dir.c_str(), 0755);
    ::chmod(o.socketPath.c_str(), 0666);
    int pipeFds[2];
    ASSERT_EQ(::pipe(pipeFds), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(pipeFds[0]);
        char result = 'x';
        if (::setgid(65534) == 0 && ::setuid(65534) == 0) {
            const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un a{};
            a.sun_family = AF_UNIX;
            std::strcpy(a.sun_path, o.socketPath.c_str());
            if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
                char buf[64];
                pollfd p{fd, POLLIN, 0};
                const bool data = ::poll(&p, 1, 3000) > 0 && ::recv(fd, buf, sizeof buf, 0) > 0;
                result = data ? 'd' : 'r';  // data: served; r: refused (closed, nothing sent)
            } else {
                result = 'c';
            }
        }
        [[maybe_unused]] ssize_t n = ::write(pipeFds[1], &result, 1);
        ::_exit(0);
    }
    ::close(pipeFds[1]);
    char result = 0;
    ASSERT_EQ(::read(pipeFds[0], &result, 1), 1);
    ::waitpid(child, nullptr, 0);
    ::close(pipeFds[0]);
    EXPECT_EQ(result, 'r');
    EXPECT_EQ(server.value()->stats().viewersRefused, 1u);
    EXPECT_EQ(server.value()->stats().viewersAccepted, 0u);
    // And our own connect refuses the opened directory before it connects.
    EXPECT_TRUE(refused(live::connectSocket(o.socketPath), ErrorCode::Invalid,
                        {"has mode 0755: others may reach it"}));
    fs::remove_all(dir);
}

TEST(LiveServer, ARingThatEvictedFramesSaysSoToALateViewer) {
    const fs::path dir = privateDir();
    live::ServerOptions o;
    o.socketPath = (dir / "h-4.sock").string();
    o.backlogBytes = 64 << 10;
    auto server = LiveServer::start(o);
    ASSERT_TRUE(server.ok());
    WriterOptions w;
    w.compress = false;
    writeBatches(std::make_unique<Forward>(*server.value()), 100, 500, w);
    const live::ServerStats st = server.value()->stats();
    ASSERT_GT(st.backlogEvicted, 0u);
    auto viewer = live::connectSocket(o.socketPath);
    ASSERT_TRUE(viewer.ok());
    ASSERT_TRUE(server.value()->waitForViewers(1, 5000));
    auto reading = readAsync(viewer.value());
    ASSERT_TRUE(server.value()->drain(10000));
    server.value().reset();
    const std::string got = reading.get();
    ::close(viewer.value());
    // The hello, the loss, and a ring of at most backlogBytes.
    EXPECT_LE(got.size(), size_t(64 << 10) + 8192);
    auto hello = readTraceBytes(got, "late viewer");
    ASSERT_TRUE(hello.ok());
    EXPECT_EQ(hello->data.header.pid, 4242);
    EXPECT_EQ(lossOf(hello->data, LossCounter::LiveFramesDropped), st.backlogEvicted);
    fs::remove_all(dir);
}

TEST(LiveServer, WritesItsRingAsAFileOfTheNewestEvents) {
    const fs::path dir = privateDir();
    live::ServerOptions o;
    o.socketPath = (dir / "h-5.sock").string();
    o.backlogBytes = 64 << 10;
    auto server = LiveServer::start(o);
    ASSERT_TRUE(server.ok());
    EXPECT_TRUE(refused(server.value()->writeRing((dir / "early.vscope").string()),
                        ErrorCode::Invalid,
                        {"early.vscope", "the producer has not sent its header"}));
    WriterOptions w;
    w.compress = false;
    w.summaries = false;
    const TraceData source = writeBatches(std::make_unique<Forward>(*server.value()), 100, 500, w);
    const std::string path = (dir / "ring.vscope").string();
    auto written = server.value()->writeRing(path);
    ASSERT_TRUE(written.ok()) << written.error().describe();
    EXPECT_EQ(written.value(), fs::file_size(path));
    auto ring = readTraceFile(path);
    ASSERT_TRUE(ring.ok()) << ring.error().describe();
    const TraceData& d = ring->data;
    const uint64_t evicted = server.value()->stats().backlogEvicted;
    ASSERT_GT(evicted, 0u);
    EXPECT_EQ(lossOf(d, LossCounter::LiveFramesDropped), evicted);
    // Whole batches of the newest events: the last rows of the source, in order.
    ASSERT_GT(d.memory.size(), 0u);
    ASSERT_LT(d.memory.size(), source.memory.size());
    EXPECT_EQ(d.memory.size() % 500, 0u);
    const size_t skip = source.memory.size() - d.memory.size();
    for (size_t i = 0; i < d.memory.size(); ++i) {
        ASSERT_EQ(d.memory.timestampNs[i], source.memory.timestampNs[skip + i]) << i;
    }
    fs::remove_all(dir);
}

TEST(LiveServer, TableFramesOutliveTheRingSoALateViewerResolvesEveryId) {
    const fs::path dir = privateDir();
    live::ServerOptions o;
    o.socketPath = (dir / "h-6.sock").string();
    o.backlogBytes = 32 << 10;
    auto server = LiveServer::start(o);
    ASSERT_TRUE(server.ok());
    LiveServer& live = *server.value();
    // The agent's pattern: each round's new table entries in a frame of their own, then events.
    WriterOptions w;
    w.compress = false;
    TraceWriter writer(std::make_unique<Forward>(live), w);
    TraceData tables;
    tables.header.pid = 7;
    ASSERT_TRUE(writer.writeHeader(tables.header).ok());
    MemoryEvents all;
    for (int b = 0; b < 60; ++b) {
        TraceData events = batchOf(tables, b, 300);  // interns op0..op12 once, then no more
        for (int k = 0; k < 20; ++k) {               // and names only this batch uses
            const FrameId f = tables.internFrame(
                {tables.intern("batch" + std::to_string(b) + "_" + std::to_string(k)), 0, 0});
            MemoryEvent e = events.memory.at(size_t(k));
            e.stack = tables.internStack({f});
            events.memory.append(e);
        }
        live.setSticky(true);
        ASSERT_TRUE(writer.writeEvents(tables).ok());  // the tables only
        live.setSticky(false);
        TraceData step;
        step.strings = tables.strings;
        step.frames = tables.frames;
        step.stacks = tables.stacks;
        step.memory = events.memory;
        ASSERT_TRUE(writer.writeEvents(step).ok());  // the events only: the tables went out
        for (size_t i = 0; i < events.memory.size(); ++i) {
            all.append(events.memory.at(i));
        }
    }
    ASSERT_GT(live.stats().backlogEvicted, 0u);
    EXPECT_GT(live.stats().stickyBytes, 0u);
    auto viewer = live::connectSocket(o.socketPath);
    ASSERT_TRUE(viewer.ok());
    ASSERT_TRUE(live.waitForViewers(1, 5000));
    auto reading = readAsync(viewer.value());
    ASSERT_TRUE(live.drain(10000));
    server.value().reset();
    const std::string got = reading.get();
    ::close(viewer.value());
    auto loaded = readTraceBytes(got, "late viewer");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    // Every table entry arrived, so no id had to be reset, though most events left the ring.
    EXPECT_EQ(loaded->report.idsReset, 0u);
    EXPECT_EQ(loaded->data.strings, tables.strings);
    EXPECT_EQ(loaded->data.stacks, tables.stacks);
    ASSERT_GT(loaded->data.memory.size(), 0u);
    ASSERT_LT(loaded->data.memory.size(), all.size());
    const size_t skip = all.size() - loaded->data.memory.size();
    for (size_t i = 0; i < loaded->data.memory.size(); ++i) {
        ASSERT_EQ(loaded->data.memory.stack[i], all.stack[skip + i]) << i;
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace vramscope::trace
