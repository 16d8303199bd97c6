// vramscope-cli's analysis outputs run in-process: report's analysis fields, check, flame and
// batch-fit. Expected values come from the formulas of the synthetic job
// (analysis/include/vramscope/analysis/synthetic_job.h) and the bundled sample's parameters
// (resources/README.md: 4 ranks, 10 iterations, rank 1 leaks 512 MiB per iteration, rank 3
// starts every iteration 2 ms late, other parameters at their defaults).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "cli_refusal.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

/// The sample's figures, from the synthetic job's formulas with its default parameters.
struct Sample {
    const int64_t N = 10, s = 2'000'000, h = 1'000'000;
    const int64_t C = 48 * 400'000;
    const int64_t D = int64_t(std::ceil(536870912.0 * 2 * 3 / 4 / 100e9 * 1e9));
    const int64_t L = 512ll << 20;
    const int64_t WO = 12ll << 30;
    const int64_t peakLeaking = WO + 24 * (256ll << 20) + N * L;  // rank 1, last iteration
};

TEST(AnalysisCli, ReportJsonCarriesTheAnalysesOfTheSample) {
    const CliRun r = run({"report", "--json", "--gpu-hour-price", "2", "--planned-steps", "1000"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const Sample x;
    ASSERT_EQ(j["devices"].size(), 4u);
    for (const auto& d : j["devices"]) {
        const int rank = d["rank"].get<int>();
        const int64_t sr = rank == 3 ? x.s : 0;
        EXPECT_EQ(d["iterations"]["count"], x.N);
        EXPECT_EQ(d["iterations"]["source"], "ranges");
        const auto& t = d["time_breakdown"];
        EXPECT_EQ(t["compute_ns"], x.N * x.C);
        EXPECT_EQ(t["communication_ns"], x.N * (x.s - sr + x.D));
        EXPECT_EQ(t["idle_ns"], (x.N - 1) * (x.h + sr));
        EXPECT_EQ(t["overlap_ns"], 0);
        EXPECT_EQ(t["exposed_communication_ns"], t["communication_ns"]);
        EXPECT_EQ(t["span_ns"], t["busy_ns"].get<int64_t>() + t["idle_ns"].get<int64_t>());
        ASSERT_FALSE(d["idle_gaps"].empty());
        EXPECT_EQ(d["idle_gaps"][0]["duration_ns"], x.h + sr);
        EXPECT_EQ(d["idle_gaps"][0]["cause"], "host-bound");
        if (rank == 1) {
            EXPECT_EQ(d["leak"]["verdict"], "staircase");
            EXPECT_EQ(d["leak"]["growth_bytes_per_iteration"], x.L);
            EXPECT_DOUBLE_EQ(d["leak"]["iterations_to_oom"].get<double>(),
                             double((80ll << 30) - x.peakLeaking) / double(x.L));
            // Made in iterations 1..7 and alive two iterations later: 7 leaks.
            EXPECT_EQ(d["leak"]["survivors"][0]["bytes"], 7 * x.L);
        } else {
            EXPECT_EQ(d["leak"]["verdict"], "sawtooth");
            EXPECT_TRUE(d["leak"]["iterations_to_oom"].is_null());
        }
    }
    EXPECT_EQ(j["collectives"]["matched"], x.N);
    EXPECT_EQ(j["collectives"]["collectives"][0]["straggler_rank"], 3);
    EXPECT_EQ(j["collectives"]["ranks"][0]["total_wait_ns"], x.N * x.s);
    bool leakAdvice = false;
    for (const auto& a : j["advice"]) {
        if (a["rule"] == "leak") {
            leakAdvice = true;
            EXPECT_EQ(a["rank"], 1);
            EXPECT_EQ(a["severity"], "critical");
            EXPECT_EQ(a["evidence"]["growth_bytes_per_iteration"], double(x.L));
        }
    }
    EXPECT_TRUE(leakAdvice);
    // Cost: 4 GPUs x 2 per GPU-hour x median step x 1000 steps; the median step of the ranks is
    // s + C + D (three ranks on time; rank 3's is C + D).
    const double hours = double(x.s + x.C + x.D) * 1000 / 3.6e12;
    EXPECT_EQ(j["cost"]["gpus"], 4);
    EXPECT_DOUBLE_EQ(j["cost"]["total_cost"].get<double>(), 4 * 2.0 * hours);
}

TEST(AnalysisCli, ReportTextStatesTheFormulas) {
    const CliRun r = run({"report"});
    ASSERT_EQ(r.code, 0);
    EXPECT_NE(r.out.find("(span - busy)"), std::string::npos);
    EXPECT_NE(r.out.find("exposed communication"), std::string::npos);
    EXPECT_NE(r.out.find("(communication - overlap)"), std::string::npos);
    EXPECT_NE(r.out.find("staircase, growing 512 MiB per iteration"), std::string::npos);
    EXPECT_NE(r.out.find("[critical] leak: rank 1 GPU 1"), std::string::npos);
}

TEST(AnalysisCli, ReportRejectsBadAnalysisOptions) {
    EXPECT_TRUE(test::refusedRun({"report", "--iteration-regex", "(("}, kExitUsage,
                                 {"invalid iteration regex \"((\""}));
    EXPECT_TRUE(test::refusedRun({"report", "--gpu-hour-price", "cheap"}, kExitUsage,
                                 {"--gpu-hour-price needs a non-negative number, got 'cheap'"}));
    EXPECT_TRUE(test::refusedRun({"report", "--planned-steps", "10"}, kExitUsage,
                                 {"--planned-steps needs --gpu-hour-price"}));
}

TEST(AnalysisCli, CheckExitCodesNameTheFailedRule) {
    const fs::path dir = tempDir();
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 8;
    const auto healthy = analysis::generateSyntheticJob(spec);
    spec.leakBytesPerIteration = 64ull << 20;
    const auto leaking = analysis::generateSyntheticJob(spec);
    ASSERT_TRUE(trace::writeTraceFile((dir / "healthy.vscope").string(), healthy[0]).ok());
    ASSERT_TRUE(trace::writeTraceFile((dir / "leak.vscope").string(), leaking[0]).ok());
    const std::string ok = (dir / "healthy.vscope").string(), bad = (dir / "leak.vscope").string();
    // One rank: no communication, peak 18 GiB of 80 GiB = 0.225.
    CliRun r = run({"check", ok});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("all checks passed"), std::string::npos);
    r = run({"check", bad, "--fail-on-leak"});
    EXPECT_EQ(r.code, kExitCheckFailed);
    EXPECT_NE(r.out.find("FAIL fail-on-leak"), std::string::npos);
    EXPECT_NE(r.out.find("failed: fail-on-leak"), std::string::npos);
    EXPECT_EQ(run({"check", bad, "--max-peak-fraction", "0.8"}).code, kExitSuccess);
    r = run({"check", ok, "--max-peak-fraction", "0.2"});
    EXPECT_EQ(r.code, kExitCheckFailed);
    EXPECT_NE(r.out.find("FAIL max-peak-fraction"), std::string::npos);
    r = run({"check", "--max-exposed-communication", "0.3", ok, bad});
    EXPECT_EQ(r.code, kExitSuccess);  // one rank: no communication kernels at all
    EXPECT_TRUE(test::refusedRun({"check", (dir / "missing.vscope").string()}, kExitUnreadable,
                                 {"cannot read", "missing.vscope", "No such file"}));
    EXPECT_TRUE(test::refusedRun({"check", ok, "--max-peak-fraction", "x"}, kExitUsage,
                                 {"--max-peak-fraction needs a number > 0, got 'x'"}));
    EXPECT_TRUE(test::refusedRun({"check"}, kExitUsage, {"no input given"}));
    fs::remove_all(dir);
}

TEST(AnalysisCli, SurvivorsAreDescribedByWhatTheyAre) {
    const fs::path dir = tempDir();
    const std::string out = (dir / "leak").string();
    CliRun r = run({"synth", "--ranks", "1", "--iterations", "20", "--leak-bytes-per-iteration",
                    "64MiB", "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string file = out + "/rank0.vscope";
    // The generator keeps L = 64 MiB alive every iteration under the stack log_metrics
    // (train.py:70) (synthetic_job.h); survivors are looked for in iterations 1 .. N - 3.
    const uint64_t L = 64ull << 20;
    const int examined = 20 - 3;
    r = run({"report", "--json", file});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& leak = j["devices"][0]["leak"];
    ASSERT_EQ(leak["survivors"].size(), 1u);
    const auto& s = leak["survivors"][0];
    EXPECT_EQ(s["size_bytes"], L);
    EXPECT_EQ(s["count"], examined);
    EXPECT_EQ(s["iterations"], examined);
    EXPECT_EQ(s["min_per_iteration"], 1);
    EXPECT_EQ(s["max_per_iteration"], 1);
    EXPECT_EQ(s["bytes"], examined * L);
    EXPECT_EQ(leak["survivor_iterations"], examined);
    const std::string described = "one " + analysis::formatBytes(double(L)) +
                                  " allocation per iteration from log_metrics (train.py:70), " +
                                  std::to_string(examined) + " iterations, " +
                                  analysis::formatBytes(double(examined * L)) +
                                  " in all; 20 alive at the end of the last iteration (" +
                                  analysis::formatBytes(double(20 * L)) + ")";
    EXPECT_EQ(s["alive_at_end"], 20);  // never freed, one per iteration, also 0 and 18, 19
    EXPECT_EQ(s["description"], described);
    // Model state: weights and optimizer state (the generator's W + O); the first iteration's
    // L is alive across all iterations too, but it is the leak's and is named as such.
    const analysis::SyntheticJobSpec spec;
    const uint64_t WO = spec.weightBytes + spec.optimizerBytes;
    EXPECT_EQ(j["devices"][0]["model_state_bytes"], WO);
    EXPECT_EQ(j["devices"][0]["model_state_excluded_leak_bytes"], L);
    r = run({"report", file});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("survivor (made in one iteration, alive two later): " + described),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  model state: " + analysis::formatBytes(double(WO)) +
                         " (alive from the end of the first iteration to the end of the last; "
                         "excludes the leak's " +
                         analysis::formatBytes(double(L)) + ","),
              std::string::npos)
        << r.out;
    fs::remove_all(dir);
}

TEST(AnalysisCli, ReportSaysWhenThereIsNoIterationStructure) {
    // Random sizes without stacks or ranges: no period to trust, so nothing per iteration.
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    trace::TraceData noise;
    noise.header = analysis::generateSyntheticRank(spec, 0).header;  // one 80 GiB device
    uint64_t x = 12345;
    for (int i = 0; i < 400; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        noise.memory.append(trace::MemoryEvent{
            1'000'000 + int64_t(i) * 1'000'000, 0x100000ull * uint64_t(i + 1), 4096 + (x >> 50),
            trace::MemoryAction::Alloc, trace::MemoryLevel::Allocated, trace::MemoryKind::Pool,
            trace::DeviceIndex{0}, 7, trace::StackId{0}, 0});
    }
    const fs::path dir = tempDir();
    const std::string file = (dir / "noise.vscope").string();
    ASSERT_TRUE(trace::writeTraceFile(file, noise).ok());
    CliRun r = run({"report", "--json", file});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto dev = nlohmann::json::parse(r.out)["devices"][0];
    EXPECT_EQ(dev["iterations"]["count"], 0);
    EXPECT_EQ(dev["iterations"]["source"], "none");
    EXPECT_EQ(dev["iterations"]["confidence"], 0.0);
    EXPECT_LT(dev["iterations"]["period_score"].get<double>(), 0.9);
    EXPECT_EQ(dev["leak"]["verdict"], "inconclusive");
    EXPECT_TRUE(dev["leak"]["survivors"].empty());
    EXPECT_TRUE(dev["leak"]["baselines_bytes"].empty());
    EXPECT_TRUE(dev["model_state_bytes"].is_null());
    r = run({"report", file});
    EXPECT_NE(r.out.find("memory per iteration: inconclusive: no iteration structure"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("  model state: "), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(AnalysisCli, FlameFoldedSumsToThePeakLiveSet) {
    const fs::path dir = tempDir();
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 5;
    spec.leakBytesPerIteration = 32ull << 20;
    const auto job = analysis::generateSyntheticJob(spec);
    const std::string file = (dir / "rank0.vscope").string();
    ASSERT_TRUE(trace::writeTraceFile(file, job[0]).ok());
    CliRun r = run({"flame", file, "--at", "peak"});
    ASSERT_EQ(r.code, 0) << r.err;
    // Every line "path bytes"; the bytes add up to the peak: W + O + A a + N L.
    int64_t total = 0;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        const size_t sp = line.rfind(' ');
        ASSERT_NE(sp, std::string::npos) << line;
        total += std::stoll(line.substr(sp + 1));
    }
    const int64_t peak = int64_t(spec.weightBytes + spec.optimizerBytes +
                                 spec.activationsPerIteration * spec.activationBytes +
                                 5 * spec.leakBytesPerIteration);
    EXPECT_EQ(total, peak);
    r = run({"flame", file, "--format", "json", "--by", "category"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["total_bytes"], peak);
    EXPECT_EQ(j["grouping"], "category");
    // Diff from the first memory event ("0s": the weights, allocated first, are alive) to the
    // last event, 103 ms later (5 iterations): optimizer state and the leaks have grown.
    r = run({"flame", file, "--format", "json", "--at", "0s", "--diff", "103ms"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["tree"]["bytes"],
              int64_t(5 * spec.leakBytesPerIteration) + int64_t(spec.optimizerBytes));
    EXPECT_TRUE(test::refusedRun({"flame", file, "--at", "oom"}, kExitUsage,
                                 {"the trace has no OOM on GPU 0"}));
    EXPECT_TRUE(test::refusedRun({"flame", file, "--by", "colour"}, kExitUsage,
                                 {"--by must be stack, nvtx or category"}));
    fs::remove_all(dir);
}

TEST(AnalysisCli, BatchFitFindsTheLargestBatch) {
    const fs::path dir = tempDir();
    std::vector<std::string> args = {"batch-fit", "--json"};
    for (int batch : {4, 8, 16}) {
        analysis::SyntheticJobSpec spec;
        spec.ranks = 1;
        spec.iterations = 2;
        spec.activationBytes = uint64_t(batch) * (64ull << 20);  // 24 x 64 MiB = 1.5 GiB / sample
        const auto job = analysis::generateSyntheticJob(spec);
        const std::string file = (dir / ("b" + std::to_string(batch) + ".vscope")).string();
        ASSERT_TRUE(trace::writeTraceFile(file, job[0]).ok());
        args.push_back(file + ":" + std::to_string(batch));
    }
    const CliRun r = run(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    // Reserved peak (the larger) = ceil((12 GiB + 1.5 GiB b) / 2 GiB) x 2 GiB: 18, 24, 36 GiB
    // for b = 4, 8, 16: least squares slope 1.5 GiB, intercept 12 GiB (the points lie on it).
    const double GiB = double(1ull << 30);
    EXPECT_NEAR(j["slope_bytes_per_sample"].get<double>(), 1.5 * GiB, 1.0);
    EXPECT_NEAR(j["intercept_bytes"].get<double>(), 12 * GiB, 1.0);
    // 12 + 1.5 b <= 64 -> b = 34; <= 80 -> b = 45.
    EXPECT_EQ(j["largest_batch_under_80_pct"], 34);
    EXPECT_EQ(j["largest_batch_under_100_pct"], 45);
    // Both answers are beyond 2 x 16 = 32, the largest measured batch doubled.
    EXPECT_EQ(j["largest_measured_batch"], 16.0);
    EXPECT_EQ(j["r_squared_threshold"], 0.9);
    ASSERT_EQ(j["warnings"].size(), 2u);
    EXPECT_NE(j["warnings"][0].get<std::string>().find("extrapolated"), std::string::npos);
    EXPECT_TRUE(test::refusedRun({"batch-fit", args[2]}, kExitUsage,
                                 {"batch-fit needs at least two FILE:BATCH inputs"}));
    EXPECT_TRUE(test::refusedRun({"batch-fit", args[2], "nofile.vscope"}, kExitUsage,
                                 {"expected FILE:BATCH, got 'nofile.vscope'"}));
    fs::remove_all(dir);
}

/// FILE:BATCH of synthetic one-rank runs at batches 4, 8, 16 (1.5 GiB of activations per sample,
/// `iterations` iterations); the batch-8 run leaks `leakAt8` bytes per iteration.
std::vector<std::string> batchRuns(const fs::path& dir, int iterations, uint64_t leakAt8,
                                   bool capacity) {
    std::vector<std::string> args;
    for (int batch : {4, 8, 16}) {
        analysis::SyntheticJobSpec spec;
        spec.ranks = 1;
        spec.iterations = iterations;
        spec.activationBytes = uint64_t(batch) * (64ull << 20);
        spec.leakBytesPerIteration = batch == 8 ? leakAt8 : 0;
        auto job = analysis::generateSyntheticJob(spec);
        if (!capacity) {
            for (auto& dev : job[0].header.devices) {
                dev.totalMemoryBytes = 0;
            }
        }
        const std::string file = (dir / ("b" + std::to_string(batch) + ".vscope")).string();
        EXPECT_TRUE(trace::writeTraceFile(file, job[0]).ok());
        args.push_back(file + ":" + std::to_string(batch));
    }
    return args;
}

TEST(AnalysisCli, BatchFitRefusesAStaircaseRun) {
    const fs::path dir = tempDir();
    std::vector<std::string> args = batchRuns(dir, 8, 256ull << 20, true);
    args.insert(args.begin(), "batch-fit");
    const CliRun r = run(args);
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.err.find("staircase"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("b8.vscope (rank 0 GPU 0: +" + formatBytes(double(256ull << 20))),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("b4.vscope"), std::string::npos) << r.err;
    fs::remove_all(dir);
}

TEST(AnalysisCli, BatchFitAsksForTheCapacityAndFailsWhenNoBatchFits) {
    const fs::path dir = tempDir();
    std::vector<std::string> args = batchRuns(dir, 2, 0, false);
    args.insert(args.begin(), "batch-fit");
    CliRun r = run(args);
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("--capacity"), std::string::npos) << r.err;
    // peak = 12 GiB + 1.5 GiB x batch (see BatchFitFindsTheLargestBatch); on an A100-40GB
    // (40 GiB): 12 + 1.5 b <= 32 -> b = 13; <= 40 -> b = 18.
    std::vector<std::string> a100 = args;
    a100.insert(a100.end(), {"--capacity", "A100-40GB", "--json"});
    r = run(a100);
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["capacity_bytes"], 40ull << 30);
    EXPECT_EQ(j["largest_batch_under_80_pct"], 13);
    EXPECT_EQ(j["largest_batch_under_100_pct"], 18);
    EXPECT_TRUE(j["warnings"].empty()) << j["warnings"].dump();
    // On 12 GiB even batch 1 (13.5 GiB) does not fit: exit 1.
    std::vector<std::string> small = args;
    small.insert(small.end(), {"--capacity", "12GiB"});
    r = run(small);
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("of capacity: none (batch 1 does not fit)"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

/// One synthetic rank (5 iterations, 32 MiB leak), optionally with an OOM at the end or no rank.
std::string writeRank(const fs::path& dir, const std::string& name, bool oom, bool unknownRank) {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 5;
    spec.leakBytesPerIteration = 32ull << 20;
    auto job = analysis::generateSyntheticJob(spec);
    trace::TraceData& d = job[0];
    if (oom) {
        // After the last event (103 ms): allocated = W + O + 5 L.
        d.ooms.push_back({200'000'000, trace::DeviceIndex{0}, 7, 3ull << 30, 0});
    }
    if (unknownRank) {
        d.header.rank = trace::kUnknownRank;
    }
    const std::string file = (dir / name).string();
    EXPECT_TRUE(trace::writeTraceFile(file, d).ok());
    return file;
}

TEST(AnalysisCli, OomIsReportedAdvisedAndFailsCheck) {
    const fs::path dir = tempDir();
    const std::string file = writeRank(dir, "oom.vscope", true, false);
    const int64_t allocated = (4ll << 30) + (8ll << 30) + 5 * (32ll << 20);
    CliRun r = run({"report", "--json", file});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& ooms = j["devices"][0]["ooms"];
    ASSERT_EQ(ooms.size(), 1u);
    EXPECT_EQ(ooms[0]["requested_bytes"], 3ull << 30);
    EXPECT_EQ(ooms[0]["time_ns"], 200'000'000);
    EXPECT_EQ(ooms[0]["allocated_bytes"], allocated);
    // Reserved is at most 20 GiB (18 GiB + 5 x 32 MiB in 2 GiB segments): + 3 GiB is far below
    // 90 % of the 80 GiB GPU, so something below the device refused the request.
    EXPECT_EQ(ooms[0]["cause"], "limit-below-device");
    ASSERT_FALSE(ooms[0]["top_live"].empty());
    ASSERT_FALSE(j["advice"].empty());
    EXPECT_EQ(j["advice"][0]["rule"], "oom");
    EXPECT_EQ(j["advice"][0]["severity"], "critical");
    EXPECT_EQ(j["advice"][0]["evidence"]["requested_bytes"], double(3ull << 30));
    r = run({"report", file});
    EXPECT_NE(r.out.find("OUT OF MEMORY"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[critical] oom:"), std::string::npos) << r.out;
    r = run({"check", file, "--max-peak-fraction", "0.99"});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("FAIL oom"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("failed: oom"), std::string::npos) << r.out;
    // With the OOM allowed, the peak rule asked for still cannot be judged: the job stopped at a
    // limit below the 80 GiB device, so its share of 80 GiB is not its headroom.
    r = run({"check", file, "--max-peak-fraction", "0.99", "--allow-oom"});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED max-peak-fraction"), std::string::npos) << r.out;
    r = run({"check", file, "--max-peak-fraction", "0.99", "--allow-oom", "--allow-unchecked"});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    // The healthy twin passes the oom rule.
    r = run({"check", writeRank(dir, "ok.vscope", false, false), "--max-peak-fraction", "0.99"});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("PASS oom"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(AnalysisCli, CheckSaysWhatCouldNotBeChecked) {
    const fs::path dir = tempDir();
    // A trace with a header only: no memory data, no kernels.
    trace::TraceData empty;
    empty.header.rank = trace::RankId{0};
    const std::string file = (dir / "empty.vscope").string();
    ASSERT_TRUE(trace::writeTraceFile(file, empty).ok());
    CliRun r = run({"check", file});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("nothing could be checked"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("all checks passed"), std::string::npos) << r.out;
    // Capacity unknown: the peak rule alone cannot be checked.
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 5;
    auto job = analysis::generateSyntheticJob(spec);
    for (auto& dev : job[0].header.devices) {
        dev.totalMemoryBytes = 0;
    }
    const std::string noCap = (dir / "nocap.vscope").string();
    ASSERT_TRUE(trace::writeTraceFile(noCap, job[0]).ok());
    r = run({"check", noCap, "--max-peak-fraction", "0.8"});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;  // a rule asked for could not be checked
    EXPECT_NE(r.out.find("NOT CHECKED max-peak-fraction"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED: max-peak-fraction (rank 0 GPU 0: capacity unknown"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("all checks passed"), std::string::npos) << r.out;
    // Data lost: listed, and a rule checked on it says so.
    job[0].dataLoss.push_back(
        {trace::LossCounter::WriterQueueOverflow, 12, "kernel records", 0, 0});
    const std::string lossy = (dir / "lossy.vscope").string();
    ASSERT_TRUE(trace::writeTraceFile(lossy, job[0]).ok());
    r = run({"check", lossy, "--fail-on-leak"});
    // The sawtooth would pass, but on partial input a pass proves nothing.
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED fail-on-leak"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("DATA LOSS"), std::string::npos) << r.out;
    // name, value, kind and description of the registry's counter, then the producer's detail
    EXPECT_NE(r.out.find("writer_queue_overflow = 12 [data_loss]: records dropped because the "
                         "trace writer fell behind"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("(kernel records)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("partial input"), std::string::npos) << r.out;
    EXPECT_NE(run({"check", "--help"}).out.find("nothing could be checked"), std::string::npos);
    fs::remove_all(dir);
}

/// A trace file of one synthetic rank (5 iterations) with the changes `edit` makes.
std::string writeEdited(const fs::path& dir, const std::string& name, uint64_t leakBytes,
                        const std::function<void(trace::TraceData&)>& edit) {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 5;
    spec.leakBytesPerIteration = leakBytes;
    auto job = analysis::generateSyntheticJob(spec);
    edit(job[0]);
    const std::string file = (dir / name).string();
    EXPECT_TRUE(trace::writeTraceFile(file, job[0]).ok());
    return file;
}

void dropCapacity(trace::TraceData& d) {
    for (auto& dev : d.header.devices) {
        dev.totalMemoryBytes = 0;
    }
}

void loseEvents(trace::TraceData& d) {
    d.dataLoss.push_back({trace::LossCounter::WriterQueueOverflow, 12, "kernel records", 0, 0});
}

TEST(AnalysisCli, CheckTakesTheCapacityAsBytesOrAGpuName) {
    EXPECT_EQ(parseCapacity("H200"), 141ull << 30);
    EXPECT_EQ(parseCapacity("h100-80gb"), 80ull << 30);
    EXPECT_EQ(parseCapacity("A100-40GB"), 40ull << 30);
    EXPECT_EQ(parseCapacity("MI300X"), 192ull << 30);
    EXPECT_EQ(parseCapacity("141GiB"), 141ull << 30);
    EXPECT_EQ(parseCapacity("80GB"), 80'000'000'000ull);  // decimal units stay decimal
    EXPECT_FALSE(parseCapacity("0").has_value());
    EXPECT_FALSE(parseCapacity("H300").has_value());
    const fs::path dir = tempDir();
    const std::string noCap = writeEdited(dir, "nocap.vscope", 0, dropCapacity);
    // Peak 18 GiB with the synthetic defaults (W 4 GiB + O 8 GiB + 24 x 256 MiB of activations,
    // reserved in 2 GiB segments); on an H200 (141 GiB) 18 / 141 = 0.128.
    CliRun r = run({"check", noCap, "--max-peak-fraction", "0.13", "--capacity", "H200"});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("PASS max-peak-fraction"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0.128 <= 0.130"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(given; the trace names none)"), std::string::npos) << r.out;
    r = run({"check", noCap, "--max-peak-fraction", "0.12", "--capacity", "141GiB"});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("FAIL max-peak-fraction"), std::string::npos) << r.out;
    // A capacity the trace names wins: 18 / 80 = 0.225.
    const std::string withCap = writeEdited(dir, "cap.vscope", 0, [](trace::TraceData&) {});
    r = run({"check", withCap, "--max-peak-fraction", "0.3", "--capacity", "H200"});
    EXPECT_NE(r.out.find("0.225 <= 0.300"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--capacity 141 GiB is only used where the trace names none"),
              std::string::npos)
        << r.out;
    r = run({"check", noCap, "--capacity", "H300"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("H100-80GB, H200, A100-40GB, A100-80GB, B200, MI300X"), std::string::npos)
        << r.err;
    fs::remove_all(dir);
}

TEST(AnalysisCli, ReportTakesTheCapacityForTracesThatNameNone) {
    const fs::path dir = tempDir();
    const Sample x;
    const std::string noCap = writeEdited(dir, "leaknocap.vscope", uint64_t(x.L), dropCapacity);
    CliRun r = run({"report", "--json", noCap});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    auto d = nlohmann::json::parse(r.out)["devices"][0];
    EXPECT_TRUE(d["capacity_bytes"].is_null());
    EXPECT_TRUE(d["leak"]["iterations_to_oom"].is_null()) << "no capacity, no time to OOM";
    r = run({"report", "--json", "--capacity", "H200", noCap});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    d = nlohmann::json::parse(r.out)["devices"][0];
    EXPECT_EQ(d["capacity_bytes"], 141ll << 30);  // the H200 datasheet's 141 GB, read as GiB
    EXPECT_EQ(d["capacity_given"], true);
    // The synthetic job's last peak over 5 iterations: W + O + 24 activations + 5 leaks.
    const int64_t lastPeak = x.WO + 24 * (256ll << 20) + 5 * x.L;
    EXPECT_EQ(d["leak"]["verdict"], "staircase");
    EXPECT_DOUBLE_EQ(d["leak"]["iterations_to_oom"].get<double>(),
                     double((141ll << 30) - lastPeak) / double(x.L));
    r = run({"report", "--capacity", "H200", noCap});
    EXPECT_NE(r.out.find("141 GiB (given)"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(AnalysisCli, CostIsUnknownForASnapshotWithoutIterationsOrKernels) {
    // A memory snapshot records no kernels (the format has none), and this one no iteration
    // markers: there is no step time to price.
    const std::string path = realdata::kSilmontSnapshot;
    VRAMSCOPE_REQUIRE_INPUT(path);
    CliRun r = run({"report", "--json", "--gpu-hour-price", "2", path});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["devices"][0]["iterations"]["count"], 0);
    EXPECT_EQ(j["cost"]["known"], false);
    EXPECT_TRUE(j["cost"]["total_cost"].is_null());
    r = run({"report", "--gpu-hour-price", "2", path});
    EXPECT_NE(r.out.find("cost: unknown (no step time"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("cost: 0.00"), std::string::npos) << r.out;
}

TEST(AnalysisCli, CheckFailsWhenARuleAskedForCannotBeCheckedOnARealSnapshot) {
    const std::string path = realdata::kSilmontSnapshot;
    VRAMSCOPE_REQUIRE_INPUT(path);
    VRAMSCOPE_REQUIRE_PYTHON();
    // A PyTorch snapshot names no capacity: the peak rule cannot be checked.
    CliRun r = run({"check", "--max-peak-fraction", "0.01", path});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED: max-peak-fraction"), std::string::npos) << r.out;
    r = run({"check", "--max-peak-fraction", "0.01", "--allow-unchecked", path});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED"), std::string::npos) << r.out;
    // With the capacity given, the peak is checked: peak = max(peak allocated, peak reserved) of
    // the independent Python replay of the snapshot (tests/tools/snapshot_replay.py).
    const std::string cmd =
        "python3 '" VRAMSCOPE_SOURCE_DIR "/tests/tools/snapshot_replay.py' '" + path + "'";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    ASSERT_TRUE(pipe);
    char line[4096] = {};
    ASSERT_NE(fgets(line, sizeof line, pipe.get()), nullptr);
    std::istringstream words(line);
    double peakAllocated = -1, peakReserved = -1;
    for (std::string w; words >> w;) {
        if (w == "peak_allocated") {
            words >> peakAllocated;
        } else if (w == "peak_reserved") {
            words >> peakReserved;
        }
    }
    ASSERT_GT(peakAllocated, 0) << line;
    const double share = std::max(peakAllocated, peakReserved) / double(80ull << 30);
    char expected[64];
    std::snprintf(expected, sizeof expected, "%.3f %s 0.010", share, share <= 0.01 ? "<=" : ">");
    r = run({"check", "--max-peak-fraction", "0.01", "--capacity", "80GiB", path});
    EXPECT_EQ(r.code, share <= 0.01 ? kExitSuccess : kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << r.out << " / " << expected;
}

TEST(AnalysisCli, CheckListsDefaultRulesThatCannotBeCheckedWithoutFailing) {
    const fs::path dir = tempDir();
    // No rule named: the peak rule cannot be checked without a capacity; the others pass.
    const std::string noCap = writeEdited(dir, "nocap.vscope", 0, dropCapacity);
    CliRun r = run({"check", noCap});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED max-peak-fraction"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("all checked rules passed; NOT CHECKED: max-peak-fraction"),
              std::string::npos)
        << r.out;
    // On partial input every passing default rule is NOT CHECKED: nothing was checked.
    const std::string lossy = writeEdited(dir, "lossy.vscope", 0, loseEvents);
    r = run({"check", lossy});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NOT CHECKED oom: rank 0 GPU 0: partial input"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("nothing could be checked"), std::string::npos) << r.out;
    // A rule that fails on what was kept still fails, and says the input was partial.
    const std::string lossyLeak = writeEdited(dir, "lossyleak.vscope", 64ull << 20, loseEvents);
    r = run({"check", lossyLeak, "--fail-on-leak"});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("FAIL fail-on-leak"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("what was kept already fails"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(AnalysisCli, CostIsGpuHoursTimesPriceAndIdleIsUnknownWithoutKernels) {
    const fs::path dir = tempDir();
    // No kernels: the step time comes from the iteration ranges, the idle time is unknown.
    const std::string file = writeEdited(dir, "nokernels.vscope", 0, [](trace::TraceData& d) {
        d.kernels = {};
        d.collectives = {};
    });
    CliRun r = run({"report", "--json", "--gpu-hour-price", "0.01", file});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto cost = nlohmann::json::parse(r.out)["cost"];
    const double hours = double(cost["step_time_ns"].get<int64_t>()) * 5 / 3.6e12;
    EXPECT_EQ(cost["steps"], 5);
    EXPECT_DOUBLE_EQ(cost["hours"].get<double>(), hours);
    EXPECT_DOUBLE_EQ(cost["gpu_hours"].get<double>(), 1 * hours);
    EXPECT_DOUBLE_EQ(cost["total_cost"].get<double>(), 1 * hours * 0.01);
    EXPECT_TRUE(cost["idle_cost"].is_null());
    EXPECT_TRUE(cost["idle_fraction"].is_null());
    // The text writes the same amounts with the shared formatter: a cost far below one unit is
    // not "0.00".
    r = run({"report", "--gpu-hour-price", "0.01", file});
    const std::string total = analysis::formatAmount(hours * 0.01);
    EXPECT_NE(total, "0.00");
    EXPECT_NE(r.out.find("cost: " + total + " = " + analysis::formatAmount(hours) + " GPU-hours"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("idle part unknown"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(AnalysisCli, UnknownRankIsPrintedAsAQuestionMark) {
    const fs::path dir = tempDir();
    const std::string file = writeRank(dir, "norank.vscope", true, true);
    CliRun r = run({"report", file});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("rank ? GPU 0:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("oom: rank ? GPU 0"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("rank 0"), std::string::npos) << r.out;
    r = run({"report", "--json", file});
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["devices"][0]["rank"].is_null());
    EXPECT_TRUE(j["advice"][0]["rank"].is_null());
    r = run({"check", file});
    EXPECT_NE(r.out.find("rank ? GPU 0"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(AnalysisCli, FlameNamesWhatIsMissing) {
    const fs::path dir = tempDir();
    const std::string file = writeRank(dir, "r.vscope", false, false);
    // The trace spans 1 ms .. 104 ms (weights at 1 ms, 5 iterations).
    CliRun r = run({"flame", file, "--at", "99999s"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("outside the trace"), std::string::npos) << r.err;
    r = run({"flame", file, "--at", "0"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("outside the trace"), std::string::npos) << r.err;
    r = run({"flame", file, "--device", "7"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("no GPU 7"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(GPUs: 0)"), std::string::npos) << r.err;
    EXPECT_TRUE(test::refusedRun({"flame", file, "--device", "-1"}, kExitUsage,
                                 {"no GPU -1", "(GPUs: 0)"}));
    trace::TraceData empty;
    const std::string none = (dir / "none.vscope").string();
    ASSERT_TRUE(trace::writeTraceFile(none, empty).ok());
    r = run({"flame", none});
    // No live set can be given: the same exit as for allocations without addresses.
    EXPECT_EQ(r.code, kExitUnreadable);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("no GPU memory events"), std::string::npos) << r.err;
    const std::string help = run({"flame", "--help"}).out;
    const std::string usage = help.substr(0, help.find("\n\n"));
    EXPECT_NE(usage.find("--rank R"), std::string::npos) << usage;
    EXPECT_NE(usage.find("--level"), std::string::npos) << usage;
    fs::remove_all(dir);
}

TEST(AnalysisCli, SynthRefusesJobsThatDoNotFitAndHelpNamesNoSourcePath) {
    const fs::path dir = tempDir();
    const CliRun r =
        run({"synth", "--ranks", "1", "--iterations", "100000000", "-o", (dir / "big").string()});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("limit of 50000000"), std::string::npos) << r.err;
    EXPECT_EQ(run({"synth", "--help"}).out.find("analysis/include"), std::string::npos);
    fs::remove_all(dir);
}

TEST(AnalysisCli, ThresholdMustBePositive) {
    const CliRun r = run({"check", "x.vscope", "--max-peak-fraction", "-1"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("needs a number > 0"), std::string::npos) << r.err;
}

TEST(AnalysisCli, BatchFitAcceptsDecimalCapacity) {
    // 141GB is accepted as a capacity (the inputs are then missing: exit 3, not a usage error).
    const CliRun r = run(
        {"batch-fit", "/nonexistent/a.vscope:1", "/nonexistent/b.vscope:2", "--capacity", "141GB"});
    EXPECT_NE(r.code, kExitUsage) << r.err;
}

}  // namespace
}  // namespace vramscope::app
