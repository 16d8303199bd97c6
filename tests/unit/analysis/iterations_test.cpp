#include "vramscope/analysis/iterations.h"

#include <gtest/gtest.h>

#include <random>

namespace vramscope::analysis {
namespace {

using trace::MemoryAction;
using trace::MemoryEvent;
using trace::MemoryLevel;
using trace::RangeEvent;
using trace::RangeKind;
using trace::TraceData;

void addRange(TraceData& d, const std::string& name, int64_t s, int64_t e, RangeKind kind,
              trace::DeviceIndex device = trace::kHostDevice, uint32_t depth = 0) {
    RangeEvent r;
    r.startNs = s;
    r.endNs = e;
    r.name = d.intern(name);
    r.kind = kind;
    r.device = device;
    r.depth = depth;
    r.threadId = 1;
    d.ranges.append(r);
}

TEST(Iterations, TakesIterationRangesWithTheirNumbers) {
    TraceData d;
    for (int i = 0; i < 5; ++i) {
        addRange(d, "iteration " + std::to_string(i + 3), 1000 * i, 1000 * i + 900,
                 RangeKind::Iteration);
        addRange(d, "forward", 1000 * i, 1000 * i + 400, RangeKind::Nvtx, trace::kHostDevice, 1);
    }
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::Ranges);
    ASSERT_EQ(set->count(), 5u);
    EXPECT_EQ(set->iterations[0].number, 3);
    EXPECT_EQ(set->iterations[4].number, 7);
    EXPECT_EQ(set->iterations[2].startNs, 2000);
    EXPECT_EQ(set->iterations[2].endNs, 2900);
    EXPECT_EQ(set->medianDurationNs(), 900);
}

TEST(Iterations, PrefersHostProfilerStepsOverTheirGpuProjection) {
    TraceData d;
    for (int i = 0; i < 3; ++i) {
        addRange(d, "ProfilerStep#" + std::to_string(10 + i), 100 * i, 100 * i + 90,
                 RangeKind::UserAnnotation);
        addRange(d, "ProfilerStep#" + std::to_string(10 + i), 100 * i + 5, 100 * i + 95,
                 RangeKind::GpuAnnotation, trace::DeviceIndex{0});
    }
    addRange(d, "ProfilerStep#99", 50, 60, RangeKind::UserAnnotation);  // nested: dropped
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::Ranges);
    ASSERT_EQ(set->count(), 3u);
    EXPECT_EQ(set->iterations[1].number, 11);
    EXPECT_EQ(set->iterations[1].startNs, 100);
}

TEST(Iterations, UsesGpuAnnotationsOfTheDeviceWhenOnlyThoseExist) {
    TraceData d;
    addRange(d, "ProfilerStep#1", 0, 10, RangeKind::GpuAnnotation, trace::DeviceIndex{1});
    addRange(d, "ProfilerStep#2", 10, 20, RangeKind::GpuAnnotation, trace::DeviceIndex{1});
    addRange(d, "ProfilerStep#3", 10, 20, RangeKind::GpuAnnotation, trace::DeviceIndex{2});
    auto set = findIterations(d, trace::DeviceIndex{1});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->count(), 2u);
}

TEST(Iterations, RegexReplacesTheDefaultNames) {
    TraceData d;
    for (int i = 0; i < 4; ++i) {
        addRange(d, "train_step_" + std::to_string(i), 100 * i, 100 * i + 50, RangeKind::Nvtx);
        addRange(d, "iteration " + std::to_string(i), 100 * i, 100 * i + 90, RangeKind::Nvtx);
    }
    IterationOptions o;
    o.regex = "^train_step_\\d+$";
    auto set = findIterations(d, trace::DeviceIndex{0}, o);
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::Regex);
    ASSERT_EQ(set->count(), 4u);
    EXPECT_EQ(set->iterations[3].number, 3);
    EXPECT_EQ(set->iterations[3].endNs, 350);
}

TEST(Iterations, InvalidRegexIsAnError) {
    TraceData d;
    IterationOptions o;
    o.regex = "([";
    auto set = findIterations(d, trace::DeviceIndex{0}, o);
    ASSERT_FALSE(set.ok());
    EXPECT_NE(set.error().message.find("regex"), std::string::npos);
}

/// A periodic allocation sequence: every iteration allocates the same 6 tensors (sizes and stacks
/// repeat; the third and fourth repeat a "layer" pattern) and frees them.
TraceData periodicTrace(int iterations, int64_t& periodNs) {
    TraceData d;
    const uint64_t sizes[] = {1000, 4000, 2000, 2000, 8000, 500};
    trace::StackId stacks[6];
    for (int k = 0; k < 6; ++k) {
        const trace::FrameId f =
            d.internFrame({d.intern("f" + std::to_string(k % 4)), d.intern("train.py"), 10 + k});
        stacks[k] = d.internStack({f});
    }
    int64_t t = 100;
    periodNs = 6 * 10 + 6 * 10;
    for (int i = 0; i < iterations; ++i) {
        for (int k = 0; k < 6; ++k) {
            d.memory.append(MemoryEvent{t, 0x1000u + uint64_t(k) * 0x10000, sizes[k],
                                        MemoryAction::Alloc, MemoryLevel::Allocated,
                                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 7,
                                        stacks[k], 0});
            t += 10;
        }
        for (int k = 5; k >= 0; --k) {
            d.memory.append(MemoryEvent{t, 0x1000u + uint64_t(k) * 0x10000, sizes[k],
                                        MemoryAction::Free, MemoryLevel::Allocated,
                                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 7,
                                        stacks[k], 0});
            t += 10;
        }
    }
    return d;
}

TEST(Iterations, DetectsThePeriodOfTheAllocationSequence) {
    int64_t period = 0;
    TraceData d = periodicTrace(12, period);
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::Detected);
    EXPECT_EQ(set->periodAllocations, 6);
    EXPECT_DOUBLE_EQ(set->periodScore, 1.0);
    // Whole periods only: each is bounded by the first allocation of the next one.
    ASSERT_EQ(set->count(), 11u);
    for (size_t i = 0; i < set->count(); ++i) {
        // The lowest allocated bytes (0) are just before the first allocation of an iteration.
        EXPECT_EQ(set->iterations[i].startNs, 100 + int64_t(i) * period);
        EXPECT_EQ(set->iterations[i].endNs, 100 + int64_t(i + 1) * period);
    }
}

TEST(Iterations, NoneWithoutRangesOrStructure) {
    TraceData d;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 300; ++i) {
        d.memory.append(MemoryEvent{i * 10, uint64_t(i) * 64, 1 + rng() % 100000,
                                    MemoryAction::Alloc, MemoryLevel::Allocated,
                                    trace::MemoryKind::Pool, trace::DeviceIndex{0}, 7,
                                    trace::StackId{0}, 0});
    }
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::None);
    EXPECT_EQ(set->count(), 0u);
    EXPECT_STREQ(toString(set->source), "none");
}

}  // namespace
}  // namespace vramscope::analysis
