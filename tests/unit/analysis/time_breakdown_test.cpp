#include "vramscope/analysis/time/time_breakdown.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {

using trace::KernelCategory;
using trace::KernelEvent;
using trace::TraceData;

void addCategoryKernel(TraceData& d, int64_t s, int64_t e, KernelCategory c, int64_t launch = -1,
                       trace::DeviceIndex device = trace::DeviceIndex{0}) {
    KernelEvent k;
    k.startNs = s;
    k.endNs = e;
    k.category = c;
    k.launchNs = launch;
    k.device = device;
    k.name = d.intern(trace::toString(c));
    d.kernels.append(k);
}

TEST(TimeBreakdown, FollowsTheDefinitionsOnAHandBuiltDevice) {
    TraceData d;
    // Out of order on purpose.
    addCategoryKernel(d, 50, 150, KernelCategory::Compute);
    addCategoryKernel(d, 0, 100, KernelCategory::Compute);
    addCategoryKernel(d, 120, 200, KernelCategory::Communication);
    addCategoryKernel(d, 300, 350, KernelCategory::Memcpy);
    addCategoryKernel(d, 400, 500, KernelCategory::Compute, 380);  // launched after 350: host-bound
    addCategoryKernel(d, 600, 700, KernelCategory::Communication, 450);  // collective wait
    addCategoryKernel(d, 800, 900, KernelCategory::Compute, 650);  // launched before 700: other
    addCategoryKernel(d, 5, 9, KernelCategory::Compute, -1,
                      trace::DeviceIndex{1});  // another device
    const auto all = computeTimeBreakdowns(d);
    ASSERT_EQ(all.size(), 2u);
    const TimeBreakdown& b = all[0];
    EXPECT_EQ(b.device, trace::DeviceIndex{0});
    EXPECT_EQ(b.kernels, 7u);
    EXPECT_EQ(b.spanNs, 900);
    EXPECT_EQ(b.computeNs, 150 + 100 + 100);
    EXPECT_EQ(b.communicationNs, 80 + 100);
    EXPECT_EQ(b.memoryNs, 50);
    EXPECT_EQ(b.overlapNs, 30);  // [120, 150)
    EXPECT_EQ(b.exposedCommunicationNs, 150);
    EXPECT_DOUBLE_EQ(b.overlapPct, 100.0 * 30 / 180);
    EXPECT_EQ(b.busyNs, 200 + 50 + 100 + 100 + 100);
    EXPECT_EQ(b.idleNs, 900 - 550);
    ASSERT_EQ(b.gaps.size(), 4u);
    // Largest first, ties earlier first: [200,300) other, [500,600) wait, [700,800) other,
    // [350,400)
    EXPECT_EQ(b.gaps[0].startNs, 200);
    EXPECT_EQ(b.gaps[0].cause, GapCause::Other);
    EXPECT_EQ(b.gaps[1].startNs, 500);
    EXPECT_EQ(b.gaps[1].cause, GapCause::CollectiveWait);
    EXPECT_EQ(b.gaps[2].startNs, 700);
    EXPECT_EQ(b.gaps[2].cause, GapCause::Other);
    EXPECT_EQ(b.gaps[3].startNs, 350);
    EXPECT_EQ(b.gaps[3].durationNs, 50);
    EXPECT_EQ(b.gaps[3].cause, GapCause::HostBound);
    EXPECT_EQ(b.gaps[3].kernelBefore, 3u);
    EXPECT_EQ(b.gaps[3].kernelAfter, 4u);
    EXPECT_EQ(b.gaps[0].kernelBefore, 2u);  // the communication kernel ends last at 200
    EXPECT_EQ(b.gapNsByCause[int(GapCause::Other)], 200);
    EXPECT_EQ(b.gapCountByCause[int(GapCause::HostBound)], 1);
    EXPECT_EQ(all[1].device, trace::DeviceIndex{1});
    EXPECT_EQ(all[1].spanNs, 4);
    EXPECT_EQ(all[1].idleNs, 0);
}

TEST(TimeBreakdown, KeepsOnlyTheLargestGaps) {
    TraceData d;
    for (int i = 0; i < 10; ++i) {
        addCategoryKernel(d, i * 100, i * 100 + 100 - i,
                          KernelCategory::Compute);  // gap i after kernel i
    }
    BreakdownOptions o;
    o.maxGaps = 3;
    o.minGapNs = 2;
    const auto all = computeTimeBreakdowns(d, o);
    ASSERT_EQ(all[0].gaps.size(), 3u);
    EXPECT_EQ(all[0].gaps[0].durationNs, 8);
    EXPECT_EQ(all[0].gaps[2].durationNs, 6);
    EXPECT_EQ(all[0].gapCountByCause[int(GapCause::Other)], 7);  // gaps of 2..8 ns
}

TEST(TimeBreakdown, UnionLength) {
    EXPECT_EQ(unionLength({{5, 10}, {0, 3}, {2, 6}, {20, 20}}), 10);
    EXPECT_EQ(unionLength({}), 0);
}

TEST(TimeBreakdown, FindsTheSyntheticGapsAndOverlapExactly) {
    SyntheticJobSpec spec;
    spec.ranks = 4;
    spec.iterations = 7;
    spec.stragglerRank = 2;
    spec.stragglerDelayNs = 1'500'000;
    spec.allReduceOverlapNs = 700'000;
    spec.hostGapNs = 900'000;
    const auto job = generateSyntheticJob(spec);
    // Expected values from the formulas at SyntheticJobSpec, written out independently.
    const int64_t n = spec.ranks, N = spec.iterations, K = spec.computeKernelsPerIteration;
    const int64_t d = spec.computeKernelNs, C = K * d, B = (K - K / 2) * d;
    const int64_t D = int64_t(std::ceil(double(spec.allReduceBytes) * 2 * double(n - 1) /
                                        double(n) / spec.busBandwidthBytesPerS * 1e9));
    const int64_t v = std::min({spec.allReduceOverlapNs, B, D});
    const int64_t s = spec.stragglerDelayNs, h = spec.hostGapNs;
    for (int r = 0; r < 4; ++r) {
        const auto all = computeTimeBreakdowns(job[size_t(r)]);
        ASSERT_EQ(all.size(), 1u);
        const TimeBreakdown& b = all[0];
        const int64_t sr = r == spec.stragglerRank ? s : 0;
        EXPECT_EQ(b.computeNs, N * C) << r;
        EXPECT_EQ(b.communicationNs, N * (s - sr + D)) << r;
        EXPECT_EQ(b.overlapNs, N * v) << r;
        EXPECT_EQ(b.exposedCommunicationNs, N * (s - sr + D - v)) << r;
        EXPECT_EQ(b.idleNs, (N - 1) * (h + sr)) << r;
        EXPECT_EQ(b.memoryNs, 0);
        ASSERT_EQ(b.gaps.size(), size_t(N - 1)) << r;
        for (const IdleGap& g : b.gaps) {
            EXPECT_EQ(g.durationNs, h + sr);
            EXPECT_EQ(g.cause,
                      GapCause::HostBound);  // launched 5 us before start, after the gap began
        }
        EXPECT_EQ(b.gapNsByCause[int(GapCause::HostBound)], (N - 1) * (h + sr));
    }
}

}  // namespace
}  // namespace vramscope::analysis
