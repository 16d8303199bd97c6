// vramscope-cli batch-fit gives no conclusion its fit cannot support: a negative intercept, two
// batch sizes, one run given twice, a peak that does not grow. Expected values come by hand from
// the synthetic job's formulas (analysis/include/vramscope/analysis/synthetic_job.h) and, for the
// two real snapshots, from tests/tools/snapshot_replay.py, an independent Python replay.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "test_units.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

using testdata::kGiB;

/// A one-rank synthetic run with `batch` x 64 MiB of activations per layer (24 layers: 1.5 GiB per
/// sample); its peak is reserved = ceil((12 GiB + 1.5 GiB x batch) / 2 GiB) x 2 GiB.
std::string writeRun(const fs::path& dir, int batch) {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 2;
    spec.activationBytes = uint64_t(batch) * (64ull << 20);
    const std::string file = (dir / ("b" + std::to_string(batch) + ".vscope")).string();
    EXPECT_TRUE(trace::writeTraceFile(file, analysis::generateSyntheticJob(spec)[0]).ok());
    return file;
}

bool anyWarning(const nlohmann::json& j, const std::string& text) {
    return std::any_of(j["warnings"].begin(), j["warnings"].end(), [&](const auto& w) {
        return w.template get<std::string>().find(text) != std::string::npos;
    });
}

/// max(peak allocated, peak reserved) of a snapshot per the Python replay; -1 when it failed.
double replayPeak(const std::string& path) {
    const std::string cmd =
        "python3 '" VRAMSCOPE_SOURCE_DIR "/tests/tools/snapshot_replay.py' '" + path + "'";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    char line[4096] = {};
    if (!pipe || fgets(line, sizeof line, pipe.get()) == nullptr) {
        return -1;
    }
    std::istringstream words(line);
    double allocated = -1, reserved = -1;
    for (std::string w; words >> w;) {
        if (w == "peak_allocated") {
            words >> allocated;
        } else if (w == "peak_reserved") {
            words >> reserved;
        }
    }
    return std::max(allocated, reserved);
}

TEST(BatchFitCli, RSquaredReadsWithThreeSignificantDigits) {
    const fs::path dir = tempDir();
    // Runs at 4, 8, 16 samples labelled batch 1, 2, 3: peaks 18, 24, 36 GiB. By hand: slope 9 GiB,
    // intercept 8 GiB, residuals 1, -2, 1 GiB: SS_res = 6, SS_tot = 64 + 4 + 100 = 168,
    // R^2 = 1 - 6 / 168 = 0.964286.
    const CliRun r = run({"batch-fit", writeRun(dir, 4) + ":1", writeRun(dir, 8) + ":2",
                          writeRun(dir, 16) + ":3", "--capacity", "80GiB"});
    EXPECT_EQ(r.code, kExitSuccess) << r.err;
    EXPECT_NE(r.out.find("fit: peak = 8.00 GiB + 9.00 GiB x batch (least squares, R^2 = 0.964)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("0.96428"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(BatchFitCli, OneRunGivenTwiceIsNamedAndGivesNoAnswer) {
    const fs::path dir = tempDir();
    const std::string b8 = writeRun(dir, 8);
    fs::copy_file(b8, dir / "copy.vscope");
    for (const std::string& second : {b8, (dir / "copy.vscope").string()}) {
        const CliRun r = run({"batch-fit", b8 + ":8", second + ":16", "--json"});
        // Equal peaks (24 GiB) at 8 and 16: no largest batch, so no success either.
        EXPECT_EQ(r.code, kExitCheckFailed) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_TRUE(j["largest_batch_under_100_pct"].is_null());
        EXPECT_TRUE(anyWarning(j, "the same run twice")) << j["warnings"].dump();
        EXPECT_TRUE(anyWarning(j, second == b8 ? "are one file" : "hold the same bytes"))
            << j["warnings"].dump();
        EXPECT_TRUE(anyWarning(j, "the peak does not grow with the batch")) << j["warnings"].dump();
    }
    // Different runs raise no such warning.
    const CliRun r = run({"batch-fit", b8 + ":8", writeRun(dir, 16) + ":16", "--json"});
    EXPECT_FALSE(anyWarning(nlohmann::json::parse(r.out), "the same run twice")) << r.out;
    fs::remove_all(dir);
}

TEST(BatchFitCli, NegativeInterceptOnTwoRealJobsPredictsNothingBelowTheSmallestBatch) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kSilmontSnapshot);
    VRAMSCOPE_REQUIRE_INPUT(realdata::kMagmaSnapshot);
    VRAMSCOPE_REQUIRE_PYTHON();
    // Two unrelated jobs given as batch 8 and 16: the line through their replayed peaks.
    const double p8 = replayPeak(realdata::kSilmontSnapshot),
                 p16 = replayPeak(realdata::kMagmaSnapshot);
    ASSERT_GT(p8, 0);
    ASSERT_GT(p16, 0);
    const double slope = (p16 - p8) / 8.0, intercept = p8 - 8.0 * slope;
    ASSERT_LT(intercept, 0) << "the two snapshots no longer make a negative intercept";
    const std::vector<std::string> inputs = {"batch-fit", realdata::kSilmontSnapshot + ":8",
                                             realdata::kMagmaSnapshot + ":16"};

    // On 2 GiB the line would answer below batch 8 (whose run used more than 2 GiB): withheld.
    std::vector<std::string> args = inputs;
    args.insert(args.end(), {"--capacity", "2GiB"});
    CliRun r = run(args);
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(r.out.find("fit: peak = " + formatBytes(intercept) + " + " + formatBytes(slope)),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("0 B (negative intercept)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("largest batch under 100 % of capacity: no answer (it lies below the "
                         "smallest measured batch, 8,"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("warning: negative intercept: peak = " + formatBytes(intercept)),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("warning: only 2 batch sizes"), std::string::npos) << r.out;

    // On 40 GiB the answer lies above the measured batches: given, with the warnings.
    args = inputs;
    args.insert(args.end(), {"--capacity", "40GiB", "--json"});
    r = run(args);
    EXPECT_EQ(r.code, kExitSuccess) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j["points"][0]["peak_bytes"].get<double>(), p8, 0.5);
    EXPECT_NEAR(j["points"][1]["peak_bytes"].get<double>(), p16, 0.5);
    EXPECT_NEAR(j["intercept_bytes"].get<double>(), intercept, 1.0);
    const int64_t expected = int64_t(std::floor((40 * kGiB - intercept) / slope));
    ASSERT_GE(expected, 8);
    EXPECT_EQ(j["largest_batch_under_100_pct"], expected);
    EXPECT_TRUE(anyWarning(j, "negative intercept")) << j["warnings"].dump();
}

}  // namespace
}  // namespace vramscope::app
