#include "vramscope/analysis/model/job_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>

#include "unit/analysis/clock_shift.h"
#include "unit/analysis/replay_alive.h"
#include "vramscope/analysis/memory/flame_service.h"
#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {

using trace::MemoryLevel;
using trace::TraceData;

constexpr int64_t kRank1OffsetNs = -500'000;  // rank 1's clock reads half a millisecond earlier

SyntheticJobSpec spec() {
    SyntheticJobSpec s;
    s.ranks = 2;
    s.iterations = 5;
    s.activationsPerIteration = 4;
    s.activationBytes = 256ull << 20;
    s.weightBytes = 1ull << 30;
    s.optimizerBytes = 2ull << 30;
    s.leakBytesPerIteration = 64ull << 20;
    s.leakRank = 0;
    s.segmentBytes = 1ull << 30;
    s.computeKernelsPerIteration = 8;
    s.computeKernelNs = 100'000;
    return s;
}

trace::Job jobOf(const SyntheticJobSpec& s) {
    trace::Job job;
    std::vector<TraceData> traces = generateSyntheticJob(s);
    for (size_t r = 0; r < traces.size(); ++r) {
        trace::RankTrace rt;
        rt.path = "rank" + std::to_string(r) + ".vscope";
        rt.trace.data = std::move(traces[r]);
        if (r == 1) {
            test::shiftClock(rt.trace.data, kRank1OffsetNs);
        }
        job.ranks.push_back(std::move(rt));
    }
    return job;
}

/// Earliest and latest timestamp of every column of `d` (written out here, not the model's).
std::pair<int64_t, int64_t> spanOf(const TraceData& d) {
    int64_t lo = INT64_MAX;
    int64_t hi = INT64_MIN;
    auto see = [&](const std::vector<int64_t>& v) {
        for (int64_t t : v) {
            lo = std::min(lo, t);
            hi = std::max(hi, t);
        }
    };
    see(d.memory.timestampNs);
    see(d.counters.timestampNs);
    see(d.kernels.startNs);
    see(d.kernels.endNs);
    see(d.ranges.startNs);
    see(d.ranges.endNs);
    see(d.collectives.startNs);
    see(d.collectives.endNs);
    for (const trace::OomEvent& o : d.ooms) {
        see({o.timestampNs});
    }
    return {lo, hi};
}

/// Peak figures of rank r from SyntheticJobSpec's formulas, on the rank's own clock (rank 1's
/// reads kRank1OffsetNs off, see jobOf).
struct Peaks {
    int64_t allocated, allocatedTime, reserved, reservedTime;
};

Peaks peaksOf(const SyntheticJobSpec& s, int r) {
    const int64_t k = s.computeKernelsPerIteration;
    const int n = s.ranks;
    const int64_t F = (k / 2) * s.computeKernelNs;
    const int64_t C = k * s.computeKernelNs;
    const auto D = int64_t(
        std::ceil(double(s.allReduceBytes) * 2 * (n - 1) / n / s.busBandwidthBytesPerS * 1e9));
    const int64_t P = C + D + s.hostGapNs;  // no straggler, no overlap
    auto start = [&](int i) { return 3'000'000 + s.hostGapNs + i * P; };
    const int64_t A = s.activationsPerIteration;
    const auto a = int64_t(s.activationBytes);
    const auto g = int64_t(s.segmentBytes);
    const auto base = int64_t(s.weightBytes + s.optimizerBytes);
    const int64_t L = r == s.leakRank ? int64_t(s.leakBytesPerIteration) : 0;
    Peaks p{};
    p.allocated = base + A * a + s.iterations * L;
    p.allocatedTime = L > 0 ? start(s.iterations - 1) + F : start(0) + (A - 1) * (F / A);
    p.reserved = (p.allocated + g - 1) / g * g;
    p.reservedTime = -1;
    const int64_t clock = r == 1 ? kRank1OffsetNs : 0;
    p.allocatedTime += clock;
    auto check = [&](int64_t t, int64_t allocated) {
        if (p.reservedTime < 0 && allocated > p.reserved - g) {
            p.reservedTime = t + clock;
        }
    };
    check(1'000'000, int64_t(s.weightBytes));
    check(2'000'000, base);
    for (int i = 0; i < s.iterations; ++i) {
        for (int64_t j = 0; j < A; ++j) {
            check(start(i) + j * (F / A), base + i * L + (j + 1) * a);
        }
        check(start(i) + F, base + (i + 1) * L + A * a);
    }
    return p;
}

std::shared_ptr<const JobModel> build(const ModelProgress& progress = {},
                                      JobAnalysisOptions options = {}) {
    auto model = buildJobModel(jobOf(spec()), "synthetic", progress, std::move(options));
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().describe());
    return model.ok() ? model.value() : nullptr;
}

TEST(Unit, JobTimeZeroIsTheEarliestEventOfAnyRankWhenClocksAreOffset) {
    const trace::Job job = jobOf(spec());
    int64_t origin = INT64_MAX;
    int64_t end = INT64_MIN;
    for (const trace::RankTrace& r : job.ranks) {
        const auto [lo, hi] = spanOf(r.trace.data);
        origin = std::min(origin, lo);
        end = std::max(end, hi);
    }
    EXPECT_EQ(origin, 1'000'000 + kRank1OffsetNs);  // rank 1's weights, the first event
    const auto m = build();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->title, "synthetic");
    EXPECT_EQ(m->originNs, origin);
    EXPECT_EQ(m->durationNs, end - origin);
    ASSERT_EQ(m->ranks.size(), 2u);
    EXPECT_EQ(m->ranks[0].toJobNs, -origin);
    EXPECT_EQ(m->ranks[1].toJobNs, -origin);
    // Job time 0 is rank 1's first event (its weights at 1 ms, read 0.5 ms early by its clock).
    EXPECT_EQ(m->toRank(1, 0), 1'000'000 + kRank1OffsetNs);
    EXPECT_EQ(m->toJob(1, 1'000'000 + kRank1OffsetNs), 0);
    EXPECT_EQ(m->toJob(0, 1'000'000), -kRank1OffsetNs);
    EXPECT_EQ(m->ranks[1].rank, trace::RankId{1});
    EXPECT_TRUE(m->analysisProblem.empty());
}

TEST(Unit, EveryGpuHasOneSeriesWithTheFormulaPeaksInJobTimeWhenBuilt) {
    const SyntheticJobSpec s = spec();
    const auto m = build();
    ASSERT_TRUE(m);
    ASSERT_EQ(m->gpus.size(), 2u);
    for (int r = 0; r < 2; ++r) {
        const GpuSeries& g = m->gpus[size_t(r)];
        const Peaks p = peaksOf(s, r);
        const int64_t toJob = m->ranks[size_t(r)].toJobNs;
        EXPECT_EQ(g.key, (GpuKey{r, DeviceIndex{r}}));
        EXPECT_EQ(m->gpu(GpuKey{r, DeviceIndex{r}}), &g);
        EXPECT_EQ(g.rank, trace::RankId{r});
        EXPECT_EQ(g.memory.capacityBytes, s.capacityBytes);
        EXPECT_EQ(g.memory.peakAllocatedBytes, p.allocated) << r;
        EXPECT_EQ(g.memory.peakAllocatedTimeNs, p.allocatedTime + toJob) << r;
        EXPECT_EQ(g.memory.peakReservedBytes, p.reserved) << r;
        EXPECT_EQ(g.memory.peakReservedTimeNs, p.reservedTime + toJob) << r;
        // The drawn curve is on job time too: the peak value holds at the peak's job time.
        EXPECT_EQ(g.allocated.series().valueAt(p.allocatedTime + toJob), p.allocated) << r;
        EXPECT_EQ(g.bytesInUseAt(p.reservedTime + toJob), p.reserved) << r;
    }
    EXPECT_EQ(m->gpu(GpuKey{0, DeviceIndex{1}}), nullptr);
}

TEST(Unit, MemoryAnalysisSharesTheOneIndexWithTheFlameServiceWhenBuilt) {
    const auto m = build();
    ASSERT_TRUE(m);
    ASSERT_EQ(m->memory.size(), 2u);
    ASSERT_TRUE(m->flames);
    for (int r = 0; r < 2; ++r) {
        const GpuMemoryAnalysis& g = m->memory[size_t(r)];
        ASSERT_NE(g.device, nullptr);
        // It points into the analyses, at the analysis of its own GPU.
        const DeviceAnalysis& d = m->analysis.devices[size_t(r)];
        EXPECT_EQ(g.device, &d);
        EXPECT_EQ(d.input, size_t(r));
        EXPECT_EQ(&g.index(), d.index.get());
        // Held by the analysis and by the flame service's builder, nothing else: the service
        // did not build an index of its own.
        EXPECT_EQ(d.index.use_count(), 2);
        EXPECT_EQ(g.level, MemoryLevel::Allocated);
        EXPECT_EQ(g.peakTimeNs, peaksOf(spec(), r).allocatedTime);  // trace time
        const TraceData& data = m->job.ranks[size_t(r)].trace.data;
        ASSERT_TRUE(m->flames->has(r, DeviceIndex{r}));
        for (int64_t t : {int64_t(1'500'000), int64_t(2'500'000), g.peakTimeNs, g.peakTimeNs - 1,
                          int64_t(9'000'000)}) {
            const auto tree = m->flames->at(r, DeviceIndex{r}, t, FlameGrouping::Stack);
            ASSERT_TRUE(tree);
            EXPECT_EQ(tree->root().bytes, test::replayAlive(data, DeviceIndex{r}, t))
                << "rank " << r << " t " << t;
        }
    }
    EXPECT_EQ(m->kernels.size(), 2u);
    EXPECT_EQ(m->memoryOf(GpuKey{1, DeviceIndex{1}}), &m->memory[1]);
}

TEST(Unit, ProgressRisesWithoutGoingBackAndEndsAtOneWhenNotCancelled) {
    std::vector<double> seen;
    std::vector<std::string> stages;
    const auto m = build([&](double done, std::string_view stage) {
        stages.emplace_back(stage);
        seen.push_back(done);
        return true;
    });
    ASSERT_TRUE(m);
    ASSERT_GE(seen.size(), 2u);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_GE(seen.front(), 0.0);
    EXPECT_EQ(seen.back(), 1.0);
    // The job is named while its ranks are analysed (several at once).
    EXPECT_NE(std::find(stages.begin(), stages.end(), "Analysing 2 ranks"), stages.end());
}

TEST(Unit, BuildReturnsCancelledAndNoModelWhenProgressSaysStop) {
    int calls = 0;
    auto first = buildJobModel(jobOf(spec()), "synthetic", [&](double, std::string_view) {
        ++calls;
        return false;
    });
    ASSERT_FALSE(first.ok());
    EXPECT_EQ(first.error().code, trace::ErrorCode::Cancelled);
    EXPECT_EQ(calls, 1);  // it stops at the first refusal
    // Refusing only at the end (after the analyses) cancels too.
    auto last = buildJobModel(jobOf(spec()), "synthetic",
                              [](double done, std::string_view) { return done < 1.0; });
    ASSERT_FALSE(last.ok());
    EXPECT_EQ(last.error().code, trace::ErrorCode::Cancelled);
}

TEST(Unit, InvalidIterationRegexKeepsTheTimelinesAndSaysWhyWhenBuilt) {
    JobAnalysisOptions options;
    options.iterations.regex = "step(";
    const auto m = build({}, options);
    ASSERT_TRUE(m);
    EXPECT_NE(m->analysisProblem.find("regex"), std::string::npos) << m->analysisProblem;
    ASSERT_EQ(m->gpus.size(), 2u);
    for (int r = 0; r < 2; ++r) {
        const Peaks p = peaksOf(spec(), r);
        EXPECT_EQ(m->gpus[size_t(r)].memory.peakAllocatedBytes, p.allocated);
        EXPECT_EQ(m->gpus[size_t(r)].memory.peakAllocatedTimeNs,
                  p.allocatedTime + m->ranks[size_t(r)].toJobNs);
    }
    EXPECT_TRUE(m->memory.empty());
    ASSERT_TRUE(m->flames);
    EXPECT_EQ(m->flames->at(0, DeviceIndex{0}, 2'000'000, FlameGrouping::Stack), nullptr);
}

}  // namespace
}  // namespace vramscope::analysis
