// Golden tests: a small input in, vramscope-cli's output compared with a checked-in expected file
// (tests/golden/expected/). The expected files were checked by hand against the inputs (see
// tests/golden/README.md). The real binary (VRAMSCOPE_CLI_PATH) runs with the source tree as its
// working directory, so paths in the output are relative and stable.
// The report goldens: report_*.json and report_*.txt hold the memory-peak part (the JSON's
// per-device peak fields, the text's peak table and data loss); report_*.analyses.txt and
// report_*.advice.txt hold the text's analyses and advice sections, each compared whole. A
// difference fails with a line diff. To refresh the whole-output and section goldens after an
// intended change: VRAMSCOPE_UPDATE_GOLDEN=1 build/dev/tests/cli_golden_test, then check the diff
// by hand (tests/golden/README.md) before committing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_files.h"

namespace {

namespace fs = std::filesystem;

using vramscope::testdata::readFile;

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
    Exact,    ///< the whole output
    Prefix,   ///< the output starts with the expected text (later sections are others' goldens)
    Section,  ///< one section of the text: from the line that begins with its heading to the next
              ///< blank line
    JsonSubset,  ///< every key of the expected JSON is in the output with an equal value
};

/// The section of `text` that starts with the first line beginning with `heading` and runs to the
/// line before the next empty line (or the end), with its final newline; empty when no line
/// begins with `heading`.
std::string section(const std::string& text, const std::string& heading) {
    size_t start = 0;
    if (text.compare(0, heading.size(), heading) != 0) {
        start = text.find("\n" + heading);
        if (start == std::string::npos) {
            return {};
        }
        ++start;  // past the newline that ends the line before
    }
    const size_t blank = text.find("\n\n", start);
    return blank == std::string::npos ? text.substr(start) : text.substr(start, blank + 1 - start);
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    if (!text.empty() && text.back() != '\n') {
        lines.back() += "  (no newline at end)";
    }
    return lines;
}

/// A line diff of `want` (the golden, "-") against `got` (the output, "+"), from their longest
/// common subsequence; unchanged lines are shown only next to a change ("  ... " for the rest).
/// Small texts only: O(lines of want x lines of got).
std::string lineDiff(const std::string& want, const std::string& got) {
    const std::vector<std::string> a = splitLines(want), b = splitLines(got);
    std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
    for (size_t i = a.size(); i-- > 0;) {
        for (size_t j = b.size(); j-- > 0;) {
            lcs[i][j] =
                a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
        }
    }
    std::vector<std::pair<char, std::string>> ops;
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        if (i < a.size() && j < b.size() && a[i] == b[j]) {
            ops.emplace_back(' ', a[i++]);
            ++j;
        } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
            ops.emplace_back('-', a[i++]);
        } else {
            ops.emplace_back('+', b[j++]);
        }
    }
    std::ostringstream out;
    out << "--- expected (golden)\n+++ actual (vramscope-cli)\n";
    bool skipped = false;
    for (size_t k = 0; k < ops.size(); ++k) {
        bool nearChange = false;
        for (size_t m = k >= 2 ? k - 2 : 0; m < ops.size() && m <= k + 2; ++m) {
            nearChange |= ops[m].first != ' ';
        }
        if (!nearChange) {
            out << (skipped ? "" : "  ...\n");
            skipped = true;
            continue;
        }
        skipped = false;
        out << ops[k].first << ' ' << ops[k].second << '\n';
    }
    return out.str();
}

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

/// Runs `vramscope-cli ARGS` and compares its stdout with tests/golden/expected/EXPECTEDNAME as
/// `match` says (`heading` names the section for Match::Section). With VRAMSCOPE_UPDATE_GOLDEN
/// set, Exact and Section goldens are rewritten from the output instead (and the test skips).
void expectGolden(const std::string& args, const std::string& expectedName, Match match,
                  const std::string& heading = {}) {
    const CliResult r = runCli(args);
    ASSERT_EQ(r.code, 0) << "vramscope-cli " << args << "\n" << r.err;
    const fs::path expected =
        fs::path(VRAMSCOPE_SOURCE_DIR) / "tests/golden/expected" / expectedName;
    const std::string got = match == Match::Section ? section(r.out, heading) : r.out;
    if (match == Match::Section) {
        ASSERT_FALSE(got.empty()) << "no line begins with \"" << heading
                                  << "\" in the output of vramscope-cli " << args << ":\n"
                                  << r.out;
    }
    if (std::getenv("VRAMSCOPE_UPDATE_GOLDEN") != nullptr &&
        (match == Match::Exact || match == Match::Section)) {
        std::ofstream(expected, std::ios::binary) << got;
        GTEST_SKIP() << "wrote " << expected << ": check it by hand";
    }
    ASSERT_TRUE(fs::exists(expected)) << expected;
    const std::string want = readFile(expected);
    switch (match) {
        case Match::Exact:
        case Match::Section:
            EXPECT_TRUE(got == want)
                << "vramscope-cli " << args << " differs from " << expected << "\n"
                << lineDiff(want, got);
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

TEST(CliGolden, SegmentsOfOneSampleRankAtItsPeak) {
    expectGolden("segments resources/sample/sample-rank1.vscope", "segments_sample_rank1.txt",
                 Match::Exact);
}

TEST(CliGolden, InfoOfOneSampleRank) {
    expectGolden("info resources/sample/sample-rank1.vscope", "info_sample_rank1.txt",
                 Match::Exact);
}

// The analyses report adds after the peak table: per GPU the iterations, the leak verdict with
// its numbers, the model state, the time breakdown and the idle gaps ("analyses" section), and
// the advice. Each golden's numbers were checked by hand (tests/golden/README.md).
TEST(CliGolden, AnalysesOfTheBundledSample) {
    expectGolden("report", "report_bundled_sample.analyses.txt", Match::Section,
                 "analyses (formulas in parentheses):");
}

TEST(CliGolden, AdviceOnTheBundledSample) {
    expectGolden("report", "report_bundled_sample.advice.txt", Match::Section, "advice:");
}

TEST(CliGolden, AnalysesOfAHandWrittenKinetoTrace) {
    expectGolden("report tests/golden/input/tiny_kineto.json", "report_tiny_kineto.analyses.txt",
                 Match::Section, "analyses (formulas in parentheses):");
}

TEST(CliGolden, AdviceOnAHandWrittenKinetoTrace) {
    expectGolden("report tests/golden/input/tiny_kineto.json", "report_tiny_kineto.advice.txt",
                 Match::Section, "advice:");
}

/// A small synthetic job written by `synth` into a fresh folder: 2 ranks, 6 iterations, rank 0
/// leaks 64 MiB per iteration, defaults otherwise (the options the README's checks assume).
class SynthGolden : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir =
            fs::temp_directory_path() / ("vramscope_golden_synth_" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        const CliResult r = runCli(
            "synth --ranks 2 --iterations 6 --leak-bytes-per-iteration 64MiB --leak-rank 0 "
            "--seed 3 --no-compress -o '" +
            m_dir.string() + "'");
        ASSERT_EQ(r.code, 0) << r.err;
    }
    void TearDown() override { fs::remove_all(m_dir); }
    std::string reportArgs() const { return "report '" + m_dir.string() + "'"; }
    fs::path m_dir;
};

TEST_F(SynthGolden, AnalysesOfASmallLeakingJob) {
    expectGolden(reportArgs(), "report_synth_leak.analyses.txt", Match::Section,
                 "analyses (formulas in parentheses):");
}

TEST_F(SynthGolden, AdviceOnASmallLeakingJob) {
    expectGolden(reportArgs(), "report_synth_leak.advice.txt", Match::Section, "advice:");
}

TEST(CliGolden, SectionsAreCutAtTheirHeadingAndTheNextBlankLine) {
    const std::string text = "head\n\nanalyses:\n  a\n  b\n\nadvice:\n  c\n";
    EXPECT_EQ(section(text, "analyses:"), "analyses:\n  a\n  b\n");
    EXPECT_EQ(section(text, "advice:"), "advice:\n  c\n");
    EXPECT_EQ(section(text, "head"), "head\n");
    EXPECT_EQ(section(text, "  a"), "  a\n  b\n");
    EXPECT_EQ(section(text, "missing:"), "");
    EXPECT_EQ(section("x\nadvice: none\n", "advice:"), "advice: none\n");
    EXPECT_EQ(lineDiff("x\ny\n", "x\nz\n"),
              "--- expected (golden)\n+++ actual (vramscope-cli)\n  x\n- y\n+ z\n");
}

TEST(CliGolden, ReportWithoutInputSaysItUsesTheBundledSample) {
    const CliResult r = runCli("report");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.err.find("bundled sample"), std::string::npos) << r.err;
}

TEST(CliGolden, ExitCodesOfTheRealBinary) {
    const CliResult none = runCli("");
    EXPECT_EQ(none.code, 2);
    EXPECT_NE(none.err.find("no command given"), std::string::npos) << none.err;
    const CliResult unknown = runCli("report --frobnicate");
    EXPECT_EQ(unknown.code, 2);
    EXPECT_NE(unknown.err.find("unknown option '--frobnicate'"), std::string::npos) << unknown.err;
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
