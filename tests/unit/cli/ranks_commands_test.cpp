// vramscope-cli on jobs whose cross-rank conclusions need care, run in-process: a straggler job
// and a job without one made by `synth` (synthetic_job.h: the straggler starts every iteration
// stragglerDelayNs = 2 ms late, so each other rank waits 2 ms per iteration), one input given
// twice, and 2 sampled ranks of a 128-rank job (world_size 128 in both files' distributedInfo).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

/// The advice lines of a text report whose rule is `rule`.
size_t adviceLines(const std::string& report, const std::string& rule) {
    size_t n = 0;
    for (size_t at = report.find("] " + rule + ": "); at != std::string::npos;
         at = report.find("] " + rule + ": ", at + 1)) {
        ++n;
    }
    return n;
}

TEST(RanksCli, SynthStragglerIsNamedWithTheWaitItCauses) {
    const fs::path dir = tempDir();
    ASSERT_EQ(run({"synth", "--ranks", "4", "--iterations", "8", "--straggler-rank", "2", "-o",
                   dir.string()})
                  .code,
              0);
    const CliRun text = run({"report", dir.string()});
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("straggler: rank 2, last in 8 of 8 collectives; the others wait "
                            "2.00 ms each per step"),
              std::string::npos)
        << text.out;
    EXPECT_EQ(adviceLines(text.out, "straggler"), 1u);
    const CliRun json = run({"report", "--json", "--gpu-hour-price", "3", dir.string()});
    ASSERT_EQ(json.code, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["ranks_present"], 4);
    EXPECT_EQ(j["world_size"], 4);
    EXPECT_EQ(j["partial"], false);
    const auto& s = j["collectives"]["straggler"];
    EXPECT_EQ(s["rank"], 2);
    EXPECT_EQ(s["named"], true);
    EXPECT_EQ(s["times_last"], 8);
    EXPECT_EQ(s["wait_per_step_per_rank_ns"], 2'000'000);
    EXPECT_EQ(s["wait_caused_ns"], 3 * 8 * 2'000'000);
    for (const auto& a : j["advice"]) {
        if (a["rule"] == "straggler") {
            EXPECT_EQ(a["rank"], 2);
            EXPECT_DOUBLE_EQ(a["evidence"]["wait_cost"].get<double>(), 48e6 / 3.6e12 * 3);
        }
    }
    for (const auto& d : j["devices"]) {
        const auto& c = d["time_breakdown"]["communication_split"];
        EXPECT_EQ(c["wait_ns"], d["rank"] == 2 ? 0 : 8 * 2'000'000);
    }
    fs::remove_all(dir);
}

TEST(RanksCli, CollectiveTimesInTheJsonAreOnTheJobClockAsInTheJobModel) {
    const fs::path dir = tempDir();
    ASSERT_EQ(run({"synth", "--ranks", "4", "--iterations", "8", "--straggler-rank", "2", "-o",
                   dir.string()})
                  .code,
              0);
    const CliRun json = run({"report", "--json", dir.string()});
    ASSERT_EQ(json.code, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    const auto& listed = j["collectives"]["collectives"];
    ASSERT_EQ(listed.size(), 8u);  // one gradient all-reduce per iteration

    // The same job as the GUI opens it.
    auto opened = trace::openJob({dir.string()});
    ASSERT_TRUE(opened.ok()) << opened.error().describe();
    auto built = analysis::buildJobModel(std::move(opened).value(), "synth");
    ASSERT_TRUE(built.ok()) << built.error().describe();
    const analysis::JobModel& model = **built;
    const auto& matched = model.collectives().collectives;
    ASSERT_EQ(matched.size(), listed.size());

    // Independently, from the files as read: job time 0 is the earliest event of any rank, and
    // the k-th collective of every rank (in start order) is the k-th matched one.
    int64_t origin = INT64_MAX;
    std::vector<std::vector<int64_t>> starts;
    for (const trace::RankTrace& rt : model.job.ranks) {
        const trace::TraceData& d = rt.trace.data;
        for (const auto* column : {&d.memory.timestampNs, &d.counters.timestampNs,
                                   &d.kernels.startNs, &d.collectives.startNs, &d.ranges.startNs}) {
            for (int64_t t : *column) {
                origin = std::min(origin, t);
            }
        }
        std::vector<int64_t> own(d.collectives.startNs.begin(), d.collectives.startNs.end());
        std::sort(own.begin(), own.end());
        ASSERT_EQ(own.size(), listed.size()) << rt.path;
        starts.push_back(std::move(own));
    }
    ASSERT_GT(origin, 0);  // the producer's clock does not start at 0: the clocks differ
    for (size_t k = 0; k < listed.size(); ++k) {
        int64_t first = INT64_MAX;
        int64_t last = INT64_MIN;
        for (const auto& own : starts) {
            first = std::min(first, own[k] - origin);
            last = std::max(last, own[k] - origin);
        }
        int64_t modelFirst = INT64_MAX;
        for (const analysis::CollectiveParticipant& p : matched[k].participants) {
            modelFirst = std::min(modelFirst, p.startNs);
        }
        EXPECT_EQ(listed[k]["first_arrival_ns"].get<int64_t>(), modelFirst) << k;
        EXPECT_EQ(listed[k]["first_arrival_ns"].get<int64_t>(), first) << k;
        EXPECT_EQ(listed[k]["last_arrival_ns"].get<int64_t>(), last) << k;
        // The straggler starts 2 ms late (synthetic_job.h stragglerDelayNs).
        EXPECT_EQ(last - first, 2'000'000) << k;
    }
    fs::remove_all(dir);
}

TEST(RanksCli, AJobWithoutAStragglerGetsNoStragglerAdvice) {
    const fs::path dir = tempDir();
    ASSERT_EQ(run({"synth", "--ranks", "4", "--iterations", "8", "-o", dir.string()}).code, 0);
    const CliRun text = run({"report", dir.string()});
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_EQ(adviceLines(text.out, "straggler"), 0u);
    EXPECT_NE(text.out.find("no straggler: every matched collective started on all ranks at once"),
              std::string::npos);
    fs::remove_all(dir);
}

TEST(RanksCli, OneInputGivenTwiceIsReportedOnceWithAWarning) {
    const fs::path dir = tempDir();
    ASSERT_EQ(run({"synth", "--ranks", "1", "--iterations", "2", "-o", dir.string()}).code, 0);
    const std::string file = (dir / "rank0.vscope").string();
    ASSERT_TRUE(fs::exists(file));
    const CliRun r = run({"report", file, file});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: rank 0 was given twice (" + file + " and " + file),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("vramscope report: 1 input, 1 device"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(RanksCli, TwoSampledRanksOf128AreAPartialJob) {
    const std::string dir = realdata::kSampledRanksDir;
    VRAMSCOPE_REQUIRE_INPUT(dir);
    const CliRun text = run({"report", dir});
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("job: 2 of 128 ranks present (partial"), std::string::npos);
    EXPECT_NE(text.out.find("last of the ranks present"), std::string::npos);
    EXPECT_EQ(adviceLines(text.out, "straggler"), 0u);
    const CliRun json = run({"report", "--json", dir});
    ASSERT_EQ(json.code, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["ranks_present"], 2);
    EXPECT_EQ(j["world_size"], 128);
    EXPECT_EQ(j["partial"], true);
    EXPECT_EQ(j["collectives"]["partial"], true);
    if (!j["collectives"]["straggler"].is_null()) {
        EXPECT_EQ(j["collectives"]["straggler"]["named"], false);
    }
}

TEST(RanksCli, TracesOfTwoJobsAreNotMatchedAsOne) {
    // Rank 0 of a 2-rank job and rank 0 of a 128-rank job (their distributedInfo says so).
    const std::string hta = realdata::kHtaDir;
    const std::string a = hta + "nccl_parser_config/nccl_data.json.gz";
    const std::string b = hta + "trace_filter/sampled_rank-0.json.gz";
    VRAMSCOPE_REQUIRE_INPUT(a);
    VRAMSCOPE_REQUIRE_INPUT(b);
    for (const std::string& f : {a, b}) {
        const auto info = testdata::loadGzJson(f)["distributedInfo"];
        ASSERT_EQ(info["rank"], 0) << f;
    }
    ASSERT_NE(testdata::loadGzJson(a)["distributedInfo"]["world_size"],
              testdata::loadGzJson(b)["distributedInfo"]["world_size"]);
    const CliRun json = run({"report", "--json", a, b});
    ASSERT_EQ(json.code, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["collectives"]["matched"], 0);
    EXPECT_NE(j["collectives"]["not_one_job"].get<std::string>().find("two inputs claim rank 0"),
              std::string::npos);
    const CliRun text = run({"report", a, b});
    EXPECT_NE(text.out.find("job: the inputs are not one job (two inputs claim rank 0)"),
              std::string::npos)
        << text.out;
    EXPECT_EQ(text.out.find("waited"), std::string::npos) << text.out;
    EXPECT_EQ(adviceLines(text.out, "straggler"), 0u);
}

}  // namespace
}  // namespace vramscope::app
