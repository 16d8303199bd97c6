// Acceptance: `vramscope-cli synth --ranks 8 --iterations 50 ...` then `report --json` gives, for
// every rank, the peak allocated and reserved bytes and the peak time that this test computes from
// the job's parameters with the formulas documented in synthetic_job.h, without the generator.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

int run(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SynthReportAcceptance, PeaksOfEightRanksFiftyIterationsMatchTheFormulas) {
    const fs::path dir =
        fs::temp_directory_path() / ("vramscope_acceptance_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const std::string cli = std::string("'") + VRAMSCOPE_CLI_PATH + "'";
    // The job: 8 ranks, 50 iterations; rank 5 leaks 96 MiB per iteration; rank 2 straggles.
    ASSERT_EQ(run(cli + " synth --ranks 8 --iterations 50 --leak-bytes-per-iteration 96MiB " +
                  "--leak-rank 5 --straggler-rank 2 --seed 11 -o '" + (dir / "job").string() +
                  "' > /dev/null 2>&1"),
              0);
    ASSERT_EQ(run(cli + " report --json '" + (dir / "job").string() + "' > '" +
                  (dir / "report.json").string() + "'"),
              0);
    std::ifstream in(dir / "report.json");
    const auto report = nlohmann::json::parse(in, nullptr, false);
    fs::remove_all(dir);
    ASSERT_FALSE(report.is_discarded());

    // Parameters: the command line above plus the defaults documented in synthetic_job.h.
    const int n = 8;
    const int64_t N = 50;
    const int64_t MiB = int64_t{1} << 20;
    const int64_t GiB = int64_t{1} << 30;
    const int64_t W = 4 * GiB, O = 8 * GiB, a = 256 * MiB, A = 24, g = 2 * GiB;
    const int64_t leak = 96 * MiB;
    const int leakRank = 5, stragglerRank = 2;
    const int64_t d = 400'000, K = 48, h = 1'000'000, stragglerDelay = 2'000'000;
    const double allReduceBytes = 512.0 * 1024 * 1024, busBw = 100e9;
    // Formulas (synthetic_job.h).
    const int64_t F = (K / 2) * d;
    const int64_t C = K * d;
    const auto D = static_cast<int64_t>(std::ceil(allReduceBytes * 2 * (n - 1) / n / busBw * 1e9));
    EXPECT_EQ(D, 9'395'241);  // 512 MiB * 1.75 / 100 GB/s = 9.39524096 ms, rounded up
    const int64_t v = 0;
    const int64_t s = stragglerDelay;
    const int64_t P = s + C - v + D + h;
    auto start = [&](int64_t i, int r) {
        return 3'000'000 + h + i * P + (r == stragglerRank ? s : 0);
    };

    ASSERT_EQ(report["devices"].size(), 8u);
    EXPECT_EQ(report["source"].size(), 8u);
    EXPECT_TRUE(report["data_loss"].empty());
    for (int r = 0; r < n; ++r) {
        const auto& dev = report["devices"][static_cast<size_t>(r)];
        const int64_t L = r == leakRank ? leak : 0;
        const int64_t peak = W + O + A * a + N * L;
        const int64_t reserved = (peak + g - 1) / g * g;
        const int64_t peakTime = L > 0 ? start(N - 1, r) + F : start(0, r) + (A - 1) * (F / A);
        EXPECT_EQ(dev["rank"], r);
        EXPECT_EQ(dev["device"], r);  // local rank = device index with 8 GPUs per node
        EXPECT_EQ(dev["capacity_bytes"], 80 * GiB);
        EXPECT_EQ(dev["peak_allocated_bytes"].get<int64_t>(), peak) << "rank " << r;
        EXPECT_EQ(dev["peak_reserved_bytes"].get<int64_t>(), reserved) << "rank " << r;
        EXPECT_EQ(dev["peak_time_ns"].get<int64_t>(), peakTime) << "rank " << r;
        // Memory events: 2 at start, per iteration 2A (+1 leak), plus reserved segment growths.
        EXPECT_GE(dev["memory_events"].get<int64_t>(), 2 + N * (2 * A + (L > 0 ? 1 : 0)));
    }
    // Spot values, by hand: 18 GiB without the leak; 18 GiB + 50 * 96 MiB = 22.6875 GiB with it.
    EXPECT_EQ(report["devices"][0]["peak_allocated_bytes"], 18 * GiB);
    EXPECT_EQ(report["devices"][5]["peak_allocated_bytes"], 18 * GiB + 4800 * MiB);
    EXPECT_EQ(report["devices"][5]["peak_reserved_bytes"], 24 * GiB);
    EXPECT_EQ(report["devices"][0]["peak_time_ns"], 13'200'000);  // 4 ms + 23 * 0.4 ms
}

}  // namespace
