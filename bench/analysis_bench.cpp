// Speed of the analyses on a 10-million-event synthetic trace: everything the report computes
// (iterations, leak verdict and survivors, time breakdown and gaps, model state, collectives,
// advice), and the flame tree rebuilt as a cursor moves. Targets: all analyses under 1 s, a flame
// rebuild under 50 ms.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <random>

#include "vramscope/analysis/memory/flame_tree.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/model/level_of_detail.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/analysis/time/kernel_lanes.h"

namespace {

using namespace vramscope;
using namespace vramscope::analysis;

/// Rank 0 of a two-rank job with about 10 million events (kernels, all-reduces, a sawtooth of
/// activations and a 1 MiB leak every iteration, so the live set grows to ~100k allocations).
const trace::TraceData& trace10M() {
    static const std::unique_ptr<trace::TraceData> data = [] {
        SyntheticJobSpec spec;
        spec.ranks = 2;
        spec.leakBytesPerIteration = 1ull << 20;
        spec.stragglerRank = 1;
        spec.iterations = int(10'000'000 / syntheticEventsPerIteration(spec, 0)) + 1;
        auto d = std::make_unique<trace::TraceData>(generateSyntheticRank(spec, 0));
        std::fprintf(stderr, "trace: %d iterations, %zu events (%zu memory, %zu kernels)\n",
                     spec.iterations, d->eventCount(), d->memory.size(), d->kernels.size());
        return d;
    }();
    return *data;
}

void BM_AllAnalyses(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    for (auto _ : state) {
        auto job = analyzeJob({{&d, trace::RankId{0}, 0}});
        benchmark::DoNotOptimize(job);
    }
    state.counters["events"] = double(d.eventCount());
}
BENCHMARK(BM_AllAnalyses)->Unit(benchmark::kMillisecond)->Iterations(3);

// What the viewer computed for a job before the job model: the loader's timelines and LOD, then
// the analyses (which built the timelines and the allocation index again), then a flame builder
// with an index of its own, its peak time and the kernel lanes. The baseline for
// BM_ViewerJobModel.
void BM_ViewerPipelineSeparateSteps(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    for (auto _ : state) {
        for (MemoryTimeline& t : buildMemoryTimelines(d)) {
            LodSeries allocated(std::move(t.allocated));
            LodSeries reserved(std::move(t.reserved));
            benchmark::DoNotOptimize(allocated);
            benchmark::DoNotOptimize(reserved);
        }
        auto job = analyzeJob({{&d, trace::RankId{0}, 0}});
        FlameTreeBuilder flame(d, trace::DeviceIndex{0}, detailLevel(d, trace::DeviceIndex{0}));
        KernelLaneIndex lanes(d, trace::DeviceIndex{0});
        benchmark::DoNotOptimize(peakTime(d, flame.index()));
        benchmark::DoNotOptimize(job);
        benchmark::DoNotOptimize(lanes);
    }
}
BENCHMARK(BM_ViewerPipelineSeparateSteps)->Unit(benchmark::kMillisecond)->Iterations(3);

// The same for the viewer now: buildJobModel, each piece once (the copy of the trace it takes
// is made outside the timing).
void BM_ViewerJobModel(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    for (auto _ : state) {
        state.PauseTiming();
        trace::Job job;
        job.ranks.emplace_back();
        job.ranks.back().trace.data = d;
        state.ResumeTiming();
        auto model = buildJobModel(std::move(job), "bench");
        benchmark::DoNotOptimize(model);
        state.PauseTiming();
        model = trace::Error::make(trace::ErrorCode::Invalid, "", "");  // free outside the timing
        state.ResumeTiming();
    }
}
BENCHMARK(BM_ViewerJobModel)->Unit(benchmark::kMillisecond)->Iterations(3);

/// Four ranks of about 2.5 million events each.
const std::vector<trace::TraceData>& job4x2M() {
    static const std::vector<trace::TraceData> job = [] {
        SyntheticJobSpec spec;
        spec.ranks = 4;
        spec.leakBytesPerIteration = 1ull << 20;
        spec.iterations = int(2'500'000 / syntheticEventsPerIteration(spec, 0)) + 1;
        return generateSyntheticJob(spec);
    }();
    return job;
}

// analyzeJob over four ranks with `threads` workers (1 = the serial baseline); results are the
// same, only the wall time differs. The machine's hardware threads bound the gain.
void BM_AnalyzeFourRanks(benchmark::State& state) {
    const std::vector<trace::TraceData>& job = job4x2M();
    std::vector<RankInput> inputs;
    for (size_t r = 0; r < job.size(); ++r) {
        inputs.push_back({&job[r], trace::RankId{int32_t(r)}, 0});
    }
    JobAnalysisOptions options;
    options.threads = int(state.range(0));
    for (auto _ : state) {
        benchmark::DoNotOptimize(analyzeJob(inputs, options));
    }
}
BENCHMARK(BM_AnalyzeFourRanks)
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

void BM_Iterations(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    for (auto _ : state) {
        benchmark::DoNotOptimize(findIterations(d, trace::DeviceIndex{0}));
    }
}
BENCHMARK(BM_Iterations)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AllocationIndex(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    for (auto _ : state) {
        AllocationIndex index(d, trace::DeviceIndex{0}, trace::MemoryLevel::Allocated);
        benchmark::DoNotOptimize(index);
    }
}
BENCHMARK(BM_AllocationIndex)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_LeakGivenIndex(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    const AllocationIndex index(d, trace::DeviceIndex{0}, trace::MemoryLevel::Allocated);
    const IterationSet its = findIterations(d, trace::DeviceIndex{0}).value();
    const std::vector<MemoryTimeline> timelines = buildMemoryTimelines(d);
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            analyzeLeak(d, trace::DeviceIndex{0}, its, index, &timelines.front()));
    }
}
BENCHMARK(BM_LeakGivenIndex)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_TimeBreakdown(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    for (auto _ : state) {
        benchmark::DoNotOptimize(computeTimeBreakdowns(d));
    }
}
BENCHMARK(BM_TimeBreakdown)->Unit(benchmark::kMillisecond)->Iterations(3);

/// One flame tree per cursor position, positions uniform over the trace (late positions hold up
/// to ~100k live allocations).
void BM_FlameRebuildPerCursorMove(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    FlameTreeBuilder builder(d, trace::DeviceIndex{0}, trace::MemoryLevel::Allocated);
    const trace::TimestampNs t0 = builder.index().timeAt(0);
    const trace::TimestampNs t1 = builder.index().timeAt(builder.index().size() - 1);
    std::mt19937_64 rng(42);
    const auto grouping = FlameGrouping(state.range(0));
    for (auto _ : state) {
        const trace::TimestampNs t = t0 + trace::TimestampNs(rng() % uint64_t(t1 - t0 + 1));
        benchmark::DoNotOptimize(builder.at(t, grouping));
    }
}
BENCHMARK(BM_FlameRebuildPerCursorMove)
    ->Arg(int(FlameGrouping::Stack))
    ->Arg(int(FlameGrouping::Category))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(50);

/// The worst cursor position: the end of the trace, where the live set is largest.
void BM_FlameRebuildAtTheEnd(benchmark::State& state) {
    const trace::TraceData& d = trace10M();
    FlameTreeBuilder builder(d, trace::DeviceIndex{0}, trace::MemoryLevel::Allocated);
    const trace::TimestampNs t1 = builder.index().timeAt(builder.index().size() - 1);
    for (auto _ : state) {
        benchmark::DoNotOptimize(builder.at(t1, FlameGrouping::Stack));
    }
    state.counters["live"] = double(builder.index().aliveEventsAt(t1).size());
}
BENCHMARK(BM_FlameRebuildAtTheEnd)->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace

BENCHMARK_MAIN();
