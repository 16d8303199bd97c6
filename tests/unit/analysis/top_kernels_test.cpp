#include "vramscope/analysis/time/top_kernels.h"

#include <gtest/gtest.h>

#include "vramscope/analysis/time/time_breakdown.h"

namespace vramscope::analysis {
namespace {

using trace::DeviceIndex;
using trace::KernelCategory;
using trace::KernelEvent;
using trace::TraceData;

void addNamedKernel(TraceData& d, const char* name, int64_t s, int64_t e, KernelCategory c,
                    uint64_t stream, DeviceIndex device = DeviceIndex{0}) {
    KernelEvent k;
    k.startNs = s;
    k.endNs = e;
    k.category = c;
    k.stream = stream;
    k.device = device;
    k.name = d.intern(name);
    d.kernels.append(k);
}

/// Two streams on GPU 0 whose kernels overlap, and one kernel on GPU 1.
///   stream 7: gemm [0, 100), gemm [200, 260), memcpy [400, 420)
///   stream 9: nccl [50, 250), relu [300, 310), relu [305, 315) (a second launch, overlapping)
/// busy = |[0, 260) u [300, 315) u [400, 420)| = 260 + 15 + 20 = 295.
TraceData twoStreams() {
    TraceData d;
    addNamedKernel(d, "gemm", 200, 260, KernelCategory::Compute, 7);
    addNamedKernel(d, "nccl", 50, 250, KernelCategory::Communication, 9);
    addNamedKernel(d, "gemm", 0, 100, KernelCategory::Compute, 7);
    addNamedKernel(d, "relu", 300, 310, KernelCategory::Compute, 9);
    addNamedKernel(d, "relu", 305, 315, KernelCategory::Compute, 9);
    addNamedKernel(d, "Memcpy HtoD", 400, 420, KernelCategory::Memcpy, 7);
    addNamedKernel(d, "gemm", 10, 40, KernelCategory::Compute, 1, DeviceIndex{1});
    addNamedKernel(d, "bad", 90, 80, KernelCategory::Compute, 7);  // end < start: skipped
    return d;
}

TEST(TopKernels, SumsPerNameAndCategoryWithBusyFromTheUnionOnOverlappingStreams) {
    const TraceData d = twoStreams();
    const auto all = topKernels(d);
    ASSERT_EQ(all.size(), 2u);
    const DeviceKernelTimes& t = all[0];
    EXPECT_EQ(t.device, DeviceIndex{0});
    EXPECT_EQ(t.busyNs, 295);
    EXPECT_EQ(t.kernels, 6u);
    EXPECT_EQ(t.kernelNames, 4u);
    ASSERT_EQ(t.byName.size(), 4u);
    // nccl 200, gemm 100 + 60 = 160, relu 10 + 10 = 20, Memcpy 20: the tie goes by name.
    EXPECT_EQ(t.byName[0].name, "nccl");
    EXPECT_EQ(t.byName[0].category, KernelCategory::Communication);
    EXPECT_EQ(t.byName[0].totalNs, 200);
    EXPECT_EQ(t.byName[0].count, 1u);
    EXPECT_DOUBLE_EQ(t.byName[0].busyShare, 200.0 / 295.0);
    EXPECT_EQ(t.byName[1].name, "gemm");
    EXPECT_EQ(t.byName[1].count, 2u);
    EXPECT_EQ(t.byName[1].totalNs, 160);
    EXPECT_EQ(t.byName[1].maxNs, 100);
    EXPECT_DOUBLE_EQ(t.byName[1].busyShare, 160.0 / 295.0);
    EXPECT_EQ(t.byName[2].name, "Memcpy HtoD");  // 'M' < 'r'
    EXPECT_EQ(t.byName[2].category, KernelCategory::Memcpy);
    EXPECT_EQ(t.byName[3].name, "relu");
    EXPECT_EQ(t.byName[3].totalNs, 20);  // both launches, though they overlap each other
    EXPECT_EQ(t.byName[3].maxNs, 10);
    // Concurrent kernels: the shares sum above 100 % (400 / 295).
    double shares = 0;
    for (const KernelTime& k : t.byName) {
        shares += k.busyShare;
    }
    EXPECT_DOUBLE_EQ(shares, 400.0 / 295.0);
    ASSERT_EQ(t.byCategory.size(), 3u);
    EXPECT_EQ(t.byCategory[0].name, "communication");
    EXPECT_EQ(t.byCategory[0].totalNs, 200);
    EXPECT_EQ(t.byCategory[1].name, "compute");
    EXPECT_EQ(t.byCategory[1].totalNs, 180);
    EXPECT_EQ(t.byCategory[1].count, 4u);
    EXPECT_EQ(t.byCategory[1].maxNs, 100);
    EXPECT_EQ(t.byCategory[2].name, "memcpy");
    EXPECT_EQ(t.otherNames, 0u);
    EXPECT_EQ(t.otherTotalNs, 0);

    const DeviceKernelTimes& one = all[1];
    EXPECT_EQ(one.device, DeviceIndex{1});
    EXPECT_EQ(one.busyNs, 30);
    ASSERT_EQ(one.byName.size(), 1u);
    EXPECT_DOUBLE_EQ(one.byName[0].busyShare, 1.0);
}

TEST(TopKernels, BusyIsTheTimeBreakdownsBusy) {
    const TraceData d = twoStreams();
    const auto breakdowns = computeTimeBreakdowns(d);
    const auto times = topKernels(d);
    ASSERT_EQ(breakdowns.size(), times.size());
    for (size_t i = 0; i < times.size(); ++i) {
        EXPECT_EQ(times[i].device, breakdowns[i].device);
        EXPECT_EQ(times[i].busyNs, breakdowns[i].busyNs);
    }
}

TEST(TopKernels, LimitKeepsTheLargestAndSumsTheRest) {
    const TraceData d = twoStreams();
    const DeviceKernelTimes t = topKernels(d, 2)[0];
    ASSERT_EQ(t.byName.size(), 2u);
    EXPECT_EQ(t.kernelNames, 4u);
    EXPECT_EQ(t.byName[0].name, "nccl");
    EXPECT_EQ(t.byName[1].name, "gemm");
    EXPECT_EQ(t.otherNames, 2u);    // Memcpy HtoD and relu
    EXPECT_EQ(t.otherCount, 3u);    // 1 + 2 launches
    EXPECT_EQ(t.otherTotalNs, 40);  // 20 + 20
    EXPECT_DOUBLE_EQ(t.otherBusyShare, 40.0 / 295.0);
    EXPECT_EQ(t.byCategory.size(), 3u);  // categories are never cut
    EXPECT_EQ(topKernels(d, 0)[0].byName.size(), 4u);
}

TEST(TopKernels, SameNameUnderTwoStringIdsIsOneRowAndTwoCategoriesTwoRows) {
    TraceData d;
    addNamedKernel(d, "k", 0, 10, KernelCategory::Compute, 1);
    // A second string id holding the same text, as a file with a repeated string gives.
    d.strings.push_back("k");
    KernelEvent k;
    k.startNs = 20;
    k.endNs = 50;
    k.name = trace::StringId(d.strings.size() - 1);
    d.kernels.append(k);
    addNamedKernel(d, "k", 60, 65, KernelCategory::Memset, 1);
    const DeviceKernelTimes t = topKernels(d)[0];
    ASSERT_EQ(t.byName.size(), 2u);
    EXPECT_EQ(t.byName[0].category, KernelCategory::Compute);
    EXPECT_EQ(t.byName[0].count, 2u);
    EXPECT_EQ(t.byName[0].totalNs, 40);
    EXPECT_EQ(t.byName[0].maxNs, 30);
    EXPECT_EQ(t.byName[1].category, KernelCategory::Memset);
    EXPECT_EQ(t.byName[1].totalNs, 5);
}

TEST(TopKernels, NoKernelsGivesNoDevice) {
    TraceData d;
    EXPECT_TRUE(topKernels(d).empty());
}

}  // namespace
}  // namespace vramscope::analysis
