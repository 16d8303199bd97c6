// Replays the committed regression corpus (tests/fuzz/regressions/<target>/) through the fuzz
// targets' own entry points, without libFuzzer: every input that once crashed, leaked, hung or
// tripped a sanitizer in a reader runs here in every build (dev, and asan where the sanitizers
// catch a relapse). A relapse is a crash or a sanitizer abort of this binary, or a timeout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int vramscopeFuzz_vscope(const uint8_t* data, size_t size);
extern "C" int vramscopeFuzz_kineto(const uint8_t* data, size_t size);
extern "C" int vramscopeFuzz_snapshot(const uint8_t* data, size_t size);
extern "C" int vramscopeFuzz_nsys(const uint8_t* data, size_t size);
extern "C" int vramscopeFuzz_report(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;
using FuzzEntry = int (*)(const uint8_t*, size_t);

std::vector<fs::path> regressionInputs(const std::string& target) {
    const fs::path dir = fs::path(VRAMSCOPE_SOURCE_DIR) / "tests/fuzz/regressions" / target;
    std::vector<fs::path> files;
    if (fs::is_directory(dir)) {
        for (const auto& entry : fs::directory_iterator(dir)) {
            if (entry.is_regular_file() && entry.path().filename() != "README.md") {
                files.push_back(entry.path());
            }
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

// Runs every regression input of `target`; returns how many ran.
size_t replay(const std::string& target, FuzzEntry entry) {
    const auto files = regressionInputs(target);
    for (const auto& file : files) {
        SCOPED_TRACE(file.string());
        std::ifstream in(file, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
        EXPECT_TRUE(in.good() || in.eof()) << "cannot read " << file;
        EXPECT_EQ(entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
    }
    return files.size();
}

void replayOrSkip(const std::string& target, FuzzEntry entry) {
    if (replay(target, entry) == 0) {
        GTEST_SKIP() << "no regression inputs in tests/fuzz/regressions/" << target;
    }
}

}  // namespace

TEST(FuzzRegression, VscopeReaderSurvivesEveryRegressionInput) {
    replayOrSkip("vscope", vramscopeFuzz_vscope);
}

TEST(FuzzRegression, KinetoImporterSurvivesEveryRegressionInput) {
    replayOrSkip("kineto", vramscopeFuzz_kineto);
}

TEST(FuzzRegression, SnapshotImporterSurvivesEveryRegressionInput) {
    replayOrSkip("snapshot", vramscopeFuzz_snapshot);
}

TEST(FuzzRegression, NsysImporterSurvivesEveryRegressionInput) {
    replayOrSkip("nsys", vramscopeFuzz_nsys);
}

TEST(FuzzRegression, ReportSurvivesEveryRegressionInput) {
    replayOrSkip("report", vramscopeFuzz_report);
}

// An empty input is the first thing every fuzzer tries; each reader must refuse it cleanly.
TEST(FuzzRegression, EveryTargetAcceptsAnEmptyInput) {
    for (FuzzEntry entry : {vramscopeFuzz_vscope, vramscopeFuzz_kineto, vramscopeFuzz_snapshot,
                            vramscopeFuzz_nsys, vramscopeFuzz_report}) {
        EXPECT_EQ(entry(nullptr, 0), 0);
    }
}
