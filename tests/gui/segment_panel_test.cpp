// The segment view and its dock (offscreen): what is laid out for a hand-built job whose figures
// are worked out in the comments, how it follows the picked time, and the H200 OOM snapshot.
#include <QTest>

#include <gtest/gtest.h>

#include <filesystem>

#include "panels_fixture.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "test_units.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/segment_panel.h"
#include "vramscope/widgets/segment_view.h"

using namespace vramscope;
using Kind = widgets::SegmentView::ItemKind;

namespace {

using testdata::kKiB;
using testdata::kMiB;
using testdata::kMs;

void add(trace::TraceData& d, int64_t t, uint64_t address, uint64_t size,
         trace::MemoryAction action, trace::MemoryLevel level) {
    trace::MemoryEvent e;
    e.timestampNs = t;
    e.address = address;
    e.sizeBytes = size;
    e.action = action;
    e.level = level;
    e.kind = trace::MemoryKind::Device;
    d.memory.append(e);
}

/// S1 [0x100000, +1 MiB) and S2 [0x400000, +2 MiB) from 1 ms; at 2 ms S1 gets blocks
/// [0x100000, +256 KiB) and [0x180000, +256 KiB) (gaps 256 KiB each after them); S2 stays empty.
/// At 5 ms a request of 3 MiB fails: the largest free block is S2's 2 MiB. Job time 0 = 1 ms.
std::shared_ptr<const analysis::JobModel> handBuiltSegmentsJob() {
    trace::TraceData d;
    const auto R = trace::MemoryLevel::Reserved, A = trace::MemoryLevel::Allocated;
    add(d, 1 * kMs, 0x100000, kMiB, trace::MemoryAction::Alloc, R);
    add(d, 1 * kMs, 0x400000, 2 * kMiB, trace::MemoryAction::Alloc, R);
    add(d, 2 * kMs, 0x100000, 256 * kKiB, trace::MemoryAction::Alloc, A);
    add(d, 2 * kMs, 0x180000, 256 * kKiB, trace::MemoryAction::Alloc, A);
    add(d, 6 * kMs, 0x100000, 256 * kKiB, trace::MemoryAction::Free, A);
    d.ooms.push_back({5 * kMs, trace::DeviceIndex{0}, 0, 3 * kMiB, 0});
    std::vector<trace::TraceData> traces;
    traces.push_back(std::move(d));
    return panels_test::makeJob(std::move(traces));
}

const widgets::SegmentView::Item* first(const widgets::SegmentView& v, Kind kind) {
    for (const auto& i : v.items()) {
        if (i.kind == kind) {
            return &i;
        }
    }
    return nullptr;
}

}  // namespace

TEST(SegmentPanel, OpensAtTheOomAndDrawsTheRequestToScale) {
    auto job = handBuiltSegmentsJob();
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::SegmentPanel panel(&zoom);
    panel.resize(800, 400);
    panel.setJob(job);
    EXPECT_EQ(panel.moment(), widgets::SegmentPanel::Moment::Oom);
    EXPECT_EQ(panel.shownTimeNs(), 4 * kMs);  // 5 ms in the trace, 1 ms after its first event
    const widgets::SegmentView& v = *panel.view();
    EXPECT_EQ(v.count(Kind::Segment), 2u);
    EXPECT_EQ(v.count(Kind::Block), 2u);
    EXPECT_EQ(v.count(Kind::Gap), 3u);  // S1: after each block; S2: all of it
    EXPECT_EQ(v.count(Kind::Request), 1u);
    // One scale for all bars, running to the larger of the request (3 MiB) and the largest
    // segment (2 MiB): the request is 1.5 times S2's bar, the largest free block (S2's 2 MiB)
    // as long as S2's bar; S2 (largest) comes first.
    const auto* request = first(v, Kind::Request);
    const auto* largest = first(v, Kind::LargestFree);
    const auto* s2 = first(v, Kind::Segment);
    ASSERT_TRUE(request && largest && s2);
    EXPECT_EQ(s2->segment, 1u);
    EXPECT_NEAR(request->rect.width() / s2->rect.width(), 1.5, 0.01);
    EXPECT_NEAR(largest->rect.width(), s2->rect.width(), 0.5);
    EXPECT_LT(request->rect.bottom(), s2->rect.top());
    // A block's tooltip: its size, address and stack label; a gap's size.
    const auto* block = first(v, Kind::Block);
    ASSERT_TRUE(block);
    const QString tip = v.describe(*block);
    EXPECT_TRUE(tip.contains(QStringLiteral("256 KiB"))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("0x100000"))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("(no stack)"))) << tip.toStdString();
    EXPECT_EQ(v.itemAt(block->rect.center()), block);
    const auto* gap = first(v, Kind::Gap);
    EXPECT_TRUE(v.describe(*gap).startsWith(QStringLiteral("free 2.00 MiB")))
        << v.describe(*gap).toStdString();
    EXPECT_TRUE(v.describe(*request).contains(QStringLiteral("3145728 B")));
    // The header: the totals, then the request against the largest free block.
    const QString caption = panel.caption();
    EXPECT_TRUE(caption.contains(QStringLiteral("at 4.00 ms (the first OOM)")))
        << caption.toStdString();
    EXPECT_TRUE(
        caption.contains(QStringLiteral("reserved 3.00 MiB in 2 segments, allocated 512 KiB, "
                                        "free 2.50 MiB, largest free block 2.00 MiB, "
                                        "fragmentation 0.200")))
        << caption.toStdString();
    EXPECT_TRUE(caption.contains(QStringLiteral("Largest free block 2.00 MiB < request 3.00 MiB")))
        << caption.toStdString();
}

TEST(SegmentPanel, FollowsTheTimePickedOnTheTimeline) {
    auto job = handBuiltSegmentsJob();
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::SegmentPanel panel(&zoom);
    panel.setJob(job);
    const analysis::GpuKey gpu{0, trace::DeviceIndex{0}};
    // Job time 0.5 ms = trace 1.5 ms: the segments, no block yet.
    zoom.setSelectedGpu(gpu, kMs / 2);
    panel.rebuildNow();
    EXPECT_EQ(panel.moment(), widgets::SegmentPanel::Moment::Cursor);
    EXPECT_EQ(panel.shownTimeNs(), kMs / 2);
    EXPECT_EQ(panel.view()->count(Kind::Block), 0u);
    EXPECT_EQ(panel.view()->count(Kind::Request), 0u);  // no request away from the OOM
    // Job time 5.5 ms = trace 6.5 ms: the block at 0x100000 is freed, one left.
    zoom.setSelectedGpu(gpu, 11 * kMs / 2);
    panel.rebuildNow();
    EXPECT_EQ(panel.view()->count(Kind::Block), 1u);
    EXPECT_TRUE(panel.caption().contains(QStringLiteral("allocated 256 KiB")))
        << panel.caption().toStdString();
}

TEST(SegmentPanel, SaysWhyWhenTheTraceHasNoSegments) {
    trace::TraceData d;
    add(d, 1 * kMs, 0x100000, kMiB, trace::MemoryAction::Alloc, trace::MemoryLevel::Allocated);
    std::vector<trace::TraceData> traces;
    traces.push_back(std::move(d));
    auto job = panels_test::makeJob(std::move(traces));
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    widgets::SegmentPanel panel(&zoom);
    panel.setJob(job);
    EXPECT_TRUE(panel.view()->items().empty());
    EXPECT_TRUE(panel.view()->placeholder().contains(QStringLiteral("no reserved segments")))
        << panel.view()->placeholder().toStdString();
}

TEST(SegmentPanel, H200OomSnapshotOpensAtTheOomWithTheRequestOf1000MiB) {
    const std::string path = realdata::kGptOomSnapshot;
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = panels_test::openAsJob({path});
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::SegmentPanel panel(&zoom);
    panel.resize(1000, 500);
    panel.setJob(job);
    const trace::TraceData& data = job->job.ranks[0].trace.data;
    ASSERT_EQ(data.ooms.size(), 1u);
    EXPECT_EQ(panel.shownTimeNs(), data.ooms[0].timestampNs + job->ranks[0].toJobNs);
    const auto& picture = panel.view()->picture();
    ASSERT_TRUE(picture);
    // PyTorch's "Tried to allocate 1000.00 MiB".
    EXPECT_EQ(picture->requestBytes, 1000ull * kMiB);
    EXPECT_EQ(panel.view()->count(Kind::Segment), picture->layout.segments.size());
    const auto* request = first(*panel.view(), Kind::Request);
    const auto* largest = first(*panel.view(), Kind::LargestFree);
    ASSERT_TRUE(request && largest);
    EXPECT_NEAR(largest->rect.width() / request->rect.width(),
                double(picture->layout.totals.largestFreeBlockBytes) / double(1000ull * kMiB),
                0.01);
    EXPECT_TRUE(panel.caption().contains(QStringLiteral("< request 0.977 GiB (1048576000 B)")))
        << panel.caption().toStdString();
}
