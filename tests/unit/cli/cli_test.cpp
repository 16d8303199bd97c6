// vramscope-cli commands run in-process (runCli), with their exit codes, messages and outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "cli_refusal.h"
#include "cli_run.h"
#include "test_files.h"
#include "vramscope/bundled_sample.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

/// A fresh directory under the test temp dir, removed at the end of the test.
class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = fs::temp_directory_path() / ("vramscope_cli_test_" + std::string(info->name()) +
                                              "_" + std::to_string(::getpid()));
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~TempDir() { fs::remove_all(m_path); }
    std::string operator/(const std::string& name) const { return (m_path / name).string(); }
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

using testdata::readFile;

TEST(Cli, NoCommandOrUnknownCommandIsAUsageError) {
    auto r = run({});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("usage: vramscope-cli COMMAND"), std::string::npos);
    r = run({"frobnicate"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos);
    r = run({"--help"});
    EXPECT_EQ(r.code, kExitSuccess);
    EXPECT_NE(r.out.find("report"), std::string::npos);
}

TEST(Cli, EverySubcommandAnswersHelpOnStdout) {
    for (const char* command : {"info", "report", "synth", "convert"}) {
        const auto r = run({command, "--help"});
        EXPECT_EQ(r.code, kExitSuccess) << command;
        EXPECT_EQ(r.out.rfind(std::string("usage: vramscope-cli ") + command, 0), 0u) << r.out;
        EXPECT_NE(r.out.find("-h, --help"), std::string::npos);
        EXPECT_TRUE(r.err.empty());
    }
}

TEST(Cli, UnknownOptionGivesUsageOnStderrAndExitTwo) {
    for (const char* command : {"info", "report", "synth", "convert"}) {
        const auto r = run({command, "--no-such-option"});
        EXPECT_EQ(r.code, kExitUsage) << command;
        EXPECT_NE(r.err.find("unknown option '--no-such-option'"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(std::string("usage: vramscope-cli ") + command), std::string::npos);
        EXPECT_TRUE(r.out.empty());
    }
}

TEST(Cli, BadOrMissingValuesAreUsageErrors) {
    EXPECT_TRUE(test::refusedRun({"synth", "--ranks"}, kExitUsage, {"--ranks needs a value"}));
    EXPECT_TRUE(test::refusedRun({"synth", "--ranks", "x", "--iterations", "1", "-o", "o.vscope"},
                                 kExitUsage, {"--ranks needs an integer from 1 to", "not 'x'"}));
    EXPECT_TRUE(test::refusedRun({"synth", "--ranks", "0", "--iterations", "1", "-o", "o.vscope"},
                                 kExitUsage, {"--ranks needs an integer from 1 to", "not '0'"}));
    EXPECT_TRUE(test::refusedRun({"synth", "--iterations", "1", "-o", "o.vscope"}, kExitUsage,
                                 {"--ranks is required"}));
    EXPECT_TRUE(test::refusedRun({"synth", "--ranks", "1", "--iterations", "1"}, kExitUsage,
                                 {"-o OUT is required"}));
    EXPECT_TRUE(test::refusedRun({"synth", "--ranks", "1", "--iterations", "1",
                                  "--leak-bytes-per-iteration", "12XB", "-o", "o.vscope"},
                                 kExitUsage,
                                 {"--leak-bytes-per-iteration needs a byte count", "not '12XB'"}));
    EXPECT_TRUE(
        test::refusedRun({"report", "--json=yes"}, kExitUsage, {"option --json takes no value"}));
    EXPECT_TRUE(test::refusedRun({"info"}, kExitUsage, {"no input given"}));
    EXPECT_TRUE(test::refusedRun({"convert", "in.json"}, kExitUsage, {"-o OUT is required"}));
}

TEST(Cli, MissingFileIsUnreadableInputNamingTheFile) {
    TempDir dir;
    const std::string missing = dir / "no-such-file.vscope";
    for (const char* command : {"info", "report"}) {
        const auto r = run({command, missing});
        EXPECT_EQ(r.code, kExitUnreadable) << command;
        EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty());
    }
    EXPECT_TRUE(test::refusedRun({"convert", missing, "-o", dir / "out"}, kExitUnreadable,
                                 {"cannot read", missing}));
}

TEST(Cli, GarbageFileIsUnreadableInputNamingTheFile) {
    TempDir dir;
    const std::string garbage = dir / "garbage.vscope";
    {
        std::ofstream f(garbage, std::ios::binary);
        for (int i = 0; i < 4096; ++i) {
            f.put(static_cast<char>((i * 7919 + 13) & 0xff));
        }
    }
    for (const char* command : {"info", "report"}) {
        const auto r = run({command, garbage});
        EXPECT_EQ(r.code, kExitUnreadable) << command;
        EXPECT_NE(r.err.find(garbage), std::string::npos) << r.err;
    }
    const std::string empty = dir / "empty.vscope";
    std::ofstream(empty).close();
    const auto r = run({"report", "--json", empty});
    EXPECT_EQ(r.code, kExitUnreadable);
    EXPECT_NE(r.err.find(empty), std::string::npos) << r.err;
}

TEST(Cli, OneUnreadableInputFailsTheJobUnlessKeepGoing) {
    TempDir dir;
    ASSERT_EQ(run({"synth", "--ranks", "1", "--iterations", "2", "-o", dir / "a.vscope"}).code,
              kExitSuccess);
    const std::string missing = dir / "missing.vscope";
    auto r = run({"report", dir / "a-rank0.vscope", missing});
    EXPECT_EQ(r.code, kExitUnreadable);
    EXPECT_NE(r.err.find(missing), std::string::npos);
    r = run({"report", "--json", "--keep-going", dir / "a-rank0.vscope", missing});
    EXPECT_EQ(r.code, kExitSuccess) << r.err;
    EXPECT_NE(r.err.find(missing), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(r.out)["devices"].size(), 1u);
}

TEST(Cli, CutFileIsReportedAsDataLossNotAsUnreadable) {
    TempDir dir;
    const std::string whole =
        readFile(std::string(VRAMSCOPE_SOURCE_DIR) + "/resources/sample/sample-rank1.vscope");
    const std::string cut = dir / "cut-rank1.vscope";
    std::ofstream(cut, std::ios::binary) << whole.substr(0, whole.size() / 2);
    const auto r = run({"report", "--json", cut});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j["data_loss"].empty());
    EXPECT_EQ(j["data_loss"][0]["file"], cut);
    EXPECT_EQ(j["data_loss"][0]["rank"], 1);
    // The registry's counter for a cut file: its name, kind and description.
    EXPECT_EQ(j["data_loss"][0]["name"], "truncated_bytes");
    EXPECT_EQ(j["data_loss"][0]["kind"], "data_loss");
    EXPECT_NE(j["data_loss"][0]["description"].get<std::string>().find("cut"), std::string::npos);
    const auto info = run({"info", cut});
    ASSERT_EQ(info.code, kExitSuccess) << info.err;
    EXPECT_NE(info.out.find("INCOMPLETE"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("truncated_bytes = "), std::string::npos) << info.out;
}

TEST(Cli, ParsesByteCountsWithDecimalUnits) {
    // KB, MB, GB, TB are powers of 1000 (SI); B is bytes.
    EXPECT_EQ(parseByteCount("141GB"), 141'000'000'000ull);
    EXPECT_EQ(parseByteCount("12MB"), 12'000'000u);
    EXPECT_EQ(parseByteCount("3KB"), 3000u);
    EXPECT_EQ(parseByteCount("2TB"), 2'000'000'000'000ull);
    EXPECT_EQ(parseByteCount("512B"), 512u);
    EXPECT_EQ(parseByteCount("80 GiB"), 80ull << 30);
    EXPECT_FALSE(parseByteCount("20000000TB"));  // 2e19 overflows 64 bits
}

TEST(Cli, ParsesByteCountsWithBinaryUnits) {
    EXPECT_EQ(parseByteCount("0"), 0u);
    EXPECT_EQ(parseByteCount("1048576"), 1048576u);
    EXPECT_EQ(parseByteCount("64KiB"), 64u << 10);
    EXPECT_EQ(parseByteCount("512MiB"), 512u << 20);
    EXPECT_EQ(parseByteCount("2G"), 2ull << 30);
    EXPECT_EQ(parseByteCount("1TiB"), 1ull << 40);
    EXPECT_FALSE(parseByteCount(""));
    EXPECT_FALSE(parseByteCount("-1"));
    EXPECT_FALSE(parseByteCount("12MiB "));
    EXPECT_FALSE(parseByteCount("12mb"));
    EXPECT_FALSE(parseByteCount("99999999999999999999"));
    EXPECT_FALSE(parseByteCount("17179869184T"));  // 2^34 TiB overflows 64 bits
    EXPECT_EQ(parseInteger("-1"), -1);
    EXPECT_FALSE(parseInteger("1x"));
}

TEST(Cli, FormatsBytesInBinaryUnits) {
    EXPECT_EQ(formatBytes(0), "0 B");
    EXPECT_EQ(formatBytes(999), "999 B");
    EXPECT_EQ(formatBytes(1023), "0.999 KiB");  // never four digits of a unit
    EXPECT_EQ(formatBytes(1024), "1.00 KiB");
    EXPECT_EQ(formatBytes(3ull << 29), "1.50 GiB");
    EXPECT_EQ(formatBytes(80ull << 30), "80.0 GiB");
    EXPECT_EQ(formatPercent(18, 80), "22.5 %");
    EXPECT_EQ(formatPercent(1, 0), "");
    EXPECT_EQ(formatDuration(850), "850 ns");
    EXPECT_EQ(formatDuration(1'500), "1.50 us");
    EXPECT_EQ(formatDuration(12'200'000), "12.2 ms");
    EXPECT_EQ(formatDuration(3'042'000'000), "3.04 s");
}

TEST(Cli, OutputNamesFollowTheDocumentedRule) {
    EXPECT_EQ(outputPathFor("run.vscope", "rank3"), "run-rank3.vscope");
    EXPECT_EQ(outputPathFor("/a/b/job.vscope", "rank0"), "/a/b/job-rank0.vscope");
    EXPECT_EQ(outputPathFor("/a/out", "rank12"), "/a/out/rank12.vscope");
    EXPECT_EQ(outputPathFor("/a/out/", "file2"), "/a/out/file2.vscope");
}

TEST(Cli, SynthWritesOneFilePerRankIntoADirectory) {
    TempDir dir;
    const std::string out = dir / "job";
    const auto r = run({"synth", "--ranks", "3", "--iterations", "2", "-o", out});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    for (int i = 0; i < 3; ++i) {
        const std::string path = out + "/rank" + std::to_string(i) + ".vscope";
        EXPECT_TRUE(fs::exists(path)) << path;
        EXPECT_NE(r.out.find(path), std::string::npos);
    }
    const auto report = run({"report", "--json", out});
    ASSERT_EQ(report.code, kExitSuccess) << report.err;
    const auto j = nlohmann::json::parse(report.out);
    ASSERT_EQ(j["devices"].size(), 3u);
    EXPECT_EQ(j["source"].size(), 3u);
    EXPECT_EQ(j["devices"][2]["rank"], 2);
    EXPECT_EQ(j["devices"][2]["device"], 2);  // device index = local rank
    EXPECT_TRUE(j["data_loss"].is_array());
}

TEST(Cli, SynthActivationBytesSizesTheSawtooth) {
    TempDir dir;
    const auto r = run({"synth", "--ranks", "1", "--iterations", "2", "--activation-bytes",
                        "100MiB", "-o", dir / "a.vscope"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto report = run({"report", "--json", dir / "a-rank0.vscope"});
    ASSERT_EQ(report.code, kExitSuccess) << report.err;
    const auto d = nlohmann::json::parse(report.out)["devices"][0];
    // synthetic_job.h: peak allocated = W + O + A x a = 4 GiB + 8 GiB + 24 x 100 MiB, and reserved
    // rounds it up to whole 2 GiB segments: 14688 MiB -> 16 GiB.
    const uint64_t mib = 1ull << 20;
    EXPECT_EQ(d["peak_allocated_bytes"].get<uint64_t>(), 4096 * mib + 8192 * mib + 24 * 100 * mib);
    EXPECT_EQ(d["peak_reserved_bytes"].get<uint64_t>(), 16384 * mib);
    EXPECT_EQ(run({"synth", "--ranks", "1", "--iterations", "1", "--activation-bytes", "0", "-o",
                   dir / "z.vscope"})
                  .code,
              kExitUsage);
}

TEST(Cli, SynthEventsOptionSizesTheJob) {
    TempDir dir;
    const auto r =
        run({"synth", "--ranks", "2", "--events", "20000", "--no-compress", "-o", dir / "b"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto info = run({"info", "--json", dir / "b"});
    ASSERT_EQ(info.code, kExitSuccess) << info.err;
    uint64_t events = 0;
    const auto j = nlohmann::json::parse(info.out);
    for (const auto& t : j["traces"]) {
        events += t["event_total"].get<uint64_t>();
    }
    EXPECT_GE(events, 20000u);
    EXPECT_LT(events, 20000u + 2 * 101 + 20);  // at most one more iteration of both ranks
}

TEST(Cli, ConvertKeepsTheReportOfAJob) {
    TempDir dir;
    ASSERT_EQ(run({"synth", "--ranks", "2", "--iterations", "4", "--leak-bytes-per-iteration",
                   "1MiB", "-o", dir / "in.vscope"})
                  .code,
              kExitSuccess);
    const auto converted = run(
        {"convert", dir / "in-rank0.vscope", dir / "in-rank1.vscope", "-o", dir / "out.vscope"});
    ASSERT_EQ(converted.code, kExitSuccess) << converted.err;
    EXPECT_TRUE(fs::exists(dir / "out-rank0.vscope"));
    EXPECT_TRUE(fs::exists(dir / "out-rank1.vscope"));
    auto devices = [](const CliRun& r) {
        auto j = nlohmann::json::parse(r.out)["devices"];
        for (auto& d : j) {
            d.erase("file");
        }
        return j;
    };
    const auto a = run({"report", "--json", dir / "in-rank0.vscope", dir / "in-rank1.vscope"});
    const auto b = run({"report", "--json", dir / "out-rank0.vscope", dir / "out-rank1.vscope"});
    ASSERT_EQ(a.code, kExitSuccess);
    ASSERT_EQ(b.code, kExitSuccess);
    EXPECT_EQ(devices(a), devices(b));
}

TEST(Cli, ReportWithoutInputReportsTheBundledSample) {
    const auto r = run({"report", "--json"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    EXPECT_NE(r.err.find("bundled sample"), std::string::npos);
    const auto j = nlohmann::json::parse(r.out);
    // The sample's command (resources/README.md): 4 ranks, 10 iterations, rank 1 leaking 512 MiB
    // per iteration; defaults W = 4 GiB, O = 8 GiB, 24 activations of 256 MiB, 2 GiB segments.
    ASSERT_EQ(j["devices"].size(), 4u);
    const int64_t GiB = int64_t{1} << 30;
    for (int r = 0; r < 4; ++r) {
        const auto& d = j["devices"][static_cast<size_t>(r)];
        EXPECT_EQ(d["rank"], r);
        EXPECT_EQ(d["capacity_bytes"], 80 * GiB);
        const int64_t peak = 12 * GiB + 24 * (GiB / 4) + (r == 1 ? 10 * (GiB / 2) : 0);
        EXPECT_EQ(d["peak_allocated_bytes"], peak) << r;
        EXPECT_EQ(d["peak_reserved_bytes"], (peak + 2 * GiB - 1) / (2 * GiB) * (2 * GiB)) << r;
    }
    EXPECT_EQ(j["source"][0], "bundled:sample-rank0.vscope");
}

TEST(BundledSample, EmbeddedBytesAreTheCheckedInFiles) {
    const auto& files = bundledSampleTraces();
    ASSERT_EQ(files.size(), 4u);
    for (size_t i = 0; i < files.size(); ++i) {
        const std::string name = "sample-rank" + std::to_string(i) + ".vscope";
        EXPECT_EQ(files[i].name, name);
        EXPECT_EQ(files[i].bytes,
                  readFile(std::string(VRAMSCOPE_SOURCE_DIR) + "/resources/sample/" + name));
    }
    auto job = openBundledSample();
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 4u);
    EXPECT_EQ(job->ranks[3].trace.data.header.rank, trace::RankId{3});
    EXPECT_TRUE(job->ranks[3].trace.report.complete);
}

TEST(BundledSample, RegeneratingGivesTheSameBytes) {
    // The command of resources/README.md, run again.
    TempDir dir;
    const auto r = run({"synth", "--ranks", "4", "--iterations", "10", "--leak-bytes-per-iteration",
                        "512MiB", "--leak-rank", "1", "--straggler-rank", "3", "--seed", "1",
                        "--no-compress", "-o", dir / "sample.vscope"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    for (int i = 0; i < 4; ++i) {
        const std::string name = "sample-rank" + std::to_string(i) + ".vscope";
        const std::string fresh = readFile(dir / name);
        const std::string checkedIn =
            readFile(std::string(VRAMSCOPE_SOURCE_DIR) + "/resources/sample/" + name);
        ASSERT_FALSE(fresh.empty());
        EXPECT_TRUE(fresh == checkedIn)
            << name << " differs from a fresh `synth` run; see resources/README.md";
    }
}

}  // namespace
}  // namespace vramscope::app
