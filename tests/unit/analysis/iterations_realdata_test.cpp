// Iterations and leak survivors on real inputs from ../shared/realdata. The expected steps come
// from the files themselves: a snapshot's external_annotations as tests/tools/snapshot_replay.py
// (which shares no code with the importer) prints them, a Kineto JSON parsed here with
// nlohmann-json; the leak's sizes from the workload (../shared/device/gpt_train.py).
#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gpt_h200_workload.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

using testdata::loadGzJson;

// "leak" keeps every micro-batch's logits.
using test::gpt_h200::kLogitsBytes;
using test::gpt_h200::kMicroBatchesPerStep;

/// What tests/tools/snapshot_replay.py prints for `path` with `options`.
std::string replayOutput(const std::string& path, const std::string& options) {
    const std::string cmd = "python3 '" VRAMSCOPE_SOURCE_DIR "/tests/tools/snapshot_replay.py' '" +
                            path + "' " + options + " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    std::string text;
    char buf[4096];
    for (size_t n; pipe && (n = fread(buf, 1, sizeof buf, pipe.get())) > 0;) {
        text.append(buf, n);
    }
    return text;
}

/// Block size -> count of device 0's blocks made before `aUs` and not freed before `bUs`, as
/// snapshot_replay.py --alive-across prints them.
std::map<uint64_t, uint64_t> aliveAcross(const std::string& path, int64_t aUs, int64_t bUs) {
    std::map<uint64_t, uint64_t> out;
    std::istringstream lines(
        replayOutput(path, "--alive-across " + std::to_string(aUs) + " " + std::to_string(bUs)));
    for (std::string line; std::getline(lines, line);) {
        std::istringstream ls(line);
        std::string head, k;
        int device = -1;
        uint64_t size = 0, count = 0;
        ls >> head >> k >> device >> k >> size >> k >> count;
        if (head == "alive_across" && device == 0) {
            out[size] += count;
        }
    }
    return out;
}

/// START times (us) of the snapshot's external_annotations whose name starts with `prefix`, as
/// snapshot_replay.py --annotations prints them.
std::vector<int64_t> annotationStartsUs(const std::string& path, const std::string& prefix) {
    std::vector<int64_t> out;
    std::istringstream lines(replayOutput(path, "--annotations"));
    for (std::string line; std::getline(lines, line);) {
        std::istringstream ls(line);
        std::string head, k, stage, name;
        int64_t device = 0, t = 0;
        ls >> head >> k >> device >> k >> stage >> k >> t >> k >> name;
        if (head == "annotation" && stage == "START" && name.rfind(prefix, 0) == 0) {
            out.push_back(t);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// `data` without its ranges, as a trace that names no step would be.
trace::TraceData withoutRanges(const trace::TraceData& data) {
    trace::TraceData d = data;
    d.ranges = trace::RangeEvents{};
    return d;
}

DeviceAnalysis analyzeOne(const trace::TraceData& data) {
    auto job = analyzeJob({RankInput{&data, data.header.rank, 0}});
    EXPECT_TRUE(job.ok());
    EXPECT_FALSE(job->devices.empty());
    return job.ok() && !job->devices.empty() ? job->devices.front() : DeviceAnalysis{};
}

TEST(IterationsRealData, DecomflHasItsTwoStepsNotAPeriodInsideThem) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDecomflSnapshot);
    VRAMSCOPE_REQUIRE_PYTHON();
    // DeComFL calls no optimizer step, but zero_grad once per step: two of them in the snapshot.
    const std::vector<int64_t> zeroGrads =
        annotationStartsUs(realdata::kDecomflSnapshot, "Optimizer.zero_grad#");
    ASSERT_EQ(zeroGrads.size(), 2u) << "snapshot_replay.py --annotations printed no zero_grad";
    ASSERT_TRUE(annotationStartsUs(realdata::kDecomflSnapshot, "Optimizer.step#").empty());
    auto t = trace::openTrace(realdata::kDecomflSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    auto its = findIterations(t->data, trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    EXPECT_EQ(its->source, IterationSource::OptimizerSteps) << its->reason;
    ASSERT_EQ(its->count(), zeroGrads.size() - 1);  // start to start: one whole step
    EXPECT_EQ(its->iterations[0].endNs - its->iterations[0].startNs,
              (zeroGrads[1] - zeroGrads[0]) * 1000);
    // One step is too few for anything per iteration.
    const DeviceAnalysis d = analyzeOne(t->data);
    EXPECT_EQ(d.leak.verdict, LeakVerdict::Inconclusive);
    EXPECT_TRUE(d.leak.survivors.empty());
    EXPECT_EQ(d.modelStateBytes, -1);
}

TEST(IterationsRealData, DecomflWithoutMarkersHasNoIterationStructure) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDecomflSnapshot);
    auto t = trace::openTrace(realdata::kDecomflSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const trace::TraceData bare = withoutRanges(t->data);
    auto its = findIterations(bare, trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    // The period the old detector took for 248 "iterations" of 1.2 ms (inside the 0.77 s
    // between the two zero_grads) is not trusted any more: it repeats too little and too fast.
    EXPECT_EQ(its->source, IterationSource::None) << its->reason;
    const IterationOptions bar;
    EXPECT_LT(its->periodScore, bar.minPeriodScore);
    EXPECT_LT(its->periodDurationNs, bar.minPeriodNs);
    EXPECT_GT(its->wholePeriods, 100);
    EXPECT_EQ(its->count(), 0u);
    EXPECT_NE(its->reason.find("no iteration structure"), std::string::npos);
    // Nothing per iteration is built on it.
    const DeviceAnalysis d = analyzeOne(bare);
    EXPECT_EQ(d.leak.verdict, LeakVerdict::Inconclusive);
    EXPECT_TRUE(d.leak.iterations.empty());
    EXPECT_TRUE(d.leak.survivors.empty());
    EXPECT_EQ(d.modelStateBytes, -1);
    EXPECT_EQ(d.leak.reason, its->reason);
}

TEST(IterationsRealData, H200LeakStepsComeFromTheOptimizerAndTheSurvivorsAreTheLogits) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptLeakSnapshot);
    VRAMSCOPE_REQUIRE_PYTHON();
    const std::vector<int64_t> steps =
        annotationStartsUs(realdata::kGptLeakSnapshot, "Optimizer.step#");
    ASSERT_GE(steps.size(), 5u) << "snapshot_replay.py --annotations printed too few steps";
    auto t = trace::openTrace(realdata::kGptLeakSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    auto its = findIterations(t->data, trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    EXPECT_EQ(its->source, IterationSource::OptimizerSteps) << its->reason;
    EXPECT_DOUBLE_EQ(its->confidence, 1.0);
    ASSERT_EQ(its->count(), steps.size() - 1);
    for (size_t i = 0; i + 1 < steps.size(); ++i) {
        EXPECT_EQ(its->iterations[i].endNs - its->iterations[i].startNs,
                  (steps[i + 1] - steps[i]) * 1000);
    }
    const LeakReport r = analyzeLeak(t->data, trace::DeviceIndex{0}, *its);
    EXPECT_EQ(r.verdict, LeakVerdict::Staircase) << r.reason;
    // Every step keeps its two micro-batches' logits.
    EXPECT_NEAR(double(r.growthBytesPerIteration), double(kMicroBatchesPerStep * kLogitsBytes),
                0.05 * double(kLogitsBytes));
    ASSERT_FALSE(r.survivors.empty());
    const SurvivorGroup& top = r.survivors.front();
    EXPECT_EQ(top.sizeBytes, kLogitsBytes);
    EXPECT_EQ(top.minPerIteration, kMicroBatchesPerStep);
    EXPECT_EQ(top.maxPerIteration, kMicroBatchesPerStep);
    // Survivors are looked for in iterations 1 .. n - 3 (the first is warm-up).
    EXPECT_EQ(r.survivorIterations, int(its->count()) - 3);
    EXPECT_EQ(top.iterations, r.survivorIterations);
    EXPECT_EQ(top.bytes, uint64_t(r.survivorIterations) * kMicroBatchesPerStep * kLogitsBytes);
    const std::string text = describeSurvivor(top, r.survivorIterations);
    EXPECT_EQ(text.rfind("two " + formatBytes(double(kLogitsBytes)) +
                             " allocations per iteration from forward (",
                         0),
              0u)
        << text;
    EXPECT_NE(text.find("gpt_train.py:"), std::string::npos) << text;
}

TEST(IterationsRealData, H200LeakModelStateIsParametersAndAdamWWithoutTheKeptLogits) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptLeakSnapshot);
    VRAMSCOPE_REQUIRE_PYTHON();
    const std::vector<int64_t> steps =
        annotationStartsUs(realdata::kGptLeakSnapshot, "Optimizer.step#");
    ASSERT_GE(steps.size(), 5u);
    auto t = trace::openTrace(realdata::kGptLeakSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const DeviceAnalysis d = analyzeOne(t->data);
    ASSERT_EQ(d.iterations.source, IterationSource::OptimizerSteps);
    ASSERT_EQ(d.iterations.count(), steps.size() - 1);
    // The window, on the snapshot's own clock: iteration i runs from step i to step i + 1, so the
    // first ends at step 1 and the last at the last step.
    const std::map<uint64_t, uint64_t> across =
        aliveAcross(realdata::kGptLeakSnapshot, steps[1], steps.back());
    ASSERT_FALSE(across.empty()) << "snapshot_replay.py --alive-across printed nothing";
    uint64_t alive = 0;
    for (const auto& [size, count] : across) {
        alive += size * count;
    }
    // The leak: the logits of the micro-batches before the first iteration ends, kept for good.
    const uint64_t logits = across.count(kLogitsBytes) ? across.at(kLogitsBytes) : 0;
    EXPECT_GE(logits, kMicroBatchesPerStep);
    EXPECT_EQ(d.modelStateExcludedLeakBytes, int64_t(logits * kLogitsBytes));
    EXPECT_EQ(d.modelStateBytes, int64_t(alive - logits * kLogitsBytes));

    // gpt_train.py's parameters (fp32): embeddings V x D and T x D, head V x D (no bias), final
    // LayerNorm 2D; per block two LayerNorms (2D each), attention in_proj 3D x D + 3D, out_proj
    // D x D + D, MLP D x 4D + 4D and 4D x D + D. AdamW keeps two more of each (exp_avg,
    // exp_avg_sq); what is left are small buffers (the batch, workspaces).
    constexpr uint64_t V = 32000, D = 768, L = 8, T = 1024;
    constexpr uint64_t block =
        2 * D + 2 * D + (3 * D * D + 3 * D) + (D * D + D) + (D * 4 * D + 4 * D) + (4 * D * D + D);
    constexpr uint64_t parameterBytes = 4 * (V * D + T * D + L * block + 2 * D + V * D);
    EXPECT_GE(d.modelStateBytes, int64_t(3 * parameterBytes));
    EXPECT_LE(d.modelStateBytes, int64_t(3 * parameterBytes + (128ull << 20)));
    // Every weight matrix is there three times: the parameter and AdamW's two moments.
    EXPECT_GE(across.count(4 * V * D) ? across.at(4 * V * D) : 0, 3u * 2u);  // emb, head
    EXPECT_GE(across.count(4 * 3 * D * D) ? across.at(4 * 3 * D * D) : 0, 3u * L);

    // The survivor line counts the logits alive at the end, not only the examined iterations'.
    ASSERT_FALSE(d.leak.survivors.empty());
    const SurvivorGroup& top = d.leak.survivors.front();
    ASSERT_EQ(top.sizeBytes, kLogitsBytes);
    const std::map<uint64_t, uint64_t> atEnd =
        aliveAcross(realdata::kGptLeakSnapshot, steps.back(), steps.back());
    ASSERT_TRUE(atEnd.count(kLogitsBytes));
    EXPECT_EQ(top.aliveAtEnd, atEnd.at(kLogitsBytes));
    EXPECT_GT(top.aliveAtEnd, top.count);
    const std::string text = describeSurvivor(top, d.leak.survivorIterations);
    EXPECT_NE(text.find("; " + std::to_string(top.aliveAtEnd) +
                        " alive at the end of the last iteration (" +
                        formatBytes(double(top.aliveAtEnd * kLogitsBytes)) + ")"),
              std::string::npos)
        << text;
}

TEST(IterationsRealData, H200LeakWithoutMarkersIsDetectedAsItsOptimizerSteps) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptLeakSnapshot);
    VRAMSCOPE_REQUIRE_PYTHON();
    const std::vector<int64_t> steps =
        annotationStartsUs(realdata::kGptLeakSnapshot, "Optimizer.step#");
    ASSERT_GE(steps.size(), 5u);
    std::vector<int64_t> periodsUs;
    for (size_t i = 1; i + 1 < steps.size(); ++i) {  // the first step is warm-up
        periodsUs.push_back(steps[i + 1] - steps[i]);
    }
    std::sort(periodsUs.begin(), periodsUs.end());
    const double medianUs = double(periodsUs[periodsUs.size() / 2]);
    auto t = trace::openTrace(realdata::kGptLeakSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const trace::TraceData bare = withoutRanges(t->data);
    auto its = findIterations(bare, trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    // The real steps repeat exactly once the warm-up step is past: trusted, and as long as the
    // optimizer's step-to-step period.
    EXPECT_EQ(its->source, IterationSource::Detected) << its->reason;
    EXPECT_GE(its->confidence, IterationOptions{}.minPeriodScore);
    EXPECT_GE(its->count(), steps.size() - 2);
    EXPECT_LE(its->count(), steps.size());
    EXPECT_NEAR(double(its->medianDurationNs()), medianUs * 1000.0, 0.05 * medianUs * 1000.0);
    const LeakReport r = analyzeLeak(bare, trace::DeviceIndex{0}, *its);
    EXPECT_EQ(r.verdict, LeakVerdict::Staircase) << r.reason;
}

TEST(IterationsRealData, RegexMeasuresKinetoOptimizerStepsStartToStart) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kNcclTrace);
    // From the JSON: host-side (user_annotation) Optimizer.step#... complete events, by start.
    const nlohmann::json doc = loadGzJson(realdata::kNcclTrace);
    std::vector<double> startsUs;
    double rangeUs = 0.0;
    for (const auto& e : doc["traceEvents"]) {
        if (e.value("ph", "") == "X" && e.value("cat", "") == "user_annotation" &&
            e.value("name", "").rfind("Optimizer.step", 0) == 0) {
            startsUs.push_back(e["ts"].get<double>());
            rangeUs = e["dur"].get<double>();
        }
    }
    std::sort(startsUs.begin(), startsUs.end());
    ASSERT_GE(startsUs.size(), 3u);
    auto t = trace::openTrace(realdata::kNcclTrace);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    IterationOptions o;
    o.regex = "Optimizer\\.step";
    auto its = findIterations(t->data, trace::DeviceIndex{0}, o);
    ASSERT_TRUE(its.ok());
    EXPECT_EQ(its->source, IterationSource::Regex) << its->reason;
    ASSERT_EQ(its->count(), startsUs.size() - 1);
    for (size_t i = 0; i + 1 < startsUs.size(); ++i) {
        const double expectedNs = (startsUs[i + 1] - startsUs[i]) * 1000.0;
        EXPECT_NEAR(double(its->iterations[i].endNs - its->iterations[i].startNs), expectedNs, 2.0);
    }
    // The step period, not the optimizer's own range (about 15 ms of a 220 ms step here).
    EXPECT_GT(double(its->medianDurationNs()), 5.0 * rangeUs * 1000.0);
}

}  // namespace
}  // namespace vramscope::analysis
