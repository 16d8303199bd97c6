// The agent's output failing under it, without a GPU: constructed CUPTI records go through the
// agent's staging (the job side) and its writer (the writer thread's side) into outputs that
// refuse to open, fill up or are killed mid-frame. The job side must only count what it drops,
// the failure must be said once, and the file must open up to its last whole frame.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "capture_writer.h"
#include "event_staging.h"
#include "loss_counts.h"
#include "test_files.h"
#include "trace_output.h"
#include "vramscope/trace/trace_file.h"

using namespace vramscope;
using namespace vramscope::capture;

namespace {

std::string makeFaultsDir() {
    return vramscope::testdata::uniqueTempDir("vramscope-faults");
}

/// `n` cudaMalloc records of 4 KiB at increasing addresses and times from `t0`.
std::vector<CUpti_ActivityMemory4> mallocRecords(size_t n, uint64_t t0) {
    std::vector<CUpti_ActivityMemory4> records(n);
    for (size_t i = 0; i < n; ++i) {
        CUpti_ActivityMemory4& r = records[i];
        std::memset(static_cast<void*>(&r), 0, sizeof(r));
        r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
        r.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        r.address = 0x7f0000000000 + i * 4096;
        r.bytes = 4096;
        r.timestamp = t0 + i * 1000;
        r.streamId = CUPTI_INVALID_STREAM_ID;
    }
    return records;
}

/// The job side: hands `records` to the staging as one completed CUPTI buffer.
void completeBuffer(EventStaging& staging, const std::vector<CUpti_ActivityMemory4>& records) {
    size_t next = 0;
    staging.addRecords(0, [&]() -> const CUpti_Activity* {
        return next < records.size() ? reinterpret_cast<const CUpti_Activity*>(&records[next++])
                                     : nullptr;
    });
}

trace::FileHeader testHeader() {
    trace::FileHeader h;
    h.formatMajor = trace::kFormatMajor;
    h.formatMinor = trace::kFormatMinor;
    h.producer = "output faults test";
    h.clockDomain = "cupti-ns";
    return h;
}

using testdata::lossCount;

/// A sink that hands each write to `inner` in seeded pieces of 1..64 bytes (short writes, as a
/// kernel may do them), sends the end offset of every whole write to `pipeFd`, and kills its own
/// process with SIGKILL after piece number `killAtPiece`: a writer killed mid-frame.
class ChoppingSink final : public trace::ByteSink {
public:
    ChoppingSink(std::unique_ptr<trace::ByteSink> inner, int pipeFd, uint64_t seed,
                 uint64_t killAtPiece)
        : m_inner(std::move(inner)), m_pipe(pipeFd), m_rng(seed), m_killAt(killAtPiece) {}

    trace::Status write(std::string_view bytes) override {
        while (!bytes.empty()) {
            const size_t n = std::min<size_t>(bytes.size(), 1 + m_rng() % 64);
            if (trace::Status s = m_inner->write(bytes.substr(0, n)); !s.ok()) {
                return s;
            }
            bytes.remove_prefix(n);
            m_offset += n;
            if (bytes.empty()) {  // told before a kill after the last piece
                const ssize_t sent = ::write(m_pipe, &m_offset, sizeof(m_offset));
                (void)sent;
            }
            if (++m_pieces == m_killAt) {
                ::raise(SIGKILL);
            }
        }
        return trace::Status::success();
    }

private:
    std::unique_ptr<trace::ByteSink> m_inner;
    int m_pipe;
    std::mt19937_64 m_rng;
    uint64_t m_killAt;
    uint64_t m_pieces = 0;
    uint64_t m_offset = 0;
};

}  // namespace

// Root ignores permission bits, so the unwritable directory is one below a regular file: no
// user can create it (ENOTDIR).
TEST(OutputFaults, AnUnwritableOutputDirectoryTurnsCaptureOffWithOneSentence) {
    const std::string dir = makeFaultsDir();
    ASSERT_FALSE(dir.empty());
    std::ofstream(dir + "/plain-file") << "x";
    const std::string path = dir + "/plain-file/traces/job-rank0.vscope";
    const OpenedOutput out =
        openTraceOutput({OutputKind::Directory, dir + "/plain-file/traces"}, path, 1);
    EXPECT_FALSE(out.sink);
    EXPECT_NE(out.error.find(path), std::string::npos) << out.error;
    EXPECT_NE(out.error.find(std::strerror(ENOTDIR)), std::string::npos) << out.error;
    if (geteuid() != 0) {  // a read-only directory stops everyone else
        ASSERT_EQ(::mkdir((dir + "/ro").c_str(), 0500), 0);
        EXPECT_FALSE(
            openTraceOutput({OutputKind::Directory, dir + "/ro"}, dir + "/ro/t.vscope", 1).sink);
    }
}

TEST(OutputFaults, ADiskFullOutputIsSaidOnceAndTheJobSideOnlyCounts) {
    const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << "/dev/full: " << std::strerror(errno);
    constexpr size_t kQueueRows = 100;
    EventStaging staging(kQueueRows);
    std::vector<std::string> notices;
    CaptureWriter writer(makeDescriptorSink(fd, "/dev/full", false), staging,
                         [&](const std::string& line) { notices.push_back(line); });
    EXPECT_FALSE(writer.writeHeader(testHeader()));
    EXPECT_TRUE(writer.failed());
    ASSERT_EQ(notices.size(), 1u);
    EXPECT_NE(notices[0].find("/dev/full"), std::string::npos) << notices[0];
    EXPECT_NE(notices[0].find(std::strerror(ENOSPC)), std::string::npos) << notices[0];

    // Five times what the queue holds, in ten buffers, with writer rounds in between: every call
    // returns, nothing is kept, every record is counted, and nothing more is said.
    trace::TraceData out;
    for (int buffer = 0; buffer < 10; ++buffer) {
        completeBuffer(staging, mallocRecords(kQueueRows / 2, 1000 * buffer));
        EXPECT_EQ(staging.stagedRows(), 0u);
        if (buffer % 3 == 0) {
            writer.writeRound(out, false);
        }
    }
    EXPECT_EQ(staging.droppedAfterFailure(), 10 * kQueueRows / 2);
    EXPECT_EQ(staging.pendingDrops(trace::LossCounter::WriterQueueOverflow), 0u);
    EXPECT_EQ(notices.size(), 1u);
    writer.close();
    ASSERT_EQ(notices.size(), 2u);
    EXPECT_NE(notices[1].find("500 CUPTI records were dropped"), std::string::npos) << notices[1];
}

TEST(OutputFaults, AFullQueueDropsAndCountsAndTheCountReachesTheFile) {
    const std::string dir = makeFaultsDir();
    const std::string path = dir + "/rank0.vscope";
    OpenedOutput opened = openTraceOutput({OutputKind::File, path}, path, 1);
    ASSERT_TRUE(opened.sink) << opened.error;
    EventStaging staging(100);
    std::vector<std::string> notices;
    CaptureWriter writer(std::move(opened.sink), staging,
                         [&](const std::string& line) { notices.push_back(line); });
    ASSERT_TRUE(writer.writeHeader(testHeader()));
    // The writer is slow (no round yet): 150 records for a queue of 100.
    completeBuffer(staging, mallocRecords(150, 0));
    EXPECT_EQ(staging.stagedRows(), 100u);
    EXPECT_EQ(staging.pendingDrops(trace::LossCounter::WriterQueueOverflow), 50u);
    trace::TraceData out;
    writer.writeRound(out, false);
    completeBuffer(staging, mallocRecords(10, 1'000'000));
    writer.writeRound(out, true);
    writer.close();
    EXPECT_TRUE(notices.empty());

    auto loaded = trace::readTraceFile(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_TRUE(loaded->report.complete);
    EXPECT_EQ(loaded->data.memory.size(), 110u);
    EXPECT_EQ(lossCount(loaded->data, trace::LossCounter::WriterQueueOverflow), 50u);
}

// A disk that fills up mid-frame, made with RLIMIT_FSIZE in a child (the write that passes the
// limit is cut short, the next one fails with EFBIG, as ENOSPC would): the file opens with every
// whole frame and says where it was cut.
TEST(OutputFaults, ADiskFillingUpMidFrameLeavesTheWholeFramesReadable) {
    const std::string dir = makeFaultsDir();
    const std::string path = dir + "/rank0.vscope";
    constexpr rlim_t kLimit = 6000;
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        OpenedOutput opened = openTraceOutput({OutputKind::File, path}, path, 1);
        const rlimit limit{kLimit, kLimit};
        if (!opened.sink || ::setrlimit(RLIMIT_FSIZE, &limit) != 0) {
            std::_Exit(2);
        }
        EventStaging staging(1000);
        int notices = 0;
        CaptureWriter writer(std::move(opened.sink), staging,
                             [&](const std::string&) { ++notices; });
        writer.writeHeader(testHeader());
        trace::TraceData out;
        for (int round = 0; round < 200 && !writer.failed(); ++round) {
            completeBuffer(staging, mallocRecords(40, 100'000 * uint64_t(round)));
            writer.writeRound(out, false);
        }
        completeBuffer(staging, mallocRecords(40, 0));  // after the failure: counted only
        writer.close();
        const bool ok = writer.failed() && notices == 2 && staging.droppedAfterFailure() == 40;
        std::_Exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "the writer did not fail once, say it twice (failure, "
                                         "count) and count the later records";
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, static_cast<off_t>(kLimit));
    auto loaded = trace::readTraceFile(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    const trace::ReadReport& report = loaded->report;
    EXPECT_TRUE(report.truncated);
    EXPECT_LT(report.bytesLoaded, kLimit);
    EXPECT_GE(report.framesLoaded, 3u);  // the header and at least two rounds
    EXPECT_EQ(loaded->data.memory.size() % 40, 0u) << "rounds are whole frames or missing";
    EXPECT_EQ(lossCount(loaded->data, trace::LossCounter::TruncatedBytes),
              kLimit - report.bytesLoaded);
}

// Killed at seeded points (a piece of a short write), the file holds whole frames and at most
// one cut one; the reader loads exactly the whole ones, by the writer's own record of where each
// write ended, and reports the cut.
TEST(OutputFaults, AWriterKilledMidFrameLeavesAFileThatOpensToItsLastWholeFrame) {
    std::mt19937_64 rng(20261201);
    int cutMidFrame = 0;
    for (int run = 0; run < 12; ++run) {
        const std::string dir = makeFaultsDir();
        const std::string path = dir + "/rank0.vscope";
        const uint64_t killAt = 1 + rng() % 150;  // the 100 rounds take ~190 pieces
        const uint64_t seed = rng();
        int pipeFds[2];
        ASSERT_EQ(::pipe(pipeFds), 0);
        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::close(pipeFds[0]);
            OpenedOutput opened = openTraceOutput({OutputKind::File, path}, path, 1);
            if (!opened.sink) {
                std::_Exit(2);
            }
            EventStaging staging(1000);
            CaptureWriter writer(
                std::make_unique<ChoppingSink>(std::move(opened.sink), pipeFds[1], seed, killAt),
                staging, [](const std::string&) {});
            writer.writeHeader(testHeader());
            trace::TraceData out;
            for (int round = 0; round < 100; ++round) {
                completeBuffer(staging, mallocRecords(25, 100'000 * uint64_t(round)));
                writer.writeRound(out, false);
            }
            std::_Exit(3);  // never killed
        }
        ::close(pipeFds[1]);
        std::vector<uint64_t> ends;
        uint64_t end = 0;
        while (::read(pipeFds[0], &end, sizeof(end)) == sizeof(end)) {
            ends.push_back(end);
        }
        ::close(pipeFds[0]);
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
            << "run " << run << ": the writer was not killed (status " << status << ")";
        struct stat st {};
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        const auto size = static_cast<uint64_t>(st.st_size);
        const uint64_t whole = ends.empty() ? 0 : ends.back();
        ASSERT_LE(whole, size);
        auto loaded = trace::readTraceFile(path);
        SCOPED_TRACE("run " + std::to_string(run) + ": killed at piece " + std::to_string(killAt) +
                     ", " + std::to_string(size) + " bytes, " + std::to_string(ends.size()) +
                     " whole writes");
        if (ends.size() < 2) {  // cut inside the preamble or the header frame: a clear refusal
            ASSERT_FALSE(loaded.ok());
            EXPECT_EQ(loaded.error().code, trace::ErrorCode::Truncated);
            EXPECT_EQ(loaded.error().file, path);
            continue;
        }
        ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
        const trace::ReadReport& report = loaded->report;
        EXPECT_EQ(report.bytesLoaded, whole);
        EXPECT_EQ(report.framesLoaded, ends.size() - 1);  // every whole write but the preamble
        EXPECT_EQ(report.truncated, size > whole);
        if (size > whole) {
            ++cutMidFrame;
            EXPECT_EQ(report.truncatedAtByte, static_cast<int64_t>(whole));
            EXPECT_EQ(lossCount(loaded->data, trace::LossCounter::TruncatedBytes), size - whole);
        }
        // Each round writes one event frame (25 events), then its summary frame.
        const size_t eventFrames = (ends.size() - 2 + 1) / 2;
        EXPECT_EQ(loaded->data.memory.size(), 25 * eventFrames);
    }
    // Pieces of 1..64 bytes against frames of ~60: most kills land inside a frame.
    EXPECT_GE(cutMidFrame, 6) << "the seeded kill points no longer test a cut frame";
}
