// Slow-down on the real Kineto traces of ../shared/realdata: each holds at most 6 ProfilerStep
// ranges, counted here in the raw JSON with nlohmann-json (not through the importer), so at most
// 5 iterations follow the warm-up and the rule, which needs 6, must say it could not judge; and
// a memory snapshot has no kernels at all.
#include <gtest/gtest.h>

#include <iostream>

#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

/// ProfilerStep#N complete events of the raw trace on the host (Kineto repeats each on the GPU
/// timeline as a "gpu_user_annotation": the same step, not another).
size_t rawProfilerSteps(const nlohmann::json& doc) {
    size_t n = 0;
    for (const auto& e : testdata::eventsOf(doc)) {
        if (e.is_object() && e.value("ph", "") == "X" &&
            e.value("cat", "") != "gpu_user_annotation" && e.contains("name") &&
            e["name"].is_string() && e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) {
            ++n;
        }
    }
    return n;
}

class KinetoSlowDown : public ::testing::TestWithParam<const char*> {};

TEST_P(KinetoSlowDown, TooFewProfilerStepsIsNotAssessed) {
    const std::string path = std::string(VRAMSCOPE_REALDATA_DIR) + "/" + GetParam();
    VRAMSCOPE_REQUIRE_INPUT(path);
    const size_t steps = rawProfilerSteps(testdata::loadGzJson(path));
    ASSERT_LE(steps, 6u);
    auto t = trace::openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    std::vector<RankInput> in(1);
    in[0].data = &t->data;
    JobAnalysisOptions options;
    options.threads = 1;
    auto job = analyzeJob(in, options);
    ASSERT_TRUE(job.ok());
    size_t gpusWithKernels = 0;
    for (const DeviceAnalysis& d : job->devices) {
        if (!d.breakdown) {
            continue;
        }
        ++gpusWithKernels;
        if (d.iterations.source == IterationSource::Ranges && steps > 0) {
            EXPECT_EQ(d.iterations.count(), steps);
        }
        // Periods <= iterations, and the warm-up is left out: at most steps - 1 < 6 remain.
        EXPECT_LE(d.slowDown.steadyIterations + 1, std::max<size_t>(d.iterations.count(), 1));
        const AdviceAssessment* v = nullptr;
        for (const AdviceAssessment& a : job->assessments) {
            if (a.rule == "slow-down" && a.device == d.device) {
                v = &a;
            }
        }
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(v->outcome, AssessmentOutcome::NotAssessed) << v->detail;
        std::cout << "[ slow-down ] " << GetParam() << " GPU " << toInt(d.device) << ": " << steps
                  << " ProfilerSteps, " << d.iterations.count() << " iterations ("
                  << toString(d.iterations.source) << "): " << v->detail << "\n";
    }
    EXPECT_GT(gpusWithKernels, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Realdata, KinetoSlowDown,
    ::testing::Values(
        "pytorch_kineto/tb_plugin/samples/resnet50_num_workers_0/"
        "worker0.1623143089861.pt.trace.json.gz",
        "facebookresearch_HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
        "facebookresearch_HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz",
        "facebookresearch_HolisticTraceAnalysis/tests/data/df_index_resolver/"
        "df_index_resolver.json.gz",
        "AMD-AGI_TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
        "AMD-AGI_TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
        "AMD-AGI_TraceLens/tests/traces/b200/eager_trace.json.gz",
        "AMD-AGI_TraceLens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz"));

TEST(SnapshotSlowDown, AMemorySnapshotHasNoKernels) {
    const std::string path = realdata::kGptLeakSnapshot;
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto t = trace::openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    ASSERT_TRUE(t->data.kernels.size() == 0);
    std::vector<RankInput> in(1);
    in[0].data = &t->data;
    JobAnalysisOptions options;
    options.threads = 1;
    auto job = analyzeJob(in, options);
    ASSERT_TRUE(job.ok());
    size_t seen = 0;
    for (const AdviceAssessment& a : job->assessments) {
        if (a.rule == "slow-down") {
            ++seen;
            EXPECT_EQ(a.outcome, AssessmentOutcome::NotAssessed);
            EXPECT_NE(a.detail.find("no kernels"), std::string::npos) << a.detail;
        }
    }
    EXPECT_GT(seen, 0u);
}

}  // namespace
}  // namespace vramscope::analysis
