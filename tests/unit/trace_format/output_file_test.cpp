// writeOutputFile: complete files only under the name asked for, links followed, and special files
// (devices, FIFOs) written in place instead of replaced by a regular file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_files.h"
#include "vramscope/trace/output_file.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

using testdata::readFile;

fs::path freshOutputDir() {
    return testdata::freshTestDir("vramscope_output");
}

/// Files in `d` other than `keep`: what an export left beside its output.
std::vector<std::string> leftovers(const fs::path& d, const std::vector<std::string>& keep) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(d)) {
        const std::string name = e.path().filename().string();
        if (std::find(keep.begin(), keep.end(), name) == keep.end()) {
            out.push_back(name);
        }
    }
    return out;
}

auto writes(const std::string& text) {
    return [text](std::ostream& out) {
        out << text;
        return Status::success();
    };
}

TEST(OutputFile, WritesANewFileAndReplacesAnOldOneWhole) {
    const fs::path d = freshOutputDir();
    const std::string path = (d / "out.csv").string();
    ASSERT_TRUE(writeOutputFile(path, writes("first\n")).ok());
    EXPECT_EQ(readFile(path), "first\n");
    ASSERT_TRUE(writeOutputFile(path, writes("second\n")).ok());
    EXPECT_EQ(readFile(path), "second\n");
    EXPECT_TRUE(leftovers(d, {"out.csv"}).empty());
    fs::remove_all(d);
}

TEST(OutputFile, AFailedWriteLeavesTheOldFileAndNoPartialFile) {
    const fs::path d = freshOutputDir();
    const std::string path = (d / "out.json").string();
    ASSERT_TRUE(writeOutputFile(path, writes("good\n")).ok());
    const Status failed = writeOutputFile(path, [](std::ostream& out) -> Status {
        out << "half of it";
        return Error::make(ErrorCode::Invalid, "job", "the writer gave up");
    });
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().message, "the writer gave up");
    EXPECT_EQ(readFile(path), "good\n");
    EXPECT_TRUE(leftovers(d, {"out.json"}).empty());
    fs::remove_all(d);
}

TEST(OutputFile, ADanglingLinkGetsItsTargetWritten) {
    const fs::path d = freshOutputDir();
    fs::create_symlink("made-here.json", d / "link.json");  // relative, target missing
    ASSERT_TRUE(writeOutputFile((d / "link.json").string(), writes("{}")).ok());
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(d / "link.json")));
    EXPECT_EQ(readFile(d / "made-here.json"), "{}");
    fs::remove_all(d);
}

TEST(OutputFile, FollowsALinkToARegularFileAndKeepsTheLink) {
    const fs::path d = freshOutputDir();
    const fs::path target = d / "real.pftrace";
    const fs::path link = d / "link.pftrace";
    std::ofstream(target) << "old";
    fs::create_symlink(target, link);
    ASSERT_TRUE(writeOutputFile(link.string(), writes("new")).ok());
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
    EXPECT_EQ(readFile(target), "new");
    fs::remove_all(d);
}

TEST(OutputFile, WritesIntoDevicesAndFifosInsteadOfReplacingThem) {
    // /dev/null stays the character device (the old rename would have replaced it as root).
    ASSERT_TRUE(writeOutputFile("/dev/null", writes("discarded")).ok());
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
    const fs::path d = freshOutputDir();
    const fs::path fifo = d / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string received;
    std::thread reader([&] { received = readFile(fifo); });
    ASSERT_TRUE(writeOutputFile(fifo.string(), writes("through the pipe")).ok());
    reader.join();
    EXPECT_EQ(received, "through the pipe");
    EXPECT_TRUE(fs::is_fifo(fifo));
    fs::remove_all(d);
}

TEST(OutputFile, KeepsTheUsersFilesModeAndOtherLinks) {
    const fs::path d = freshOutputDir();
    const std::string path = (d / "notes.txt").string();
    std::ofstream(path + ".partial") << "the user's own file";
    std::ofstream(path) << "old";
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    ASSERT_TRUE(writeOutputFile(path, writes("new")).ok());
    EXPECT_EQ(readFile(path), "new");
    EXPECT_EQ(readFile(path + ".partial"), "the user's own file");
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    // A new file gets 0666 less the umask, as any program's output would.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    const std::string fresh = (d / "fresh.csv").string();
    ASSERT_TRUE(writeOutputFile(fresh, writes("x")).ok());
    EXPECT_EQ(static_cast<mode_t>(fs::status(fresh).permissions() & fs::perms::all), 0666 & ~mask);
    // A second hard link keeps the old content whole (the new file replaces this name only).
    const fs::path other = d / "other-name.txt";
    fs::create_hard_link(path, other);
    ASSERT_TRUE(writeOutputFile(path, writes("newer")).ok());
    EXPECT_EQ(readFile(path), "newer");
    EXPECT_EQ(readFile(other), "new");
    fs::remove_all(d);
}

TEST(OutputFile, WritesThroughAnOpenDescriptorKeepingWhatIsAlreadyThere) {
    // `{ echo HEAD; cli -o /dev/stdout; } >> f`: the bytes land after HEAD, nothing is replaced.
    const fs::path d = freshOutputDir();
    const std::string file = (d / "appended.txt").string();
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "HEAD\n", 5), 5);
    ASSERT_TRUE(writeOutputFile("/dev/fd/" + std::to_string(fd), writes("export\n")).ok());
    ASSERT_EQ(::write(fd, "TAIL\n", 5), 5);
    ::close(fd);
    EXPECT_EQ(readFile(file), "HEAD\nexport\nTAIL\n");
    fs::remove_all(d);
}

TEST(OutputFile, NamesThePathAndTheReasonWhenItCannotWrite) {
    // A full device: the system's reason, not only that the write failed.
    const Status full = writeOutputFile("/dev/full", writes(std::string(1 << 20, 'x')));
    ASSERT_FALSE(full.ok());
    EXPECT_NE(full.error().message.find("No space left on device"), std::string::npos)
        << full.error().message;
    const fs::path d = freshOutputDir();
    const Status intoMissing = writeOutputFile((d / "no" / "such" / "x.csv").string(), writes(""));
    ASSERT_FALSE(intoMissing.ok());
    EXPECT_EQ(intoMissing.error().code, ErrorCode::Io);
    EXPECT_EQ(intoMissing.error().file, (d / "no" / "such" / "x.csv").string());
    EXPECT_NE(intoMissing.error().message.find("No such file or directory"), std::string::npos)
        << intoMissing.error().message;
    const Status directory = writeOutputFile(d.string(), writes(""));
    ASSERT_FALSE(directory.ok());
    EXPECT_NE(directory.error().message.find("directory"), std::string::npos);
    fs::remove_all(d);
}

}  // namespace
}  // namespace vramscope::trace
