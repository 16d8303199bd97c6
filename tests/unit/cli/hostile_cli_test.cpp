// vramscope-cli on hostile input: the new data-loss counters in info, report and check; the
// --max-input-gib global option (applied to an archive member whose header claims 3 GiB).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_command.h"
#include "cli_run.h"
#include "tar_header.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;
using vramscope_test::tarHeader;

namespace fs = std::filesystem;

/// 50 epoch-microsecond kernels, one kernel at ts 0, a [memory] event of 4 EiB with totals of
/// 4 EiB (device 0) and one of 512 B (device 1).
std::string hostileJson() {
    std::string events;
    for (int i = 0; i < 50; ++i) {
        events += R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":)" +
                  std::to_string(1'700'000'000'000'000 + i * 100) +
                  R"(,"dur":5,"args":{"device":0,"stream":7}},)";
    }
    events += R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":0,"dur":5,
                  "args":{"device":0,"stream":7}},
      {"ph":"i","name":"[memory]","pid":7,"tid":7,"ts":1700000000000010,
       "args":{"Device Type":1,"Device Id":0,"Addr":4096,"Bytes":4611686018427387904,
               "Total Allocated":4611686018427387904,"Total Reserved":4611686018427387904}},
      {"ph":"i","name":"[memory]","pid":7,"tid":7,"ts":1700000000000020,
       "args":{"Device Type":1,"Device Id":1,"Addr":8192,"Bytes":512,"Total Allocated":512,
               "Total Reserved":2048}})";
    return "{\"traceEvents\":[" + events + "]}";
}

TEST(HostileCli, InfoReportAndCheckShowTheOutOfRangeCounters) {
    const fs::path dir = tempDir();
    const std::string path = (dir / "hostile.json").string();
    std::ofstream(path) << hostileJson();
    const CliRun info = run({"info", path});
    ASSERT_EQ(info.code, kExitSuccess) << info.err;
    EXPECT_NE(info.out.find("sizes_out_of_range = 3 [error]"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("times_out_of_span = 1 [error]"), std::string::npos) << info.out;
    // The span runs over the 50 kernels (last end 49 x 100 us + 5 us after the first start),
    // not from 0.
    EXPECT_NE(info.out.find("time span:    1700000000000000000 .. 1700000000004905000 ns"),
              std::string::npos)
        << info.out;
    const CliRun report = run({"report", path});
    ASSERT_EQ(report.code, kExitSuccess) << report.err;
    EXPECT_NE(report.out.find(path + ": sizes_out_of_range = 3"), std::string::npos);
    EXPECT_NE(report.out.find(path + ": times_out_of_span = 1"), std::string::npos);
    EXPECT_EQ(report.out.find("EiB"), std::string::npos) << "no 4 EiB peak:\n" << report.out;
    const CliRun check = run({"check", path});
    EXPECT_NE(check.out.find("DATA LOSS " + path + ": sizes_out_of_range"), std::string::npos)
        << check.out;
    fs::remove_all(dir);
}

TEST(HostileCli, MaxInputGibLimitsWhatIsRead) {
    const fs::path dir = tempDir();
    const std::string tar = (dir / "big.tar").string();
    std::ofstream(tar, std::ios::binary) << tarHeader("big.json", 3ull << 30);
    const CliRun limited = run({"--max-input-gib", "1", "info", tar});
    EXPECT_EQ(limited.code, kExitUnreadable);
    EXPECT_NE(limited.err.find(tar + ":big.json"), std::string::npos) << limited.err;
    EXPECT_NE(limited.err.find("larger than the limit of 1073741824 bytes"), std::string::npos)
        << limited.err;
    // Under the default (16 GiB) the 3 GiB header passes, and the missing data is the error.
    const CliRun byDefault = run({"info", tar});
    EXPECT_EQ(byDefault.code, kExitUnreadable);
    EXPECT_EQ(byDefault.err.find("larger than the limit"), std::string::npos) << byDefault.err;
    const CliRun equals = run({"--max-input-gib=1", "info", tar});
    EXPECT_NE(equals.err.find("1073741824"), std::string::npos) << equals.err;
    for (const char* bad : {"0", "x", "-1", "1.5"}) {
        const CliRun r = run({"--max-input-gib", bad, "info", tar});
        EXPECT_EQ(r.code, kExitUsage) << bad;
        EXPECT_NE(r.err.find("--max-input-gib needs a whole number"), std::string::npos) << r.err;
    }
    EXPECT_EQ(run({"--max-input-gib"}).code, kExitUsage);
    const CliRun help = run({"--help"});
    EXPECT_NE(help.out.find("--max-input-gib N"), std::string::npos);
    EXPECT_NE(help.out.find("VRAMSCOPE_MAX_INPUT_GIB"), std::string::npos);
    fs::remove_all(dir);
}

// A VRAMSCOPE_MAX_INPUT_GIB that is no number is a usage error for a command that reads input,
// unless --max-input-gib overrides it; help reads nothing and is not refused. Giving the global
// option after the command says where it belongs.
TEST(HostileCli, ABadLimitInTheEnvironmentIsAUsageErrorUnlessTheOptionOverridesIt) {
    const fs::path dir = tempDir();
    const std::string json = (dir / "t.json").string();
    std::ofstream(json) << hostileJson();
    ASSERT_EQ(setenv("VRAMSCOPE_MAX_INPUT_GIB", "abc", 1), 0);
    const CliRun refused = run({"info", json});
    const CliRun overridden = run({"--max-input-gib", "2", "info", json});
    const CliRun help = run({"--help"});
    unsetenv("VRAMSCOPE_MAX_INPUT_GIB");
    EXPECT_EQ(refused.code, kExitUsage);
    EXPECT_NE(refused.err.find("VRAMSCOPE_MAX_INPUT_GIB: must be a whole number"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(overridden.code, kExitSuccess) << overridden.err;
    EXPECT_EQ(help.code, kExitSuccess);
    const CliRun late = run({"info", "--max-input-gib", "1", json});
    EXPECT_EQ(late.code, kExitUsage);
    EXPECT_NE(late.err.find("global option: give it before the command"), std::string::npos)
        << late.err;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace vramscope::app
