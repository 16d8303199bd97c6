// Replot speed of one GPU's VRAM plot on a 10-million-step series: the level-of-detail path the
// app uses against the same QCustomPlot graph fed the raw steps, plus the time from start to the
// first picture for a 10-million-event trace file. Runs offscreen; prints a table.
//
//   gui_replot_bench [--steps N] [--repeats R] [--skip-file]
#include <QApplication>
#include <QImage>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "job_loader.h"
#include "main_window.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/model/level_of_detail.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/zoom_state.h"

using namespace vramscope;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

/// A sawtooth of allocations with noise: `steps` steps 100 ns apart.
analysis::StepSeries syntheticSeries(size_t steps) {
    analysis::StepSeries s;
    s.timeNs.resize(steps);
    s.bytes.resize(steps);
    std::mt19937_64 rng(7);
    int64_t bytes = 8ll << 30;
    for (size_t i = 0; i < steps; ++i) {
        s.timeNs[i] = static_cast<int64_t>(i) * 100;
        const bool forward = (i / 50'000) % 2 == 0;
        const int64_t delta = static_cast<int64_t>(rng() % (4 << 20));
        bytes += forward ? delta : -delta;
        bytes = std::max<int64_t>(bytes, 1ll << 30);
        s.bytes[i] = bytes;
    }
    return s;
}

/// Median of `repeats` timed replots; `prepare(i)` sets up the i-th one (not timed separately).
double timeReplots(int repeats, const std::function<void(int)>& prepareAndReplot) {
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
        const auto start = Clock::now();
        prepareAndReplot(i);
        t.push_back(ms(Clock::now() - start));
    }
    return median(t);
}

void benchReplot(size_t steps, int repeats) {
    auto job = std::make_shared<analysis::JobModel>();
    job->title = "bench";
    job->ranks.push_back({});
    analysis::GpuSeries g;
    g.key = {0, trace::DeviceIndex{0}};
    g.memory.capacityBytes = 80ull << 30;
    analysis::StepSeries raw = syntheticSeries(steps);
    const auto buildStart = Clock::now();
    g.allocated = analysis::LodSeries(raw);
    const double buildMs = ms(Clock::now() - buildStart);
    g.memory.peakAllocatedBytes = *std::max_element(raw.bytes.begin(), raw.bytes.end());
    job->gpus.push_back(std::move(g));
    job->durationNs = raw.timeNs.back() + 100;

    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::MemoryPlot plot(job, {0, trace::DeviceIndex{0}}, &zoom);
    plot.resize(1600, 300);
    plot.show();
    QApplication::processEvents();
    plot.replot(QCustomPlot::rpImmediateRefresh);

    const int64_t full = job->durationNs;
    const int64_t onePercent = full / 100;
    // The app's path: query the reduction for the range, then draw.
    auto lodAt = [&](int64_t start, int64_t span) {
        zoom.setVisibleRange({start, start + span});  // refresh() runs from the signal
        plot.replot(QCustomPlot::rpImmediateRefresh);
    };
    const double lodFull = timeReplots(repeats, [&](int i) { lodAt(i % 2, full - 1); });
    const double lodZoom = timeReplots(repeats, [&](int i) {
        lodAt(static_cast<int64_t>(i) * (full - onePercent) / repeats, onePercent);
    });
    const size_t pointsZoomedOut = static_cast<size_t>(plot.allocatedGraph()->dataCount());
    // The reduction query alone, to split the replot time into query and drawing.
    const double queryFull = timeReplots(
        repeats, [&](int i) { (void)job->gpus[0].allocated.query(i % 2, full - 1, 1600 - 100); });

    // The same graph fed every raw step (QCustomPlot's own adaptive sampling on, its default).
    QObject::disconnect(&zoom, nullptr, &plot, nullptr);
    QVector<QCPGraphData> points(static_cast<qsizetype>(raw.size()));
    for (size_t i = 0; i < raw.size(); ++i) {
        points[static_cast<qsizetype>(i)] = {static_cast<double>(raw.timeNs[i]),
                                             static_cast<double>(raw.bytes[i])};
    }
    QCPGraph* graph = plot.allocatedGraph();
    graph->data()->set(points, true);
    QColor fill = graph->pen().color();
    fill.setAlpha(90);
    graph->setBrush(fill);  // allocated is drawn filled, as in the app
    plot.graph(0)->data()->clear();
    graph->setAntialiased(true);
    graph->setAntialiasedFill(true);
    graph->setAdaptiveSampling(true);
    auto rawAt = [&](int64_t start, int64_t span) {
        plot.xAxis->setRange(static_cast<double>(start), static_cast<double>(start + span));
        plot.replot(QCustomPlot::rpImmediateRefresh);
    };
    const double rawFull = timeReplots(repeats, [&](int i) { rawAt(i % 2, full - 1); });
    const double rawZoom = timeReplots(repeats, [&](int i) {
        rawAt(static_cast<int64_t>(i) * (full - onePercent) / repeats, onePercent);
    });
    graph->setAdaptiveSampling(false);
    const int slowRepeats = std::max(3, repeats / 10);
    const double rawNoSampling = timeReplots(slowRepeats, [&](int i) { rawAt(i % 2, full - 1); });

    std::printf(
        "One GPU plot, 1600x300 px, %zu steps (LOD build %.0f ms, %zu points drawn "
        "zoomed out)\n",
        steps, buildMs, pointsZoomedOut);
    std::printf("  %-52s %10s %10s\n", "median replot, ms", "all", "1 %");
    std::printf("  %-52s %10.2f %10.2f\n", "level of detail (app: query + draw)", lodFull, lodZoom);
    std::printf("  %-52s %10.2f %10s\n", "  of which the reduction query (1500 buckets)", queryFull,
                "-");
    std::printf("  %-52s %10.2f %10.2f\n", "raw steps, QCustomPlot adaptive sampling", rawFull,
                rawZoom);
    std::printf("  %-52s %10.2f %10s\n", "raw steps, adaptive sampling off", rawNoSampling, "-");
}

/// One rank, one GPU, `events` memory events (alloc/free pairs at the allocated level).
trace::TraceData syntheticTrace(size_t events) {
    trace::TraceData d;
    d.header.rank = trace::RankId{0};
    d.header.worldSize = 1;
    d.header.devices.push_back({trace::DeviceIndex{0}, "", "Bench GPU", 80ull << 30});
    d.memory.reserve(events);
    std::mt19937_64 rng(3);
    std::vector<uint64_t> live;
    uint64_t nextAddress = 0x7f0000000000;
    for (size_t i = 0; i < events; ++i) {
        trace::MemoryEvent e;
        e.timestampNs = static_cast<int64_t>(i) * 100;
        const bool alloc = live.empty() || (live.size() < 20'000 && rng() % 2 == 0);
        if (alloc) {
            e.address = nextAddress;
            nextAddress += 1 << 21;
            e.sizeBytes = (rng() % 64 + 1) << 20;
            e.action = trace::MemoryAction::Alloc;
            live.push_back(e.address);
        } else {
            const size_t k = rng() % live.size();
            e.address = live[k];
            live[k] = live.back();
            live.pop_back();
            e.action = trace::MemoryAction::Free;
        }
        d.memory.append(e);
    }
    return d;
}

void benchFirstPicture(size_t events) {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("bench.vscope")).toStdString();
    {
        trace::TraceData d = syntheticTrace(events);
        // Sizes of frees are filled in by the reader of real traces; here they come from allocs.
        if (const trace::Status s = trace::writeTraceFile(path, d); !s.ok()) {
            std::fprintf(stderr, "cannot write %s: %s\n", path.c_str(),
                         s.error().describe().c_str());
            return;
        }
    }
    const auto start = Clock::now();
    trace::Result<trace::Job> job = trace::openJob({path});
    if (!job.ok()) {
        std::fprintf(stderr, "cannot read: %s\n", job.error().describe().c_str());
        return;
    }
    const auto read = Clock::now();
    // Baseline in the same run: the timelines and their LOD alone, which is all the window waited
    // for before the job model (the analyses then ran behind the first picture).
    for (analysis::MemoryTimeline& t : analysis::buildMemoryTimelines(job->ranks[0].trace.data)) {
        const analysis::LodSeries allocated(std::move(t.allocated));
        const analysis::LodSeries reserved(std::move(t.reserved));
    }
    const auto timelinesOnly = Clock::now();
    auto loaded = analysis::buildJobModel(std::move(job).value(), "bench").value();
    const auto analysed = Clock::now();
    app::MainWindow window;
    window.setJob(loaded);
    const QImage image = window.renderToImage(QSize(1600, 1000));
    const auto pictured = Clock::now();
    std::printf("\nStart to first picture, %zu-event .vscope file (1600x1000 window)\n", events);
    std::printf(
        "  read %.0f ms + job model (timelines, LOD, analyses, indexes) %.0f ms + window and first "
        "render %.0f ms = "
        "%.0f ms%s\n",
        ms(read - start), ms(analysed - timelinesOnly), ms(pictured - analysed),
        ms(read - start) + ms(analysed - timelinesOnly) + ms(pictured - analysed),
        image.isNull() ? " (no image!)" : "");
    std::printf(
        "  baseline, same run: timelines and LOD alone %.0f ms (job model / baseline = %.2f)\n",
        ms(timelinesOnly - read), ms(analysed - timelinesOnly) / ms(timelinesOnly - read));
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    size_t steps = 10'000'000;
    int repeats = 30;
    bool file = true;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = std::stoull(argv[++i]);
        } else if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = std::max(1, std::atoi(argv[++i]));
        } else if (std::strcmp(argv[i], "--skip-file") == 0) {
            file = false;
        }
    }
    benchReplot(steps, repeats);
    if (file) {
        benchFirstPicture(steps);
    }
    return 0;
}
