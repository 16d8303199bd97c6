// The Collectives table (model, sort, filter, zoom on selection, empty states) and the
// communication lanes' hover over a collective, on a 4-rank job built by hand: every expected
// figure comes from the arrivals and sizes written here and the nccl-tests formula.
#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalSpy>
#include <QTableView>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>

#include "panels_fixture.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/collectives_table.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/units.h"

using namespace vramscope;
using widgets::CollectiveTableModel;
using widgets::TimeRange;
using widgets::ZoomState;

namespace {

constexpr int kRanks = 4;
constexpr uint64_t kCommHash = 0xabc123;
constexpr uint64_t kAllReduceBytes = 64ull << 20;  // 64 MiB
constexpr int64_t kComputeStart = 1'000;           // the earliest event: job time 0
constexpr int64_t kAllReduceAt = 300'000;          // trace time the first rank arrives
constexpr int64_t kAllReduceEnd = 500'000;         // every rank leaves together
constexpr int64_t kAllGatherAt = 700'000;
constexpr int64_t kAllGatherNs = 20'000;
constexpr int64_t kLastKernelAt = 800'000;  // a compute kernel after both: room for margins
/// Arrival of each rank after kAllReduceAt: rank 2 is last (the straggler).
constexpr std::array<int64_t, kRanks> kArrival = {0, 30'000, 80'000, 10'000};

/// 4 ranks, one GPU each: a compute kernel, then an all-reduce of 64 MiB (RING / LL, 8
/// channels, timed by its kernel) entered at kArrival, then an all-gather with nothing known
/// but its interval, then another compute kernel. Kernels and collective records carry the same
/// intervals, as importers write them.
std::vector<trace::TraceData> fourRanks() {
    std::vector<trace::TraceData> out;
    for (int r = 0; r < kRanks; ++r) {
        trace::TraceData d;
        d.header.rank = trace::RankId{r};
        d.header.worldSize = kRanks;
        trace::DeviceInfo gpu;
        gpu.index = trace::DeviceIndex{0};
        gpu.name = "Test GPU";
        gpu.totalMemoryBytes = 80ull << 30;
        d.header.devices.push_back(gpu);
        trace::KernelEvent gemm;
        gemm.startNs = kComputeStart;
        gemm.endNs = kComputeStart + 5'000;
        gemm.name = d.intern("gemm");
        gemm.stream = 7;
        d.kernels.append(gemm);
        trace::KernelEvent ar;
        ar.startNs = kAllReduceAt + kArrival[size_t(r)];
        ar.endNs = kAllReduceEnd;
        ar.stream = 9;
        ar.category = trace::KernelCategory::Communication;
        ar.name = d.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, ncclWork*)");
        d.kernels.append(ar);
        trace::KernelEvent ag = ar;
        ag.startNs = kAllGatherAt;
        ag.endNs = kAllGatherAt + kAllGatherNs;
        ag.name = d.intern("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, ncclWork*)");
        d.kernels.append(ag);
        trace::KernelEvent tail = gemm;
        tail.startNs = kLastKernelAt;
        tail.endNs = kLastKernelAt + 5'000;
        d.kernels.append(tail);

        trace::CollectiveEvent c;
        c.startNs = ar.startNs;
        c.endNs = ar.endNs;
        c.stream = 9;
        c.communicatorHash = kCommHash;
        c.rank = trace::RankId{r};
        c.nranks = kRanks;
        c.function = d.intern("AllReduce");
        c.seqNumber = 7;
        c.bytes = kAllReduceBytes;
        c.algorithm = d.intern("RING");
        c.protocol = d.intern("LL");
        c.channels = 8;
        c.timing = trace::CollectiveTiming::Kernel;
        d.collectives.append(c);
        trace::CollectiveEvent g;
        g.startNs = ag.startNs;
        g.endNs = ag.endNs;
        g.stream = 9;
        g.communicatorHash = kCommHash;
        g.rank = trace::RankId{r};
        g.function = d.intern("AllGather");
        g.seqNumber = 8;
        d.collectives.append(g);
        out.push_back(std::move(d));
    }
    return out;
}

/// busBw of the all-reduce on rank r, GB/s (bytes / ns): message / duration x 2(n-1)/n
/// (nccl-tests doc/PERFORMANCE.md).
double allReduceAlgBw(int r) {
    return double(kAllReduceBytes) / double(kAllReduceEnd - kAllReduceAt - kArrival[size_t(r)]);
}
double allReduceBusBw(int r) {
    return allReduceAlgBw(r) * 2.0 * (kRanks - 1) / kRanks;
}

/// The report collectiveBandwidth is documented to give for fourRanks(), written out by hand:
/// occurrences in input order then start, one group per function, no verdict.
analysis::CollectiveBandwidthReport handReport() {
    analysis::CollectiveBandwidthReport rep;
    const int64_t lastArrival = *std::max_element(kArrival.begin(), kArrival.end());
    for (int r = 0; r < kRanks; ++r) {
        analysis::CollectiveBandwidth ar;
        ar.input = size_t(r);
        ar.rank = trace::RankId{r};
        ar.function = "AllReduce";
        ar.seq = 7;
        ar.communicatorHash = kCommHash;
        ar.bytes = kAllReduceBytes;
        ar.ranks = kRanks;
        ar.startNs = kAllReduceAt + kArrival[size_t(r)];
        ar.durationNs = kAllReduceEnd - ar.startNs;
        ar.algbwGBps = allReduceAlgBw(r);
        ar.busbwGBps = allReduceBusBw(r);
        ar.algorithm = "RING";
        ar.protocol = "LL";
        ar.timing = trace::CollectiveTiming::Kernel;
        ar.channels = 8;
        ar.waitNs = lastArrival - kArrival[size_t(r)];
        rep.occurrences.push_back(ar);
        analysis::CollectiveBandwidth ag;
        ag.input = size_t(r);
        ag.rank = trace::RankId{r};
        ag.function = "AllGather";
        ag.seq = 8;
        ag.communicatorHash = kCommHash;
        ag.startNs = kAllGatherAt;
        ag.durationNs = kAllGatherNs;
        ag.waitNs = 0;
        rep.occurrences.push_back(ag);
    }
    analysis::CollectiveGroup ar;
    ar.function = "AllReduce";
    ar.bytes = kAllReduceBytes;
    ar.ranks = kRanks;
    ar.count = 1;
    ar.occurrences = kRanks;
    ar.medianDurationNs = 170'000;
    ar.maxDurationNs = kAllReduceEnd - kAllReduceAt;  // rank 0, the first to arrive
    ar.minBusbwGBps = allReduceBusBw(0);
    ar.medianBusbwGBps = allReduceBusBw(3);  // the lower middle of 4, as analysis takes it
    ar.stragglerRank = trace::RankId{2};
    ar.waitNs = 80'000 + 50'000 + 0 + 70'000;
    ar.longest = 0;  // rank 0's all-reduce
    analysis::CollectiveGroup ag;
    ag.function = "AllGather";
    ag.count = 1;
    ag.occurrences = kRanks;
    ag.medianDurationNs = kAllGatherNs;
    ag.maxDurationNs = kAllGatherNs;
    ag.longest = 1;
    rep.groups = {ar, ag};
    return rep;
}

/// `job` with `report` as its bandwidth: the widgets' input, made by hand so that these tests
/// check the views, not collectiveBandwidth. The copy's pointers into the original's analysis
/// stay valid: the original lives as long as the copy.
std::shared_ptr<const analysis::JobModel> withBandwidth(
    std::shared_ptr<const analysis::JobModel> job, analysis::CollectiveBandwidthReport report) {
    struct Both {
        std::shared_ptr<const analysis::JobModel> original;
        analysis::JobModel copy;
    };
    auto both = std::make_shared<Both>(Both{job, *job});
    both->copy.analysis.bandwidth = std::move(report);
    return {both, &both->copy};
}

struct FourRankCollectivesJob {
    std::shared_ptr<const analysis::JobModel> job;
    ZoomState zoom;
    FourRankCollectivesJob() {
        job = withBandwidth(panels_test::makeJob(fourRanks()), handReport());
        zoom.setFullRange({0, std::max<int64_t>(job->durationNs, 1)});
    }
    /// Job time of trace time `t` (every rank's clock offset is 0; job time 0 = kComputeStart).
    static int64_t jobNs(int64_t t) { return t - kComputeStart; }
};

/// A report of three groups whose text order differs from their numeric order in every
/// numeric column checked (sizes "512 B" < "64.0 MiB" < "9.00 KiB" as text).
analysis::CollectiveBandwidthReport threeGroups() {
    analysis::CollectiveBandwidthReport rep;
    auto group = [](const char* f, uint64_t bytes, size_t count, int64_t median,
                    std::optional<double> bus) {
        analysis::CollectiveGroup g;
        g.function = f;
        g.bytes = bytes;
        g.ranks = 8;
        g.count = count;
        g.occurrences = count * 8;
        g.medianDurationNs = median;
        g.maxDurationNs = 2 * median;
        g.minBusbwGBps = bus ? std::optional<double>(*bus / 2) : std::nullopt;
        g.medianBusbwGBps = bus;
        return g;
    };
    rep.groups = {group("AllReduce", 64ull << 20, 10, 900'000, 96.0),
                  group("AllGather", 9 * 1024, 100, 30'000, 9.25),
                  group("Broadcast", 512, 9, 8'000, std::nullopt)};
    return rep;
}

std::vector<std::string> functionsInViewOrder(const QAbstractItemModel& m) {
    std::vector<std::string> out;
    for (int r = 0; r < m.rowCount(); ++r) {
        out.push_back(
            m.index(r, CollectiveTableModel::FunctionColumn).data().toString().toStdString());
    }
    return out;
}

}  // namespace

TEST(CollectiveTable, RowsAndColumnsShowTheGroupsFiguresWithUnits) {
    FourRankCollectivesJob f;
    widgets::CollectiveTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setRows(widgets::collectiveRowsFrom(*f.job, threeGroups()));
    ASSERT_EQ(model.rowCount(), 3);
    ASSERT_EQ(model.columnCount(), 10);
    const QStringList headers = {"Function",        "Size",         "Ranks",     "Count",
                                 "Median duration", "Max duration", "busBw min", "busBw median",
                                 "Straggler",       "Wait"};
    for (int c = 0; c < 10; ++c) {
        EXPECT_EQ(model.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString(), headers[c]);
    }
    auto cell = [&](int r, int c) { return model.index(r, c).data().toString(); };
    EXPECT_EQ(cell(0, CollectiveTableModel::SizeColumn), QStringLiteral("64.0 MiB"));
    EXPECT_EQ(cell(1, CollectiveTableModel::SizeColumn), QStringLiteral("9.00 KiB"));
    EXPECT_EQ(cell(2, CollectiveTableModel::SizeColumn), QStringLiteral("512 B"));
    EXPECT_EQ(cell(0, CollectiveTableModel::RanksColumn), QStringLiteral("8"));
    EXPECT_EQ(cell(1, CollectiveTableModel::CountColumn), QLocale().toString(100));
    EXPECT_EQ(cell(0, CollectiveTableModel::MedianDurationColumn), widgets::formatDuration(9e5));
    EXPECT_EQ(cell(0, CollectiveTableModel::MaxDurationColumn), widgets::formatDuration(18e5));
    EXPECT_EQ(cell(0, CollectiveTableModel::MedianBusBwColumn), QStringLiteral("96.0 GB/s"));
    EXPECT_EQ(cell(0, CollectiveTableModel::MinBusBwColumn), QStringLiteral("48.0 GB/s"));
    EXPECT_EQ(cell(1, CollectiveTableModel::MedianBusBwColumn), QStringLiteral("9.25 GB/s"));
    // Unknown figures are blank, never 0: no busBw for the broadcast, no match for any group
    // (the hand-made report has no occurrences), so no straggler and no wait.
    EXPECT_EQ(cell(2, CollectiveTableModel::MedianBusBwColumn), QString());
    EXPECT_EQ(cell(2, CollectiveTableModel::MinBusBwColumn), QString());
    EXPECT_EQ(cell(0, CollectiveTableModel::StragglerColumn), QString());
    EXPECT_EQ(cell(0, CollectiveTableModel::WaitColumn), QString());
}

TEST(CollectiveTable, SortsEveryNumericColumnAsNumbersWithUnknownsLast) {
    FourRankCollectivesJob f;
    widgets::CollectivesPanel panel(&f.zoom);
    panel.model()->setRows(widgets::collectiveRowsFrom(*f.job, threeGroups()));
    widgets::CollectiveFilterModel& proxy = *panel.proxy();
    using V = std::vector<std::string>;
    // Unsorted, the table keeps the analysis order.
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"AllReduce", "AllGather", "Broadcast"}));
    proxy.sort(CollectiveTableModel::SizeColumn, Qt::AscendingOrder);
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"Broadcast", "AllGather", "AllReduce"}));
    proxy.sort(CollectiveTableModel::CountColumn, Qt::AscendingOrder);  // 9 < 10 < 100
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"Broadcast", "AllReduce", "AllGather"}));
    proxy.sort(CollectiveTableModel::MedianDurationColumn, Qt::DescendingOrder);
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"AllReduce", "AllGather", "Broadcast"}));
    proxy.sort(CollectiveTableModel::MedianBusBwColumn, Qt::DescendingOrder);  // 96, 9.25, ?
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"AllReduce", "AllGather", "Broadcast"}));
    proxy.sort(CollectiveTableModel::MinBusBwColumn, Qt::AscendingOrder);  // ?, 4.63, 48
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"Broadcast", "AllGather", "AllReduce"}));
    proxy.sort(CollectiveTableModel::FunctionColumn, Qt::AscendingOrder);
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"AllGather", "AllReduce", "Broadcast"}));
    // The filter matches the function name, any case.
    panel.filterEdit()->setText(QStringLiteral("all"));
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"AllGather", "AllReduce"}));
    panel.filterEdit()->setText(QStringLiteral("BROAD"));
    EXPECT_EQ(functionsInViewOrder(proxy), (V{"Broadcast"}));
    panel.filterEdit()->clear();
    EXPECT_EQ(proxy.rowCount(), 3);
}

TEST(CollectivesPanel, SelectingARowZoomsEveryViewToItsLongestOccurrence) {
    FourRankCollectivesJob f;
    widgets::CollectivesPanel panel(&f.zoom);
    panel.setJob(f.job);
    ASSERT_EQ(panel.model()->rowCount(), 2);
    // Matched: the straggler and the summed wait come from the report, known.
    const QModelIndex straggler = panel.proxy()->index(0, CollectiveTableModel::StragglerColumn);
    EXPECT_EQ(straggler.data().toString(), QStringLiteral("2"));
    EXPECT_EQ(panel.proxy()->index(0, CollectiveTableModel::WaitColumn).data().toString(),
              widgets::formatDuration(200'000));
    QSignalSpy shown(&panel, &widgets::CollectivesPanel::rangeShown);
    panel.table()->selectionModel()->setCurrentIndex(
        panel.proxy()->index(0, 0),
        QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    // The longest all-reduce is rank 0's: it arrived first and left with the others.
    const int64_t start = FourRankCollectivesJob::jobNs(kAllReduceAt);
    const int64_t duration = kAllReduceEnd - kAllReduceAt;
    const TimeRange expected{start - duration / 2, start + duration + duration / 2};
    EXPECT_EQ(f.zoom.visibleRange(), expected);
    EXPECT_EQ(f.zoom.selection(), (TimeRange{start, start + duration}));
    ASSERT_EQ(shown.count(), 1);
    EXPECT_EQ(shown.at(0).at(0).value<TimeRange>(), expected);
    // The all-gather lasts 20 us: a margin of 10 us each side.
    panel.table()->selectionModel()->setCurrentIndex(
        panel.proxy()->index(1, 0),
        QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    const int64_t g = FourRankCollectivesJob::jobNs(kAllGatherAt);
    EXPECT_EQ(f.zoom.visibleRange(), (TimeRange{g - 10'000, g + kAllGatherNs + 10'000}));
}

TEST(CollectivesPanel, SaysWhyItIsEmptyAndShowsTheVerdicts) {
    // Kernels and collective records but an empty report: communication without sizes.
    FourRankCollectivesJob f;
    auto noReport = withBandwidth(f.job, {});
    widgets::CollectivesPanel panel(&f.zoom);
    panel.setJob(noReport);
    EXPECT_EQ(panel.model()->rowCount(), 0);
    EXPECT_FALSE(panel.emptyLabel()->isHidden());
    EXPECT_TRUE(panel.emptyLabel()->text().contains(QStringLiteral("no collective records")))
        << panel.emptyLabel()->text().toStdString();

    // No communication kernel at all.
    std::vector<trace::TraceData> compute = fourRanks();
    for (trace::TraceData& d : compute) {
        trace::TraceData only;
        only.header = d.header;
        only.kernels.append(d.kernels.at(0));
        d = std::move(only);
    }
    panel.setJob(panels_test::makeJob(std::move(compute)));
    EXPECT_TRUE(
        panel.emptyLabel()->text().startsWith(QStringLiteral("No collectives in this trace")))
        << panel.emptyLabel()->text().toStdString();

    // Groups without message sizes: the table stays, the sentence says why busBw is blank.
    analysis::CollectiveBandwidthReport sizeless = handReport();
    sizeless.groups.erase(sizeless.groups.begin());
    panel.setJob(withBandwidth(f.job, sizeless));
    EXPECT_EQ(panel.model()->rowCount(), 1);
    EXPECT_TRUE(panel.emptyLabel()->text().contains(QStringLiteral("No message sizes")));

    // A verdict: its limit text and its evidence; an unknown one says what is missing.
    analysis::CollectiveBandwidthReport judged = handReport();
    analysis::CommunicationVerdict v;
    v.rank = trace::RankId{0};
    v.limit = analysis::CommunicationLimit::WaitingOnRank;
    v.waitingOn = trace::RankId{2};
    v.evidence = "66% of communication time is waiting, 80% of it for rank 2.";
    analysis::CommunicationVerdict u;
    u.rank = trace::RankId{1};
    u.limit = analysis::CommunicationLimit::Unknown;
    u.missing = "no link peak for this GPU: pass --link-bandwidth.";
    judged.verdicts = {v, u};
    panel.setJob(withBandwidth(f.job, judged));
    EXPECT_TRUE(panel.emptyLabel()->isHidden());
    const QString text = panel.verdictLabel()->text();
    EXPECT_TRUE(text.contains(QString::fromStdString(analysis::limitText(v))))
        << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("80% of it for rank 2"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("pass --link-bandwidth"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("rank 1 GPU 0"))) << text.toStdString();
}

TEST(CommLanesHover, ACollectiveShowsItsFiguresAndTheOtherRanksArrivals) {
    FourRankCollectivesJob f;
    widgets::CommLanesView view(&f.zoom);
    view.resize(1200, 500);
    view.setJob(f.job);
    ASSERT_EQ(view.lanes().size(), size_t(kRanks));
    f.zoom.setVisibleRange({0, FourRankCollectivesJob::jobNs(kAllReduceEnd + 10'000)});
    // Rank 1, in the middle of its all-reduce, on its communication row.
    const widgets::CommLanesView::Lane& lane = view.lanes()[1];
    const int64_t t = FourRankCollectivesJob::jobNs(kAllReduceAt + kArrival[1] + 50'000);
    const QPoint at(int(view.mapper().xAt(t)), lane.top + view.rowHeight() + view.rowHeight() / 2);
    const QString tip = view.describeAt(at);
    const std::string s = tip.toStdString();
    auto has = [&](const QString& part) {
        EXPECT_TRUE(tip.contains(part)) << "missing \"" << part.toStdString() << "\" in " << s;
    };
    has(QStringLiteral("<b>AllReduce</b> #7"));
    has(QStringLiteral("64.0 MiB (%1 bytes)").arg(QLocale().toString(qulonglong(kAllReduceBytes))));
    has(QStringLiteral("4 ranks"));
    has(QStringLiteral("RING / LL"));
    has(QStringLiteral("8 channels"));
    const int64_t own = kAllReduceEnd - kAllReduceAt - kArrival[1];
    has(QStringLiteral("duration %1").arg(widgets::formatDuration(double(own))));
    // busBw = 64 MiB / 170 us x 2(4-1)/4 = 592 GB/s; algBw = 395 GB/s.
    has(QStringLiteral("busBw %1 GB/s")
            .arg(QString::fromStdString(
                analysis::formatSignificant(double(kAllReduceBytes) / double(own) * 1.5))));
    has(QStringLiteral("algBw %1 GB/s")
            .arg(QString::fromStdString(
                analysis::formatSignificant(double(kAllReduceBytes) / double(own)))));
    has(QStringLiteral("timed by the NCCL kernel's interval"));
    // Every rank's arrival after the first and its wait for the last (rank 2).
    const int64_t last = *std::max_element(kArrival.begin(), kArrival.end());
    for (int r = 0; r < kRanks; ++r) {
        QString line = QStringLiteral("rank %1: +%2")
                           .arg(r)
                           .arg(widgets::formatDuration(double(kArrival[size_t(r)])));
        has(r == 2 ? line
                   : line + QStringLiteral(", waited %1")
                                .arg(widgets::formatDuration(double(last - kArrival[size_t(r)]))));
    }
    has(QStringLiteral("<b>last</b>"));
    has(QStringLiteral("(this rank)"));
    EXPECT_EQ(tip.count(QStringLiteral("(this rank)")), 1);
    // The straggler stays marked on the lanes: the matched collective still names rank 2.
    ASSERT_EQ(f.job->collectives().collectives.size(), 2u);
    EXPECT_EQ(f.job->collectives().collectives[0].stragglerRank, trace::RankId{2});
}

TEST(CommLanesHover, UnknownFieldsAreLeftOutNotWrittenAsZero) {
    FourRankCollectivesJob f;
    widgets::CommLanesView view(&f.zoom);
    view.resize(1200, 500);
    view.setJob(f.job);
    f.zoom.setVisibleRange({FourRankCollectivesJob::jobNs(kAllGatherAt - 5'000),
                            FourRankCollectivesJob::jobNs(kAllGatherAt + kAllGatherNs + 5'000)});
    const widgets::CommLanesView::Lane& lane = view.lanes()[0];
    const int64_t t = FourRankCollectivesJob::jobNs(kAllGatherAt + kAllGatherNs / 2);
    const QString tip = view.describeAt(
        QPoint(int(view.mapper().xAt(t)), lane.top + view.rowHeight() + view.rowHeight() / 2));
    const std::string s = tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("<b>AllGather</b> #8"))) << s;
    EXPECT_TRUE(
        tip.contains(QStringLiteral("duration %1").arg(widgets::formatDuration(kAllGatherNs))))
        << s;
    // All four arrived together: no one is last, nothing to list.
    EXPECT_TRUE(tip.contains(QStringLiteral("on 4 ranks, all arriving at once"))) << s;
    EXPECT_FALSE(tip.contains(QStringLiteral("waited"))) << s;
    for (const char* absent :
         {"busBw", "algBw", "channel", "bytes", "timed by", "RING /", "/ LL", " B ("}) {
        EXPECT_FALSE(tip.contains(QLatin1String(absent))) << absent << " in " << s;
    }
    // On the compute row the collective is not described.
    const QString compute = view.describeAt(QPoint(int(view.mapper().xAt(t)), lane.top + 1));
    EXPECT_FALSE(compute.contains(QStringLiteral("duration"))) << compute.toStdString();
}

TEST(CommLanesHover, EveryRanksBusBwFromTheAnalysisIsTheFormulas) {
    // The job as analyzeJob makes it, bandwidth included: what the window shows.
    const auto job = panels_test::makeJob(fourRanks());
    ASSERT_NE(job, nullptr);
    ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::CommLanesView view(&zoom);
    view.resize(1200, 500);
    view.setJob(job);
    zoom.setVisibleRange({0, FourRankCollectivesJob::jobNs(kAllReduceEnd + 10'000)});
    ASSERT_EQ(view.lanes().size(), size_t(kRanks));
    for (int r = 0; r < kRanks; ++r) {
        const widgets::CommLanesView::Lane& lane = view.lanes()[size_t(r)];
        const int64_t t = FourRankCollectivesJob::jobNs(kAllReduceEnd - 20'000);
        const QString tip = view.describeAt(
            QPoint(int(view.mapper().xAt(t)), lane.top + view.rowHeight() + view.rowHeight() / 2));
        // busBw = 64 MiB / own duration x 2(n-1)/n, n = 4 (nccl-tests doc/PERFORMANCE.md).
        const double own = double(kAllReduceEnd - kAllReduceAt - kArrival[size_t(r)]);
        const QString bus = QString::fromStdString(
            analysis::formatSignificant(double(kAllReduceBytes) / own * 2.0 * 3 / 4));
        EXPECT_TRUE(tip.contains(QStringLiteral("busBw %1 GB/s").arg(bus)))
            << "rank " << r << ": " << tip.toStdString();
        EXPECT_TRUE(tip.contains(QStringLiteral("rank %1: +").arg(r)));
    }
}
