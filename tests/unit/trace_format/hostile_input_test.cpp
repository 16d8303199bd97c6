// Hostile input refused in proportion to what was read: gzip bombs (zeros; a JSON prefix and then
// gigabytes of spaces), a lying gzip size trailer, a 2 GiB file of zeros (sparse: no disk used)
// as a file and on standard input, and the decompressed size limit. Bombs are made here with
// zlib. Each refusal runs in a forked child whose peak resident memory (getrusage of the child)
// is compared with that of a child that does nothing, so a reader that takes the whole content
// into memory fails the test.

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tar_header.h"
#include "test_units.h"
#include "vramscope/trace/input_bytes.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

using testdata::kGiB;
using testdata::kMiB;

/// One gzip member holding `prefix` then `repeat` copies of `chunk`, deflated as it goes (level
/// 1: a GiB of one byte deflates in about a second and gives ~4.5 MB).
std::string gzipStream(const std::string& prefix, const std::string& chunk, size_t repeat) {
    z_stream zs{};
    EXPECT_EQ(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out;
    std::string buffer(1 << 20, '\0');
    auto feed = [&](const std::string& in, int flush) {
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        zs.avail_in = static_cast<uInt>(in.size());
        do {
            zs.next_out = reinterpret_cast<Bytef*>(buffer.data());
            zs.avail_out = static_cast<uInt>(buffer.size());
            deflate(&zs, flush);
            out.append(buffer.data(), buffer.size() - zs.avail_out);
        } while (zs.avail_out == 0);
    };
    feed(prefix, Z_NO_FLUSH);
    for (size_t i = 0; i < repeat; ++i) {
        feed(chunk, Z_NO_FLUSH);
    }
    feed(std::string(), Z_FINISH);
    deflateEnd(&zs);
    return out;
}

std::string processTempPath(const std::string& name) {
    return (fs::temp_directory_path() /
            ("vramscope_hostile_" + std::to_string(getpid()) + "_" + name))
        .string();
}

std::string writeTemp(const std::string& name, const std::string& bytes) {
    const std::string path = processTempPath(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

/// What a forked child reported: its peak resident memory and the Error it got (describe()), or
/// "loaded" when the input was accepted.
struct ChildResult {
    long peakKiB = 0;
    std::string outcome;
};

/// Runs `open` in a forked child; the child writes open's outcome to a pipe and exits.
ChildResult runInChild(const std::function<std::string()>& open) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        const std::string outcome = open();
        const ssize_t written = write(fds[1], outcome.data(), outcome.size());
        _exit(written == static_cast<ssize_t>(outcome.size()) ? 0 : 1);
    }
    close(fds[1]);
    ChildResult result;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) {
        result.outcome.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    rusage usage{};
    EXPECT_EQ(wait4(pid, &status, 0, &usage), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    result.peakKiB = usage.ru_maxrss;
    return result;
}

/// Peak resident memory (KiB) of a child that does nothing: the baseline of the test process.
long baselineKiB() {
    return runInChild([] { return std::string(); }).peakKiB;
}

std::string outcomeOf(const Result<LoadedTrace>& r) {
    return r.ok() ? std::string("loaded") : r.error().describe();
}

/// A child that opens `path` with openTrace and reports the outcome.
ChildResult openInChild(const std::string& path, ReadOptions options = {}) {
    return runInChild([&] { return outcomeOf(openTrace(path, options)); });
}

TEST(HostileInput, GzipOfAGibOfZerosIsRefusedFromItsFirstBytes) {
    const std::string gz = gzipStream("", std::string(kMiB, '\0'), 1024);  // 1 GiB of zeros
    ASSERT_LT(gz.size(), 8 * kMiB);
    const std::string path = writeTemp("zeros.json.gz", gz);
    const long base = baselineKiB();
    const ChildResult child = openInChild(path);
    // The message names the file and says why; the content (1 GiB) never came into memory.
    EXPECT_NE(child.outcome.find(path), std::string::npos) << child.outcome;
    EXPECT_NE(child.outcome.find("all zeros"), std::string::npos) << child.outcome;
    EXPECT_LT(child.peakKiB - base, 64 * 1024) << "KiB above the baseline";
    // openJob says the same.
    auto job = openJob({path});
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.error().file, path);
    EXPECT_EQ(job.error().code, ErrorCode::Unsupported);
    fs::remove(path);
}

TEST(HostileInput, JsonPrefixThenGigabytesOfSpacesIsRefusedAsABomb) {
    // '{"traceEvents": [' then 2 GiB of spaces: the start is JSON, so only the ratio rule (more
    // than 200:1 once 64 MiB are out) stops it, long before the 16 GiB limit.
    const std::string chunk(kMiB, ' ');
    std::string gz;
    const std::string member = gzipStream("", chunk, 64);  // 64 MiB of spaces, one member
    gz = gzipStream("{\"traceEvents\": [", chunk, 1);
    for (int i = 0; i < 32; ++i) {
        gz += member;  // concatenated members: 2 GiB + 1 MiB in all
    }
    const std::string path = writeTemp("spaces.json.gz", gz);
    const long base = baselineKiB();
    const ChildResult child = openInChild(path);
    EXPECT_NE(child.outcome.find(path), std::string::npos) << child.outcome;
    EXPECT_NE(child.outcome.find("gzip bomb"), std::string::npos) << child.outcome;
    // At most the 64 MiB checked and the doubling buffer around them, not 2 GiB.
    EXPECT_LT(child.peakKiB - base, 256 * 1024) << "KiB above the baseline";
    fs::remove(path);
}

TEST(HostileInput, ASparseFileOfTwoGibOfZerosIsRefusedFromItsFirstBytes) {
    const std::string path = processTempPath("zeros.json");
    {
        const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(ftruncate(fd, static_cast<off_t>(2 * kGiB)), 0);  // a hole: no disk used
        close(fd);
    }
    const long base = baselineKiB();
    const ChildResult child = openInChild(path);
    EXPECT_NE(child.outcome.find(path), std::string::npos) << child.outcome;
    EXPECT_NE(child.outcome.find("all zeros"), std::string::npos) << child.outcome;
    EXPECT_LT(child.peakKiB - base, 32 * 1024) << "KiB above the baseline";
    // The same file as a job member, and on standard input.
    const ChildResult job = runInChild([&] {
        auto r = openJob({path});
        return r.ok() ? std::string("loaded") : r.error().describe();
    });
    EXPECT_NE(job.outcome.find(path), std::string::npos) << job.outcome;
    EXPECT_LT(job.peakKiB - base, 32 * 1024);
    const ChildResult stdinChild = runInChild([&] {
        const int fd = ::open(path.c_str(), O_RDONLY);
        if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) {
            return std::string("cannot redirect");
        }
        return outcomeOf(openTrace("-"));
    });
    EXPECT_NE(stdinChild.outcome.find(kStandardInputName), std::string::npos) << stdinChild.outcome;
    EXPECT_NE(stdinChild.outcome.find("unsupported format"), std::string::npos)
        << stdinChild.outcome;
    EXPECT_LT(stdinChild.peakKiB - base, 32 * 1024);
    fs::remove(path);
}

TEST(HostileInput, AnArchiveMemberOfZerosIsRefusedFromItsFirstBytes) {
    // A .tar whose member trace.json is 2 GiB of zeros, held as a hole after its header.
    const std::string path = processTempPath("zeros.tar");
    std::ofstream(path, std::ios::binary) << vramscope_test::tarHeader("trace.json", 2 * kGiB);
    ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(512 + 2 * kGiB + 1024)), 0);
    const long base = baselineKiB();
    const ChildResult child = runInChild([&] {
        auto r = openJob({path});
        return r.ok() ? std::string("loaded") : r.error().describe();
    });
    EXPECT_NE(child.outcome.find(path + ":trace.json"), std::string::npos) << child.outcome;
    EXPECT_NE(child.outcome.find("all zeros"), std::string::npos) << child.outcome;
    EXPECT_LT(child.peakKiB - base, 32 * 1024) << "KiB above the baseline";
    fs::remove(path);
}

TEST(HostileInput, ALyingSizeTrailerAllocatesNothingAhead) {
    // ~1 MB of gzip whose ISIZE trailer claims 4 GiB - 1. Before, the buffer was sized from the
    // trailer up to 1032x the input (~1 GiB, zero-filled); now at most 32x the input is trusted.
    std::mt19937 rng(11);
    std::string text = "{\"traceEvents\": [\"";
    while (text.size() < 2 * kMiB) {
        text += static_cast<char>('a' + rng() % 26);
    }
    text += "\"]}";
    std::string gz = gzipStream(text, "", 0);
    ASSERT_GT(gz.size(), 512 * 1024u);
    for (size_t i = gz.size() - 4; i < gz.size(); ++i) {
        gz[i] = '\xff';
    }
    const std::string path = writeTemp("trailer.json.gz", gz);
    const long base = baselineKiB();
    const ChildResult child = openInChild(path);
    // zlib checks the trailer at the end: the file is reported damaged, by name.
    EXPECT_NE(child.outcome.find(path), std::string::npos) << child.outcome;
    EXPECT_NE(child.outcome.find("damaged"), std::string::npos) << child.outcome;
    EXPECT_LT(child.peakKiB - base, 128 * 1024) << "KiB above the baseline";
    fs::remove(path);
}

TEST(HostileInput, TheDecompressedSizeLimitIsAnOption) {
    // 3 MiB of JSON that compresses like a trace (well under 200:1), with a 1 MiB limit.
    std::mt19937 rng(3);
    std::string json = "{\"traceEvents\": [";
    while (json.size() < 3 * kMiB) {
        json += "{\"ph\": \"X\", \"name\": \"k" + std::to_string(rng() % 1000) +
                "\", \"ts\": " + std::to_string(rng() % 1000000) + ", \"dur\": 1},\n";
    }
    json += "{}]}";
    const std::string path = writeTemp("limit.json.gz", gzipStream(json, "", 0));
    ReadOptions small;
    small.maxInputBytes = kMiB;
    auto refused = openTrace(path, small);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::Limit);
    EXPECT_EQ(refused.error().file, path);
    EXPECT_NE(refused.error().message.find("1048576"), std::string::npos);
    EXPECT_NE(refused.error().message.find("--max-input-gib"), std::string::npos);
    auto loaded = openTrace(path);  // the default, 16 GiB
    EXPECT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_EQ(ReadOptions{}.maxInputBytes, 16 * kGiB);
    fs::remove(path);
}

TEST(HostileInput, TheLimitSettingComesFromTheEnvironment) {
    ASSERT_EQ(unsetenv("VRAMSCOPE_MAX_INPUT_GIB"), 0);
    EXPECT_EQ(maxInputBytesSetting().value(), 16 * kGiB);
    setenv("VRAMSCOPE_MAX_INPUT_GIB", "3", 1);
    EXPECT_EQ(maxInputBytesSetting().value(), 3 * kGiB);
    // A value that is set but no whole number of GiB in 1..2^20 is refused, never the default.
    for (const char* bad : {"", "0", "-2", "1.5", "4GiB", " 2", "99999999999"}) {
        setenv("VRAMSCOPE_MAX_INPUT_GIB", bad, 1);
        const auto got = maxInputBytesSetting();
        ASSERT_FALSE(got.ok()) << bad;
        EXPECT_EQ(got.error().file, "VRAMSCOPE_MAX_INPUT_GIB");
        EXPECT_NE(got.error().message.find(std::string("'") + bad + "'"), std::string::npos);
    }
    unsetenv("VRAMSCOPE_MAX_INPUT_GIB");
}

TEST(HostileInput, ContentNoReaderTakesIsRefusedWhateverItsName) {
    // A file named .json (or .pickle) that starts with neither JSON nor a pickle: refused from
    // its first bytes with the unsupported-format message, not handed to the importer.
    for (const char* name : {"garbage.json", "garbage.pickle"}) {
        const std::string path =
            writeTemp(name, std::string("\x01\x02garbage", 9) + std::string(4 * kMiB, 'x'));
        auto r = openTrace(path);
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code, ErrorCode::Unsupported) << r.error().describe();
        EXPECT_EQ(r.error().file, path);
        EXPECT_NE(r.error().message.find("unsupported format"), std::string::npos);
        fs::remove(path);
    }
}

}  // namespace
}  // namespace vramscope::trace
