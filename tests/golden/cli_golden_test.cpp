// Golden tests: a small input in, vramscope-cli's output compared with a checked-in expected file
// (tests/golden/expected/). The expected files were checked by hand against the inputs (see
// tests/golden/README.md). The real binary (VRAMSCOPE_CLI_PATH) runs with the source tree as its
// working directory, so paths in the output are relative and stable.
// The report goldens hold the memory-peak part only (the JSON's per-device peak fields, the text's
// peak table and data loss): the analyses that report adds after them have goldens of their own.
// To refresh an exact golden after an intended change: VRAMSCOPE_UPDATE_GOLDEN=1 ./cli_golden_test,
// then check the diff by hand before committing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

struct CliResult {
    int code = -1;
    std::string out;
    std::string err;
};

/// Runs `vramscope-cli ARGS` in the source directory (ARGS is shell text, all ours).
CliResult runCli(const std::string& args) {
    const fs::path tmp =
        fs::temp_directory_path() / ("vramscope_golden_" + std::to_string(::getpid()));
    fs::create_directories(tmp);
    const std::string cmd = std::string("cd '") + VRAMSCOPE_SOURCE_DIR + "' && '" +
                            VRAMSCOPE_CLI_PATH + "' " + args + " > '" + (tmp / "out").string() +
                            "' 2> '" + (tmp / "err").string() + "'";
    const int status = std::system(cmd.c_str());
    CliResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readFile(tmp / "out");
    r.err = readFile(tmp / "err");
    fs::remove_all(tmp);
    return r;
}

/// How an expected file is compared with the output.
enum class Match {
    Exact,       ///< the whole output
    Prefix,      ///< the output starts with the expected text (later sections are others' goldens)
    JsonSubset,  ///< every key of the expected JSON is in the output with an equal value
};

/// True when every member of `expected` (recursively through objects; arrays element-wise, same
/// length) is in `actual` with the same value. `where` collects the path of the first mismatch.
bool jsonSubset(const nlohmann::json& expected, const nlohmann::json& actual, std::string& where) {
    if (expected.is_object()) {
        if (!actual.is_object()) {
            return false;
        }
        for (const auto& [key, value] : expected.items()) {
            if (!actual.contains(key) || !jsonSubset(value, actual[key], where)) {
                where = "/" + key + where;
                return false;
            }
        }
        return true;
    }
    if (expected.is_array()) {
        if (!actual.is_array() || actual.size() != expected.size()) {
            return false;
        }
        for (size_t i = 0; i < expected.size(); ++i) {
            if (!jsonSubset(expected[i], actual[i], where)) {
                where = "/" + std::to_string(i) + where;
                return false;
            }
        }
        return true;
    }
    return expected == actual;
}

void expectGolden(const std::string& args, const std::string& expectedName, Match match) {
    const CliResult r = runCli(args);
    ASSERT_EQ(r.code, 0) << "vramscope-cli " << args << "\n" << r.err;
    const fs::path expected =
        fs::path(VRAMSCOPE_SOURCE_DIR) / "tests/golden/expected" / expectedName;
    if (std::getenv("VRAMSCOPE_UPDATE_GOLDEN") != nullptr && match == Match::Exact) {
        std::ofstream(expected, std::ios::binary) << r.out;
        GTEST_SKIP() << "wrote " << expected << ": check it by hand";
    }
    ASSERT_TRUE(fs::exists(expected)) << expected;
    const std::string want = readFile(expected);
    switch (match) {
        case Match::Exact:
            EXPECT_EQ(r.out, want) << "vramscope-cli " << args << " differs from " << expected;
            break;
        case Match::Prefix:
            EXPECT_EQ(r.out.substr(0, want.size()), want)
                << "vramscope-cli " << args << " does not start with " << expected;
            break;
        case Match::JsonSubset: {
            const auto actual = nlohmann::json::parse(r.out, nullptr, false);
            ASSERT_FALSE(actual.is_discarded()) << r.out;
            std::string where;
            EXPECT_TRUE(jsonSubset(nlohmann::json::parse(want), actual, where))
                << "vramscope-cli " << args << ": " << where << " differs from " << expected;
            break;
        }
    }
}

TEST(CliGolden, ReportOfAHandWrittenKinetoTraceAsJson) {
    expectGolden("report --json tests/golden/input/tiny_kineto.json", "report_tiny_kineto.json",
                 Match::JsonSubset);
}

TEST(CliGolden, ReportOfAHandWrittenKinetoTraceAsText) {
    expectGolden("report tests/golden/input/tiny_kineto.json", "report_tiny_kineto.txt",
                 Match::Prefix);
}

TEST(CliGolden, ReportOfTheBundledSampleAsJson) {
    expectGolden("report --json", "report_bundled_sample.json", Match::JsonSubset);
}

TEST(CliGolden, ReportOfTheBundledSampleAsText) {
    expectGolden("report", "report_bundled_sample.txt", Match::Prefix);
}

TEST(CliGolden, InfoOfOneSampleRank) {
    expectGolden("info resources/sample/sample-rank1.vscope", "info_sample_rank1.txt",
                 Match::Exact);
}

TEST(CliGolden, ReportWithoutInputSaysItUsesTheBundledSample) {
    const CliResult r = runCli("report");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.err.find("bundled sample"), std::string::npos) << r.err;
}

TEST(CliGolden, ExitCodesOfTheRealBinary) {
    EXPECT_EQ(runCli("").code, 2);
    EXPECT_EQ(runCli("report --frobnicate").code, 2);
    const CliResult missing = runCli("report tests/golden/input/no-such-file.json");
    EXPECT_EQ(missing.code, 3);
    EXPECT_NE(missing.err.find("tests/golden/input/no-such-file.json"), std::string::npos);
    // A source file is no trace: unreadable input, with the file named.
    const CliResult garbage = runCli("info tests/golden/cli_golden_test.cpp");
    EXPECT_EQ(garbage.code, 3);
    EXPECT_NE(garbage.err.find("tests/golden/cli_golden_test.cpp"), std::string::npos)
        << garbage.err;
    EXPECT_EQ(runCli("synth --help").code, 0);
}

}  // namespace
