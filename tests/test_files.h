#pragma once
// Files and folders of a test's own: a file read whole, and new empty folders to write in.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace vramscope::testdata {

/// The bytes of the file at `path`; empty when it cannot be read.
inline std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// An empty folder of the running test's own under the system's temporary folder, named
/// `prefix`_PID_SUITE_NAME, removed first when a former run left it there. The test removes it
/// when it is done.
inline std::filesystem::path freshTestDir(std::string_view prefix) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::filesystem::path p = std::filesystem::temp_directory_path() /
                              (std::string(prefix) + "_" + std::to_string(::getpid()) + "_" +
                               info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p;
}

/// A new folder under GoogleTest's temporary folder whose name starts with `prefix` and ends
/// with a unique suffix (mkdtemp); "" when it cannot be made.
inline std::string uniqueTempDir(std::string_view prefix) {
    std::string pattern = ::testing::TempDir() + std::string(prefix) + "-XXXXXX";
    const char* dir = mkdtemp(pattern.data());
    return dir != nullptr ? std::string(dir) : std::string();
}

/// A new folder (uniqueTempDir under the system's temporary folder) that lives as long as this
/// object: removed with all it holds on destruction.
class ScratchDir {
public:
    explicit ScratchDir(std::string_view prefix) {
        std::string pattern =
            (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
        if (const char* dir = ::mkdtemp(pattern.data())) {
            m_path = dir;
        }
    }
    ~ScratchDir() {
        std::error_code ec;
        if (!m_path.empty()) {
            std::filesystem::remove_all(m_path, ec);
        }
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    /// The path of `name` inside the folder.
    std::string operator/(const std::string& name) const { return (m_path / name).string(); }
    /// Writes `bytes` to `name` inside the folder; returns its path.
    std::string write(const std::string& name, const std::string& bytes) const {
        const std::string p = *this / name;
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    }

private:
    std::filesystem::path m_path;
};

}  // namespace vramscope::testdata
