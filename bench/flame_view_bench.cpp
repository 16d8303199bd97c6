// Flame view rebuild time as the cursor moves over a 10-million-event synthetic trace: the
// analysis tree alone, the panel's whole rebuild (tree, layout of the icicle, caption), and the
// rebuild plus a paint. Target: a rebuild under 50 ms. Run offscreen:
//   QT_QPA_PLATFORM=offscreen build/<dir>/bench/flame_view_bench
#include <QApplication>
#include <QImage>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>

#include "vramscope/analysis/memory/flame_service.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/flame_view.h"

namespace {

using namespace vramscope;

/// One rank with about 10 million events: kernels, a sawtooth of activations and a 1 MiB leak
/// every iteration, so the live set grows to ~100k allocations by the end.
struct Bench {
    std::shared_ptr<const analysis::JobModel> analyses;
    widgets::ZoomState zoom;
    std::unique_ptr<widgets::FlamePanel> panel;
    int64_t endNs = 0;

    Bench() {
        analysis::SyntheticJobSpec spec;
        spec.ranks = 1;
        spec.leakBytesPerIteration = 1ull << 20;
        spec.iterations = analysis::iterationsForEventCount(spec, 10'000'000);
        trace::Job job;
        trace::RankTrace rank;
        rank.trace.data = analysis::generateSyntheticRank(spec, 0);
        const trace::TraceData& d = rank.trace.data;
        std::fprintf(stderr, "trace: %d iterations, %zu events (%zu memory, %zu kernels)\n",
                     spec.iterations, d.eventCount(), d.memory.size(), d.kernels.size());
        job.ranks.push_back(std::move(rank));
        analyses = analysis::buildJobModel(std::move(job), "bench").value();
        endNs = analyses->durationNs - 1;
        zoom.setFullRange({0, analyses->durationNs});
        panel = std::make_unique<widgets::FlamePanel>(&zoom);
        panel->resize(1400, 700);
        panel->setJob(analyses);
        const analysis::GpuKey gpu = analyses->memory.front().key;
        std::fprintf(stderr, "live allocations at the end: %lld\n",
                     (long long)analyses->flames
                         ->at(gpu.rankIndex, gpu.device, endNs, analysis::FlameGrouping::Stack)
                         ->root()
                         .count);
    }
};

// Destroyed in main before the QApplication (widgets must not outlive it).
std::unique_ptr<Bench> g_bench;

Bench& bench() {
    if (!g_bench) {
        g_bench = std::make_unique<Bench>();
    }
    return *g_bench;
}

/// Cursor positions spread over the whole trace (a user sweeping across it), 997 apart so that
/// consecutive moves land in different checkpoint intervals.
int64_t cursorAt(int64_t step, int64_t endNs) {
    return (step * 997 % 1000) * (endNs / 1000);
}

void BM_FlameTreeAt(benchmark::State& state) {
    Bench& b = bench();
    // A builder of its own over the model's index: every call builds (no service cache).
    const analysis::GpuMemoryAnalysis& gpu = b.analyses->memory.front();
    analysis::FlameTreeBuilder builder(b.analyses->job.ranks[0].trace.data, gpu.device->index);
    int64_t step = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            builder.at(cursorAt(step++, b.endNs), analysis::FlameGrouping::Stack));
    }
}
BENCHMARK(BM_FlameTreeAt)->Unit(benchmark::kMillisecond);

void BM_FlamePanelRebuildOnCursorMove(benchmark::State& state) {
    Bench& b = bench();
    const analysis::GpuKey gpu = b.analyses->memory.front().key;
    int64_t step = 0;
    for (auto _ : state) {
        b.zoom.setCursor(cursorAt(step++, b.endNs), gpu);
        b.panel->rebuildNow();
        benchmark::DoNotOptimize(b.panel->view()->tree().root().bytes);
    }
}
BENCHMARK(BM_FlamePanelRebuildOnCursorMove)->Unit(benchmark::kMillisecond);

void BM_FlamePanelRebuildAndPaint(benchmark::State& state) {
    Bench& b = bench();
    const analysis::GpuKey gpu = b.analyses->memory.front().key;
    QImage image(b.panel->view()->size(), QImage::Format_ARGB32_Premultiplied);
    int64_t step = 0;
    for (auto _ : state) {
        b.zoom.setCursor(cursorAt(step++, b.endNs), gpu);
        b.panel->rebuildNow();
        b.panel->view()->render(&image);
    }
}
BENCHMARK(BM_FlamePanelRebuildAndPaint)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    g_bench.reset();
    return 0;
}
