#include "vramscope/analysis/model/job_model.h"

#include <gtest/gtest.h>

#include "vramscope/analysis/memory/flame_service.h"

// The job model of small jobs built by hand: where job time starts and what is moved onto it.
namespace vramscope::analysis {
namespace {

using trace::TraceData;

/// One rank by hand: a collective first (500..700), 300 B alive over [1000, 3000), an OOM at
/// 2500 and an iteration range over [1200, 2800).
trace::Job handBuiltOneRankJob() {
    TraceData d;
    d.header.rank = trace::RankId{0};
    d.header.devices.push_back({DeviceIndex{0}, "GPU-x", "Test GPU", 1000});
    trace::MemoryEvent e;
    e.timestampNs = 1000;
    e.address = 0xa;
    e.sizeBytes = 300;
    e.action = trace::MemoryAction::Alloc;
    d.memory.append(e);
    e.timestampNs = 3000;
    e.action = trace::MemoryAction::Free;
    d.memory.append(e);
    trace::OomEvent oom;
    oom.timestampNs = 2500;
    oom.requestedBytes = 900;
    d.ooms.push_back(oom);
    trace::RangeEvent range;
    range.startNs = 1200;
    range.endNs = 2800;
    range.name = d.intern("iteration 0");
    range.kind = trace::RangeKind::Iteration;
    d.ranges.append(range);
    trace::CollectiveEvent c;
    c.startNs = 500;
    c.endNs = 700;
    c.function = d.intern("AllReduce");
    d.collectives.append(c);
    trace::Job job;
    trace::RankTrace rt;
    rt.path = "hand.vscope";
    rt.trace.data = std::move(d);
    job.ranks.push_back(std::move(rt));
    return job;
}

TEST(Unit, JobTimePutsRangesOomsAndPeaksOnJobTimeWhenACollectiveComesFirst) {
    auto built = buildJobModel(handBuiltOneRankJob(), "hand");
    ASSERT_TRUE(built.ok());
    const JobModel& m = *built.value();
    EXPECT_EQ(m.originNs, 500);  // the collective, an event like any other
    EXPECT_EQ(m.durationNs, 3000 - 500);
    ASSERT_EQ(m.ranks.size(), 1u);
    EXPECT_EQ(m.ranks[0].toJobNs, -500);
    ASSERT_EQ(m.ranks[0].ranges.size(), 1u);
    EXPECT_EQ(m.ranks[0].ranges[0].startNs, 700);
    EXPECT_EQ(m.ranks[0].ranges[0].endNs, 2300);
    EXPECT_EQ(m.ranks[0].ranges[0].name, "iteration 0");
    ASSERT_EQ(m.gpus.size(), 1u);
    const GpuSeries& g = m.gpus[0];
    EXPECT_EQ(g.deviceName, "Test GPU");
    EXPECT_EQ(g.memory.peakAllocatedBytes, 300);
    EXPECT_EQ(g.memory.peakAllocatedTimeNs, 500);
    EXPECT_FALSE(g.memory.hasReserved);
    EXPECT_EQ(g.memory.peakReservedTimeNs, 0);  // no reserved curve: the job start
    ASSERT_TRUE(g.memory.peakShare().has_value());
    EXPECT_DOUBLE_EQ(*g.memory.peakShare(), 0.3);
    ASSERT_EQ(g.ooms.size(), 1u);
    EXPECT_EQ(g.ooms[0].timeNs, 2000);
    EXPECT_EQ(g.ooms[0].requestedBytes, 900u);
    EXPECT_EQ(g.bytesInUseAt(499), 0);
    EXPECT_EQ(g.bytesInUseAt(500), 300);
    EXPECT_EQ(g.bytesInUseAt(2500), 0);
}

TEST(Unit, EmptyJobGivesAModelWithoutGpusWhenNoRankWasLoaded) {
    auto built = buildJobModel(trace::Job{}, "empty");
    ASSERT_TRUE(built.ok());
    const JobModel& m = *built.value();
    EXPECT_TRUE(m.gpus.empty());
    EXPECT_TRUE(m.memory.empty());
    EXPECT_TRUE(m.kernels.empty());
    EXPECT_EQ(m.originNs, 0);
    EXPECT_GE(m.durationNs, 1);
    ASSERT_TRUE(m.flames);
    EXPECT_EQ(m.flames->at(0, DeviceIndex{0}, 0, FlameGrouping::Stack), nullptr);
}

}  // namespace
}  // namespace vramscope::analysis
