// `check --advice slow-down` and `synth --slow-down` in-process: FAIL on a synthetic job whose
// all-reduce lasts 1 ms longer every iteration, PASS on the steady one, NOT CHECKED with too few
// iterations. Figures from synthetic_job.h's formulas (see slow_down_test.cpp for the working).
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_command.h"
#include "cli_run.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

TEST(SlowDownCli, CheckFailsOnAGrowingAllReduceAndPassesOnASteadyJob) {
    const fs::path dir = tempDir();
    const std::string slow = (dir / "slow").string(), steady = (dir / "steady").string(),
                      few = (dir / "few").string();
    ASSERT_EQ(run({"synth", "--ranks", "2", "--iterations", "14", "--slow-down", "all-reduce", "-o",
                   slow})
                  .code,
              kExitSuccess);
    ASSERT_EQ(run({"synth", "--ranks", "2", "--iterations", "14", "-o", steady}).code,
              kExitSuccess);
    ASSERT_EQ(run({"synth", "--ranks", "1", "--iterations", "5", "-o", few}).code, kExitSuccess);

    // Periods P + i ms, P = 19.2 + 5.37 + 1 ms: early median P + 2.5 ms = 28.1 ms, late P + 10.5
    // ms = 36.1 ms, growth 8 ms, all of it in the all-reduce's transfer.
    CliRun r = run({"check", "--advice", "slow-down", slow});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("FAIL slow-down: rank 0 GPU 0: iterations after the warm-up: median of "
                         "the first 4 28.1 ms, of the last 4 36.1 ms: +8.00 ms (+28.5 %) > "
                         "noise 4.45 ms"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("FAIL slow-down: rank 1 GPU 1"), std::string::npos) << r.out;

    r = run({"check", "--advice", "slow-down", steady});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("PASS slow-down: rank 0 GPU 0"), std::string::npos) << r.out;

    r = run({"check", "--advice", "slow-down", few});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED slow-down"), std::string::npos) << r.out;

    // A rule list with an empty or unknown name is a usage error, not a silent subset.
    for (const char* bad : {"slow-down,", ",slow-down", "slow-down,,host-memory", "Slow-Down"}) {
        r = run({"check", "--advice", bad, steady});
        EXPECT_EQ(r.code, kExitUsage) << bad;
        EXPECT_NE(r.err.find("--advice"), std::string::npos) << r.err;
    }

    r = run({"report", slow});
    EXPECT_EQ(r.code, kExitSuccess);
    EXPECT_NE(r.out.find("communication transfer +8.00 ms of it"), std::string::npos) << r.out;

    EXPECT_EQ(run({"synth", "--ranks", "2", "--iterations", "4", "--slow-down", "sideways", "-o",
                   (dir / "bad").string()})
                  .code,
              kExitUsage);
    EXPECT_EQ(run({"synth", "--ranks", "2", "--iterations", "4", "--slow-down", "straggler", "-o",
                   (dir / "bad").string()})
                  .code,
              kExitUsage);  // no --straggler-rank
    fs::remove_all(dir);
}

}  // namespace
}  // namespace vramscope::app
