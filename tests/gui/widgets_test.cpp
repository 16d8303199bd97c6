// ZoomState navigation, unit formatting and the Qt models of the GUI.
#include <QAbstractItemModelTester>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include <cmath>

#include "job_loader.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/device_tree_model.h"
#include "vramscope/widgets/heat_strip.h"
#include "vramscope/widgets/live_set_model.h"
#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/units.h"
#include "vramscope/widgets/zoom_state.h"

using namespace vramscope;
using widgets::TimeRange;
using widgets::ZoomState;

TEST(ZoomState, ZoomAroundKeepsTheAnchorAtTheSameShareOfTheView) {
    ZoomState zoom;
    zoom.setFullRange({0, 1'000'000});
    zoom.zoomAround(250'000, 0.5);
    // The anchor was at 25 % of the view; the view halves around it: [125000, 625000).
    EXPECT_EQ(zoom.visibleRange(), (TimeRange{125'000, 625'000}));
}

TEST(ZoomState, VisibleRangeStaysInsideTheJobAndAboveTheNarrowestSpan) {
    ZoomState zoom;
    zoom.setFullRange({0, 1'000'000});
    zoom.setVisibleRange({-500, 1000});
    EXPECT_EQ(zoom.visibleRange(), (TimeRange{0, 1500}));
    zoom.pan(1000.0);
    EXPECT_EQ(zoom.visibleRange(), (TimeRange{998'500, 1'000'000}));
    zoom.setVisibleRange({500, 510});
    EXPECT_EQ(zoom.visibleRange().durationNs(), ZoomState::kMinimumSpanNs);
    zoom.zoomAround(0, 1e9);
    EXPECT_EQ(zoom.visibleRange(), zoom.fullRange());
}

TEST(ZoomState, EmitsOnlyWhenSomethingChanges) {
    ZoomState zoom;
    zoom.setFullRange({0, 1000});
    QSignalSpy visible(&zoom, &ZoomState::visibleRangeChanged);
    QSignalSpy selection(&zoom, &ZoomState::selectionChanged);
    zoom.resetZoom();
    EXPECT_EQ(visible.count(), 0);
    zoom.setVisibleRange({100, 300});
    zoom.setVisibleRange({100, 300});
    EXPECT_EQ(visible.count(), 1);
    zoom.setSelection({400, 200});
    EXPECT_EQ(zoom.selection(), (TimeRange{200, 400}));
    zoom.setSelection({200, 400});
    EXPECT_EQ(selection.count(), 1);
    zoom.clearSelection();
    EXPECT_FALSE(zoom.hasSelection());
}

TEST(Units, BytesUseBinaryUnits) {
    EXPECT_EQ(widgets::formatBytes(512), QStringLiteral("512 B"));
    EXPECT_EQ(widgets::formatBytes(1536), QStringLiteral("1.50 KiB"));
    EXPECT_EQ(widgets::formatBytes(3.0 * 1024 * 1024 * 1024), QStringLiteral("3.00 GiB"));
    EXPECT_EQ(widgets::formatBytes(141.0 * (1ull << 30)), QStringLiteral("141 GiB"));
}

TEST(Units, TimeUnitFollowsTheSpan) {
    EXPECT_STREQ(widgets::timeUnitFor(5'000).suffix, "ns");
    EXPECT_STREQ(widgets::timeUnitFor(5'000'000).suffix, "us");
    EXPECT_STREQ(widgets::timeUnitFor(5'000'000'000).suffix, "ms");
    EXPECT_STREQ(widgets::timeUnitFor(50'000'000'000).suffix, "s");
    EXPECT_EQ(widgets::formatDuration(1'500'000), QStringLiteral("1.50 ms"));
    EXPECT_EQ(widgets::formatDuration(850'000), QStringLiteral("850 us"));
    EXPECT_EQ(widgets::formatTime(12'500'000, {1e6, "ms"}, 100'000), QStringLiteral("12.5 ms"));
}

namespace {
/// Two ranks: rank 0 with GPUs 0 and 1, rank 1 with GPU 0.
std::shared_ptr<const analysis::JobModel> twoRankMemoryJob() {
    trace::Job job;
    for (int r = 0; r < 2; ++r) {
        trace::RankTrace rank;
        rank.path = "rank" + std::to_string(r) + ".vscope";
        rank.trace.data.header.rank = trace::RankId{r};
        for (int d = 0; d < (r == 0 ? 2 : 1); ++d) {
            rank.trace.data.header.devices.push_back(
                {trace::DeviceIndex{d}, "", "Test GPU", 8ull << 30});
            trace::MemoryEvent e;
            e.timestampNs = 1000 * (d + 1);
            e.address = 0x1000;
            e.sizeBytes = 1ull << 30;
            e.device = trace::DeviceIndex{d};
            rank.trace.data.memory.append(e);
        }
        job.ranks.push_back(std::move(rank));
    }
    return analysis::buildJobModel(std::move(job), "test").value();
}
}  // namespace

TEST(DeviceTreeModel, ListsRanksThenGpusAndTicksFollowTheRank) {
    const auto job = twoRankMemoryJob();
    widgets::DeviceTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setJob(job, false);
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.rowCount(model.index(0, 0)), 2);
    EXPECT_EQ(model.rowCount(model.index(1, 0)), 1);
    EXPECT_EQ(model.checkedGpus().size(), 3u);
    QSignalSpy changed(&model, &widgets::DeviceTreeModel::checkedGpusChanged);
    model.setData(model.index(0, 0), Qt::Unchecked, Qt::CheckStateRole);
    EXPECT_EQ(changed.count(), 1);
    const std::vector<analysis::GpuKey> left = model.checkedGpus();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0], (analysis::GpuKey{1, trace::DeviceIndex{0}}));
    const QModelIndex gpu = model.index(1, 0, model.index(0, 0));
    model.setData(gpu, Qt::Checked, Qt::CheckStateRole);
    EXPECT_EQ(model.data(model.index(0, 0), Qt::CheckStateRole).value<Qt::CheckState>(),
              Qt::PartiallyChecked);
    EXPECT_EQ(model
                  .data(model.index(0, widgets::DeviceTreeModel::CapacityColumn, model.index(0, 0)),
                        widgets::DeviceTreeModel::RawValueRole)
                  .toULongLong(),
              8ull << 30);
}

TEST(LiveSetModel, ShowsRowsInTheGivenOrderWithStacksResolved) {
    trace::TraceData data;
    const trace::FrameId inner =
        data.internFrame({data.intern("cudaMalloc"), data.intern("alloc.cpp"), 7});
    const trace::FrameId outer =
        data.internFrame({data.intern("forward"), data.intern("model.py"), 42});
    const trace::StackId stack = data.internStack({inner, outer});
    analysis::LiveAllocation big{0xa000, 4096, 100, stack, 0, trace::MemoryKind::Device, 0, 0};
    analysis::LiveAllocation small{0xb000, 16, 400, trace::StackId{0}, 0, trace::MemoryKind::Device,
                                   0,      1};
    widgets::LiveSetModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setRows(widgets::liveRowsFrom(data, {big, small}, 1000));
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.totalBytes(), 4112u);
    EXPECT_EQ(model.data(model.index(0, 0), widgets::LiveSetModel::RawValueRole).toULongLong(),
              4096u);
    EXPECT_EQ(model
                  .data(model.index(0, widgets::LiveSetModel::AgeColumn),
                        widgets::LiveSetModel::RawValueRole)
                  .toLongLong(),
              900);
    // The Python frame names the code, not the allocator's C++ frame.
    EXPECT_EQ(model.rows()[0].where, QStringLiteral("forward  (model.py:42)"));
    EXPECT_EQ(model.rows()[0].stack.size(), 2);
    EXPECT_EQ(model.data(model.index(1, widgets::LiveSetModel::AddressColumn), Qt::DisplayRole)
                  .toString(),
              QStringLiteral("0xb000"));
}

TEST(LiveSetModel, MemoryAliveBeforeTheTraceBeganIsNamedSoWithoutAnAddress) {
    trace::TraceData data;
    // An importer's one block for what was alive before recording began: no address, no stack.
    analysis::LiveAllocation before{
        0, 1 << 20, 0, trace::StackId{0}, 0, trace::MemoryKind::PreExisting, 0, 0};
    analysis::LiveAllocation plain{0, 64, 10, trace::StackId{0}, 0, trace::MemoryKind::Device,
                                   0, 1};
    widgets::LiveSetModel model;
    model.setRows(widgets::liveRowsFrom(data, {before, plain}, 100));
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(
        model.data(model.index(0, widgets::LiveSetModel::WhereColumn), Qt::DisplayRole).toString(),
        QStringLiteral("alive before the trace began"));
    EXPECT_EQ(model.data(model.index(0, widgets::LiveSetModel::AddressColumn), Qt::DisplayRole)
                  .toString(),
              QStringLiteral("\u2014"));
    // An ordinary allocation without a stack keeps its address and says it has no stack.
    EXPECT_EQ(
        model.data(model.index(1, widgets::LiveSetModel::WhereColumn), Qt::DisplayRole).toString(),
        QStringLiteral("(no stack)"));
    EXPECT_EQ(model.data(model.index(1, widgets::LiveSetModel::AddressColumn), Qt::DisplayRole)
                  .toString(),
              QStringLiteral("0x0"));
}

TEST(GpuLabel, UnknownRankReadsRankQuestionMark) {
    analysis::JobModel job;
    job.ranks.resize(2);
    job.ranks[0].rank = trace::kUnknownRank;
    job.ranks[1].rank = trace::RankId{3};
    EXPECT_EQ(widgets::gpuLabel(job, {0, trace::DeviceIndex{1}}),
              QStringLiteral("rank ? \u00b7 GPU 1"));
    EXPECT_EQ(widgets::gpuLabel(job, {1, trace::DeviceIndex{0}}),
              QStringLiteral("rank 3 \u00b7 GPU 0"));
}

TEST(HeatStrip, CapacityColoursOnlyWhereTheCapacityIsKnown) {
    // Rank 0 GPU 0 lists 8 GiB of capacity (twoRankMemoryJob); the copy without it has no capacity.
    const auto job = twoRankMemoryJob();
    widgets::ZoomState zoom;
    widgets::HeatStrip strip(&zoom);
    strip.setGpus(job, {job->gpus.at(0).key});
    analysis::GpuSeries known = job->gpus.at(0);
    analysis::GpuSeries unknown = known;
    unknown.memory.capacityBytes = 0;
    // 7 GiB of 8 GiB = 87.5 %: three quarters of the way from viridis at 0.8 (#7ad151) to 0.9
    // (#bddf26), by hand: (122 + 0.75 * 67, 209 + 0.75 * 14, 81 - 0.75 * 43), rounded.
    EXPECT_EQ(strip.cellColor(known, 7ll << 30), QColor(172, 220, 49));
    // Nothing and everything: the table's ends.
    EXPECT_EQ(strip.cellColor(known, 0), QColor(0x44, 0x01, 0x54));
    EXPECT_EQ(strip.cellColor(known, 8ll << 30), QColor(0xfd, 0xe7, 0x25));
    // Without a capacity the same bytes are never painted on the capacity scale.
    for (int64_t bytes : {int64_t{0}, int64_t{1} << 30, int64_t{7} << 30, int64_t{1} << 40}) {
        const QColor c = strip.cellColor(unknown, bytes);
        EXPECT_NEAR(c.hsvHueF(), 0.58, 0.01) << bytes;
    }
}

namespace {
/// CIE 1976 L* of an sRGB colour (IEC 61966-2-1 decoding, Rec. 709 luminance, D65 white).
double lightness(const QColor& c) {
    auto linear = [](double v) {
        return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    const double y =
        0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
    const double f = y > 216.0 / 24389.0 ? std::cbrt(y) : (24389.0 / 27.0 * y + 16.0) / 116.0;
    return 116.0 * f - 16.0;
}
}  // namespace

TEST(HeatStrip, CapacityColourMapRisesInLightnessFromNoneToFull) {
    double previous = -1.0;
    for (int percent = 0; percent <= 100; ++percent) {
        const double l = lightness(widgets::usageColor(percent / 100.0));
        EXPECT_GT(l, previous) << percent << " %";
        previous = l;
    }
    // The shares the old green scale painted alike are apart by a visible step in lightness.
    EXPECT_GT(lightness(widgets::usageColor(0.35)) - lightness(widgets::usageColor(0.23)), 8.0);
}
