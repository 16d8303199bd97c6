#include "vramscope/analysis/model/job_analysis.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "refusal.h"
#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {
using ::vramscope::test::refused;

TEST(JobAnalysis, AnalysesEveryDeviceAndPricesTheJob) {
    SyntheticJobSpec spec;
    spec.ranks = 4;
    spec.iterations = 8;
    spec.leakBytesPerIteration = 64ull << 20;
    spec.leakRank = 1;
    spec.stragglerRank = 2;
    const auto job = generateSyntheticJob(spec);
    std::vector<RankInput> in;
    for (int r = 0; r < spec.ranks; ++r) {
        in.push_back({&job[size_t(r)], trace::RankId{r}, 0});
    }
    JobAnalysisOptions o;
    o.gpuHourPrice = 3.0;
    auto a = analyzeJob(in, o);
    ASSERT_TRUE(a.ok()) << a.error().message;
    ASSERT_EQ(a->devices.size(), 4u);
    const uint64_t WO = spec.weightBytes + spec.optimizerBytes;
    for (const DeviceAnalysis& d : a->devices) {
        EXPECT_EQ(d.iterations.source, IterationSource::Ranges);
        EXPECT_EQ(d.iterations.count(), 8u);
        EXPECT_EQ(d.memory.capacityBytes, spec.capacityBytes);
        ASSERT_TRUE(d.breakdown.has_value());
        ASSERT_EQ(d.gapKernelNames.size(), d.breakdown->gaps.size());
        ASSERT_FALSE(d.gapKernelNames.empty());
        const trace::TraceData& t = job[size_t(d.rank)];
        EXPECT_EQ(d.gapKernelNames[0].second,
                  t.string(t.kernels.name[d.breakdown->gaps[0].kernelAfter]));
        // Model state: weights and optimizer state (synthetic_job.h), on every rank. The leaking
        // rank's first-iteration leak (L at S_0 + F, never freed) is alive across all
        // iterations too, but it is the leak's survivor group, so it is left out and named.
        const uint64_t leak = d.rank == trace::RankId{1} ? spec.leakBytesPerIteration : 0;
        EXPECT_EQ(d.modelStateBytes, int64_t(WO)) << toInt(d.rank);
        EXPECT_EQ(d.modelStateExcludedLeakBytes, int64_t(leak)) << toInt(d.rank);
        if (leak > 0) {
            // One leak per iteration, every one of the 8 never freed.
            ASSERT_EQ(d.leak.survivors.size(), 1u);
            EXPECT_EQ(d.leak.survivors[0].sizeBytes, leak);
            EXPECT_EQ(d.leak.survivors[0].count, uint64_t(spec.iterations - 3));
            EXPECT_EQ(d.leak.survivors[0].aliveAtEnd, uint64_t(spec.iterations));
        }
        EXPECT_EQ(d.leak.verdict,
                  d.rank == trace::RankId{1} ? LeakVerdict::Staircase : LeakVerdict::Sawtooth);
    }
    EXPECT_EQ(a->collectives.collectives.size(), 8u);
    bool leakAdvice = false;
    for (const Advice& adv : a->advice) {
        leakAdvice |= adv.rule == "leak" && adv.rank == trace::RankId{1};
    }
    EXPECT_TRUE(leakAdvice);
    // Step time: the iteration range [S_i(r), E_i) lasts s + C - v + D on the ranks that are on
    // time (three of four, so the median), v = 0 here.
    const int64_t n = spec.ranks, K = spec.computeKernelsPerIteration;
    const int64_t C = K * spec.computeKernelNs;
    const int64_t D = int64_t(std::ceil(double(spec.allReduceBytes) * 2 * double(n - 1) /
                                        double(n) / spec.busBandwidthBytesPerS * 1e9));
    const int64_t step = spec.stragglerDelayNs + C + D;
    ASSERT_TRUE(a->cost.has_value());
    EXPECT_EQ(a->cost->input.gpus, 4);
    EXPECT_EQ(a->cost->input.stepTimeNs, step);
    EXPECT_EQ(a->cost->input.steps, 8);
    EXPECT_DOUBLE_EQ(a->cost->totalCost, 4 * 3.0 * double(step) * 8 / 3.6e12);
}

TEST(JobAnalysis, ModelStateNeedsFourIterationsToTellALeakApart) {
    // A rank that keeps 64 MiB every iteration. Survivors are looked for in iterations 1 to n - 3
    // (alive two iterations later), so with 2 or 3 iterations none can be seen and the kept
    // tensor would pass for model state: model state is unknown. From 4 iterations on it is
    // weights + optimizer state (synthetic_job.h), the leak left out.
    for (const int iterations : {2, 3, 4}) {
        SyntheticJobSpec spec;
        spec.ranks = 1;
        spec.iterations = iterations;
        spec.leakBytesPerIteration = 64ull << 20;
        spec.leakRank = 0;
        const auto job = generateSyntheticJob(spec);
        auto a = analyzeJob({{&job[0], trace::RankId{0}, 0}});
        ASSERT_TRUE(a.ok()) << a.error().message;
        ASSERT_EQ(a->devices.size(), 1u);
        const DeviceAnalysis& d = a->devices[0];
        ASSERT_EQ(d.iterations.count(), size_t(iterations));
        EXPECT_EQ(d.modelStateBytes,
                  iterations < 4 ? -1 : int64_t(spec.weightBytes + spec.optimizerBytes))
            << iterations << " iterations";
    }
}

TEST(JobAnalysis, AnUnknownRankIsNotMatchedAsAKnownRankThatHasItsPosition) {
    // Three ranks of one job; the third has no rank. Ranks 1 and 2 are known, so the unknown one
    // (at position 2) must not take part in the collectives as a second "rank 2".
    SyntheticJobSpec spec;
    spec.ranks = 3;
    spec.iterations = 4;
    const auto job = generateSyntheticJob(spec);
    const std::vector<RankInput> in = {{&job[0], trace::RankId{1}, 0},
                                       {&job[1], trace::RankId{2}, 0},
                                       {&job[2], trace::kUnknownRank, 0}};
    const auto a = analyzeJob(in);
    ASSERT_TRUE(a.ok()) << a.error().describe();
    const CollectiveMatch& m = a->collectives;
    // Every all-reduce of the spec is seen by all three ranks, so each has three participants
    // with three different ranks, and three ranks wait.
    ASSERT_EQ(m.collectives.size(), size_t(spec.iterations));
    for (const MatchedCollective& c : m.collectives) {
        std::set<trace::RankId> ranks;
        for (const CollectiveParticipant& p : c.participants) {
            ranks.insert(p.rank);
        }
        EXPECT_EQ(c.participants.size(), 3u);
        EXPECT_EQ(ranks.size(), 3u) << "two inputs share a rank";
        EXPECT_TRUE(ranks.count(trace::RankId{1}) && ranks.count(trace::RankId{2}));
    }
    ASSERT_EQ(m.ranks.size(), 3u);
    for (const RankWait& w : m.ranks) {
        EXPECT_EQ(w.collectives, size_t(spec.iterations)) << "rank " << toInt(w.rank);
    }
}

TEST(JobAnalysis, RanksAnalysedAtOnceGiveTheSameResultsInInputOrder) {
    SyntheticJobSpec spec;
    spec.ranks = 6;
    spec.iterations = 6;
    spec.leakBytesPerIteration = 32ull << 20;
    spec.leakRank = 4;
    const auto job = generateSyntheticJob(spec);
    std::vector<RankInput> in;
    for (int r = 0; r < spec.ranks; ++r) {
        in.push_back({&job[size_t(r)], trace::RankId{r}, 0});
    }
    JobAnalysisOptions serial;
    serial.threads = 1;
    JobAnalysisOptions parallel;
    parallel.threads = 4;
    auto a = analyzeJob(in, serial);
    auto b = analyzeJob(in, parallel);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->devices.size(), size_t(spec.ranks));
    ASSERT_EQ(b->devices.size(), a->devices.size());
    for (size_t i = 0; i < a->devices.size(); ++i) {
        const DeviceAnalysis& x = a->devices[i];
        const DeviceAnalysis& y = b->devices[i];
        EXPECT_EQ(y.input, i);  // input order, whatever thread finished first
        EXPECT_EQ(y.rank, x.rank);
        EXPECT_EQ(y.device, x.device);
        EXPECT_EQ(y.memory.peakAllocatedBytes, x.memory.peakAllocatedBytes);
        EXPECT_EQ(y.memory.peakReservedBytes, x.memory.peakReservedBytes);
        EXPECT_EQ(y.leak.verdict, x.leak.verdict);
        EXPECT_EQ(y.leak.growthBytesPerIteration, x.leak.growthBytesPerIteration);
        EXPECT_EQ(y.modelStateBytes, x.modelStateBytes);
        ASSERT_TRUE(x.breakdown && y.breakdown);
        EXPECT_EQ(y.breakdown->idleNs, x.breakdown->idleNs);
    }
    // Only the leaking rank climbs (synthetic_job.h: leakRank).
    EXPECT_EQ(b->devices[4].leak.verdict, LeakVerdict::Staircase);
    EXPECT_EQ(b->devices[4].leak.growthBytesPerIteration, int64_t(spec.leakBytesPerIteration));
    EXPECT_EQ(b->collectives.collectives.size(), a->collectives.collectives.size());
    EXPECT_EQ(b->advice.size(), a->advice.size());

    // Progress from several workers is serialised, never goes back, and a "stop" stops them all.
    double last = -1;
    bool backwards = false;
    int calls = 0;
    auto stopped = analyzeJob(in, parallel, [&](double done, std::string_view) {
        backwards = backwards || done < last;
        last = done;
        return ++calls < 3;
    });
    EXPECT_FALSE(backwards);
    EXPECT_TRUE(refused(stopped, trace::ErrorCode::Cancelled, {trace::kCancelledMessage}));
}

TEST(JobAnalysis, InvalidRegexIsAnError) {
    const auto job = generateSyntheticJob(SyntheticJobSpec{});
    JobAnalysisOptions o;
    o.iterations.regex = "(";
    EXPECT_TRUE(refused(analyzeJob({{&job[0], trace::RankId{0}, 0}}, o), trace::ErrorCode::Invalid,
                        {"invalid iteration regex \"(\""}));
}

}  // namespace
}  // namespace vramscope::analysis
