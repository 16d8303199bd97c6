#include "vramscope/analysis/time/iterations.h"

#include "vramscope/analysis/synthetic_job.h"

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

TEST(Iterations, RegexReplacesTheDefaultNamesAndMeasuresStartToStart) {
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
    EXPECT_DOUBLE_EQ(set->confidence, 1.0);
    // Four matches, three whole iterations: each from a match's start to the next one's start,
    // not the 50 ns of the range itself.
    ASSERT_EQ(set->count(), 3u);
    EXPECT_EQ(set->iterations[2].number, 2);
    EXPECT_EQ(set->iterations[2].startNs, 200);
    EXPECT_EQ(set->iterations[2].endNs, 300);
    EXPECT_EQ(set->medianDurationNs(), 100);
}

TEST(Iterations, RegexMatchingOneRangeGivesNoIterationStructure) {
    TraceData d;
    addRange(d, "train_step_0", 0, 50, RangeKind::Nvtx);
    IterationOptions o;
    o.regex = "train_step";
    auto set = findIterations(d, trace::DeviceIndex{0}, o);
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::None);
    EXPECT_EQ(set->count(), 0u);
    EXPECT_NE(set->reason.find("1 ranges match"), std::string::npos) << set->reason;
}

TEST(Iterations, NameRuleTakesWholeStepNamesOnly) {
    for (const char* yes : {"iteration 7", "Iteration 7", "ITER_3", "step", "Step#12", "step:4",
                            "train_step", "training step 12", "train-step-3", "trainstep"}) {
        EXPECT_TRUE(isIterationName(yes)) << yes;
    }
    for (const char* no : {"Optimizer.step#AdamW.step", "stepper", "step_fn", "train", "iterate",
                           "forward step", "step 3 of 5", "ProfilerStep#3", ""}) {
        EXPECT_FALSE(isIterationName(no)) << no;
    }
}

TEST(Iterations, OptimizerRuleTakesStepAndZeroGradMarkers) {
    for (const char* yes : {"Optimizer.step#AdamW.step", "optimizer.step", "optimizer_step",
                            "Optimizer step", "optimizer"}) {
        EXPECT_TRUE(isOptimizerStepName(yes)) << yes;
    }
    for (const char* no : {"Optimizer.zero_grad#SGD.zero_grad", "optimizer.stepper",
                           "optimizer_state", "my_optimizer.step", "step"}) {
        EXPECT_FALSE(isOptimizerStepName(no)) << no;
    }
    EXPECT_TRUE(isOptimizerZeroGradName("Optimizer.zero_grad#SGD.zero_grad"));
    EXPECT_FALSE(isOptimizerZeroGradName("Optimizer.step#SGD.step"));
}

TEST(Iterations, OptimizerStepsGiveStartToStartIterationsWithoutNestedMarkers) {
    TraceData d;
    // Four steps of 1000 ns; an inner optimizer's step nested in the outer one (as the
    // HolisticTraceAnalysis sampled traces have Shampoo.step inside EMAOptimizer.step).
    for (int i = 0; i < 4; ++i) {
        addRange(d, "Optimizer.step#EMAOptimizer.step", 1000 * i + 700, 1000 * i + 760,
                 RangeKind::UserAnnotation);
        addRange(d, "Optimizer.step#Shampoo.step", 1000 * i + 710, 1000 * i + 750,
                 RangeKind::UserAnnotation, trace::kHostDevice, 1);
        addRange(d, "Optimizer.zero_grad#EMAOptimizer.zero_grad", 1000 * i + 770, 1000 * i + 780,
                 RangeKind::UserAnnotation);
        addRange(d, "forward", 1000 * i, 1000 * i + 300, RangeKind::Nvtx);
    }
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::OptimizerSteps);
    EXPECT_STREQ(toString(set->source), "optimizer steps");
    ASSERT_EQ(set->count(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(set->iterations[i].startNs, 1000 * int64_t(i) + 700);
        EXPECT_EQ(set->iterations[i].endNs, 1000 * int64_t(i) + 1700);
        EXPECT_EQ(set->iterations[i].name, "Optimizer.step#EMAOptimizer.step");
    }
}

TEST(Iterations, ZeroGradMarkersServeWithoutOptimizerSteps) {
    TraceData d;
    for (int i = 0; i < 3; ++i) {
        addRange(d, "Optimizer.zero_grad#SGD.zero_grad", 500 * i, 500 * i + 10,
                 RangeKind::UserAnnotation, trace::DeviceIndex{0});
    }
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::OptimizerSteps);
    ASSERT_EQ(set->count(), 2u);
    EXPECT_EQ(set->iterations[1].startNs, 500);
    EXPECT_EQ(set->iterations[1].endNs, 1000);
}

TEST(Iterations, MarkerTiersWinInOrder) {
    TraceData d;
    for (int i = 0; i < 3; ++i) {
        addRange(d, "Optimizer.step#SGD.step", 100 * i + 80, 100 * i + 90,
                 RangeKind::UserAnnotation);
        addRange(d, "train_step", 100 * i + 1, 100 * i + 95, RangeKind::Nvtx);
    }
    // Named ranges beat optimizer steps...
    auto named = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(named.ok());
    EXPECT_EQ(named->source, IterationSource::Ranges);
    ASSERT_EQ(named->count(), 3u);
    EXPECT_EQ(named->iterations[0].startNs, 1);
    EXPECT_EQ(named->iterations[0].endNs, 95);
    // ... and profiler steps beat both.
    for (int i = 0; i < 2; ++i) {
        addRange(d, "ProfilerStep#" + std::to_string(i + 5), 150 * i, 150 * i + 140,
                 RangeKind::UserAnnotation);
    }
    auto steps = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(steps.ok());
    EXPECT_EQ(steps->source, IterationSource::Ranges);
    ASSERT_EQ(steps->count(), 2u);
    EXPECT_EQ(steps->iterations[1].number, 6);
    EXPECT_EQ(steps->iterations[1].startNs, 150);
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
TraceData periodicTrace(int iterations, int64_t& periodNs, int64_t stepNs = 1'000'000) {
    TraceData d;
    const uint64_t sizes[] = {1000, 4000, 2000, 2000, 8000, 500};
    trace::StackId stacks[6];
    for (int k = 0; k < 6; ++k) {
        const trace::FrameId f =
            d.internFrame({d.intern("f" + std::to_string(k % 4)), d.intern("train.py"), 10 + k});
        stacks[k] = d.internStack({f});
    }
    int64_t t = 100;
    periodNs = 12 * stepNs;
    for (int i = 0; i < iterations; ++i) {
        for (int k = 0; k < 6; ++k) {
            d.memory.append(MemoryEvent{t, 0x1000u + uint64_t(k) * 0x10000, sizes[k],
                                        MemoryAction::Alloc, MemoryLevel::Allocated,
                                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 7,
                                        stacks[k], 0});
            t += stepNs;
        }
        for (int k = 5; k >= 0; --k) {
            d.memory.append(MemoryEvent{t, 0x1000u + uint64_t(k) * 0x10000, sizes[k],
                                        MemoryAction::Free, MemoryLevel::Allocated,
                                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 7,
                                        stacks[k], 0});
            t += stepNs;
        }
    }
    return d;
}

TEST(Iterations, DetectsThePeriodOfTheAllocationSequence) {
    int64_t period = 0;
    TraceData d = periodicTrace(12, period);  // 12 ms periods
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::Detected);
    EXPECT_EQ(set->periodAllocations, 6);
    EXPECT_DOUBLE_EQ(set->periodScore, 1.0);
    EXPECT_DOUBLE_EQ(set->confidence, 1.0);
    EXPECT_EQ(set->wholePeriods, 11);
    EXPECT_EQ(set->periodDurationNs, period);
    // Whole periods only: each is bounded by the first allocation of the next one.
    ASSERT_EQ(set->count(), 11u);
    for (size_t i = 0; i < set->count(); ++i) {
        // The lowest allocated bytes (0) are just before the first allocation of an iteration.
        EXPECT_EQ(set->iterations[i].startNs, 100 + int64_t(i) * period);
        EXPECT_EQ(set->iterations[i].endNs, 100 + int64_t(i + 1) * period);
    }
}

TEST(Iterations, ShortPeriodIsNotTrusted) {
    // The same structure repeating every 1.2 us: a loop inside a step, not a training step.
    int64_t period = 0;
    TraceData d = periodicTrace(12, period, 100);
    ASSERT_EQ(period, 1200);
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::None);
    EXPECT_EQ(set->count(), 0u);
    EXPECT_DOUBLE_EQ(set->confidence, 0.0);
    // The examined period is still reported, with why it was not used.
    EXPECT_EQ(set->periodAllocations, 6);
    EXPECT_EQ(set->wholePeriods, 11);
    EXPECT_EQ(set->periodDurationNs, 1200);
    EXPECT_NE(set->reason.find("no iteration structure"), std::string::npos) << set->reason;
    EXPECT_NE(set->reason.find("a period of at least"), std::string::npos) << set->reason;
}

TEST(Iterations, TooFewPeriodsAreNotTrusted) {
    int64_t period = 0;
    TraceData d = periodicTrace(3, period);  // 3 periods: the phase leaves 2 whole ones
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::None);
    EXPECT_LT(set->wholePeriods, 3);
    EXPECT_NE(set->reason.find("whole periods"), std::string::npos) << set->reason;
}

TEST(Iterations, RandomAllocationNoiseIsInconclusive) {
    // Sizes drawn from a handful of values and stacks from a few: some allocations match a
    // period later by chance (about 1 in 12 here), far from a repeating step.
    TraceData d;
    std::mt19937_64 rng(7);
    trace::StackId stacks[3];
    for (int k = 0; k < 3; ++k) {
        stacks[k] = d.internStack(
            {d.internFrame({d.intern("f" + std::to_string(k)), d.intern("train.py"), k})});
    }
    for (int i = 0; i < 3000; ++i) {
        const uint64_t size = 512u << (rng() % 4);
        d.memory.append(MemoryEvent{int64_t(i) * 1'000'000, uint64_t(i) * 4096, size,
                                    MemoryAction::Alloc, MemoryLevel::Allocated,
                                    trace::MemoryKind::Pool, trace::DeviceIndex{0}, 7,
                                    stacks[rng() % 3], 0});
    }
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::None);
    EXPECT_EQ(set->count(), 0u);
    EXPECT_STREQ(toString(set->source), "none");
    EXPECT_GT(set->periodAllocations, 0);  // detection ran...
    EXPECT_LT(set->periodScore, 0.5);      // ... and found no period worth the name
    EXPECT_NE(set->reason.find("no iteration structure"), std::string::npos) << set->reason;
}

TEST(Iterations, TooFewAllocationsSayWhy) {
    TraceData d;
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::None);
    EXPECT_NE(set->reason.find("too few allocations (0)"), std::string::npos) << set->reason;
}

/// The synthetic job names its iterations (RangeKind::Iteration ranges "iteration i").
TEST(Iterations, SyntheticJobFindsItsIterationsFromRanges) {
    SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 9;
    const TraceData d = generateSyntheticRank(spec, 0);
    auto set = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->source, IterationSource::Ranges);
    ASSERT_EQ(set->count(), size_t(spec.iterations));
    // E_i - S_i = C + D with one rank (D = 0): K x d (synthetic_job.h).
    EXPECT_EQ(set->medianDurationNs(), spec.computeKernelsPerIteration * spec.computeKernelNs);
}

/// Without its ranges the synthetic job's allocation sequence repeats every iteration: A
/// activations (plus the leak when it leaks), found with full confidence, about N periods long.
TEST(Iterations, SyntheticJobWithoutRangesIsDetectedWithConfidence) {
    for (uint64_t leak : {uint64_t(0), uint64_t(64) << 20}) {
        SyntheticJobSpec spec;
        spec.ranks = 1;
        spec.iterations = 12;
        spec.leakBytesPerIteration = leak;
        TraceData d = generateSyntheticRank(spec, 0);
        d.ranges = trace::RangeEvents{};
        auto set = findIterations(d, trace::DeviceIndex{0});
        ASSERT_TRUE(set.ok());
        EXPECT_EQ(set->source, IterationSource::Detected) << set->reason;
        EXPECT_GE(set->confidence, 0.9);
        EXPECT_EQ(set->periodAllocations, spec.activationsPerIteration + (leak > 0 ? 1 : 0));
        // The first period begins where the phase puts it; whole periods only, so N - 1 or N.
        EXPECT_GE(set->count(), size_t(spec.iterations - 1));
        EXPECT_LE(set->count(), size_t(spec.iterations));
        // One period of the job: P = C + h with one rank (synthetic_job.h).
        const int64_t p = spec.computeKernelsPerIteration * spec.computeKernelNs + spec.hostGapNs;
        EXPECT_EQ(set->medianDurationNs(), p);
    }
}

}  // namespace
}  // namespace vramscope::analysis
