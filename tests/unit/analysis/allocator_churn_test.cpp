// Allocator churn on hand-built traces: reserved segments made and freed per iteration with
// counts, bytes and idle gaps chosen here, so every expected figure is counted by hand.
#include <gtest/gtest.h>

#include "advice_evidence.h"

#include "gpu0_iterations.h"
#include "memory_events.h"
#include "test_units.h"
#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/memory/allocator_churn.h"
#include "vramscope/analysis/model/job_analysis.h"

namespace vramscope::analysis {
namespace {

using test::addMemory;
using trace::MemoryAction;
using trace::MemoryLevel;

using testdata::kMiB;
using testdata::kMs;
const trace::DeviceIndex kGpu{0};

/// `n` iterations "iteration i" over [10 i ms, 10 (i + 1) ms).
void addIterations(trace::TraceData& d, int n) {
    for (int i = 0; i < n; ++i) {
        trace::RangeEvent r;
        r.startNs = i * 10 * kMs;
        r.endNs = (i + 1) * 10 * kMs;
        r.name = d.intern("iteration " + std::to_string(i));
        r.kind = trace::RangeKind::Iteration;
        d.ranges.append(r);
    }
}

/// A stack whose leaf is `leaf` (called from train.py's loop).
trace::StackId leafStack(trace::TraceData& d, const std::string& leaf) {
    const trace::FrameId a = d.internFrame({d.intern(leaf), d.intern("torch/cuda/memory.py"), 1});
    const trace::FrameId b = d.internFrame({d.intern("train_loop"), d.intern("train.py"), 40});
    return d.internStack({a, b});
}

void reserved(trace::TraceData& d, int64_t t, uint64_t address, uint64_t bytes, MemoryAction action,
              trace::StackId stack = trace::StackId{0}) {
    addMemory(d, t, address, bytes, action, MemoryLevel::Reserved, kGpu, stack,
              trace::MemoryKind::Device);
}

void addGemm(trace::TraceData& d, int64_t start, int64_t end) {
    trace::KernelEvent k;
    k.startNs = start;
    k.endNs = end;
    k.device = kGpu;
    k.name = d.intern("gemm");
    d.kernels.append(k);
}

/// Iteration 0 reserves a 2 MiB and a 20 MiB segment; each later iteration i frees the 20 MiB
/// one at 10 i + 1 ms (through torch.cuda.empty_cache in iterations 1 and 2) and reserves it
/// again at 10 i + 2 ms. Every iteration after the first: 1 alloc and 1 free of 20 MiB.
trace::TraceData churningTrace(int iterations) {
    trace::TraceData d;
    addIterations(d, iterations);
    reserved(d, 1 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
    reserved(d, 2 * kMs, 0x10000000, 20 * kMiB, MemoryAction::Alloc);
    const trace::StackId emptyCache = leafStack(d, "empty_cache");
    for (int i = 1; i < iterations; ++i) {
        const int64_t s = i * 10 * kMs;
        reserved(d, s + kMs, 0x10000000, 20 * kMiB, MemoryAction::Free,
                 i <= 2 ? emptyCache : trace::StackId{0});
        reserved(d, s + 2 * kMs, 0x10000000, 20 * kMiB, MemoryAction::Alloc);
    }
    return d;
}

using test::iterationsOnGpu0;

std::vector<AdviceAssessment> assessOnly(const AllocatorChurn& c, std::vector<Advice>* advice) {
    DeviceFacts f;
    f.input = 0;
    f.rank = trace::RankId{0};
    f.device = kGpu;
    f.churn = &c;
    std::vector<AdviceAssessment> out;
    std::vector<Advice> a = adviseOn({f}, {}, &out);
    if (advice != nullptr) {
        *advice = std::move(a);
    }
    std::erase_if(out, [](const AdviceAssessment& x) { return x.rule != "allocator-churn"; });
    return out;
}

using test::evidence;

TEST(AllocatorChurn, CountsTheSegmentsOfEachIterationAndLeavesTheWarmUpOut) {
    const trace::TraceData d = churningTrace(5);
    const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
    ASSERT_TRUE(c.assessable) << c.reason;
    ASSERT_EQ(c.iterations.size(), 5u);
    EXPECT_EQ(c.iterations[0].segmentAllocs, 2u);  // warm-up: kept, but not counted below
    EXPECT_EQ(c.iterations[0].segmentFrees, 0u);
    EXPECT_EQ(c.iterations[0].allocBytes, 22 * kMiB);
    for (size_t i = 1; i < 5; ++i) {
        EXPECT_EQ(c.iterations[i].segmentAllocs, 1u) << i;
        EXPECT_EQ(c.iterations[i].segmentFrees, 1u) << i;
        EXPECT_EQ(c.iterations[i].freeBytes, 20 * kMiB) << i;
        EXPECT_EQ(c.iterations[i].emptyCacheFrees, i <= 2 ? 1u : 0u) << i;
        EXPECT_TRUE(c.iterations[i].churns());
    }
    EXPECT_EQ(c.steadyIterations, 4u);
    EXPECT_EQ(c.churnIterations, 4u);
    EXPECT_EQ(c.segmentAllocs, 4u);
    EXPECT_EQ(c.segmentFrees, 4u);
    EXPECT_EQ(c.allocBytes, 80 * kMiB);
    EXPECT_EQ(c.emptyCacheFrees, 2u);
    EXPECT_DOUBLE_EQ(c.churnShare(), 1.0);
    EXPECT_FALSE(c.timeKnown);  // no kernels
    EXPECT_NE(c.timeUnknownReason.find("no kernel"), std::string::npos);
}

TEST(AllocatorChurn, FiresWithCountsBytesAndTheEmptyCacheFrees) {
    const trace::TraceData d = churningTrace(5);
    const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
    std::vector<Advice> advice;
    const auto a = assessOnly(c, &advice);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].outcome, AssessmentOutcome::Fired);
    EXPECT_EQ(a[0].severity, Severity::Warning);
    EXPECT_NE(a[0].detail.find("4 of 4 iterations after the warm-up (100.0 %) > 50.0 %"),
              std::string::npos)
        << a[0].detail;
    ASSERT_EQ(advice.size(), 1u);
    const Advice& adv = advice[0];
    EXPECT_EQ(adv.rule, "allocator-churn");
    EXPECT_DOUBLE_EQ(evidence(adv, "segment_allocs_per_iteration"), 1.0);
    EXPECT_DOUBLE_EQ(evidence(adv, "segment_free_bytes_per_iteration"), double(20 * kMiB));
    EXPECT_DOUBLE_EQ(evidence(adv, "empty_cache_frees"), 2.0);
    EXPECT_NE(adv.message.find("20.0 MiB"), std::string::npos) << adv.message;
    EXPECT_NE(adv.message.find(
                  "2 of the 4 segment frees after the warm-up come from torch.cuda.empty_cache"),
              std::string::npos)
        << adv.message;
    EXPECT_NE(adv.message.find("expandable_segments:True"), std::string::npos);
    EXPECT_NE(adv.message.find("unknown: no kernel"), std::string::npos) << adv.message;
}

TEST(AllocatorChurn, MeasuresTheIdleGapsThatHoldASegmentFree) {
    trace::TraceData d = churningTrace(5);
    // Per iteration at s: kernels [s+0.1, s+0.3) ms, [s+0.5, s+0.9) ms, [s+1.5, s+9) ms. Gaps:
    // [0.3, 0.5) without a free, [0.9, 1.5) holding the free at s+1 ms: 0.6 ms counted.
    for (int i = 0; i < 5; ++i) {
        const int64_t s = i * 10 * kMs;
        addGemm(d, s + kMs / 10, s + 3 * kMs / 10);
        addGemm(d, s + 5 * kMs / 10, s + 9 * kMs / 10);
        addGemm(d, s + 15 * kMs / 10, s + 9 * kMs);
    }
    const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
    ASSERT_TRUE(c.timeKnown);
    EXPECT_EQ(c.iterations[0].syncIdleNs, 0);  // the warm-up frees nothing
    for (size_t i = 1; i < 5; ++i) {
        EXPECT_EQ(c.iterations[i].syncIdleNs, 6 * kMs / 10) << i;
    }
    EXPECT_EQ(c.syncIdleNs, 4 * 6 * kMs / 10);
    std::vector<Advice> advice;
    assessOnly(c, &advice);
    ASSERT_EQ(advice.size(), 1u);
    EXPECT_DOUBLE_EQ(evidence(advice[0], "sync_idle_per_iteration_ns"), double(6 * kMs / 10));
    EXPECT_NE(advice[0].message.find("idle 600 us per iteration"), std::string::npos)
        << advice[0].message;
}

TEST(AllocatorChurn, IsClearWhenOnlyTheWarmUpReservesOrOneIterationChurns) {
    trace::TraceData d;
    addIterations(d, 5);
    reserved(d, 1 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
    reserved(d, 2 * kMs, 0x200000, 2 * kMiB, MemoryAction::Free);  // warm-up churn: left out
    reserved(d, 3 * kMs, 0x200000, 2 * kMiB, MemoryAction::Alloc);
    // One later iteration (2) grows once and gives a segment back: 1 of 4 churns.
    reserved(d, 21 * kMs, 0x400000, 4 * kMiB, MemoryAction::Alloc);
    reserved(d, 22 * kMs, 0x200000, 2 * kMiB, MemoryAction::Free);
    // Outside every iteration (after the last): in none.
    reserved(d, 51 * kMs, 0x400000, 4 * kMiB, MemoryAction::Free);
    const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
    ASSERT_TRUE(c.assessable);
    EXPECT_EQ(c.churnIterations, 1u);
    EXPECT_EQ(c.segmentAllocs, 1u);
    EXPECT_EQ(c.segmentFrees, 1u);
    const auto a = assessOnly(c, nullptr);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].outcome, AssessmentOutcome::Clear);
    EXPECT_NE(a[0].detail.find("1 of 4 iterations after the warm-up (25.0 %) <= 50.0 %"),
              std::string::npos)
        << a[0].detail;
}

TEST(AllocatorChurn, ThreeOfFourIterationsIsMostAndTwoIsNot) {
    for (const int churning : {2, 3}) {
        trace::TraceData d;
        addIterations(d, 5);
        reserved(d, 1 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
        for (int i = 1; i <= churning; ++i) {
            reserved(d, i * 10 * kMs + kMs, 0x100000, 2 * kMiB, MemoryAction::Free);
            reserved(d, i * 10 * kMs + 2 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
        }
        const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
        const auto a = assessOnly(c, nullptr);
        ASSERT_EQ(a.size(), 1u);
        EXPECT_EQ(a[0].outcome, churning == 3 ? AssessmentOutcome::Fired : AssessmentOutcome::Clear)
            << churning << ": " << a[0].detail;
    }
}

TEST(AllocatorChurn, EmptyCacheInTheLoopFiresEvenInAMinorityOfIterations) {
    // Two of four steady iterations free and re-reserve a segment (not most), once through
    // torch.cuda.empty_cache: the call in the loop is a finding of its own. Without that frame
    // the same churn is clear, and the advice never names a call the stacks do not show.
    for (const bool throughEmptyCache : {true, false}) {
        trace::TraceData d;
        addIterations(d, 5);
        const trace::StackId stack =
            throughEmptyCache ? leafStack(d, "empty_cache") : leafStack(d, "step");
        reserved(d, 1 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
        for (int i = 1; i <= 2; ++i) {
            reserved(d, i * 10 * kMs + kMs, 0x100000, 2 * kMiB, MemoryAction::Free,
                     i == 2 ? stack : trace::StackId{0});
            reserved(d, i * 10 * kMs + 2 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
        }
        const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
        std::vector<Advice> advice;
        const auto a = assessOnly(c, &advice);
        ASSERT_EQ(a.size(), 1u);
        if (!throughEmptyCache) {
            EXPECT_EQ(a[0].outcome, AssessmentOutcome::Clear) << a[0].detail;
            EXPECT_TRUE(advice.empty());
            continue;
        }
        EXPECT_EQ(a[0].outcome, AssessmentOutcome::Fired) << a[0].detail;
        EXPECT_NE(a[0].detail.find("2 of 4 iterations after the warm-up (50.0 %) <= 50.0 %, but "
                                   "1 of the 2 segment frees"),
                  std::string::npos)
            << a[0].detail;
        ASSERT_EQ(advice.size(), 1u);
        EXPECT_NE(advice[0].message.find("stop calling torch.cuda.empty_cache()"),
                  std::string::npos);
    }
}

TEST(AllocatorChurn, AdviceWithoutAnEmptyCacheFrameDoesNotClaimTheCall) {
    // Every steady iteration churns, none through empty_cache.
    trace::TraceData d;
    addIterations(d, 5);
    reserved(d, 1 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
    for (int i = 1; i < 5; ++i) {
        reserved(d, i * 10 * kMs + kMs, 0x100000, 2 * kMiB, MemoryAction::Free);
        reserved(d, i * 10 * kMs + 2 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
    }
    const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
    std::vector<Advice> advice;
    const auto a = assessOnly(c, &advice);
    ASSERT_EQ(advice.size(), 1u);
    EXPECT_EQ(advice[0].message.find("Try: stop calling"), std::string::npos) << advice[0].message;
    EXPECT_NE(advice[0].message.find("No torch.cuda.empty_cache frame"), std::string::npos);
}

TEST(AllocatorChurn, IsNotAssessedWithoutSegmentsAddressesOrIterations) {
    {  // tensor-level events only
        trace::TraceData d;
        addIterations(d, 5);
        addMemory(d, 1 * kMs, 0x100, 4096, MemoryAction::Alloc);
        const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
        EXPECT_FALSE(c.assessable);
        EXPECT_NE(c.reason.find("no segment allocation recorded"), std::string::npos) << c.reason;
        const auto a = assessOnly(c, nullptr);
        ASSERT_EQ(a.size(), 1u);
        EXPECT_EQ(a[0].outcome, AssessmentOutcome::NotAssessed);
        EXPECT_EQ(a[0].detail, c.reason);
    }
    {  // segments without addresses (0: the producer gave none)
        trace::TraceData d;
        addIterations(d, 5);
        reserved(d, 1 * kMs, 0, 2 * kMiB, MemoryAction::Alloc);
        const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
        EXPECT_FALSE(c.assessable);
        EXPECT_NE(c.reason.find("without addresses"), std::string::npos) << c.reason;
    }
    {  // no iteration structure
        trace::TraceData d;
        reserved(d, 1 * kMs, 0x100000, 2 * kMiB, MemoryAction::Alloc);
        const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
        EXPECT_FALSE(c.assessable);
        EXPECT_EQ(c.reason.rfind("no iterations: ", 0), 0u) << c.reason;
    }
    {  // one iteration after the warm-up is too few
        const trace::TraceData d = churningTrace(2);
        const AllocatorChurn c = allocatorChurn(d, kGpu, iterationsOnGpu0(d));
        ASSERT_TRUE(c.assessable);
        const auto a = assessOnly(c, nullptr);
        ASSERT_EQ(a.size(), 1u);
        EXPECT_EQ(a[0].outcome, AssessmentOutcome::NotAssessed);
        EXPECT_NE(a[0].detail.find("needs at least 2"), std::string::npos) << a[0].detail;
    }
}

TEST(AllocatorChurn, EmptyCacheFramesOfPythonAndCpp) {
    EXPECT_TRUE(isEmptyCacheFrame("empty_cache"));
    EXPECT_TRUE(isEmptyCacheFrame("c10::cuda::CUDACachingAllocator::emptyCache()"));
    EXPECT_TRUE(isEmptyCacheFrame(
        "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::emptyCache(bool)"));
    EXPECT_FALSE(isEmptyCacheFrame("cudaFree"));
    EXPECT_FALSE(isEmptyCacheFrame("release_cached_blocks"));
}

TEST(AllocatorChurn, TheJobAnalysisAssessesEveryDevice) {
    const trace::TraceData d = churningTrace(6);
    std::vector<RankInput> in(1);
    in[0].data = &d;
    JobAnalysisOptions options;
    options.threads = 1;
    auto job = analyzeJob(in, options);
    ASSERT_TRUE(job.ok());
    ASSERT_EQ(job->devices.size(), 1u);
    EXPECT_EQ(job->devices[0].churn.churnIterations, 5u);
    size_t seen = 0;
    for (const AdviceAssessment& a : job->assessments) {
        if (a.rule == "allocator-churn") {
            ++seen;
            EXPECT_EQ(a.outcome, AssessmentOutcome::Fired) << a.detail;
        }
    }
    EXPECT_EQ(seen, 1u);
}

}  // namespace
}  // namespace vramscope::analysis
