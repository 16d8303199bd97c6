// Kernel lanes: windows, merging closer than a pixel, kernels at a time; the leak fit line and
// the allocations of a stack.
#include <gtest/gtest.h>

#include "vramscope/analysis/memory/leak_fit.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/analysis/time/kernel_lanes.h"

using namespace vramscope;
using analysis::LaneClass;

namespace {

trace::TraceData kernels(
    std::initializer_list<std::tuple<int64_t, int64_t, trace::KernelCategory>> list,
    trace::DeviceIndex device = trace::DeviceIndex{0}) {
    trace::TraceData data;
    for (const auto& [start, end, category] : list) {
        trace::KernelEvent k;
        k.startNs = start;
        k.endNs = end;
        k.device = device;
        k.category = category;
        data.kernels.append(k);
    }
    return data;
}

constexpr auto kCompute = trace::KernelCategory::Compute;
constexpr auto kComm = trace::KernelCategory::Communication;
constexpr auto kCopy = trace::KernelCategory::Memcpy;

}  // namespace

TEST(KernelLaneIndex, ReturnsOnlyKernelsOverlappingTheWindow) {
    // Out of start order on purpose; one long kernel starting early covers the window.
    const trace::TraceData data =
        kernels({{500, 600, kCompute}, {0, 100, kCompute}, {50, 1000, kComm}, {200, 300, kCopy}});
    const analysis::KernelLaneIndex index(data, trace::DeviceIndex{0});
    ASSERT_EQ(index.size(), 4u);
    EXPECT_EQ(index.firstStartNs(), 0);
    EXPECT_EQ(index.lastEndNs(), 1000);
    const analysis::LaneBlocks b = index.blocks(400, 700, 0);
    ASSERT_EQ(b.byClass[size_t(LaneClass::Compute)].size(), 1u);
    EXPECT_EQ(b.byClass[size_t(LaneClass::Compute)][0].startNs, 500);
    ASSERT_EQ(b.byClass[size_t(LaneClass::Communication)].size(), 1u);
    EXPECT_EQ(b.byClass[size_t(LaneClass::Communication)][0].endNs, 1000);
    EXPECT_TRUE(b.byClass[size_t(LaneClass::Memory)].empty());  // [200, 300) ends before 400
    // Busy: the all-reduce [50, 1000) and the compute kernel inside it merge into one block.
    ASSERT_EQ(b.busy.size(), 1u);
    EXPECT_EQ(b.busy[0].startNs, 50);
    EXPECT_EQ(b.busy[0].kernels, 2u);
    // A kernel ending exactly at the window start is not in it.
    EXPECT_TRUE(index.blocks(100, 150, 0).byClass[size_t(LaneClass::Compute)].empty());
}

TEST(KernelLaneIndex, MergesKernelsCloserThanThePixel) {
    const trace::TraceData data =
        kernels({{0, 10, kCompute}, {15, 20, kCompute}, {100, 130, kCompute}, {200, 210, kCopy}});
    const analysis::KernelLaneIndex index(data, trace::DeviceIndex{0});
    // Gaps 5 and 80: with 10 ns per pixel the first two merge, the third stays apart.
    const analysis::LaneBlocks fine = index.blocks(0, 1000, 10);
    const auto& c = fine.byClass[size_t(LaneClass::Compute)];
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].startNs, 0);
    EXPECT_EQ(c[0].endNs, 20);
    EXPECT_EQ(c[0].kernels, 2u);
    EXPECT_EQ(c[0].busyNs, 15);
    EXPECT_EQ(c[0].longestKernel, 0u);
    EXPECT_EQ(c[1].kernels, 1u);
    EXPECT_EQ(c[1].longestKernel, 2u);
    // With 100 ns per pixel, everything merges; busy covers all classes.
    const analysis::LaneBlocks coarse = index.blocks(0, 1000, 100);
    EXPECT_EQ(coarse.byClass[size_t(LaneClass::Compute)].size(), 1u);
    ASSERT_EQ(coarse.busy.size(), 1u);
    EXPECT_EQ(coarse.busy[0].endNs, 210);
    EXPECT_EQ(coarse.busy[0].kernels, 4u);
}

TEST(KernelLaneIndex, FindsTheKernelAtATimePerClassAndIgnoresOtherDevices) {
    trace::TraceData data = kernels({{0, 100, kCompute}, {40, 60, kComm}});
    trace::KernelEvent other;
    other.startNs = 0;
    other.endNs = 1000;
    other.device = trace::DeviceIndex{1};
    data.kernels.append(other);
    const analysis::KernelLaneIndex index(data, trace::DeviceIndex{0});
    EXPECT_EQ(index.size(), 2u);
    EXPECT_EQ(index.kernelAt(50, LaneClass::Compute), 0);
    EXPECT_EQ(index.kernelAt(50, LaneClass::Communication), 1);
    EXPECT_EQ(index.kernelAt(70, LaneClass::Communication), -1);
    EXPECT_EQ(index.kernelAt(100, LaneClass::Compute), -1);
    EXPECT_EQ(analysis::kernelDevices(data),
              (std::vector<trace::DeviceIndex>{trace::DeviceIndex{0}, trace::DeviceIndex{1}}));
}

TEST(LeakFitLine, PassesThroughExactlyLinearBaselines) {
    analysis::LeakReport r;
    for (int i = 0; i < 5; ++i) {
        r.iterations.push_back({i, 0, 0, 1000 + 250 * i, 5000});
    }
    r.slopeBytesPerIteration = analysis::theilSenSlope({1000, 1250, 1500, 1750, 2000});
    const analysis::LeakFitLine line = analysis::leakFitLine(r);
    EXPECT_DOUBLE_EQ(line.slopeBytesPerIteration, 250.0);
    EXPECT_DOUBLE_EQ(line.interceptBytes, 1000.0);
    EXPECT_DOUBLE_EQ(line.at(4), 2000.0);
    // One outlier moves neither the median slope much nor the median intercept.
    r.iterations[2].baselineBytes = 9000;
    r.slopeBytesPerIteration = 250.0;
    EXPECT_DOUBLE_EQ(analysis::leakFitLine(r).interceptBytes, 1000.0);
}

TEST(LeakFit, FindsEveryAllocationOfTheLeakingStack) {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 6;
    spec.leakBytesPerIteration = 32ull << 20;
    const trace::TraceData data = analysis::generateSyntheticRank(spec, 0);
    const analysis::AllocationIndex index(data, trace::DeviceIndex{0},
                                          trace::MemoryLevel::Allocated);
    auto iterations = analysis::findIterations(data, trace::DeviceIndex{0});
    ASSERT_TRUE(iterations.ok());
    ASSERT_EQ(iterations->count(), 6u);
    // The leak's stack: the allocation of leakBytesPerIteration bytes.
    trace::StackId leakStack{0};
    for (size_t i = 0; i < data.memory.size(); ++i) {
        if (data.memory.sizeBytes[i] == spec.leakBytesPerIteration &&
            data.memory.level[i] == trace::MemoryLevel::Allocated) {
            leakStack = data.memory.stack[i];
        }
    }
    const analysis::StackAllocations all =
        analysis::allocationsOfStack(data, index, leakStack, INT64_MAX);
    EXPECT_EQ(all.count, 6u);
    EXPECT_EQ(all.bytes, 6 * spec.leakBytesPerIteration);
    EXPECT_LT(all.firstNs, all.lastNs);
}
