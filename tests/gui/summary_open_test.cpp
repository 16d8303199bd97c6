// Opening from summaries (offscreen): a file with summary frames is drawn from them first and its
// events swapped in; over the memory budget only a zoomed window's frames load; a job index shows
// every rank worst first and a click loads that rank.

#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "main_window.h"
#include "summary_controller.h"
#include "summary_open.h"
#include "test_units.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/trace/job_index.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/widgets/heat_strip.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/zoom_state.h"

using namespace vramscope;
using Shown = app::SummaryController::Shown;

namespace {

using testdata::kMiB;
constexpr int kBlocksPerIteration = 10;

/// `iterations` iterations 10 us apart on GPU 0: blocks of 1..10 MiB allocated 500 ns apart, then
/// freed, except one 1 MiB block per iteration that stays (a leak). By hand the allocated peak is
/// sum(1..10) MiB plus the leaked MiB of every iteration, the last one included (it is allocated
/// first): (55 + iterations) MiB.
trace::TraceData sawtooth(int iterations, uint64_t capacity, int rank) {
    trace::TraceData d;
    d.header.rank = trace::RankId{rank};
    d.header.host = "node" + std::to_string(rank / 8);
    d.header.devices.push_back({trace::DeviceIndex{0}, "", "Test GPU", capacity});
    uint64_t address = 0x10000;
    for (int it = 0; it < iterations; ++it) {
        const int64_t t0 = 1'000'000 + int64_t(it) * 10'000;
        const uint64_t leaked = address++;
        d.memory.append({t0, leaked, uint64_t(kMiB), trace::MemoryAction::Alloc,
                         trace::MemoryLevel::Allocated});
        for (int j = 1; j <= kBlocksPerIteration; ++j) {
            d.memory.append({t0 + j * 500, address + uint64_t(j), uint64_t(j * kMiB),
                             trace::MemoryAction::Alloc, trace::MemoryLevel::Allocated});
        }
        for (int j = 1; j <= kBlocksPerIteration; ++j) {
            d.memory.append({t0 + 6'000 + j * 300, address + uint64_t(j), uint64_t(j * kMiB),
                             trace::MemoryAction::Free, trace::MemoryLevel::Allocated});
        }
        address += kBlocksPerIteration + 1;
    }
    return d;
}

int64_t handPeak(int iterations) {
    return (55 + iterations) * kMiB;
}

/// Writes `data` in small frames (many frames, so that windows select a few).
std::string writeFile(const QTemporaryDir& dir, const std::string& name,
                      const trace::TraceData& data) {
    const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
    trace::WriterOptions options;
    options.eventsPerChunk = 64;
    EXPECT_TRUE(trace::writeTraceFile(path, data, options).ok());
    return path;
}

int64_t plottedMax(const analysis::LodSeries& s, int64_t durationNs) {
    int64_t best = 0;
    for (const analysis::LodBucket& b : s.query(0, durationNs + 1, 1)) {
        best = std::max(best, b.maxBytes);
    }
    return best;
}

/// Keeps the budget setting of the test run out of the user's and resets it after the test.
struct BudgetGuard {
    explicit BudgetGuard(uint64_t bytes) { app::setMemoryBudgetBytes(bytes); }
    ~BudgetGuard() { app::setMemoryBudgetBytes(0); }
};

}  // namespace

TEST(SummaryOpen, FileWithSummariesShowsTheOverviewThenTheDetail) {
    QTemporaryDir dir;
    const int iterations = 40;
    const trace::TraceData data = sawtooth(iterations, 80 * kMiB, 0);
    const std::string path = writeFile(dir, "run.vscope", data);
    BudgetGuard budget(uint64_t{1} << 40);
    auto read = trace::readTraceSummary(path);
    ASSERT_TRUE(read.ok() && read->found);
    const trace::MemoryEnvelope* env = read->summary.envelope(
        trace::DeviceIndex{0}, trace::MemoryLevel::Allocated, trace::SeriesOrigin::MemoryEvents);
    ASSERT_NE(env, nullptr);
    EXPECT_EQ(env->peakBytes, handPeak(iterations));

    app::MainWindow w;
    w.openPaths({QString::fromStdString(path)});
    ASSERT_EQ(w.summaries()->shown(), Shown::Overview);  // drawn before any event is read
    ASSERT_TRUE(w.job());
    ASSERT_EQ(w.job()->gpus.size(), 1u);
    const analysis::GpuSeries& overview = w.job()->gpus[0];
    EXPECT_EQ(overview.memory.peakAllocatedBytes, env->peakBytes);
    EXPECT_EQ(plottedMax(overview.allocated, w.job()->durationNs), env->peakBytes);
    EXPECT_NE(w.summaries()->note().indexOf(QStringLiteral("Overview")), -1);

    QTRY_VERIFY_WITH_TIMEOUT(w.summaries()->shown() == Shown::Detail, 20000);
    const std::vector<analysis::MemoryTimeline> full = analysis::buildMemoryTimelines(data);
    ASSERT_EQ(full.size(), 1u);
    ASSERT_EQ(w.job()->gpus.size(), 1u);
    EXPECT_EQ(w.job()->gpus[0].memory.peakAllocatedBytes, full[0].peakAllocatedBytes);
    EXPECT_EQ(full[0].peakAllocatedBytes, handPeak(iterations));
    EXPECT_TRUE(w.summaries()->note().isEmpty());
}

TEST(SummaryOpen, OverBudgetLoadsOnlyTheFramesOfTheZoomedWindow) {
    QTemporaryDir dir;
    const int iterations = 200;
    const trace::TraceData data = sawtooth(iterations, 0, 0);
    const std::string path = writeFile(dir, "big.vscope", data);
    auto read = trace::readTraceSummary(path);
    ASSERT_TRUE(read.ok() && read->found);
    const trace::TraceSummary& summary = read->summary;
    // A budget of a tenth of the events: the file does not fit, a window of 1/50 does.
    BudgetGuard budget(app::estimatedDetailBytes(summary) / 10);

    app::MainWindow w;
    w.openPaths({QString::fromStdString(path)});
    ASSERT_EQ(w.summaries()->shown(), Shown::Overview);
    EXPECT_TRUE(w.summaries()->overBudget());
    EXPECT_NE(w.summaries()->note().indexOf(QStringLiteral("memory budget")), -1);
    QTest::qWait(400);
    EXPECT_EQ(w.summaries()->shown(), Shown::Overview);  // the events were not loaded

    const int64_t duration = w.job()->durationNs;
    const widgets::TimeRange visible{duration / 2, duration / 2 + duration / 50};
    w.zoomState()->setVisibleRange(visible);
    QTRY_VERIFY_WITH_TIMEOUT(w.summaries()->shown() == Shown::Window, 20000);
    // The same time is on screen: the window counts job time from its own earliest event.
    const int64_t shift = w.job()->originNs - summary.firstNs;
    EXPECT_EQ(w.zoomState()->visibleRange(),
              (widgets::TimeRange{visible.startNs - shift, visible.endNs - shift}));

    // The frames read are those whose event span meets the loaded window (recomputed here from
    // the summary's frame index), a small part of the file.
    const auto [start, end] = w.summaries()->windowRange();
    const int64_t origin = summary.firstNs;
    std::vector<uint64_t> expected;
    size_t eventFrames = 0;
    for (const trace::FrameIndexEntry& f : summary.frames) {
        eventFrames += (f.contents & trace::kFrameMemory) ? 1 : 0;
        if ((f.contents & trace::kFrameMemory) && f.minNs <= end + origin &&
            f.maxNs >= start + origin) {
            expected.push_back(f.frameNumber);
        }
    }
    std::vector<uint64_t> read_frames;
    for (uint64_t n : w.summaries()->windowFrames()) {
        if (std::any_of(summary.frames.begin(), summary.frames.end(), [n](const auto& f) {
                return f.frameNumber == n && (f.contents & trace::kFrameMemory);
            })) {
            read_frames.push_back(n);
        }
    }
    EXPECT_EQ(read_frames, expected);
    EXPECT_LT(expected.size() * 5, eventFrames);
    // Every event on screen is there, and far from all of the file's.
    size_t onScreen = 0;
    for (int64_t t : data.memory.timestampNs) {
        onScreen += (t - origin >= visible.startNs && t - origin < visible.endNs) ? 1 : 0;
    }
    const trace::TraceData& loaded = w.job()->job.ranks.at(0).trace.data;
    size_t loadedOnScreen = 0;
    for (int64_t t : loaded.memory.timestampNs) {
        loadedOnScreen += (t - origin >= visible.startNs && t - origin < visible.endNs) ? 1 : 0;
    }
    EXPECT_GT(onScreen, 0u);
    EXPECT_EQ(loadedOnScreen, onScreen);
    EXPECT_LT(loaded.memory.size() * 5, data.memory.size());

    w.zoomState()->setVisibleRange(w.zoomState()->fullRange());
    QTRY_VERIFY_WITH_TIMEOUT(w.summaries()->shown() == Shown::Overview, 5000);
}

TEST(SummaryOpen, JobIndexShowsRanksWorstFirstAndAClickLoadsTheRank) {
    QTemporaryDir dir;
    const int ranks = 9;  // more than TimelineView::kCompactThreshold: the heat strip
    trace::JobIndex index;
    std::vector<double> share(ranks);
    for (int r = 0; r < ranks; ++r) {
        const int iterations = 5 + (r * 7) % 11;  // peaks not in rank order
        const uint64_t capacity = uint64_t(100 + 10 * r) * uint64_t(kMiB);
        const std::string name = "rank" + std::to_string(r) + ".vscope";
        const std::string path = writeFile(dir, name, sawtooth(iterations, capacity, r));
        share[size_t(r)] = double(handPeak(iterations)) / double(capacity);
        auto read = trace::readTraceSummary(path);
        ASSERT_TRUE(read.ok() && read->found);
        trace::JobIndexEntry e;
        e.path = name;
        e.summary = std::move(read->summary);
        index.ranks.push_back(std::move(e));
    }
    trace::JobIndexEntry missing;
    missing.path = "rank99.vscope";
    missing.problem = "not a trace";
    index.ranks.push_back(missing);
    const std::string indexPath = dir.filePath(QStringLiteral("job.vscope-index")).toStdString();
    ASSERT_TRUE(trace::writeJobIndex(indexPath, index).ok());

    app::MainWindow w;
    w.openPaths({QString::fromStdString(indexPath)});
    ASSERT_EQ(w.summaries()->shown(), Shown::Index);
    ASSERT_EQ(w.job()->ranks.size(), size_t(ranks));
    std::vector<int> expected(ranks);
    for (int r = 0; r < ranks; ++r) {
        expected[size_t(r)] = r;
    }
    std::stable_sort(expected.begin(), expected.end(),
                     [&](int a, int b) { return share[size_t(a)] > share[size_t(b)]; });
    for (int row = 0; row < ranks; ++row) {
        EXPECT_EQ(trace::toInt(w.job()->ranks[size_t(row)].rank), expected[size_t(row)]);
    }
    widgets::HeatStrip* heat = w.timeline()->heatStrip();
    ASSERT_TRUE(w.timeline()->isCompact());
    ASSERT_EQ(heat->rowCount(), ranks);
    for (int row = 0; row < ranks; ++row) {
        ASSERT_TRUE(heat->peakShare(row).has_value());
        EXPECT_NEAR(*heat->peakShare(row), share[size_t(expected[size_t(row)])], 1e-9);
    }
    bool listed = false;
    for (const std::string& p : w.job()->problems) {
        listed = listed || p.find("rank99.vscope") != std::string::npos;
    }
    EXPECT_TRUE(listed);

    // A click on the third row loads that rank's file into the usual views.
    w.zoomState()->setSelectedGpu(w.job()->gpus[2].key, 0);
    QTRY_VERIFY_WITH_TIMEOUT(w.summaries()->shown() == Shown::IndexRank, 20000);
    ASSERT_EQ(w.job()->ranks.size(), 1u);
    EXPECT_EQ(trace::toInt(w.job()->ranks[0].rank), expected[2]);
    EXPECT_FALSE(w.job()->job.ranks[0].trace.data.memory.timestampNs.empty());
    w.summaries()->backToIndexAction()->trigger();
    EXPECT_EQ(w.summaries()->shown(), Shown::Index);
}
