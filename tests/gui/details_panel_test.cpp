// The Details panel lists what is alive on the selected GPU at the selected time, on a hand-built
// one-GPU job whose live sets are worked out by hand below.
#include <QApplication>

#include <gtest/gtest.h>

#include "panels_fixture.h"
#include "unit/analysis/memory_events.h"
#include "vramscope/widgets/details_panel.h"
#include "vramscope/widgets/zoom_state.h"

using namespace vramscope;

namespace {

using analysis::test::addMemory;
using analysis::test::kAlloc;
using analysis::test::kFree;

/// Rank 0, GPU 0 of 1000 B, trace time (ns):
///   1000 alloc A 0x100 300 B (stack: forward, model.py:10)
///   2000 alloc B 0x200 500 B (stack: backward, model.py:20)
///   3000 free A
///   4000 alloc C 0x300 200 B (no stack)
///   5000 free B
///   6000 free C
/// The first event is at 1000, so job time = trace time - 1000 and the job lasts 5000 ns.
trace::TraceData threeAllocations() {
    trace::TraceData d;
    d.header.rank = trace::RankId{0};
    d.header.devices.push_back({trace::DeviceIndex{0}, "GPU-hand", "Hand GPU", 1000});
    const trace::StackId forward =
        d.internStack({d.internFrame({d.intern("forward"), d.intern("model.py"), 10})});
    const trace::StackId backward =
        d.internStack({d.internFrame({d.intern("backward"), d.intern("model.py"), 20})});
    addMemory(d, 1000, 0x100, 300, kAlloc, trace::MemoryLevel::Allocated, trace::DeviceIndex{0},
              forward);
    addMemory(d, 2000, 0x200, 500, kAlloc, trace::MemoryLevel::Allocated, trace::DeviceIndex{0},
              backward);
    addMemory(d, 3000, 0x100, 300, kFree);
    addMemory(d, 4000, 0x300, 200, kAlloc, trace::MemoryLevel::Allocated, trace::DeviceIndex{0},
              trace::StackId{0});
    addMemory(d, 5000, 0x200, 500, kFree);
    addMemory(d, 6000, 0x300, 200, kFree);
    return d;
}

}  // namespace

TEST(DetailsPanel, ListsTheLiveSetOfTheSelectedTimeWhenAGpuIsSelected) {
    std::vector<trace::TraceData> ranks;
    ranks.push_back(threeAllocations());
    const auto job = panels_test::makeJob(std::move(ranks));
    ASSERT_TRUE(job);
    ASSERT_EQ(job->gpus.size(), 1u);
    ASSERT_EQ(job->durationNs, 5000);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});  // span 5000 ns: times read in whole ns
    widgets::DetailsPanel panel(&zoom);
    panel.setJob(job);
    EXPECT_EQ(panel.headingText(),
              QStringLiteral("Click a GPU's plot to list the allocations alive at that time."));
    EXPECT_EQ(panel.model()->rowCount(), 0);

    // Job time 1500 = trace time 2500: A (since 1000) and B (since 2000), largest first.
    const analysis::GpuKey gpu = job->gpus[0].key;
    zoom.setSelectedGpu(gpu, 1500);
    EXPECT_EQ(
        panel.headingText(),
        QStringLiteral("<b>rank 0 \u00b7 GPU 0</b> at 1500 ns: 2 allocation(s) alive, 800 B"));
    ASSERT_EQ(panel.model()->rows().size(), 2u);
    const widgets::LiveRow& b = panel.model()->rows()[0];
    EXPECT_EQ(b.address, 0x200u);
    EXPECT_EQ(b.sizeBytes, 500u);
    EXPECT_EQ(b.ageNs, 2500 - 2000);
    EXPECT_EQ(b.where, QStringLiteral("backward  (model.py:20)"));
    const widgets::LiveRow& a = panel.model()->rows()[1];
    EXPECT_EQ(a.address, 0x100u);
    EXPECT_EQ(a.sizeBytes, 300u);
    EXPECT_EQ(a.ageNs, 2500 - 1000);
    // The first row is selected and its stack shown.
    EXPECT_EQ(panel.shownStack(), QStringList{QStringLiteral("backward  (model.py:20)")});

    // Job time 3500 = trace time 4500: A was freed at 3000, C came at 4000.
    zoom.setSelectedGpu(gpu, 3500);
    EXPECT_EQ(
        panel.headingText(),
        QStringLiteral("<b>rank 0 \u00b7 GPU 0</b> at 3500 ns: 2 allocation(s) alive, 700 B"));
    ASSERT_EQ(panel.model()->rows().size(), 2u);
    EXPECT_EQ(panel.model()->rows()[0].address, 0x200u);
    EXPECT_EQ(panel.model()->rows()[0].ageNs, 4500 - 2000);
    EXPECT_EQ(panel.model()->rows()[1].address, 0x300u);
    EXPECT_EQ(panel.model()->rows()[1].sizeBytes, 200u);
    EXPECT_EQ(panel.model()->rows()[1].ageNs, 4500 - 4000);
    EXPECT_TRUE(panel.model()->rows()[1].stack.isEmpty());

    // Job time 4500 = trace time 5500: B was freed at 5000; C alone.
    zoom.setSelectedGpu(gpu, 4500);
    EXPECT_EQ(
        panel.headingText(),
        QStringLiteral("<b>rank 0 \u00b7 GPU 0</b> at 4500 ns: 1 allocation(s) alive, 200 B"));
    ASSERT_EQ(panel.model()->rows().size(), 1u);
    EXPECT_EQ(panel.model()->rows()[0].address, 0x300u);

    // No GPU selected: the list empties and says how to choose one.
    zoom.setSelectedGpu({}, 0);
    EXPECT_EQ(panel.model()->rowCount(), 0);
    EXPECT_EQ(panel.headingText(),
              QStringLiteral("Click a GPU's plot to list the allocations alive at that time."));
}

TEST(DetailsPanel, QueriesTheCurrentSelectionWhenTheJobIsSetAgain) {
    std::vector<trace::TraceData> ranks;
    ranks.push_back(threeAllocations());
    const auto job = panels_test::makeJob(std::move(ranks));
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::DetailsPanel panel(&zoom);
    panel.setJob(job);
    zoom.setSelectedGpu(job->gpus[0].key, 1500);
    ASSERT_EQ(panel.model()->rowCount(), 2);
    // Nothing open: the list empties, whatever the selection.
    panel.setJob(nullptr);
    EXPECT_EQ(panel.model()->rowCount(), 0);
    EXPECT_EQ(panel.headingText(),
              QStringLiteral("Click a GPU's plot to list the allocations alive at that time."));
    // The job again, the selection unchanged (no selectedGpuChanged): A and B at job time 1500.
    panel.setJob(job);
    ASSERT_EQ(panel.model()->rowCount(), 2);
    EXPECT_EQ(panel.model()->totalBytes(), 800u);
}
