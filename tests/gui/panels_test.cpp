// The analysis panels: flame view, communication lanes, idle gaps, leak, advice and cost.
#include <qcustomplot.h>
#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "panels_fixture.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/advice_panel.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/flame_view.h"
#include "vramscope/widgets/gap_table_model.h"
#include "vramscope/widgets/leak_panel.h"

using namespace vramscope;
using analysis::GpuKey;
using panels_test::makeJob;
using panels_test::replayLiveBytes;
using widgets::TimeRange;
using widgets::ZoomState;

namespace {

/// The synthetic job's numbers, from the formulas in synthetic_job.h.
struct Expected {
    analysis::SyntheticJobSpec spec;
    int64_t F, C, D, P;
    int64_t S(int i) const { return 3'000'000 + spec.hostGapNs + i * P; }
    int64_t E(int i) const { return S(i) + C + D; }  // no straggler, no overlap
};

Expected expectedFor(const analysis::SyntheticJobSpec& spec) {
    Expected e{spec, 0, 0, 0, 0};
    const int64_t K = spec.computeKernelsPerIteration;
    e.F = (K / 2) * spec.computeKernelNs;
    e.C = K * spec.computeKernelNs;
    const int n = spec.ranks;
    e.D = n > 1 ? int64_t(std::ceil(double(spec.allReduceBytes) * 2 * (n - 1) / n /
                                    spec.busBandwidthBytesPerS * 1e9))
                : 0;
    e.P = e.C + e.D + spec.hostGapNs;
    return e;
}

analysis::SyntheticJobSpec leakSpec() {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 8;
    spec.leakBytesPerIteration = 64ull << 20;
    spec.leakRank = 0;
    return spec;
}

struct SyntheticPanelJob {
    std::shared_ptr<const analysis::JobModel> job;
    int64_t toJob = 0;  ///< job time = trace time + toJob, from the traces' earliest event
    ZoomState zoom;
    /// `edit` may change the generated ranks before the job is made (e.g. drop the kernels).
    explicit SyntheticPanelJob(
        const analysis::SyntheticJobSpec& spec,
        const std::function<void(std::vector<trace::TraceData>&)>& edit = {}) {
        std::vector<trace::TraceData> traces = analysis::generateSyntheticJob(spec);
        if (edit) {
            edit(traces);
        }
        toJob = -panels_test::earliestTime(traces);
        job = makeJob(std::move(traces));
        zoom.setFullRange({0, job->durationNs});
    }
};

}  // namespace

TEST(FlamePanel, RootEqualsTheReplayedLiveBytesWhereverTheCursorGoes) {
    const analysis::SyntheticJobSpec spec = leakSpec();
    const Expected x = expectedFor(spec);
    SyntheticPanelJob f(spec);
    widgets::FlamePanel panel(&f.zoom);
    panel.setJob(f.job);
    const trace::TraceData& rank0 = f.job->job.ranks[0].trace.data;
    const analysis::GpuKey gpu{0, trace::DeviceIndex{0}};
    for (int64_t t : {x.S(0) - 1, x.S(0) + x.F / 2, x.S(3) + x.F, x.S(5) + x.F + x.C / 4, x.E(7)}) {
        f.zoom.setCursor(t + f.toJob, gpu);
        panel.rebuildNow();
        EXPECT_EQ(panel.gpu(), gpu);
        EXPECT_EQ(panel.shownTimeNs(), t + f.toJob);
        EXPECT_EQ(panel.view()->tree().root().bytes,
                  replayLiveBytes(rank0, trace::DeviceIndex{0}, trace::MemoryLevel::Allocated, t))
            << "trace time " << t;
    }
    // Just before iteration i starts: weights, optimizer state and i leaked tensors.
    for (int i : {0, 4, 7}) {
        f.zoom.setCursor(x.S(i) - 1 + f.toJob, gpu);
        panel.rebuildNow();
        EXPECT_EQ(panel.view()->tree().root().bytes,
                  int64_t(spec.weightBytes + spec.optimizerBytes + i * spec.leakBytesPerIteration));
    }
}

TEST(FlamePanel, CursorMovesAreCoalescedIntoOneRebuild) {
    SyntheticPanelJob f(leakSpec());
    widgets::FlamePanel panel(&f.zoom);
    panel.setJob(f.job);
    QSignalSpy shown(&panel, &widgets::FlamePanel::treeShown);
    f.zoom.setCursor(5'000'000, analysis::GpuKey{0, trace::DeviceIndex{0}});
    f.zoom.setCursor(6'000'000, analysis::GpuKey{0, trace::DeviceIndex{0}});
    EXPECT_NE(panel.shownTimeNs(), 6'000'000);  // not yet: the timer rebuilds
    ASSERT_TRUE(shown.wait(5000));
    EXPECT_EQ(shown.count(), 1);  // two cursor moves, one rebuild
    EXPECT_EQ(panel.shownTimeNs(), 6'000'000);
}

TEST(FlamePanel, PeakShowsThePeakOfTheFormula) {
    const analysis::SyntheticJobSpec spec = leakSpec();
    const Expected x = expectedFor(spec);
    SyntheticPanelJob f(spec);
    widgets::FlamePanel panel(&f.zoom);
    panel.setJob(f.job);
    panel.setGpu(analysis::GpuKey{0, trace::DeviceIndex{0}});
    panel.setMoment(widgets::FlamePanel::Moment::Peak);
    // peak allocated = W + O + A a + N L, first reached at S_{N-1} + F (the last leak).
    EXPECT_EQ(panel.view()->tree().root().bytes,
              int64_t(spec.weightBytes + spec.optimizerBytes +
                      spec.activationsPerIteration * spec.activationBytes +
                      spec.iterations * spec.leakBytesPerIteration));
    EXPECT_EQ(panel.shownTimeNs(), x.S(spec.iterations - 1) + x.F + f.toJob);
}

TEST(FlamePanel, WhatGrewBetweenTheSelectionEndsIsTheLeak) {
    const analysis::SyntheticJobSpec spec = leakSpec();
    const Expected x = expectedFor(spec);
    SyntheticPanelJob f(spec);
    widgets::FlamePanel panel(&f.zoom);
    panel.setJob(f.job);
    panel.setGpu(analysis::GpuKey{0, trace::DeviceIndex{0}});
    f.zoom.setSelection({x.S(1) - 1 + f.toJob, x.S(3) - 1 + f.toJob});
    panel.setMoment(widgets::FlamePanel::Moment::WhatGrew);
    const analysis::FlameTree& tree = panel.view()->tree();
    ASSERT_TRUE(tree.isDiff);
    EXPECT_EQ(tree.root().bytes, int64_t(2 * spec.leakBytesPerIteration));
    EXPECT_EQ(tree.root().count, 2);
}

TEST(FlamePanel, SearchHighlightsTheMatchingBytes) {
    const analysis::SyntheticJobSpec spec = leakSpec();
    SyntheticPanelJob f(spec);
    widgets::FlamePanel panel(&f.zoom);
    panel.setJob(f.job);
    panel.setGpu(analysis::GpuKey{0, trace::DeviceIndex{0}});
    panel.setMoment(widgets::FlamePanel::Moment::Peak);
    panel.setGrouping(analysis::FlameGrouping::Category);
    // Every synthetic allocation is a pool allocation (kind Pool), so at the peak the match is
    // everything alive there: W + O + A a + N L on the leaking rank (synthetic_job.h).
    panel.setSearch(QStringLiteral("pool"));
    EXPECT_EQ(panel.view()->searchMatchBytes(),
              int64_t(spec.weightBytes + spec.optimizerBytes +
                      spec.activationsPerIteration * spec.activationBytes +
                      spec.iterations * spec.leakBytesPerIteration));
    panel.setSearch(QStringLiteral("no such frame"));
    EXPECT_EQ(panel.view()->searchMatchBytes(), 0);
}

TEST(FlameView, ClickZoomsIntoANodeAndKeepsItAcrossRebuilds) {
    SyntheticPanelJob f(leakSpec());
    widgets::FlamePanel panel(&f.zoom);
    panel.resize(800, 600);
    panel.setJob(f.job);
    panel.setMoment(widgets::FlamePanel::Moment::Peak);
    widgets::FlameView* view = panel.view();
    const analysis::FlameTree& tree = view->tree();
    ASSERT_FALSE(tree.root().children.empty());
    const uint32_t child = tree.root().children.front();
    const QRectF r = view->nodeRect(child);
    ASSERT_FALSE(r.isEmpty());
    QTest::mouseClick(view, Qt::LeftButton, {}, r.center().toPoint());
    EXPECT_EQ(view->zoomNode(), child);
    EXPECT_NEAR(view->nodeRect(child).width(), view->width(), 1.0);
    const std::vector<std::string> path = view->tree().path(child);
    panel.setMoment(widgets::FlamePanel::Moment::Cursor);
    EXPECT_EQ(view->tree().path(view->zoomNode()), path);
    EXPECT_TRUE(view->describe(view->zoomNode()).contains(QStringLiteral("allocations")));
}

TEST(FlamePanel, OomActionJumpsToTheOomAndShowsTheLiveSetThere) {
    // A trace with one OOM after two allocations.
    trace::TraceData data;
    data.header.rank = trace::RankId{0};
    data.header.devices.push_back({trace::DeviceIndex{0}, "uuid", "GPU", 1ull << 30});
    data.memory.append({100, 0x1000, 300, trace::MemoryAction::Alloc, trace::MemoryLevel::Allocated,
                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0, trace::StackId{0}, 0});
    data.memory.append({200, 0x2000, 500, trace::MemoryAction::Alloc, trace::MemoryLevel::Allocated,
                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0, trace::StackId{0}, 0});
    data.memory.append({400, 0x1000, 300, trace::MemoryAction::Free, trace::MemoryLevel::Allocated,
                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0, trace::StackId{0}, 0});
    data.ooms.push_back({300, trace::DeviceIndex{0}, 0, 1ull << 31, 0});
    std::vector<trace::TraceData> traces;
    traces.push_back(std::move(data));
    auto job = makeJob(std::move(traces));
    ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::FlamePanel panel(&zoom);
    panel.setJob(job);
    ASSERT_TRUE(panel.showOom());
    // Job time 0 is the first event (t = 100), so the OOM at 300 is at job time 200.
    EXPECT_EQ(panel.moment(), widgets::FlamePanel::Moment::Oom);
    EXPECT_EQ(panel.shownTimeNs(), 200);
    EXPECT_EQ(zoom.selectedTimeNs(), 200);
    EXPECT_EQ(panel.view()->tree().root().bytes, 800);
}

TEST(GapsPanel, SelectingARowShowsThatGapInTheSharedVisibleRange) {
    const analysis::SyntheticJobSpec spec = leakSpec();
    const Expected x = expectedFor(spec);
    SyntheticPanelJob f(spec);
    widgets::GapsPanel panel(&f.zoom);
    panel.setJob(f.job);
    // Each rank idles hostGapNs between iterations: N - 1 gaps per rank.
    ASSERT_EQ(panel.model()->rowCount(), 2 * (spec.iterations - 1));
    for (int row : {0, 5}) {
        const QModelIndex index = panel.proxy()->index(row, widgets::GapTableModel::DurationColumn);
        panel.table()->selectionModel()->setCurrentIndex(
            index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        const widgets::GapRow& gap =
            panel.model()->rows()[size_t(panel.proxy()->mapToSource(index).row())];
        EXPECT_EQ(gap.durationNs, spec.hostGapNs);
        // The gap runs from the end of iteration i to the start of iteration i + 1.
        const int64_t i = (gap.startNs - f.toJob - x.E(0)) / x.P;
        EXPECT_EQ(gap.startNs, x.E(int(i)) + f.toJob);
        EXPECT_EQ(gap.cause, analysis::GapCause::HostBound);
        const int64_t margin = spec.hostGapNs / 2;
        EXPECT_EQ(f.zoom.visibleRange(),
                  (TimeRange{gap.startNs - margin, gap.startNs + gap.durationNs + margin}));
        EXPECT_EQ(f.zoom.selection(), (TimeRange{gap.startNs, gap.startNs + gap.durationNs}));
    }
}

TEST(GapsPanel, FiltersByClassAndKernelName) {
    SyntheticPanelJob f(leakSpec());
    widgets::GapsPanel panel(&f.zoom);
    panel.setJob(f.job);
    const int all = panel.proxy()->rowCount();
    panel.proxy()->setCauseFilter(int(analysis::GapCause::CollectiveWait));
    EXPECT_EQ(panel.proxy()->rowCount(), 0);
    panel.proxy()->setCauseFilter(-1);
    panel.proxy()->setTextFilter(QStringLiteral("nccl"));
    // Before each host gap runs the all-reduce (an NCCL kernel).
    EXPECT_EQ(panel.proxy()->rowCount(), all);
}

TEST(Models, PassTheItemModelTester) {
    const analysis::SyntheticJobSpec spec = leakSpec();
    SyntheticPanelJob f(spec);
    widgets::GapsPanel gaps(&f.zoom);
    gaps.setJob(f.job);
    QAbstractItemModelTester t1(gaps.model(),
                                QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester t2(gaps.proxy(),
                                QAbstractItemModelTester::FailureReportingMode::Fatal);
    widgets::LeakPanel leak(&f.zoom);
    QAbstractItemModelTester t3(leak.summaryModel(),
                                QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester t4(leak.survivorModel(),
                                QAbstractItemModelTester::FailureReportingMode::Fatal);
    widgets::AdvicePanel advice;
    QAbstractItemModelTester t5(advice.model(),
                                QAbstractItemModelTester::FailureReportingMode::Fatal);
    leak.setJob(f.job);
    advice.setJob(f.job);
    gaps.proxy()->sort(widgets::GapTableModel::StartColumn, Qt::AscendingOrder);
    gaps.proxy()->setTextFilter(QStringLiteral("nccl"));
    leak.setGpu(analysis::GpuKey{1, trace::DeviceIndex{1}});
    leak.setJob(f.job);
    EXPECT_GT(gaps.model()->rowCount(), 0);
    EXPECT_EQ(leak.summaryModel()->rowCount(), 2);
    EXPECT_GT(advice.model()->rowCount(), 0);
}

TEST(LeakPanel, ShowsTheStaircaseAndSelectsTheSurvivorsAllocations) {
    const analysis::SyntheticJobSpec spec = leakSpec();
    const Expected x = expectedFor(spec);
    SyntheticPanelJob f(spec);
    widgets::LeakPanel panel(&f.zoom);
    panel.setJob(f.job);
    EXPECT_EQ(panel.gpu(),
              (analysis::GpuKey{0, trace::DeviceIndex{0}}));  // the leaking GPU comes first
    const QModelIndex verdict =
        panel.summaryModel()->index(0, widgets::LeakSummaryModel::VerdictColumn);
    EXPECT_EQ(verdict.data(widgets::LeakSummaryModel::RawValueRole).toInt(),
              int(analysis::LeakVerdict::Staircase));
    EXPECT_EQ(panel.summaryModel()
                  ->index(0, widgets::LeakSummaryModel::GrowthColumn)
                  .data(widgets::LeakSummaryModel::RawValueRole)
                  .toLongLong(),
              qlonglong(spec.leakBytesPerIteration));
    EXPECT_EQ(panel.summaryModel()
                  ->index(1, widgets::LeakSummaryModel::VerdictColumn)
                  .data(widgets::LeakSummaryModel::RawValueRole)
                  .toInt(),
              int(analysis::LeakVerdict::Sawtooth));
    // Chart: peaks, baselines, fitted line, one point per iteration.
    ASSERT_EQ(panel.chart()->graphCount(), 3);
    EXPECT_EQ(panel.chart()->graph(1)->dataCount(), spec.iterations);
    ASSERT_GT(panel.survivorModel()->rowCount(), 0);
    // The survivor is described by what it is: one leak of L per examined iteration (1 .. N - 3).
    auto cell = [&](int column) {
        return panel.survivorModel()->index(0, column).data(Qt::DisplayRole).toString();
    };
    EXPECT_EQ(cell(widgets::SurvivorModel::PatternColumn),
              QStringLiteral("one %1 allocation per iteration")
                  .arg(QString::fromStdString(
                      analysis::formatBytes(double(spec.leakBytesPerIteration)))));
    EXPECT_EQ(cell(widgets::SurvivorModel::IterationsColumn), QString::number(spec.iterations - 3));
    QSignalSpy spy(&panel, &widgets::LeakPanel::survivorSelected);
    panel.selectSurvivor(0);
    ASSERT_EQ(spy.count(), 1);
    // The leaked tensors still alive at the end were made at S_i + F, i = 0 .. N-1.
    EXPECT_EQ(f.zoom.selection(),
              (TimeRange{x.S(0) + x.F + f.toJob, x.S(spec.iterations - 1) + x.F + f.toJob}));
}

TEST(LeakPanel, SurvivorSelectedCarriesItsStackIdThroughAQueuedConnection) {
    // StackId is a scoped enum: the signal must still deliver it across a queued connection.
    SyntheticPanelJob f(leakSpec());
    widgets::LeakPanel panel(&f.zoom);
    panel.setJob(f.job);
    ASSERT_GT(panel.survivorModel()->rowCount(), 0);
    std::optional<std::pair<analysis::GpuKey, trace::StackId>> got;
    QObject::connect(
        &panel, &widgets::LeakPanel::survivorSelected, &panel,
        [&](analysis::GpuKey gpu, trace::StackId stack) { got.emplace(gpu, stack); },
        Qt::QueuedConnection);
    panel.selectSurvivor(0);
    EXPECT_FALSE(got.has_value()) << "a queued slot runs from the event loop, not in emit";
    QCoreApplication::processEvents();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->first, panel.gpu());
    // The largest survivor is the leak, which synthetic_job.cpp allocates under the stack
    // log_metrics <- train_step <- main (leaf first).
    const trace::TraceData& data = f.job->job.ranks[size_t(got->first.rankIndex)].trace.data;
    ASSERT_LT(toInt(got->second), data.stacks.size());
    const std::vector<trace::FrameId>& frames = data.stacks[toInt(got->second)];
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(data.string(data.frames[toInt(frames.front())].name), "log_metrics");
}

TEST(AdvicePanel, CostFollowsThePriceAndThePlannedSteps) {
    const analysis::SyntheticJobSpec spec = leakSpec();
    const Expected x = expectedFor(spec);
    SyntheticPanelJob f(spec);
    widgets::AdvicePanel panel;
    panel.setJob(f.job);
    bool leakAdvice = false;
    for (const analysis::Advice& a : panel.model()->advice()) {
        leakAdvice = leakAdvice || a.rule == "leak";
    }
    EXPECT_TRUE(leakAdvice);
    panel.setGpuHourPrice(3.0);
    panel.setPlannedSteps(1000);
    // Step time = the median iteration, [S_i, E_i): C + D; 2 GPUs.
    const double hours = double(x.C + x.D) * 1000 / 3.6e12;
    EXPECT_NEAR(panel.estimate().totalCost, 2 * 3.0 * hours, 1e-9);
    EXPECT_NEAR(panel.estimate().gpuHours, 2 * hours, 1e-12);
    // The amounts as the CLI prints them (one formatter, analysis::formatAmount).
    const QString label = panel.costLabel()->text();
    EXPECT_TRUE(label.contains(QString::fromStdString(analysis::formatAmount(2 * 3.0 * hours))))
        << label.toStdString();
    EXPECT_TRUE(label.contains(QString::fromStdString(analysis::formatAmount(2 * hours))))
        << label.toStdString();
    panel.setPlannedSteps(0);  // as observed: N iterations
    EXPECT_NEAR(panel.estimate().totalCost, 2 * 3.0 * double(x.C + x.D) * spec.iterations / 3.6e12,
                1e-9);
    // idle = (N - 1) h per GPU, span = N P - h per GPU.
    const double idleFraction = double((spec.iterations - 1) * spec.hostGapNs) /
                                double(spec.iterations * x.P - spec.hostGapNs);
    EXPECT_NEAR(panel.estimate().idleFraction, idleFraction, 1e-9);
}

TEST(AdvicePanel, SmallCostsAreWrittenInFixedNotation) {
    SyntheticPanelJob f(leakSpec());
    widgets::AdvicePanel panel;
    panel.setJob(f.job);
    panel.setGpuHourPrice(0.01);  // a short trace at a low price costs far below one unit
    panel.setPlannedSteps(0);
    const double cost = panel.estimate().totalCost;
    ASSERT_GT(cost, 0.0);
    ASSERT_LT(cost, 1e-3);
    const QString text = panel.costLabel()->text();
    EXPECT_FALSE(text.contains(QRegularExpression(QStringLiteral("\\d[eE][-+]?\\d"))))
        << text.toStdString();
    // Three significant digits, as the CLI writes them: "0.000" then the cost's leading digits.
    const int magnitude = int(std::floor(std::log10(cost)));
    char expected[64];
    std::snprintf(expected, sizeof expected, "%.*f", 2 - magnitude, cost);
    EXPECT_TRUE(text.contains(QLatin1String(expected))) << text.toStdString() << " / " << expected;
}

TEST(AdvicePanel, IdleCostIsUnknownWithoutKernels) {
    analysis::SyntheticJobSpec spec = leakSpec();
    SyntheticPanelJob f(spec, [](std::vector<trace::TraceData>& ranks) {
        for (trace::TraceData& d : ranks) {
            d.kernels = {};
            d.collectives = {};
        }
    });
    widgets::AdvicePanel panel;
    panel.setJob(f.job);
    panel.setGpuHourPrice(2.0);
    EXPECT_FALSE(panel.estimate().idleKnown);
    EXPECT_TRUE(panel.costLabel()->text().contains(QStringLiteral("idle cost: unknown")))
        << panel.costLabel()->text().toStdString();
}

TEST(CommLanesView, StacksLanesByRankAndMarksTheStraggler) {
    analysis::SyntheticJobSpec spec = leakSpec();
    spec.stragglerRank = 1;
    SyntheticPanelJob f(spec);
    widgets::CommLanesView view(&f.zoom);
    view.resize(1000, 400);
    view.setJob(f.job);
    ASSERT_EQ(view.lanes().size(), 2u);
    EXPECT_EQ(view.lanes()[0].key, (analysis::GpuKey{0, trace::DeviceIndex{0}}));
    EXPECT_EQ(view.lanes()[1].key, (analysis::GpuKey{1, trace::DeviceIndex{1}}));
    EXPECT_LT(view.lanes()[0].top, view.lanes()[1].top);
    EXPECT_EQ(view.visibleCollectives().size(), size_t(spec.iterations));
    for (const analysis::MatchedCollective& c : f.job->collectives().collectives) {
        EXPECT_EQ(c.stragglerRank, trace::RankId{1});
        EXPECT_EQ(c.skewNs, spec.stragglerDelayNs);
    }
    // Zoomed to the first iteration of rank 0, one collective is in view.
    const analysis::RangeSpan* first = view.rankRows().at(0).iterations.at(0);
    f.zoom.setVisibleRange({first->startNs, first->endNs});
    EXPECT_EQ(view.visibleCollectives().size(), 1u);
    QImage image(view.size(), QImage::Format_ARGB32);
    view.render(&image);  // paints without crashing on a zoomed view
}

TEST(AdvicePanel, ChecksNameTheLeakingGpuAndWhatCouldNotBeChecked) {
    // The synthetic job leaks on rank 0 only (leakSpec), with capacities in the header.
    SyntheticPanelJob f(leakSpec());
    widgets::AdvicePanel panel;
    panel.setJob(f.job);
    const QString checks = panel.checksView()->toPlainText();
    EXPECT_TRUE(checks.contains(QStringLiteral("FAIL fail-on-leak: rank 0 GPU 0: staircase")))
        << checks.toStdString();
    EXPECT_TRUE(checks.contains(QStringLiteral("PASS fail-on-leak: rank 1 GPU 1: sawtooth")))
        << checks.toStdString();

    // One rank with allocations but no device list: the capacity is unknown, so nothing may be
    // said about the share of capacity, and with no advice the panel says what was not checked.
    trace::TraceData data;
    data.header.rank = trace::RankId{0};
    data.memory.append({100, 0x1000, 300, trace::MemoryAction::Alloc, trace::MemoryLevel::Allocated,
                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0, trace::StackId{0}, 0});
    data.memory.append({200, 0x1000, 300, trace::MemoryAction::Free, trace::MemoryLevel::Allocated,
                        trace::MemoryKind::Pool, trace::DeviceIndex{0}, 0, trace::StackId{0}, 0});
    std::vector<trace::TraceData> traces;
    traces.push_back(std::move(data));
    auto job = makeJob(std::move(traces));
    ASSERT_TRUE(job);
    panel.setJob(job);
    EXPECT_EQ(panel.model()->rowCount(), 0);
    EXPECT_EQ(panel.pages()->currentWidget(), panel.checksView());  // what was not checked
    EXPECT_FALSE(panel.checksView()->toPlainText().contains(QStringLiteral("below 80")));
    EXPECT_TRUE(panel.checksView()->toPlainText().contains(QStringLiteral(
        "NOT CHECKED max-peak-fraction: rank 0 GPU 0: capacity unknown (peak 300 B)")))
        << panel.checksView()->toPlainText().toStdString();
}

TEST(AdvicePanel, ChecksListTheTrainingChecklistWithWhatEachRuleLacks) {
    // Every rank's all-reduce lasts 2 ms longer each iteration (synthetic_job.h: D_i = D + i x
    // 2 ms), so over 12 iterations the later ones are slower by far more than noise on both
    // ranks; the synthetic job records no host memory, so that rule cannot judge.
    analysis::SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 12;
    spec.slowDownStepNs = 2'000'000;
    spec.slowDownPart = analysis::SyntheticSlowDown::AllReduce;
    SyntheticPanelJob f(spec);
    widgets::AdvicePanel panel;
    panel.setJob(f.job);
    const QString checks = panel.checksView()->toPlainText();
    EXPECT_TRUE(checks.contains(QStringLiteral("Training checklist"))) << checks.toStdString();
    for (const char* line : {"WARNING slow-down: rank 0 GPU 0:", "WARNING slow-down: rank 1 GPU 1:",
                             "NOT ASSESSED host-memory: rank 0 host: the trace records no host",
                             "NOT ASSESSED host-memory: rank 1 host: the trace records no host"}) {
        EXPECT_TRUE(checks.contains(QString::fromLatin1(line))) << line << "\n"
                                                                << checks.toStdString();
    }
    // One line per rule and GPU (host-memory once per rank): 2 ranks x 4 rules.
    EXPECT_EQ(checks.count(QStringLiteral("slow-down: rank")) +
                  checks.count(QStringLiteral("host-memory: rank")) +
                  checks.count(QStringLiteral("mixed-precision: rank")) +
                  checks.count(QStringLiteral("allocator-churn: rank")),
              8);
}
