// `-` as an input: vramscope-cli reads standard input through a real shell pipe (the binary, not
// runCli in-process, so that fd 0 is a pipe as in `ssh host cat trace.json.gz | vramscope-cli
// report -`). Expected peaks come from the producer's own "Total Allocated" fields, read here
// with nlohmann-json, and from the same file given by its path.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "shell_command.h"

namespace vramscope::app::test {
namespace {

using testdata::runShell;
using testdata::ShellRun;

std::string quoted(const std::string& s) {
    return "'" + s + "'";
}

/// `cat FILE | vramscope-cli ARGS -`, standard error folded into the output on failure.
ShellRun piped(const std::string& file, const std::string& args) {
    return runShell("cat " + quoted(file) + " | " + quoted(VRAMSCOPE_CLI_PATH) + " " + args +
                    " 2>&1");
}

/// Peak of the producer's Total Allocated over the CUDA [memory] events, from the raw JSON.
int64_t producerPeakAllocated(const std::string& path) {
    const nlohmann::json doc = testdata::loadGzJson(path);
    int64_t peak = 0;
    for (const auto& e : testdata::eventsOf(doc)) {
        if (e.value("name", "") == "[memory]" && e.contains("args") &&
            e["args"].value("Device Type", -1) == 1 && e["args"].contains("Total Allocated")) {
            peak = std::max(peak, e["args"]["Total Allocated"].get<int64_t>());
        }
    }
    return peak;
}

/// report --json without the fields that name where the input came from.
nlohmann::json withoutSources(nlohmann::json j) {
    j.erase("source");
    for (auto& d : j["devices"]) {
        d.erase("file");
    }
    return j;
}

TEST(StandardInput, ReportsAGzipKinetoTraceFromAPipe) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    const int64_t expected = producerPeakAllocated(realdata::kBertTrace);
    ASSERT_GT(expected, 0);
    ShellRun r = piped(realdata::kBertTrace, "report - --json");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["source"][0], "<stdin>");
    ASSERT_EQ(j["devices"].size(), 1u);
    EXPECT_EQ(j["devices"][0]["peak_allocated_bytes"].get<int64_t>(), expected);
}

TEST(StandardInput, ReadsPlainJsonPicklesAndVscopeStreamsLikeTheirFiles) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    VRAMSCOPE_REQUIRE_INPUT(realdata::kSilmontSnapshot);
    const auto dir = tempDir();
    // Plain JSON: the bert trace unpacked.
    const std::string plain = (dir / "bert.json").string();
    std::ofstream(plain, std::ios::binary) << testdata::readGzFile(realdata::kBertTrace);
    // A .vscope stream: a synthetic job written by synth.
    ASSERT_EQ(run({"synth", "--ranks", "1", "--iterations", "6", "-o", (dir / "s").string()}).code,
              0);
    const std::string vscope = (dir / "s" / "rank0.vscope").string();
    ASSERT_TRUE(std::filesystem::exists(vscope));
    for (const std::string& file : {plain, realdata::kSilmontSnapshot, vscope}) {
        SCOPED_TRACE(file);
        ShellRun fromPipe = piped(file, "report - --json");
        ASSERT_EQ(fromPipe.code, 0) << fromPipe.out;
        CliRun fromFile = run({"report", file, "--json"});
        ASSERT_EQ(fromFile.code, 0) << fromFile.err;
        EXPECT_EQ(withoutSources(nlohmann::json::parse(fromPipe.out)),
                  withoutSources(nlohmann::json::parse(fromFile.out)));
    }
    EXPECT_EQ(withoutSources(nlohmann::json::parse(
                  piped(plain, "report - --json").out))["devices"][0]["peak_allocated_bytes"]
                  .get<int64_t>(),
              producerPeakAllocated(realdata::kBertTrace));
    std::filesystem::remove_all(dir);
}

TEST(StandardInput, JsonAfterMoreBlankThanTheProbeStillOpens) {
    // 3000 blanks, a pause (so the first reads hold blanks only), then the trace: JSON may start
    // with any amount of whitespace, so the first bytes alone do not refuse it.
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    ShellRun r = runShell("{ head -c 3000 /dev/zero | tr '\\0' ' '; sleep 0.3; gzip -dc " +
                          quoted(realdata::kBertTrace) + "; } | " + quoted(VRAMSCOPE_CLI_PATH) +
                          " report - --json 2>&1");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)["devices"][0]["peak_allocated_bytes"].get<int64_t>(),
              producerPeakAllocated(realdata::kBertTrace));
}

TEST(StandardInput, JsonWithAByteOrderMarkOpens) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    ShellRun r = runShell("{ printf '\\357\\273\\277'; gzip -dc " + quoted(realdata::kBertTrace) +
                          "; } | " + quoted(VRAMSCOPE_CLI_PATH) + " report - --json 2>&1");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)["devices"][0]["peak_allocated_bytes"].get<int64_t>(),
              producerPeakAllocated(realdata::kBertTrace));
}

TEST(StandardInput, NamesStandardInputWhenItCannotBeRead) {
    ShellRun garbage =
        runShell("echo 'not a trace' | " + quoted(VRAMSCOPE_CLI_PATH) + " report - 2>&1");
    EXPECT_EQ(garbage.code, 3);
    EXPECT_NE(garbage.out.find("cannot read <stdin>"), std::string::npos) << garbage.out;
    ShellRun empty = runShell(quoted(VRAMSCOPE_CLI_PATH) + " report - </dev/null 2>&1");
    EXPECT_EQ(empty.code, 3);
    EXPECT_NE(empty.out.find("<stdin>"), std::string::npos) << empty.out;
    EXPECT_NE(empty.out.find("nothing to read"), std::string::npos) << empty.out;
    // Endless content no reader takes is refused from its first bytes, not read to the limit.
    ShellRun endless = runShell("yes | " + quoted(VRAMSCOPE_CLI_PATH) + " report - 2>&1");
    EXPECT_EQ(endless.code, 3);
    EXPECT_NE(endless.out.find("unsupported format"), std::string::npos) << endless.out;
    // Endless blanks, and endless content inside gzip, are refused too (from their start).
    ShellRun blanks =
        runShell("yes ' ' | timeout 60 " + quoted(VRAMSCOPE_CLI_PATH) + " report - 2>&1");
    EXPECT_EQ(blanks.code, 3) << blanks.out;
    EXPECT_NE(blanks.out.find("are blank"), std::string::npos) << blanks.out;
    ShellRun gzipped =
        runShell("yes | gzip -1 | timeout 60 " + quoted(VRAMSCOPE_CLI_PATH) + " report - 2>&1");
    EXPECT_EQ(gzipped.code, 3) << gzipped.out;
    EXPECT_NE(gzipped.out.find("unsupported format"), std::string::npos) << gzipped.out;
    ShellRun tar = runShell("tar -C " + quoted(std::string(VRAMSCOPE_SOURCE_DIR)) +
                            " -cf - README.md | " + quoted(VRAMSCOPE_CLI_PATH) + " report - 2>&1");
    EXPECT_EQ(tar.code, 3);
    EXPECT_NE(tar.out.find("give the archive's path"), std::string::npos) << tar.out;
    ShellRun tarGz =
        runShell("tar -C " + quoted(std::string(VRAMSCOPE_SOURCE_DIR)) + " -czf - README.md | " +
                 quoted(VRAMSCOPE_CLI_PATH) + " report - 2>&1");
    EXPECT_EQ(tarGz.code, 3);
    EXPECT_NE(tarGz.out.find("give the archive's path"), std::string::npos) << tarGz.out;
    ShellRun damagedGzip = runShell("printf '\\037\\213\\010\\000garbage' | " +
                                    quoted(VRAMSCOPE_CLI_PATH) + " report - 2>&1");
    EXPECT_EQ(damagedGzip.code, 3);
    EXPECT_NE(damagedGzip.out.find("gzip"), std::string::npos) << damagedGzip.out;
    ShellRun twice = runShell(quoted(VRAMSCOPE_CLI_PATH) + " report - - </dev/null 2>&1");
    EXPECT_EQ(twice.code, 3);
    EXPECT_NE(twice.out.find("only once"), std::string::npos) << twice.out;
}

}  // namespace
}  // namespace vramscope::app::test
