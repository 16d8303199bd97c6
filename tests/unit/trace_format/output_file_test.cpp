// writeOutputFile: complete files only under the name asked for, links followed, and special files
// (devices, FIFOs) written in place instead of replaced by a regular file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "vramscope/trace/output_file.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) {
    const fs::path d =
        fs::temp_directory_path() / ("vramscope_output_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string contentOf(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

auto writes(const std::string& text) {
    return [text](std::ostream& out) {
        out << text;
        return Status::success();
    };
}

TEST(OutputFile, WritesANewFileAndReplacesAnOldOneWhole) {
    const fs::path d = freshDir("replace");
    const std::string path = (d / "out.csv").string();
    ASSERT_TRUE(writeOutputFile(path, writes("first\n")).ok());
    EXPECT_EQ(contentOf(path), "first\n");
    ASSERT_TRUE(writeOutputFile(path, writes("second\n")).ok());
    EXPECT_EQ(contentOf(path), "second\n");
    EXPECT_FALSE(fs::exists(path + ".partial"));
    fs::remove_all(d);
}

TEST(OutputFile, AFailedWriteLeavesTheOldFileAndNoPartialFile) {
    const fs::path d = freshDir("fail");
    const std::string path = (d / "out.json").string();
    ASSERT_TRUE(writeOutputFile(path, writes("good\n")).ok());
    const Status failed = writeOutputFile(path, [](std::ostream& out) -> Status {
        out << "half of it";
        return Error::make(ErrorCode::Invalid, "job", "the writer gave up");
    });
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().message, "the writer gave up");
    EXPECT_EQ(contentOf(path), "good\n");
    EXPECT_FALSE(fs::exists(path + ".partial"));
    fs::remove_all(d);
}

TEST(OutputFile, FollowsALinkToARegularFileAndKeepsTheLink) {
    const fs::path d = freshDir("link");
    const fs::path target = d / "real.pftrace";
    const fs::path link = d / "link.pftrace";
    std::ofstream(target) << "old";
    fs::create_symlink(target, link);
    ASSERT_TRUE(writeOutputFile(link.string(), writes("new")).ok());
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
    EXPECT_EQ(contentOf(target), "new");
    fs::remove_all(d);
}

TEST(OutputFile, WritesIntoDevicesAndFifosInsteadOfReplacingThem) {
    // /dev/null stays the character device (the old rename would have replaced it as root).
    ASSERT_TRUE(writeOutputFile("/dev/null", writes("discarded")).ok());
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
    const fs::path d = freshDir("fifo");
    const fs::path fifo = d / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string received;
    std::thread reader([&] { received = contentOf(fifo); });
    ASSERT_TRUE(writeOutputFile(fifo.string(), writes("through the pipe")).ok());
    reader.join();
    EXPECT_EQ(received, "through the pipe");
    EXPECT_TRUE(fs::is_fifo(fifo));
    fs::remove_all(d);
}

TEST(OutputFile, NamesThePathAndTheReasonWhenItCannotWrite) {
    const fs::path d = freshDir("errors");
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
