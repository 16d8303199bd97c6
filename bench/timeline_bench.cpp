// Memory timeline and level-of-detail speed on a 10-million-event synthetic trace (one rank,
// `synth --events 10000000 --noise` in memory). Run by hand:
//   build/<dir>/bench/timeline_bench
#include <benchmark/benchmark.h>

#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/level_of_detail.h"
#include "vramscope/analysis/synthetic_job.h"

namespace {

using namespace vramscope;

const trace::TraceData& bigTrace() {
    static const trace::TraceData data = [] {
        analysis::SyntheticJobSpec spec;
        spec.ranks = 1;
        spec.benchmarkNoise = true;
        spec.iterations = analysis::iterationsForEventCount(spec, 10'000'000);
        return analysis::generateSyntheticRank(spec, 0);
    }();
    return data;
}

const analysis::LodSeries& bigLod() {
    static const analysis::LodSeries lod(analysis::buildMemoryTimelines(bigTrace())[0].allocated);
    return lod;
}

void BM_GenerateSynthetic10M(benchmark::State& state) {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.benchmarkNoise = true;
    spec.iterations = analysis::iterationsForEventCount(spec, 10'000'000);
    for (auto _ : state) {
        auto data = analysis::generateSyntheticRank(spec, 0);
        benchmark::DoNotOptimize(data.memory.size());
        state.counters["events"] = static_cast<double>(data.eventCount());
    }
}
BENCHMARK(BM_GenerateSynthetic10M)->Unit(benchmark::kMillisecond);

void BM_BuildMemoryTimelines(benchmark::State& state) {
    const auto& data = bigTrace();
    for (auto _ : state) {
        auto tls = analysis::buildMemoryTimelines(data);
        benchmark::DoNotOptimize(tls.front().peakAllocatedBytes);
    }
    state.counters["memory_events"] = static_cast<double>(data.memory.size());
    state.counters["events_per_s"] = benchmark::Counter(
        static_cast<double>(data.memory.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_BuildMemoryTimelines)->Unit(benchmark::kMillisecond);

void BM_BuildLodPyramid(benchmark::State& state) {
    const auto series = analysis::buildMemoryTimelines(bigTrace())[0].allocated;
    for (auto _ : state) {
        analysis::LodSeries lod(series);
        benchmark::DoNotOptimize(lod.series().size());
    }
    state.counters["steps"] = static_cast<double>(series.size());
}
BENCHMARK(BM_BuildLodPyramid)->Unit(benchmark::kMillisecond);

/// One screen of buckets (state.range(0)) over a window of 1/state.range(1) of the trace.
void BM_LodQuery(benchmark::State& state) {
    const auto& lod = bigLod();
    const auto& t = lod.series().timeNs;
    const int64_t span = t.back() - t.front();
    const int64_t window = span / state.range(1);
    const int64_t t0 = t.front() + (span - window) / 2;
    for (auto _ : state) {
        auto buckets = lod.query(t0, t0 + window, static_cast<size_t>(state.range(0)));
        benchmark::DoNotOptimize(buckets.data());
    }
}
BENCHMARK(BM_LodQuery)
    ->Args({2000, 1})
    ->Args({2000, 100})
    ->Args({2000, 100000})
    ->Unit(benchmark::kMicrosecond);

void BM_LiveSetAtPeak(benchmark::State& state) {
    const auto& data = bigTrace();
    const auto tl = analysis::buildMemoryTimelines(data)[0];
    for (auto _ : state) {
        auto live = analysis::liveSetAt(data, tl.device, trace::MemoryLevel::Allocated,
                                        tl.peakAllocatedTimeNs);
        benchmark::DoNotOptimize(live.size());
    }
}
BENCHMARK(BM_LiveSetAtPeak)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
