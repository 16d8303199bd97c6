// readInputBytes / decodeInputBytes: plain and gzip input, padding for the JSON parser, cut and
// damaged gzip streams, size limits. Compressed inputs are made here with zlib's deflate.

#include <gtest/gtest.h>
#include <zlib.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "gz_file.h"
#include "refusal.h"
#include "vramscope/trace/input_bytes.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

using testdata::gzipBytes;
using ::vramscope::test::refused;

/// Text that compresses, with some randomness so the gzip stream is not trivial.
std::string sampleText(size_t n) {
    std::mt19937 rng(7);
    std::string s;
    while (s.size() < n) {
        s += "{\"ts\": " + std::to_string(rng() % 100000) + ", \"name\": \"kernel\"},\n";
    }
    s.resize(n);
    return s;
}

std::string tempFile(const std::string& name, const std::string& bytes) {
    const auto path = fs::temp_directory_path() / ("vramscope_input_bytes_" + name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
}

void expectPadded(const std::string& s) {
    ASSERT_GE(s.capacity() - s.size(), kInputPaddingBytes);
    for (size_t i = 0; i < kInputPaddingBytes; ++i) {
        EXPECT_EQ(s.data()[s.size() + i], '\0') << "padding byte " << i;
    }
}

TEST(InputBytes, ReadsAPlainFileWithPadding) {
    const std::string text = sampleText(100000);
    const auto path = tempFile("plain.json", text);
    auto r = readInputBytes(path);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(*r, text);
    expectPadded(*r);
    fs::remove(path);
}

TEST(InputBytes, GunzipsAndPads) {
    const std::string text = sampleText(3'000'000);
    const auto path = tempFile("z.json.gz", gzipBytes(text));
    auto r = readInputBytes(path);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(*r, text);
    expectPadded(*r);
    fs::remove(path);
}

TEST(InputBytes, ReadsConcatenatedGzipMembers) {
    const std::string a = sampleText(5000);
    const std::string b = "second member";
    auto r = decodeInputBytes(gzipBytes(a) + gzipBytes(b), "two.gz");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(*r, a + b);
}

TEST(InputBytes, KeepsTheBytesBeforeTheCutOfAGzipStreamWhenAskedTo) {
    const std::string text = sampleText(2'000'000);
    const std::string gz = gzipBytes(text);
    const std::string cut = gz.substr(0, gz.size() / 2);
    auto strict = decodeInputBytes(cut, "cut.gz");
    ASSERT_FALSE(strict.ok());
    EXPECT_EQ(strict.error().file, "cut.gz");
    InputNotes notes;
    auto lenient = decodeInputBytes(cut, "cut.gz", 1ull << 30, &notes);
    ASSERT_TRUE(lenient.ok()) << lenient.error().describe();
    EXPECT_GT(lenient->size(), 0u);
    EXPECT_LT(lenient->size(), text.size());
    EXPECT_EQ(*lenient, text.substr(0, lenient->size()));
    ASSERT_EQ(notes.problems.size(), 1u);
    EXPECT_EQ(notes.problems[0].file, "cut.gz");
    EXPECT_EQ(notes.problems[0].byteOffset, static_cast<int64_t>(cut.size()));
    expectPadded(*lenient);
}

/// Peak resident memory of this process so far (VmHWM of /proc/self/status), in KiB; -1 unknown.
long peakResidentKiB() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmHWM:", 0) == 0) {
            return std::stol(line.substr(6));
        }
    }
    return -1;
}

// Found by the corruption sweep: a cut file's last 4 bytes are no ISIZE trailer, yet they were
// trusted (up to 1032x the input) and that much memory was filled before decompressing: 760 MB
// for a 0.7 MB cut Kineto trace. The bytes kept must be all the cut costs.
TEST(InputBytes, ACutStreamCostsTheMemoryOfWhatItHoldsNotOfItsLastBytes) {
    const std::string text = sampleText(4'000'000);
    std::string cut = gzipBytes(text);
    cut.resize(cut.size() / 2);
    cut.replace(cut.size() - 4, 4, "\xff\xff\xff\xff");  // "4 GiB" where the trailer would be
    const uint64_t trusted = std::min<uint64_t>(0xffffffffu, cut.size() * 1032u);
    ASSERT_GT(trusted, 200u << 20) << "the input must make the old guess large";
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        const long before = peakResidentKiB();
        InputNotes notes;
        auto r = decodeInputBytes(cut, "cut.json.gz", 64ull << 30, &notes);
        const long grown = peakResidentKiB() - before;
        // What is kept is at most text.size() (4 MB); growth by doubling may touch 2x that.
        const bool ok = r.ok() && r->size() < text.size() && notes.problems.size() == 1 &&
                        before > 0 && grown < 32 * 1024;
        std::_Exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the cut stream grew the peak by more than 32 MiB or "
                                         "did not load with one problem";
}

TEST(InputBytes, ReportsDamagedGzipData) {
    std::string gz = gzipBytes(sampleText(200000));
    for (size_t i = 100; i < 200; ++i) {
        gz[i] = static_cast<char>(gz[i] ^ 0x5a);
    }
    InputNotes notes;
    auto r = decodeInputBytes(gz, "bad.gz", 1ull << 30, &notes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().file, "bad.gz");
    EXPECT_GE(r.error().byteOffset, 0);
    EXPECT_NE(r.error().message.find("damaged"), std::string::npos);
}

TEST(InputBytes, RefusesContentAboveTheLimitWithoutAllocatingIt) {
    const std::string zeros(8 << 20, '\0');  // compresses ~1000:1
    auto r = decodeInputBytes(gzipBytes(zeros), "bomb.gz", 1 << 20);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("limit"), std::string::npos);
    auto plain = decodeInputBytes(std::string(100, 'x'), "big.json", 10);
    EXPECT_TRUE(refused(plain, ErrorCode::Limit,
                        {"big.json", "the input is larger than the limit of 10 bytes"}));
    const auto path = tempFile("big.json", std::string(100, 'x'));
    EXPECT_TRUE(refused(readInputBytes(path, 10), ErrorCode::Limit,
                        {path, "the file is larger than the limit of 10 bytes"}));
    fs::remove(path);
}

TEST(InputBytes, NamesTheFileItCannotRead) {
    auto r = readInputBytes("/nonexistent/dir/trace.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().file, "/nonexistent/dir/trace.json");
    const std::string tmp = fs::temp_directory_path().string();
    EXPECT_TRUE(refused(readInputBytes(tmp), ErrorCode::Io, {tmp, "not a regular file"}));
}

TEST(InputBytes, ReadsEmptyInput) {
    auto r = decodeInputBytes("", "empty");
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->empty());
    expectPadded(*r);
    EXPECT_TRUE(isGzip("\x1f\x8b"));
    EXPECT_FALSE(isGzip("\x1f"));
}

/// Reads `bytes` back through readInputStream from a pipe, written by another thread in pieces of
/// `piece` bytes, as a shell pipe delivers them.
Result<std::string> throughPipe(const std::string& bytes, size_t piece, uint64_t maxBytes,
                                InputNotes* notes = nullptr,
                                const StreamStartCheck& refuseStart = {}) {
    std::signal(SIGPIPE, SIG_IGN);  // a write after the reader gave up fails instead of killing us
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    std::thread writer([&] {
        for (size_t at = 0; at < bytes.size();) {
            const size_t n = std::min(piece, bytes.size() - at);
            const ssize_t w = ::write(fds[1], bytes.data() + at, n);
            if (w <= 0) {
                break;  // the reader stopped (limit): nothing more to deliver
            }
            at += static_cast<size_t>(w);
        }
        ::close(fds[1]);
    });
    auto r = readInputStream(fds[0], kStandardInputName, maxBytes, notes, refuseStart);
    ::close(fds[0]);  // a writer blocked on a full pipe now gets EPIPE and ends
    writer.join();
    return r;
}

TEST(InputStream, ReadsAPipeToItsEndInPieces) {
    const std::string text = sampleText(3 << 20);  // several of the reader's 1 MiB chunks
    auto r = throughPipe(text, 4093, 64 << 20);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, text);
    expectPadded(*r);
}

TEST(InputStream, GunzipsGzipContent) {
    const std::string text = sampleText(1 << 20);
    auto r = throughPipe(gzipBytes(text), 1000, 64 << 20);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, text);
    expectPadded(*r);
}

TEST(InputStream, KeepsWhatCameBeforeAGzipCut) {
    const std::string text = sampleText(1 << 20);
    std::string gz = gzipBytes(text);
    gz.resize(gz.size() / 2);
    InputNotes notes;
    auto r = throughPipe(gz, 1 << 16, 64 << 20, &notes);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(notes.problems.size(), 1u);
    EXPECT_EQ(notes.problems.front().file, kStandardInputName);
    EXPECT_FALSE(r->empty());
    EXPECT_EQ(text.compare(0, r->size(), *r), 0) << "the kept bytes are the start of the text";
}

TEST(InputStream, StopsAtTheLimitInsteadOfReadingForever) {
    // 6 MiB offered, 2 MiB allowed: refused once past the limit, naming the stream.
    auto r = throughPipe(std::string(6 << 20, 'x'), 1 << 16, 2 << 20);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::Limit);
    EXPECT_EQ(r.error().file, kStandardInputName);
    auto bomb = throughPipe(gzipBytes(std::string(8 << 20, '\0')), 1 << 16, 1 << 20);
    ASSERT_FALSE(bomb.ok());
    EXPECT_EQ(bomb.error().code, ErrorCode::Limit);
}

TEST(InputStream, StopsAtTheFirstBytesWhenTheyAreRefused) {
    // 6 MiB of text no reader takes, with a 1 GiB limit: refused from its first bytes, which are
    // what the check saw (the probe, not the whole stream).
    size_t seen = 0;
    auto refuseText = [&](std::string_view head) -> std::optional<std::string> {
        seen = head.size();
        return head.substr(0, 1) == "x" ? std::string("not a trace") : std::string();
    };
    auto r = throughPipe(std::string(6 << 20, 'x'), 1 << 16, 1ull << 30, nullptr, refuseText);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::Unsupported);
    EXPECT_EQ(r.error().message, "not a trace");
    EXPECT_GE(seen, kStreamProbeBytes);
    EXPECT_LT(seen, size_t{6 << 20});
    // A stream shorter than the probe is checked whole; an accepted one is read to its end.
    auto shortOne = throughPipe("xyz", 1, 1 << 20, nullptr, refuseText);
    EXPECT_TRUE(refused(shortOne, ErrorCode::Unsupported, {"not a trace"}));
    EXPECT_EQ(seen, 3u);
    auto accepted =
        throughPipe(std::string(3 << 20, 'y'), 1 << 16, 1ull << 30, nullptr, refuseText);
    ASSERT_TRUE(accepted.ok());
    EXPECT_EQ(accepted->size(), size_t{3 << 20});
}

TEST(InputStream, ReadsAnEmptyStream) {
    auto r = throughPipe("", 1, 1 << 20);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->empty());
    expectPadded(*r);
}

}  // namespace
}  // namespace vramscope::trace
