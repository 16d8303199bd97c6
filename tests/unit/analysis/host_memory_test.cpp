// The host-memory analysis and its advice rule on hand-built traces and the synthetic job. The
// expected figures come from the spec's formulas (synthetic_job.h) or are worked out by hand.
#include "vramscope/analysis/memory/host_memory.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "gpu0_iterations.h"
#include "test_units.h"
#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {

using trace::CounterKind;
using trace::kHostDevice;
using trace::MemoryAction;
using trace::MemoryEvent;
using trace::MemoryKind;
using trace::RangeKind;
using trace::TraceData;

constexpr int64_t kIterationNs = 1'000'000;
using testdata::kMiB;

/// `n` iterations of 1 ms from t = 1 ms ("iteration i" ranges) and one GPU allocation so that the
/// trace has a device 0.
TraceData withIterations(int n) {
    TraceData d;
    d.header.devices.push_back({trace::DeviceIndex{0}, "GPU", "", 80ull << 30});
    for (int i = 0; i < n; ++i) {
        const int64_t start = kIterationNs * (i + 1);
        d.ranges.append({start, start + kIterationNs, d.intern("iteration " + std::to_string(i)), 0,
                         1, kHostDevice, RangeKind::Iteration});
    }
    MemoryEvent e;
    e.timestampNs = kIterationNs;
    e.address = 0x1000;
    e.sizeBytes = 4096;
    e.device = trace::DeviceIndex{0};
    d.memory.append(e);
    return d;
}

using test::iterationsOnGpu0;

TEST(HostMemory, SlopeOfAHandBuiltAllocatorCounterIsItsGrowthPerIteration) {
    // Baseline of iteration i: b(i) = 1 GiB + 8 MiB x i (+ 0 / 1 / -1 MiB of wiggle, less than
    // the growth): b(i) at its start, a 100 MiB batch at its middle, b(i + 1) from three quarters
    // on (what the next iteration enters with).
    const int n = 8;
    TraceData d = withIterations(n);
    const auto name = d.intern("CPU Total Allocated");
    const int64_t wiggle[] = {0, 1, -1, 0, 1, -1, 0, 1, 0};
    auto b = [&](int i) { return double((1ll << 30) + 8 * kMiB * i + wiggle[i] * kMiB); };
    for (int i = 0; i < n; ++i) {
        const int64_t start = kIterationNs * (i + 1);
        d.counters.append({start, name, kHostDevice, CounterKind::HostAllocatedBytes, b(i)});
        d.counters.append({start + kIterationNs / 2, name, kHostDevice,
                           CounterKind::HostAllocatedBytes, b(i) + double(100 * kMiB)});
        d.counters.append({start + 3 * kIterationNs / 4, name, kHostDevice,
                           CounterKind::HostAllocatedBytes, b(i + 1)});
    }
    const HostMemoryReport r = analyzeHostMemory(d, iterationsOnGpu0(d));
    EXPECT_EQ(r.source, HostSeriesSource::AllocatorBytes);
    EXPECT_EQ(r.counterName, "CPU Total Allocated");
    ASSERT_EQ(r.iterations.size(), size_t(n));
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(r.iterations[size_t(i)].baselineBytes,
                  (1ll << 30) + 8 * kMiB * i + wiggle[i] * kMiB);
    }
    // Theil-Sen by hand: pairwise slopes are 8 MiB + (w[j] - w[i]) / (j - i) MiB; their median is
    // 8 MiB (the wiggle repeats with period 3 and averages out).
    EXPECT_EQ(r.trend.verdict, LeakVerdict::Staircase) << r.trend.reason;
    EXPECT_EQ(r.trend.growthBytesPerIteration, 8 * kMiB);
    EXPECT_EQ(r.peakBytes, (1ll << 30) + 8 * kMiB * 7 + 1 * kMiB + 100 * kMiB);
    EXPECT_EQ(r.baselineChangeBytes(), 8 * kMiB * 7 + 1 * kMiB);
    EXPECT_EQ(r.pinnedAllocations, 0u);
}

TEST(HostMemory, ResidentSetIsPreferredAndAFlatOneIsASawtooth) {
    const int n = 6;
    TraceData d = withIterations(n);
    const auto rss = d.intern("host resident bytes");
    const auto cpu = d.intern("CPU Total Allocated");
    for (int i = 0; i < n; ++i) {
        const int64_t start = kIterationNs * (i + 1);
        d.counters.append({start, rss, kHostDevice, CounterKind::HostResidentBytes, 3e9});
        d.counters.append({start + 10, rss, kHostDevice, CounterKind::HostResidentBytes, 3.2e9});
        d.counters.append({start + 20, rss, kHostDevice, CounterKind::HostResidentBytes, 3e9});
        // The allocator's total grows, but the resident set is what the report reads.
        d.counters.append(
            {start, cpu, kHostDevice, CounterKind::HostAllocatedBytes, 1e6 * double(50 * i)});
    }
    const HostMemoryReport r = analyzeHostMemory(d, iterationsOnGpu0(d));
    EXPECT_EQ(r.source, HostSeriesSource::ResidentBytes);
    EXPECT_EQ(r.counterName, "host resident bytes");
    EXPECT_EQ(r.trend.verdict, LeakVerdict::Sawtooth) << r.trend.reason;
    EXPECT_EQ(r.peakBytes, 3'200'000'000);
}

TEST(HostMemory, PinnedBytesAreTheRunningSumOfPinnedEvents) {
    TraceData d = withIterations(4);
    auto pinned = [&](int64_t t, uint64_t address, uint64_t size, MemoryAction action) {
        MemoryEvent e;
        e.timestampNs = t;
        e.address = address;
        e.sizeBytes = size;
        e.action = action;
        e.kind = MemoryKind::Pinned;
        e.device = kHostDevice;
        d.memory.append(e);
    };
    // 64 MiB, then 32 MiB beside it (96 MiB), the 64 MiB freed, 16 MiB more: peak 96 MiB.
    pinned(1'000'100, 0xA000, 64 * kMiB, MemoryAction::Alloc);
    pinned(1'000'200, 0xB000, 32 * kMiB, MemoryAction::Alloc);
    pinned(1'000'300, 0xA000, 64 * kMiB, MemoryAction::Free);
    pinned(1'000'400, 0xC000, 16 * kMiB, MemoryAction::Alloc);
    const HostMemoryReport r = analyzeHostMemory(d, iterationsOnGpu0(d));
    EXPECT_TRUE(r.hasData());
    EXPECT_EQ(r.source, HostSeriesSource::None);
    EXPECT_EQ(r.pinnedAllocations, 3u);
    EXPECT_EQ(r.pinnedPeakBytes, 96 * kMiB);
    EXPECT_EQ(r.pinnedPeakTimeNs, 1'000'200);
}

TEST(HostMemory, HostCountersAndPinnedMemoryAreNoGpuMemory) {
    TraceData d;
    d.header.devices.push_back({trace::DeviceIndex{0}, "GPU", "", 80ull << 30});
    const auto gpu = d.intern("Total Allocated");
    const auto rss = d.intern("host resident bytes");
    d.counters.append({10, gpu, trace::DeviceIndex{0}, CounterKind::AllocatedBytes, 1000.0});
    d.counters.append({20, rss, kHostDevice, CounterKind::HostResidentBytes, 5e9});
    // A producer that put a host counter on a GPU: still no GPU memory.
    d.counters.append({30, rss, trace::DeviceIndex{0}, CounterKind::HostResidentBytes, 7e9});
    d.counters.append({30, rss, trace::DeviceIndex{0}, CounterKind::HostAllocatedBytes, 7e9});
    MemoryEvent e;
    e.timestampNs = 40;
    e.address = 0xA000;
    e.sizeBytes = 1ull << 30;
    e.kind = MemoryKind::Pinned;
    e.device = kHostDevice;
    d.memory.append(e);
    const std::vector<MemoryTimeline> t = buildMemoryTimelines(d);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].device, trace::DeviceIndex{0});
    EXPECT_EQ(t[0].allocated.bytes, (std::vector<int64_t>{1000}));
    EXPECT_TRUE(t[0].reserved.empty());
    EXPECT_EQ(t[0].peakAllocatedBytes, 1000);
    EXPECT_EQ(t[0].memoryEvents, 0u);
}

TEST(HostMemory, WithoutIterationsThereIsNoTrend) {
    TraceData d;
    const auto rss = d.intern("host resident bytes");
    d.counters.append({20, rss, kHostDevice, CounterKind::HostResidentBytes, 5e9});
    const HostMemoryReport r = analyzeHostMemory(d, IterationSet{});
    EXPECT_EQ(r.source, HostSeriesSource::ResidentBytes);
    EXPECT_TRUE(r.iterations.empty());
    EXPECT_EQ(r.trend.verdict, LeakVerdict::Inconclusive);
    EXPECT_FALSE(r.trend.reason.empty());
}

// --- the synthetic job ---

SyntheticJobSpec hostSpec(uint64_t growth) {
    SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 10;
    spec.hostCounter = true;
    spec.hostGrowthBytesPerIteration = growth;
    return spec;
}

TEST(HostMemory, FindsTheSyntheticHostGrowthExactly) {
    const SyntheticJobSpec spec = hostSpec(48 * kMiB);
    const TraceData d = generateSyntheticRank(spec, 0);
    const HostMemoryReport r = analyzeHostMemory(d, iterationsOnGpu0(d));
    ASSERT_EQ(r.iterations.size(), 10u);
    for (size_t i = 0; i < r.iterations.size(); ++i) {
        EXPECT_EQ(r.iterations[i].baselineBytes,
                  int64_t(spec.hostBaseBytes + i * spec.hostGrowthBytesPerIteration));
        EXPECT_EQ(r.iterations[i].peakBytes,
                  int64_t(spec.hostBaseBytes + i * spec.hostGrowthBytesPerIteration +
                          spec.hostBatchBytes));
    }
    EXPECT_EQ(r.trend.verdict, LeakVerdict::Staircase) << r.trend.reason;
    EXPECT_EQ(r.trend.growthBytesPerIteration, 48 * kMiB);
    EXPECT_EQ(r.peakBytes, int64_t(spec.hostBaseBytes + 9 * spec.hostGrowthBytesPerIteration +
                                   spec.hostBatchBytes));
}

const AdviceAssessment* hostAssessment(const std::vector<AdviceAssessment>& all, size_t input) {
    for (const AdviceAssessment& a : all) {
        if (a.rule == "host-memory" && a.input == input) {
            return &a;
        }
    }
    return nullptr;
}

TEST(HostMemoryRule, FiresOncePerRankOnTheHostOfAGrowingJob) {
    const SyntheticJobSpec spec = hostSpec(48 * kMiB);
    const std::vector<TraceData> job = generateSyntheticJob(spec);
    auto a = analyzeJob({{&job[0], trace::RankId{0}, 0}, {&job[1], trace::RankId{1}, 0}});
    ASSERT_TRUE(a.ok()) << a.error().describe();
    size_t hostAssessments = 0;
    for (const AdviceAssessment& s : a->assessments) {
        if (s.rule == "host-memory") {
            ++hostAssessments;
            EXPECT_EQ(s.device, kHostDevice);
            EXPECT_EQ(s.outcome, AssessmentOutcome::Fired) << s.detail;
            EXPECT_EQ(s.severity, Severity::Warning);
        }
    }
    EXPECT_EQ(hostAssessments, 2u);
    size_t fired = 0;
    for (const Advice& adv : a->advice) {
        if (adv.rule != "host-memory") {
            continue;
        }
        ++fired;
        EXPECT_EQ(adv.device, kHostDevice);
        EXPECT_NE(adv.message.find("climbs every iteration: baseline slope 48.0 MiB per iteration"),
                  std::string::npos)
            << adv.message;
        EXPECT_NE(adv.message.find("copy-on-read"), std::string::npos);
        EXPECT_NE(adv.message.find("pin_memory"), std::string::npos);
        const auto growth = std::find_if(adv.evidence.begin(), adv.evidence.end(), [](auto& e) {
            return e.name == "host_total_growth_bytes";
        });
        ASSERT_NE(growth, adv.evidence.end());
        EXPECT_DOUBLE_EQ(growth->value, 9.0 * 48 * kMiB);  // slope x (n - 1)
    }
    EXPECT_EQ(fired, 2u);
}

TEST(HostMemoryRule, FlatHostMemoryIsClearWithItsFigure) {
    const std::vector<TraceData> job = generateSyntheticJob(hostSpec(0));
    auto a = analyzeJob({{&job[0], trace::RankId{0}, 0}});
    ASSERT_TRUE(a.ok()) << a.error().describe();
    const AdviceAssessment* s = hostAssessment(a->assessments, 0);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->outcome, AssessmentOutcome::Clear) << s->detail;
    EXPECT_NE(s->detail.find("Theil-Sen"), std::string::npos) << s->detail;
    EXPECT_NE(s->detail.find("host resident bytes"), std::string::npos) << s->detail;
}

TEST(HostMemoryRule, SaysWhatIsMissingWithoutHostMemory) {
    SyntheticJobSpec spec;
    spec.ranks = 1;
    const std::vector<TraceData> job = generateSyntheticJob(spec);
    auto a = analyzeJob({{&job[0], trace::RankId{0}, 0}});
    ASSERT_TRUE(a.ok()) << a.error().describe();
    const AdviceAssessment* s = hostAssessment(a->assessments, 0);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->outcome, AssessmentOutcome::NotAssessed);
    EXPECT_NE(s->detail.find("records no host memory"), std::string::npos) << s->detail;
    EXPECT_NE(s->detail.find("profile_memory=True"), std::string::npos) << s->detail;
}

TEST(HostMemoryRule, TooFewIterationsOrOnlyPinnedMemoryAreNotAssessed) {
    HostMemoryReport few;
    few.source = HostSeriesSource::ResidentBytes;
    few.counterName = "host resident bytes";
    few.iterations.resize(2);
    few.trend = baselineTrend(few.iterations);
    HostMemoryReport pinned;
    pinned.pinnedAllocations = 3;
    pinned.pinnedPeakBytes = 96 * kMiB;
    for (const HostMemoryReport* h : {&few, &pinned}) {
        DeviceFacts f;
        f.input = 0;
        f.host = h;
        std::vector<AdviceAssessment> out;
        const std::vector<Advice> advice = adviseOn({f}, {}, &out);
        const AdviceAssessment* s = hostAssessment(out, 0);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->outcome, AssessmentOutcome::NotAssessed) << s->detail;
        EXPECT_TRUE(std::none_of(advice.begin(), advice.end(),
                                 [](const Advice& x) { return x.rule == "host-memory"; }));
    }
    DeviceFacts f;
    f.input = 0;
    f.host = &pinned;
    std::vector<AdviceAssessment> out;
    adviseOn({f}, {}, &out);
    EXPECT_NE(hostAssessment(out, 0)->detail.find("96.0 MiB over 3 pinned allocations"),
              std::string::npos);
    // A device that does not carry the host (not the rank's first) is not assessed at all.
    DeviceFacts other;
    other.input = 0;
    out.clear();
    adviseOn({other}, {}, &out);
    EXPECT_EQ(hostAssessment(out, 0), nullptr);
}

}  // namespace
}  // namespace vramscope::analysis
