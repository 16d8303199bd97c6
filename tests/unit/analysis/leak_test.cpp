#include "vramscope/analysis/memory/leak.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {

using trace::MemoryAction;
using trace::MemoryEvent;
using trace::MemoryLevel;
using trace::TraceData;

SyntheticJobSpec leakSpec(uint64_t leakBytes) {
    SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 10;
    spec.leakBytesPerIteration = leakBytes;
    spec.leakRank = 0;
    return spec;
}

TEST(Leak, FindsTheSyntheticLeakExactly) {
    const uint64_t L = 96ull << 20;
    const SyntheticJobSpec spec = leakSpec(L);
    const std::vector<TraceData> job = generateSyntheticJob(spec);
    ASSERT_EQ(job.size(), 2u);
    auto its = findIterations(job[0], trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    ASSERT_EQ(its->source, IterationSource::Ranges);
    ASSERT_EQ(its->count(), 10u);
    const LeakReport r = analyzeLeak(job[0], trace::DeviceIndex{0}, *its);
    EXPECT_EQ(r.verdict, LeakVerdict::Staircase) << r.reason;
    EXPECT_EQ(r.growthBytesPerIteration, int64_t(L));
    EXPECT_EQ(r.level, MemoryLevel::Allocated);
    // Baseline of iteration i: W + O + i * L (all earlier activations are freed in backward).
    for (size_t i = 0; i < r.iterations.size(); ++i) {
        EXPECT_EQ(r.iterations[i].baselineBytes,
                  int64_t(spec.weightBytes + spec.optimizerBytes + i * L));
        EXPECT_EQ(r.iterations[i].peakBytes,
                  int64_t(spec.weightBytes + spec.optimizerBytes +
                          spec.activationsPerIteration * spec.activationBytes + (i + 1) * L));
    }
    // Iterations to OOM: (capacity - last peak) / L, last peak = W + O + A a + N L.
    const double lastPeak = double(spec.weightBytes + spec.optimizerBytes +
                                   spec.activationsPerIteration * spec.activationBytes + 10 * L);
    ASSERT_TRUE(r.iterationsToOom.has_value());
    EXPECT_DOUBLE_EQ(*r.iterationsToOom, (double(spec.capacityBytes) - lastPeak) / double(L));
    // Survivors: the leak of iterations 1 .. N-3, one stack.
    ASSERT_FALSE(r.survivors.empty());
    EXPECT_EQ(r.survivors[0].bytes, 7 * L);
    EXPECT_EQ(r.survivors[0].count, 7u);
    EXPECT_EQ(r.survivorBytes, 7 * L);
    EXPECT_EQ(r.survivorIterations, 7);
}

TEST(Leak, NoLeakIsASawtooth) {
    const std::vector<TraceData> job = generateSyntheticJob(leakSpec(96ull << 20));
    // Rank 1 does not leak.
    auto its = findIterations(job[1], trace::DeviceIndex{1});
    ASSERT_TRUE(its.ok());
    const LeakReport r = analyzeLeak(job[1], trace::DeviceIndex{1}, *its);
    EXPECT_EQ(r.verdict, LeakVerdict::Sawtooth) << r.reason;
    EXPECT_EQ(r.growthBytesPerIteration, 0);
    EXPECT_FALSE(r.iterationsToOom.has_value());
    EXPECT_TRUE(r.survivors.empty());
    EXPECT_DOUBLE_EQ(r.slopeBytesPerIteration, 0.0);
}

TEST(Leak, TooFewIterationsIsInconclusive) {
    SyntheticJobSpec spec = leakSpec(96ull << 20);
    spec.iterations = 3;
    const std::vector<TraceData> job = generateSyntheticJob(spec);
    auto its = findIterations(job[0], trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    const LeakReport r = analyzeLeak(job[0], trace::DeviceIndex{0}, *its);
    EXPECT_EQ(r.verdict, LeakVerdict::Inconclusive);
    EXPECT_NE(r.reason.find("too few iterations"), std::string::npos);
}

/// A trace whose iteration i has baseline baselines[i] (MiB) and a 100 MiB transient tensor.
TraceData withBaselines(const std::vector<int64_t>& baselinesMiB) {
    TraceData d;
    const int64_t kIter = 1000;
    uint64_t ballast = 0x100000;
    auto ev = [&](int64_t t, uint64_t addr, int64_t mib, MemoryAction a) {
        d.memory.append(MemoryEvent{t, addr, uint64_t(mib) << 20, a, MemoryLevel::Allocated,
                                    trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0,
                                    trace::StackId{0}, 0});
    };
    ev(-10, ballast, baselinesMiB[0], MemoryAction::Alloc);
    for (size_t i = 0; i < baselinesMiB.size(); ++i) {
        const int64_t s = int64_t(i) * kIter;
        trace::RangeEvent r;
        r.startNs = s;
        r.endNs = s + kIter;
        r.name = d.intern("iteration " + std::to_string(i));
        r.kind = trace::RangeKind::Iteration;
        d.ranges.append(r);
        ev(s + 100, 0x10, 100, MemoryAction::Alloc);
        ev(s + 200, 0x10, 100, MemoryAction::Free);
        if (i + 1 < baselinesMiB.size()) {  // switch the ballast before the next iteration
            const uint64_t next = ballast + 0x100000;
            ev(s + 900, next, baselinesMiB[i + 1], MemoryAction::Alloc);
            ev(s + 950, ballast, baselinesMiB[i], MemoryAction::Free);
            ballast = next;
        }
    }
    return d;
}

LeakReport leakOf(const TraceData& d) {
    auto its = findIterations(d, trace::DeviceIndex{0});
    EXPECT_TRUE(its.ok());
    return analyzeLeak(d, trace::DeviceIndex{0}, *its);
}

TEST(Leak, BaselinesComeFromTheTimelineItIsGivenWhenOneIsPassed) {
    // The analysis reads the device's own timeline (as analyzeJob made it) rather than building
    // one again: a curve lifted by 1 GiB everywhere lifts every baseline and peak by 1 GiB.
    const TraceData d = withBaselines({500, 700, 600, 900});
    auto its = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    const AllocationIndex index(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    std::vector<MemoryTimeline> timelines = buildMemoryTimelines(d);
    ASSERT_EQ(timelines.size(), 1u);
    const LeakReport own = analyzeLeak(d, trace::DeviceIndex{0}, *its, index, &timelines[0]);
    for (int64_t& b : timelines[0].allocated.bytes) {
        b += int64_t(1) << 30;
    }
    const LeakReport lifted = analyzeLeak(d, trace::DeviceIndex{0}, *its, index, &timelines[0]);
    ASSERT_EQ(own.iterations.size(), 4u);
    EXPECT_EQ(own.iterations[0].baselineBytes, 500ll << 20);
    ASSERT_EQ(lifted.iterations.size(), own.iterations.size());
    for (size_t i = 0; i < own.iterations.size(); ++i) {
        EXPECT_EQ(lifted.iterations[i].baselineBytes,
                  own.iterations[i].baselineBytes + (int64_t(1) << 30))
            << i;
        EXPECT_EQ(lifted.iterations[i].peakBytes, own.iterations[i].peakBytes + (int64_t(1) << 30))
            << i;
    }
    // Without a timeline there is no curve to measure iterations on.
    EXPECT_TRUE(analyzeLeak(d, trace::DeviceIndex{0}, *its, index, nullptr).iterations.empty());
}

TEST(Leak, BaselinesAreTheLowestAllocatedInEachIteration) {
    const LeakReport r = leakOf(withBaselines({500, 700, 600, 900}));
    ASSERT_EQ(r.iterations.size(), 4u);
    EXPECT_EQ(r.iterations[0].baselineBytes, 500ll << 20);
    EXPECT_EQ(r.iterations[2].baselineBytes, 600ll << 20);
    EXPECT_EQ(r.iterations[3].baselineBytes, 900ll << 20);
    EXPECT_EQ(r.iterations[3].peakBytes, 1000ll << 20);
    // Iteration 1 holds 700 + 600 MiB briefly while the ballast is switched.
    EXPECT_EQ(r.iterations[1].peakBytes, 1300ll << 20);
}

TEST(Leak, SteadyGrowthIsAStaircase) {
    const LeakReport r = leakOf(withBaselines({1000, 1010, 1020, 1030, 1040, 1050, 1060}));
    EXPECT_EQ(r.verdict, LeakVerdict::Staircase) << r.reason;
    EXPECT_EQ(r.growthBytesPerIteration, 10ll << 20);
    EXPECT_FALSE(r.iterationsToOom.has_value());  // no capacity in the header
}

TEST(Leak, GrowthInRareJumpsIsInconclusive) {
    // Rises in 2 of 7 steps: significant growth, but not consistent.
    const LeakReport r = leakOf(withBaselines({0, 1000, 1000, 1000, 2000, 2000, 2000, 2000}));
    EXPECT_EQ(r.verdict, LeakVerdict::Inconclusive) << r.reason;
    EXPECT_NEAR(r.risingFraction, 2.0 / 7.0, 1e-12);
}

TEST(Leak, JitterAroundAFlatBaselineIsASawtooth) {
    std::mt19937 rng(3);
    std::vector<int64_t> b;
    for (int i = 0; i < 12; ++i) {
        b.push_back(2000 + int64_t(rng() % 3));  // up and down by up to 2 MiB
    }
    const LeakReport r = leakOf(withBaselines(b));
    EXPECT_EQ(r.verdict, LeakVerdict::Sawtooth) << r.reason;
}

TEST(Leak, AFallingBaselineIsNoLeak) {
    const LeakReport r = leakOf(withBaselines({3000, 2900, 2800, 2700, 2600}));
    EXPECT_EQ(r.verdict, LeakVerdict::Sawtooth) << r.reason;
}

TEST(Leak, TheilSenIgnoresAnOutlier) {
    std::vector<double> y;
    for (int i = 0; i < 9; ++i) {
        y.push_back(2.0 * i + 5.0);
    }
    y[4] = 1e9;
    EXPECT_DOUBLE_EQ(theilSenSlope(y), 2.0);
    EXPECT_DOUBLE_EQ(theilSenSlope({1.0}), 0.0);
}

// --- the sampled path (n > 2000: pairs drawn at random instead of all n(n-1)/2) ---------------

/// y_i = a + b i + e_i for i = 0 .. n-1, with e_i uniform integers in [-u, u] drawn from the raw
/// output of std::mt19937_64 (its sequence is fixed by the standard, unlike the distributions'),
/// and the last 5 % of the points (i >= n - n / 20) replaced by `outlier` when it is non-zero: a
/// burst at the end of a run, where it drags a least-squares line most.
/// Every value is an integer below 2^53, so the doubles hold them exactly.
std::vector<double> noisyLine(size_t n, int64_t a, int64_t b, int64_t u, double outlier) {
    std::mt19937_64 rng(20240611);
    std::vector<double> y(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t e = u == 0 ? 0 : int64_t(rng() % uint64_t(2 * u + 1)) - u;
        y[i] = double(a + b * int64_t(i) + e);
        if (outlier != 0.0 && i >= n - n / 20) {
            y[i] = outlier;
        }
    }
    return y;
}

TEST(Leak, SampledTheilSenOfAnExactLineIsItsSlope) {
    // Every pair of an exact integer line has slope b exactly, so any sample's median is b.
    const std::vector<double> y = noisyLine(3000, 4'000'000'000, 1'000'000, 0, 0.0);
    EXPECT_EQ(theilSenSlope(y), 1'000'000.0);
}

TEST(Leak, SampledTheilSenFindsTheSlopeThroughNoiseAndOutliers) {
    const size_t n = 5000;
    const int64_t b = 1'000'000;   // 1 MB per iteration
    const int64_t u = 10'000'000;  // noise ten times the slope
    // Tolerance, a bound and no guess: a pair (i, j) with |j - i| >= n / 5 between two clean
    // points has slope b + (e_j - e_i) / (j - i), off by at most 2u / (n / 5) = 10u / n. Pairs
    // closer than n / 5 are 1 - (4/5)^2 = 36 % of all pairs, pairs touching one of the 5 %
    // outliers 1 - 0.95^2 = 9.75 %; even counted all as wrong, 45.75 % < 50 % lie outside
    // [b - 10u/n, b + 10u/n], so the median of the pairs lies inside. 2 million drawn pairs
    // estimate those shares within about 0.1 %, far from the 4 % margin.
    const double tolerance = 10.0 * double(u) / double(n);  // 20,000 B: 2 % of the slope
    const double clean = theilSenSlope(noisyLine(n, 4'000'000'000, b, u, 0.0));
    EXPECT_NEAR(clean, double(b), tolerance);
    // Spikes of 1 TB on the last 5 % of the points (a burst before the end, misread samples) do
    // not move it out of the same bound.
    const std::vector<double> spiky = noisyLine(n, 4'000'000'000, b, u, 1e12);
    const double withOutliers = theilSenSlope(spiky);
    EXPECT_NEAR(withOutliers, double(b), tolerance);
    EXPECT_NEAR(withOutliers, clean, 2 * tolerance);
    // A least-squares slope through the same points is dragged far off by the spikes: the
    // outliers are strong enough to matter, the estimator is what resists them.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; ++i) {
        sx += double(i);
        sy += spiky[i];
        sxx += double(i) * double(i);
        sxy += double(i) * spiky[i];
    }
    const double leastSquares = (double(n) * sxy - sx * sy) / (double(n) * sxx - sx * sx);
    EXPECT_GT(std::abs(leastSquares - double(b)), 100 * tolerance);
    // Same input, same slope, bit for bit: the pairs are drawn with a fixed seed.
    EXPECT_EQ(theilSenSlope(spiky), withOutliers);
}

TEST(Leak, SampledAndExhaustiveTheilSenAgreeAtTheSwitch) {
    // n = 2000 takes every pair, n = 2001 samples; one more point on the same noisy line moves
    // the exhaustive median by little, so both must lie within the bound above (10u / n).
    const int64_t b = 1'000'000, u = 10'000'000;
    const std::vector<double> y2001 = noisyLine(2001, 4'000'000'000, b, u, 0.0);
    const std::vector<double> y2000(y2001.begin(), y2001.end() - 1);
    const double tolerance = 10.0 * double(u) / 2000.0;
    EXPECT_NEAR(theilSenSlope(y2000), double(b), tolerance);
    EXPECT_NEAR(theilSenSlope(y2001), double(b), tolerance);
}

TEST(Leak, SurvivorsAreGroupedByStackAndNameTheUserFrame) {
    TraceData d;
    const trace::FrameId lib = d.internFrame(
        {d.intern("linear"), d.intern("/usr/lib/python3/site-packages/torch/nn/linear.py"), 125});
    const trace::FrameId user = d.internFrame({d.intern("forward"), d.intern("train.py"), 42});
    const trace::FrameId cpp = d.internFrame({d.intern("at::empty"), d.intern("Alloc.cpp"), 7});
    const trace::StackId leakStack = d.internStack({cpp, lib, user});
    const trace::StackId tmpStack = d.internStack({user});
    for (int i = 0; i < 6; ++i) {
        const int64_t s = i * 1000;
        trace::RangeEvent r;
        r.startNs = s;
        r.endNs = s + 1000;
        r.name = d.intern("iteration " + std::to_string(i));
        r.kind = trace::RangeKind::Iteration;
        d.ranges.append(r);
        const uint64_t tmp = 0x10 + uint64_t(i) * 0x10;
        d.memory.append(MemoryEvent{s + 10, tmp, 4096, MemoryAction::Alloc, MemoryLevel::Allocated,
                                    trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0, tmpStack,
                                    0});
        d.memory.append(MemoryEvent{s + 20, 0x1000 + uint64_t(i) * 0x1000, 1000,
                                    MemoryAction::Alloc, MemoryLevel::Allocated,
                                    trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0, leakStack,
                                    0});
        // Freed two iterations later, before that iteration ends: not a survivor.
        d.memory.append(MemoryEvent{s + 2500, tmp, 4096, MemoryAction::Free, MemoryLevel::Allocated,
                                    trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0, tmpStack,
                                    0});
    }
    const LeakReport r = leakOf(d);
    ASSERT_EQ(r.survivors.size(), 1u);
    EXPECT_EQ(r.survivors[0].stack, leakStack);
    EXPECT_EQ(r.survivors[0].count, 3u);  // iterations 1, 2, 3 (iteration 0 is warm-up)
    EXPECT_EQ(r.survivors[0].bytes, 3000u);
    ASSERT_EQ(r.survivors[0].topFrames.size(), 3u);
    EXPECT_EQ(r.survivors[0].topFrames[0], "at::empty (Alloc.cpp:7)");
    EXPECT_EQ(r.survivors[0].userFrame, "forward (train.py:42)");
}

TEST(Leak, SurvivorsWithoutStacksAreGroupedByNvtxRange) {
    TraceData d;
    for (int i = 0; i < 6; ++i) {
        const int64_t s = i * 1000;
        trace::RangeEvent r;
        r.startNs = s;
        r.endNs = s + 1000;
        r.name = d.intern("iteration " + std::to_string(i));
        r.kind = trace::RangeKind::Iteration;
        d.ranges.append(r);
        r.startNs = s + 100;
        r.endNs = s + 500;
        r.name = d.intern("eval_cache");
        r.kind = trace::RangeKind::Nvtx;
        r.depth = 1;
        d.ranges.append(r);
        const uint32_t range = uint32_t(d.ranges.size());  // 1-based
        d.memory.append(MemoryEvent{s + 200, 0x1000 + uint64_t(i) * 0x1000, 700,
                                    MemoryAction::Alloc, MemoryLevel::Allocated,
                                    trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0,
                                    trace::StackId{0}, range});
    }
    const LeakReport r = leakOf(d);
    ASSERT_EQ(r.survivors.size(), 1u);
    EXPECT_EQ(r.survivors[0].nvtxRange, "eval_cache");
    EXPECT_EQ(r.survivors[0].bytes, 3 * 700u);
    EXPECT_EQ(survivorLabel(r.survivors[0]), "NVTX range eval_cache");
}

TEST(Leak, SurvivorsAreGroupedByStackAndSizeAndCountedPerIteration) {
    TraceData d;
    const trace::StackId stack =
        d.internStack({d.internFrame({d.intern("forward"), d.intern("train.py"), 42})});
    uint64_t addr = 0x1000;
    auto keep = [&](int64_t t, uint64_t size) {
        d.memory.append(MemoryEvent{t, addr += 0x1000, size, MemoryAction::Alloc,
                                    MemoryLevel::Allocated, trace::MemoryKind::Pool,
                                    trace::DeviceIndex{0}, 0, stack, 0});
    };
    for (int i = 0; i < 8; ++i) {
        const int64_t s = i * 1000;
        trace::RangeEvent r;
        r.startNs = s;
        r.endNs = s + 1000;
        r.name = d.intern("iteration " + std::to_string(i));
        r.kind = trace::RangeKind::Iteration;
        d.ranges.append(r);
        keep(s + 10, 1000);  // one kept every iteration
        keep(s + 20, 300);   // one or two (odd iterations) of another size, same stack
        if (i % 2 == 1) {
            keep(s + 30, 300);
        }
        if (i == 2 || i == 3) {
            keep(s + 40, 50);  // only in two iterations
        }
    }
    const LeakReport r = leakOf(d);
    // Examined: iterations 1 .. n - 3 = 1 .. 5.
    ASSERT_EQ(r.survivorIterations, 5);
    ASSERT_EQ(r.survivors.size(), 3u);
    const SurvivorGroup& big = r.survivors[0];  // 5 x 1000 B
    EXPECT_EQ(big.sizeBytes, 1000u);
    EXPECT_EQ(big.bytes, 5000u);
    EXPECT_EQ(big.iterations, 5);
    // Kept in all 8 iterations, never freed: 8 alive at the end, though only 1 .. 5 are examined.
    EXPECT_EQ(big.aliveAtEnd, 8u);
    EXPECT_EQ(describeSurvivor(big, r.survivorIterations),
              "one " + formatBytes(1000.0) + " allocation per iteration from forward " +
                  "(train.py:42), 5 iterations, " + formatBytes(5000.0) + " in all; 8 alive " +
                  "at the end of the last iteration (" + formatBytes(8000.0) + ")");
    // Of those alive across all iterations, the first iteration's survivors of each group are
    // the leak: 1000 + 300 (iteration 0 is even: one 300 only; no 50) = 1300 B.
    EXPECT_EQ(r.firstIterationLeakBytes, 1000u + 300u);
    const SurvivorGroup& mid = r.survivors[1];  // iterations 1, 3, 5 two each; 2, 4 one each
    EXPECT_EQ(mid.sizeBytes, 300u);
    EXPECT_EQ(mid.count, 8u);
    EXPECT_EQ(mid.minPerIteration, 1u);
    EXPECT_EQ(mid.maxPerIteration, 2u);
    EXPECT_EQ(survivorPattern(mid), "1 to 2 " + formatBytes(300.0) + " allocations per iteration");
    const SurvivorGroup& small = r.survivors[2];
    EXPECT_EQ(small.sizeBytes, 50u);
    EXPECT_EQ(small.iterations, 2);
    EXPECT_NE(describeSurvivor(small, r.survivorIterations).find(", in 2 of 5 iterations, "),
              std::string::npos)
        << describeSurvivor(small, r.survivorIterations);
}

TEST(Leak, NothingPerIterationWithoutIterationStructure) {
    SyntheticJobSpec spec = leakSpec(64ull << 20);
    TraceData d = generateSyntheticRank(spec, 0);
    IterationSet none;
    none.reason = "no iteration structure: because the test says so.";
    const LeakReport r = analyzeLeak(d, trace::DeviceIndex{0}, none);
    EXPECT_EQ(r.verdict, LeakVerdict::Inconclusive);
    EXPECT_EQ(r.reason, none.reason);
    EXPECT_TRUE(r.iterations.empty());
    EXPECT_TRUE(r.survivors.empty());
    EXPECT_EQ(r.growthBytesPerIteration, 0);
}

}  // namespace
}  // namespace vramscope::analysis
