// Slow-down: iteration periods and their parts on synthetic jobs whose growth follows from the
// generator's formulas (synthetic_job.h, slowDownStepNs), worked out by hand below, and on a
// hand-built trace for the per-window time breakdown it rests on.
#include <gtest/gtest.h>

#include <cmath>

#include "synthetic_job_analysis.h"
#include "test_units.h"
#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/analysis/time/slow_down.h"
#include "vramscope/analysis/time/time_breakdown.h"

namespace vramscope::analysis {
namespace {

using testdata::kMs;

using test::AnalysedSyntheticJob;

AnalysedSyntheticJob analyseOnOneThread(const SyntheticJobSpec& spec) {
    JobAnalysisOptions options;
    options.threads = 1;
    return test::analyseSyntheticJob(spec, options);
}

const AdviceAssessment* verdict(const JobAnalysis& job, int rank) {
    for (const AdviceAssessment& a : job.assessments) {
        if (a.rule == "slow-down" && toInt(a.rank) == rank) {
            return &a;
        }
    }
    return nullptr;
}

const Advice* advice(const JobAnalysis& job, int rank) {
    for (const Advice& a : job.advice) {
        if (a.rule == "slow-down" && toInt(a.rank) == rank) {
            return &a;
        }
    }
    return nullptr;
}

const DeviceAnalysis& deviceOf(const JobAnalysis& job, int rank) {
    for (const DeviceAnalysis& d : job.devices) {
        if (toInt(d.rank) == rank) {
            return d;
        }
    }
    ADD_FAILURE() << "no rank " << rank;
    return job.devices.front();
}

const PartGrowth& part(const SlowDownReport& r, IterationPart p) {
    for (const PartGrowth& g : r.parts) {
        if (g.part == p) {
            return g;
        }
    }
    ADD_FAILURE() << "no part " << toString(p);
    return r.parts.front();
}

/// 14 iterations, x = 1 ms: the iterations are not back to back (a host gap h follows each), so
/// there are 13 periods S_i -> S_{i+1} (i = 0..12), the warm-up i = 0 is left out, 12 steady
/// periods, thirds of 4: early i = 1..4, late i = 9..12. Period i = P + i x, so the early
/// median is P + 2.5 ms, the late one P + 10.5 ms: growth 8 ms; MAD of the early third: the
/// deviations 1.5, 0.5, 0.5, 1.5 ms have the median 1 ms.
SyntheticJobSpec growing(SyntheticSlowDown what, int ranks) {
    SyntheticJobSpec spec;
    spec.ranks = ranks;
    spec.iterations = 14;
    spec.slowDownStepNs = kMs;
    spec.slowDownPart = what;
    return spec;
}

// Defaults: C = 48 x 400 us = 19.2 ms, h = 1 ms, v = 0.
constexpr int64_t kC = 48 * 400'000;
constexpr int64_t kH = kMs;

int64_t allReduceNs(const SyntheticJobSpec& spec) {  // D, synthetic_job.h
    const int n = spec.ranks;
    return int64_t(std::ceil(double(spec.allReduceBytes) * 2 * (n - 1) / n /
                             spec.busBandwidthBytesPerS * 1e9));
}

void expectDurations(const SlowDownReport& r, int64_t period, int64_t step) {
    ASSERT_TRUE(r.assessable) << r.reason;
    ASSERT_EQ(r.iterations.size(), 13u);
    for (size_t i = 0; i < r.iterations.size(); ++i) {
        EXPECT_EQ(r.iterations[i].durationNs, period + int64_t(i) * step) << i;
        int64_t sum = 0;
        for (int64_t p : r.iterations[i].partNs) {
            sum += p;
        }
        EXPECT_EQ(sum, r.iterations[i].durationNs) << i;  // the parts add up
    }
    EXPECT_EQ(r.steadyIterations, 12u);
    EXPECT_EQ(r.thirdIterations, 4u);
    EXPECT_EQ(r.earlyMedianNs, period + 5 * step / 2);
    EXPECT_EQ(r.lateMedianNs, period + 21 * step / 2);
    EXPECT_EQ(r.growthNs(), 8 * step);
    EXPECT_EQ(r.earlyMadNs, step);
}

TEST(SlowDown, AGrowingAllReduceIsCommunicationTransfer) {
    const SyntheticJobSpec spec = growing(SyntheticSlowDown::AllReduce, 2);
    const int64_t D = allReduceNs(spec);  // ceil(512 MiB x 2 x 1/2 / 100 GB/s) = 5,368,710 ns
    ASSERT_EQ(D, 5'368'710);
    const AnalysedSyntheticJob a = analyseOnOneThread(spec);
    for (int rank : {0, 1}) {
        const SlowDownReport& r = deviceOf(a.job, rank).slowDown;
        expectDurations(r, kC + D + kH, kMs);
        EXPECT_TRUE(r.waitKnown);
        EXPECT_EQ(r.parts.front().part, IterationPart::Transfer);
        EXPECT_EQ(part(r, IterationPart::Transfer).earlyMedianNs, D + 5 * kMs / 2);
        EXPECT_EQ(part(r, IterationPart::Transfer).growthNs(), 8 * kMs);
        EXPECT_EQ(part(r, IterationPart::Compute).growthNs(), 0);
        EXPECT_EQ(part(r, IterationPart::Wait).growthNs(), 0);  // both ranks arrive together
        EXPECT_EQ(part(r, IterationPart::HostBound).earlyMedianNs, kH);
        // Noise = max(3 x 1.4826 x 1 ms, 5 % of the early median) = 4.4478 ms < 8 ms.
        const AdviceAssessment* v = verdict(a.job, rank);
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(v->outcome, AssessmentOutcome::Fired) << v->detail;
        EXPECT_NE(v->detail.find("+8.00 ms"), std::string::npos) << v->detail;
        EXPECT_NE(v->detail.find("noise 4.45 ms"), std::string::npos) << v->detail;
        const Advice* adv = advice(a.job, rank);
        ASSERT_NE(adv, nullptr);
        EXPECT_EQ(adv->severity, Severity::Warning);
        EXPECT_NE(adv->message.find("communication transfer +8.00 ms of it"), std::string::npos)
            << adv->message;
        EXPECT_NE(adv->message.find("check the interconnect before the code"), std::string::npos);
    }
}

TEST(SlowDown, AGrowingHostGapIsHostBound) {
    const SyntheticJobSpec spec = growing(SyntheticSlowDown::HostGap, 1);
    const AnalysedSyntheticJob a = analyseOnOneThread(spec);
    const SlowDownReport& r = deviceOf(a.job, 0).slowDown;
    expectDurations(r, kC + kH, kMs);  // one rank: no all-reduce (D = 0)
    EXPECT_FALSE(r.waitKnown);
    EXPECT_EQ(r.parts.front().part, IterationPart::HostBound);
    EXPECT_EQ(part(r, IterationPart::HostBound).earlyMedianNs, kH + 5 * kMs / 2);
    EXPECT_EQ(part(r, IterationPart::HostBound).lateMedianNs, kH + 21 * kMs / 2);
    const Advice* adv = advice(a.job, 0);
    ASSERT_NE(adv, nullptr);
    EXPECT_NE(adv->message.find("iterations grew from 22.7 ms to 30.7 ms"), std::string::npos)
        << adv->message;  // P = 20.2 ms, + 2.5 ms and + 10.5 ms
    EXPECT_NE(adv->message.find("host-bound gaps +8.00 ms of it"), std::string::npos)
        << adv->message;
    EXPECT_NE(adv->message.find("data loading"), std::string::npos);
}

TEST(SlowDown, AGrowingStragglerIsWaitingForItOnTheOthers) {
    SyntheticJobSpec spec = growing(SyntheticSlowDown::Straggler, 4);
    spec.stragglerRank = 3;
    const int64_t D = allReduceNs(spec), s = spec.stragglerDelayNs;
    const AnalysedSyntheticJob a = analyseOnOneThread(spec);
    // Rank 0: period S_i -> S_{i+1} = P + i x with P = s + C + D + h; in the all-reduce it waits
    // s_i = s + i x for rank 3, then transfers D.
    const SlowDownReport& r0 = deviceOf(a.job, 0).slowDown;
    expectDurations(r0, s + kC + D + kH, kMs);
    EXPECT_EQ(r0.parts.front().part, IterationPart::Wait);
    EXPECT_EQ(part(r0, IterationPart::Wait).earlyMedianNs, s + 5 * kMs / 2);
    EXPECT_EQ(part(r0, IterationPart::Wait).growthNs(), 8 * kMs);
    EXPECT_EQ(part(r0, IterationPart::Transfer).growthNs(), 0);
    EXPECT_EQ(part(r0, IterationPart::Transfer).earlyMedianNs, D);
    EXPECT_EQ(toInt(r0.lateLastRank), 3);
    const Advice* adv = advice(a.job, 0);
    ASSERT_NE(adv, nullptr);
    EXPECT_NE(adv->message.find("waiting for rank 3 +8.00 ms of it"), std::string::npos)
        << adv->message;
    // Rank 3 itself starts s_i late: its own period is P + (i + 1) x, the growth sits in the
    // host-bound gap before each of its iterations (h + s_i), and it waits for no one.
    const SlowDownReport& r3 = deviceOf(a.job, 3).slowDown;
    ASSERT_TRUE(r3.assessable);
    EXPECT_EQ(r3.iterations[0].durationNs, s + kC + D + kH + kMs);
    EXPECT_EQ(r3.parts.front().part, IterationPart::HostBound);
    EXPECT_EQ(part(r3, IterationPart::HostBound).growthNs(), 8 * kMs);
    EXPECT_EQ(part(r3, IterationPart::Wait).lateMedianNs, 0);
}

TEST(SlowDown, SteadyJobsAreClear) {
    for (int ranks : {1, 2, 4}) {
        SyntheticJobSpec spec;
        spec.ranks = ranks;
        spec.iterations = 14;
        if (ranks == 4) {
            spec.stragglerRank = 1;  // late by the same 2 ms every time: steady, not slower
        }
        const AnalysedSyntheticJob a = analyseOnOneThread(spec);
        for (int rank = 0; rank < ranks; ++rank) {
            const SlowDownReport& r = deviceOf(a.job, rank).slowDown;
            ASSERT_TRUE(r.assessable) << r.reason;
            EXPECT_EQ(r.growthNs(), 0);
            EXPECT_EQ(r.earlyMadNs, 0);
            const AdviceAssessment* v = verdict(a.job, rank);
            ASSERT_NE(v, nullptr);
            EXPECT_EQ(v->outcome, AssessmentOutcome::Clear) << v->detail;
            EXPECT_NE(v->detail.find("+0 ns (+0.0 %) <= noise"), std::string::npos) << v->detail;
            EXPECT_EQ(advice(a.job, rank), nullptr);
        }
    }
}

TEST(SlowDown, GrowthWithinTheNoiseIsClear) {
    // x = 10 us: growth 80 us; noise = max(3 x 1.4826 x 10 us, 5 % of ~22.7 ms) = 1.14 ms.
    SyntheticJobSpec spec = growing(SyntheticSlowDown::HostGap, 1);
    spec.slowDownStepNs = 10'000;
    const AnalysedSyntheticJob a = analyseOnOneThread(spec);
    EXPECT_EQ(deviceOf(a.job, 0).slowDown.growthNs(), 80'000);
    const AdviceAssessment* v = verdict(a.job, 0);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->outcome, AssessmentOutcome::Clear) << v->detail;
}

TEST(SlowDown, TooFewIterationsOrNoKernelsIsNotAssessed) {
    SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 6;  // 5 periods, 4 after the warm-up < 6
    AnalysedSyntheticJob a = analyseOnOneThread(spec);
    const AdviceAssessment* v = verdict(a.job, 0);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->outcome, AssessmentOutcome::NotAssessed);
    EXPECT_NE(v->detail.find("4 iterations after the warm-up; the rule needs at least 6"),
              std::string::npos)
        << v->detail;
    spec.iterations = 3;  // 2 periods: no thirds at all
    a = analyseOnOneThread(spec);
    EXPECT_FALSE(deviceOf(a.job, 0).slowDown.assessable);
    v = verdict(a.job, 0);
    ASSERT_NE(v, nullptr);
    EXPECT_NE(v->detail.find("1 iteration after the warm-up; the rule needs at least 6"),
              std::string::npos)
        << v->detail;
    EXPECT_NE(deviceOf(a.job, 0).slowDown.reason.find("need at least 3"), std::string::npos);

    trace::TraceData d;  // iterations and memory, no kernel (what a memory snapshot gives)
    for (int i = 0; i < 10; ++i) {
        d.ranges.append({i * kMs, (i + 1) * kMs, d.intern("iteration " + std::to_string(i)), 0, 0,
                         trace::kHostDevice, trace::RangeKind::Iteration});
    }
    const IterationSet its = findIterations(d, trace::DeviceIndex{0}).value();
    const SlowDownReport r = slowDown(d, trace::DeviceIndex{0}, its, nullptr, trace::RankId{0}, 0);
    EXPECT_FALSE(r.assessable);
    EXPECT_NE(r.reason.find("no kernels"), std::string::npos) << r.reason;
}

TEST(SlowDown, BackToBackIterationsKeepTheLastOne) {
    trace::TraceData d;  // 8 back-to-back iterations of 10 ms, one kernel each
    for (int i = 0; i < 8; ++i) {
        d.ranges.append({i * 10 * kMs, (i + 1) * 10 * kMs,
                         d.intern("iteration " + std::to_string(i)), 0, 0, trace::kHostDevice,
                         trace::RangeKind::Iteration});
        trace::KernelEvent k;
        k.startNs = i * 10 * kMs + kMs;
        k.endNs = i * 10 * kMs + 9 * kMs;
        k.name = d.intern("gemm");
        d.kernels.append(k);
    }
    const IterationSet its = findIterations(d, trace::DeviceIndex{0}).value();
    const SlowDownReport r = slowDown(d, trace::DeviceIndex{0}, its, nullptr, trace::RankId{0}, 0);
    ASSERT_TRUE(r.assessable) << r.reason;
    ASSERT_EQ(r.iterations.size(), 8u);
    EXPECT_EQ(r.iterations[7].durationNs, 10 * kMs);
    // Launch times unknown: the 2 ms without kernels are other idle, not host-bound.
    EXPECT_EQ(r.iterations[7].partNs[size_t(IterationPart::Compute)], 8 * kMs);
    EXPECT_EQ(r.iterations[7].partNs[size_t(IterationPart::OtherIdle)], 2 * kMs);
}

TEST(WindowBreakdown, ClipsKernelsToEachWindowAndAddsUp) {
    trace::TraceData d;
    auto kernel = [&](int64_t s, int64_t e, trace::KernelCategory c, int64_t launch) {
        trace::KernelEvent k;
        k.startNs = s;
        k.endNs = e;
        k.category = c;
        k.launchNs = launch;
        k.name = d.intern("k");
        d.kernels.append(k);
    };
    kernel(0, 10, trace::KernelCategory::Compute, -1);
    kernel(5, 20, trace::KernelCategory::Communication, -1);
    kernel(30, 40, trace::KernelCategory::Compute, 25);  // launched after the gap began: host
    const auto w = computeWindowBreakdowns(d, trace::DeviceIndex{0}, {{0, 15}, {15, 50}, {50, 60}});
    ASSERT_EQ(w.size(), 3u);
    // [0, 15): compute [0, 10), communication [5, 15): overlap 5, busy 15, no gap.
    EXPECT_EQ(w[0].computeNs, 10);
    EXPECT_EQ(w[0].communicationNs, 10);
    EXPECT_EQ(w[0].overlapNs, 5);
    EXPECT_EQ(w[0].exposedCommunicationNs, 5);
    EXPECT_EQ(w[0].busyNs, 15);
    EXPECT_EQ(w[0].idleNs, 0);
    // [15, 50): communication [15, 20), compute [30, 40), the host-bound gap [20, 30).
    EXPECT_EQ(w[1].computeNs, 10);
    EXPECT_EQ(w[1].communicationNs, 5);
    EXPECT_EQ(w[1].busyNs, 15);
    EXPECT_EQ(w[1].spanNs, 25);
    EXPECT_EQ(w[1].idleNs, 10);
    EXPECT_EQ(w[1].gapNsByCause[int(GapCause::HostBound)], 10);
    ASSERT_EQ(w[1].gaps.size(), 1u);
    EXPECT_EQ(w[1].gaps[0].startNs, 20);
    // [50, 60): nothing.
    EXPECT_EQ(w[2].kernels, 0u);
    EXPECT_EQ(w[2].busyNs, 0);
    // The windows tile the trace: their sums are the whole device's figures.
    const TimeBreakdown whole = computeTimeBreakdowns(d).at(0);
    // A cut inside the host-bound gap [20, 30): [20, 25) trails window 0 and [25, 30) leads
    // window 1, both host-bound (the kernel that ends the gap was launched at 25 > 20).
    const auto cut = computeWindowBreakdowns(d, trace::DeviceIndex{0}, {{0, 25}, {25, 50}});
    EXPECT_EQ(cut[0].gapNsByCause[int(GapCause::HostBound)], 5);
    EXPECT_EQ(cut[1].gapNsByCause[int(GapCause::HostBound)], 5);
    EXPECT_EQ(cut[0].spanNs, 25);
    EXPECT_EQ(cut[1].spanNs, 15);  // [25, 40)
    EXPECT_EQ(cut[0].idleNs + cut[1].idleNs, whole.idleNs);
    EXPECT_EQ(w[0].computeNs + w[1].computeNs, whole.computeNs);
    EXPECT_EQ(w[0].communicationNs + w[1].communicationNs, whole.communicationNs);
    EXPECT_EQ(w[0].busyNs + w[1].busyNs, whole.busyNs);
    EXPECT_EQ(w[0].overlapNs + w[1].overlapNs, whole.overlapNs);
}

TEST(WindowBreakdown, IterationWindowsOfTheSyntheticJobAddUpToTheDevice) {
    SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 5;
    spec.allReduceOverlapNs = 2 * kMs;  // some overlap to add up
    const auto job = generateSyntheticJob(spec);
    const trace::TraceData& d = job[0];
    const TimeBreakdown whole = computeTimeBreakdowns(d).at(0);
    // Windows of 0.7 ms tiling the span: they cut kernels and gaps everywhere.
    std::vector<std::pair<int64_t, int64_t>> tiles;
    for (int64_t t = whole.firstStartNs; t < whole.lastEndNs; t += 700'000) {
        tiles.emplace_back(t, std::min(t + 700'000, whole.lastEndNs));
    }
    const auto parts = computeWindowBreakdowns(d, trace::DeviceIndex{0}, tiles);
    TimeBreakdown sum;
    for (const TimeBreakdown& b : parts) {
        sum.computeNs += b.computeNs;
        sum.communicationNs += b.communicationNs;
        sum.overlapNs += b.overlapNs;
        sum.busyNs += b.busyNs;
        sum.idleNs += b.idleNs;
        sum.spanNs += b.spanNs;
        for (int c = 0; c < 3; ++c) {
            sum.gapNsByCause[c] += b.gapNsByCause[c];
        }
    }
    EXPECT_EQ(sum.computeNs, whole.computeNs);
    EXPECT_EQ(sum.communicationNs, whole.communicationNs);
    EXPECT_EQ(sum.overlapNs, whole.overlapNs);
    EXPECT_EQ(sum.busyNs, whole.busyNs);
    EXPECT_EQ(sum.idleNs, whole.idleNs);
    EXPECT_EQ(sum.spanNs, whole.spanNs);
    for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(sum.gapNsByCause[c], whole.gapNsByCause[c]) << c;
    }
    EXPECT_GT(whole.gapNsByCause[int(GapCause::HostBound)], 0);
}

}  // namespace
}  // namespace vramscope::analysis
