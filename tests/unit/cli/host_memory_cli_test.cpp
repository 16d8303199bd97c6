// check --advice host-memory and report --json on synthetic jobs written by `synth` (expected
// figures from the spec's formulas, synthetic_job.h) and on a real PyTorch profile.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_paths.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

/// Writes one synthetic rank of 8 iterations; `hostGrowth` empty = no host counter.
std::string synth(const fs::path& dir, const std::string& name, const std::string& hostGrowth) {
    std::vector<std::string> args = {"synth", "--ranks", "1", "--iterations", "8"};
    if (!hostGrowth.empty()) {
        args.insert(args.end(), {"--host-growth-bytes-per-iteration", hostGrowth});
    }
    args.insert(args.end(), {"-o", (dir / (name + ".vscope")).string()});
    const CliRun r = run(args);
    EXPECT_EQ(r.code, kExitSuccess) << r.err;
    return (dir / (name + "-rank0.vscope")).string();
}

TEST(HostMemoryCli, CheckFailsOnGrowingHostMemoryAndPassesOnAFlatOne) {
    const fs::path dir = tempDir();
    CliRun r = run({"check", "--advice", "host-memory", synth(dir, "grow", "32MiB")});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("FAIL host-memory: rank 0 host:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("baseline slope 32.0 MiB per iteration"), std::string::npos) << r.out;

    r = run({"check", "--advice", "host-memory", synth(dir, "flat", "0")});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("PASS host-memory: rank 0 host:"), std::string::npos) << r.out;

    r = run({"check", "--advice", "host-memory", synth(dir, "none", "")});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED host-memory: rank 0 host: the trace records no host memory"),
              std::string::npos)
        << r.out;
    fs::remove_all(dir);
}

TEST(HostMemoryCli, ReportJsonCarriesTheHostAdviceWithItsEvidence) {
    const fs::path dir = tempDir();
    const CliRun r = run({"report", "--json", synth(dir, "grow", "32MiB")});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    size_t found = 0;
    for (const auto& a : j["advice"]) {
        if (a["rule"] != "host-memory") {
            continue;
        }
        ++found;
        EXPECT_EQ(a["device"], -1);
        EXPECT_EQ(a["severity"], "warning");
        // 32 MiB a step, over 8 iterations: (8 - 1) x 32 MiB; peak H + 7 G + b (defaults 2 GiB,
        // 256 MiB).
        EXPECT_EQ(a["evidence"]["host_growth_bytes_per_iteration"], 32.0 * (1 << 20));
        EXPECT_EQ(a["evidence"]["host_total_growth_bytes"], 7 * 32.0 * (1 << 20));
        EXPECT_EQ(a["evidence"]["host_peak_bytes"],
                  double((2ull << 30) + 7 * (32ull << 20) + (256ull << 20)));
    }
    EXPECT_EQ(found, 1u);
    fs::remove_all(dir);
}

TEST(HostMemoryCli, RealProfileWithFlatCpuMemoryPasses) {
    // The 2021 tb_plugin ResNet-50 sample: 4,618 CPU [memory] events without totals; per step
    // the running sum returns to the same baseline (nothing grows on the host).
    const std::string path = realdata::kResnetTrace;
    VRAMSCOPE_REQUIRE_INPUT(path);
    const CliRun r = run({"check", "--advice", "host-memory", path});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("PASS host-memory: rank 0 host: host memory (CPU allocator's total"),
              std::string::npos)
        << r.out;
}

}  // namespace
}  // namespace vramscope::app
