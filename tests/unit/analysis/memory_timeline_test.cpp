#include "vramscope/analysis/memory/memory_timeline.h"

#include <gtest/gtest.h>

#include "memory_events.h"

namespace vramscope::analysis {
namespace {

using trace::CounterKind;
using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;
using trace::TraceData;

using test::kAlloc;
using test::kFree;

TEST(StepSeries, ValueAtIsZeroBeforeFirstStepAndHoldsBetweenSteps) {
    StepSeries s{{10, 20, 20, 30}, {5, 7, 9, 1}};
    EXPECT_EQ(s.valueAt(9), 0);
    EXPECT_EQ(s.valueAt(10), 5);
    EXPECT_EQ(s.valueAt(19), 5);
    EXPECT_EQ(s.valueAt(20), 9);  // equal times keep the later value
    EXPECT_EQ(s.valueAt(1000), 1);
    EXPECT_EQ(s.peakIndex(), 2);
    EXPECT_EQ(StepSeries{}.peakIndex(), -1);
}

TEST(MemoryTimeline, RunningSumGivesPeakAndItsFirstTime) {
    TraceData d;
    d.header.devices.push_back({trace::DeviceIndex{0}, "GPU-x", "Test GPU", 1000});
    test::addMemory(d, 100, 0xa, 300, kAlloc);
    test::addMemory(d, 200, 0xb, 200, kAlloc);  // 500 at 200
    test::addMemory(d, 300, 0xa, 300, kFree);   // 200
    test::addMemory(d, 400, 0xc, 300,
                    kAlloc);                   // 500 again at 400: the peak stays at the first time
    test::addMemory(d, 500, 0xb, 200, kFree);  // 300
    const auto tls = buildMemoryTimelines(d);
    ASSERT_EQ(tls.size(), 1u);
    const auto& tl = tls[0];
    EXPECT_EQ(tl.device, trace::DeviceIndex{0});
    EXPECT_EQ(tl.capacityBytes, 1000u);
    EXPECT_EQ(tl.allocatedSource, SeriesSource::MemoryEvents);
    EXPECT_EQ(tl.reservedSource, SeriesSource::None);
    EXPECT_EQ(tl.allocated.timeNs, (std::vector<TimestampNs>{100, 200, 300, 400, 500}));
    EXPECT_EQ(tl.allocated.bytes, (std::vector<int64_t>{300, 500, 200, 500, 300}));
    EXPECT_EQ(tl.peakAllocatedBytes, 500);
    EXPECT_EQ(tl.peakAllocatedTimeNs, 200);
    EXPECT_EQ(tl.memoryEvents, 5u);
    EXPECT_EQ(tl.allocatedUnmatchedFrees, 0u);
}

TEST(MemoryTimeline, FreeSubtractsTheSizeRecordedAtAlloc) {
    TraceData d;
    test::addMemory(d, 1, 0xa, 100, kAlloc);
    test::addMemory(d, 2, 0xa, 0, kFree);  // a producer that does not repeat the size on free
    const auto tls = buildMemoryTimelines(d);
    ASSERT_EQ(tls.size(), 1u);
    EXPECT_EQ(tls[0].allocated.bytes, (std::vector<int64_t>{100, 0}));
}

TEST(MemoryTimeline, FreeOfUnknownAddressLiftsTheCurveByTheDeficit) {
    TraceData d;
    test::addMemory(d, 10, 0xa, 100, kAlloc);    // 100
    test::addMemory(d, 20, 0xdead, 250, kFree);  // allocated before the trace: -150 -> lift by 150
    test::addMemory(d, 30, 0xb, 50, kAlloc);     // -100
    const auto tls = buildMemoryTimelines(d);
    ASSERT_EQ(tls.size(), 1u);
    const auto& tl = tls[0];
    EXPECT_EQ(tl.allocatedPreTraceBytes, 150);
    EXPECT_EQ(tl.allocatedUnmatchedFrees, 1u);
    EXPECT_EQ(tl.allocated.bytes, (std::vector<int64_t>{250, 0, 50}));
    EXPECT_EQ(tl.peakAllocatedBytes, 250);
    EXPECT_EQ(tl.peakAllocatedTimeNs, 10);
}

TEST(MemoryTimeline, EqualTimestampsGiveOneStepWithTheFinalValue) {
    TraceData d;
    test::addMemory(d, 10, 0xa, 100, kAlloc);
    test::addMemory(d, 10, 0xb, 900, kAlloc);  // 1000 only between two events of the same instant
    test::addMemory(d, 10, 0xb, 900, kFree);
    test::addMemory(d, 20, 0xc, 50, kAlloc);
    const auto tls = buildMemoryTimelines(d);
    ASSERT_EQ(tls.size(), 1u);
    EXPECT_EQ(tls[0].allocated.timeNs, (std::vector<TimestampNs>{10, 20}));
    EXPECT_EQ(tls[0].allocated.bytes, (std::vector<int64_t>{100, 150}));
    EXPECT_EQ(tls[0].peakAllocatedBytes, 150);
    EXPECT_EQ(tls[0].peakAllocatedTimeNs, 20);
}

TEST(MemoryTimeline, UnsortedEventsAreOrderedByTimeKeepingFileOrderOnTies) {
    TraceData d;
    test::addMemory(d, 30, 0xa, 100, kFree);
    test::addMemory(d, 10, 0xa, 100, kAlloc);
    test::addMemory(d, 20, 0xb, 40, kAlloc);
    test::addMemory(d, 20, 0xb, 40, kFree);
    test::addMemory(d, 20, 0xb, 60,
                    kAlloc);  // same instant as the free before it, after it in the file
    const auto tls = buildMemoryTimelines(d);
    ASSERT_EQ(tls.size(), 1u);
    EXPECT_EQ(tls[0].allocated.timeNs, (std::vector<TimestampNs>{10, 20, 30}));
    EXPECT_EQ(tls[0].allocated.bytes, (std::vector<int64_t>{100, 160, 60}));
    EXPECT_EQ(tls[0].allocatedUnmatchedFrees, 0u);
}

TEST(MemoryTimeline, LevelsAndDevicesAreSeparateAndDeviceStaticIsLeftOut) {
    TraceData d;
    d.header.devices.push_back({trace::DeviceIndex{3}, "", "listed, no events", 7});
    test::addMemory(d, 1, 0x1, 2048, kAlloc, MemoryLevel::Reserved, trace::DeviceIndex{1},
                    trace::StackId{0}, MemoryKind::Device);
    test::addMemory(d, 2, 0x1, 512, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{1});
    test::addMemory(d, 3, 0x9, 15, kAlloc, MemoryLevel::Reserved, trace::DeviceIndex{1},
                    trace::StackId{0}, MemoryKind::DeviceStatic);
    test::addMemory(d, 4, 0x2, 64, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{2});
    test::addMemory(d, 5, 0x3, 8, kAlloc, MemoryLevel::Allocated, trace::kHostDevice,
                    trace::StackId{0}, MemoryKind::Pinned);
    const auto tls = buildMemoryTimelines(d);
    ASSERT_EQ(tls.size(), 3u);  // devices 1, 2, 3; host memory has no timeline
    EXPECT_EQ(tls[0].device, trace::DeviceIndex{1});
    EXPECT_EQ(tls[0].peakReservedBytes, 2048);
    EXPECT_EQ(tls[0].peakReservedTimeNs, 1);
    EXPECT_EQ(tls[0].peakAllocatedBytes, 512);
    EXPECT_EQ(tls[0].memoryEvents, 3u);  // the DeviceStatic event counts, but is not drawn
    EXPECT_EQ(tls[0].reserved.size(), 1u);
    EXPECT_EQ(tls[1].device, trace::DeviceIndex{2});
    EXPECT_EQ(tls[1].peakAllocatedBytes, 64);
    EXPECT_EQ(tls[1].reservedSource, SeriesSource::None);
    EXPECT_EQ(tls[2].device, trace::DeviceIndex{3});
    EXPECT_EQ(tls[2].capacityBytes, 7u);
    EXPECT_EQ(tls[2].allocatedSource, SeriesSource::None);
    EXPECT_EQ(tls[2].memoryEvents, 0u);
    EXPECT_EQ(tls[2].peakAllocatedBytes, 0);
}

TEST(MemoryTimeline, ProducerCountersOverrideTheEventSum) {
    TraceData d;
    test::addMemory(d, 1, 0xa, 100, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{1});
    const auto name = d.intern("Total Allocated");
    d.counters.append({5, name, trace::DeviceIndex{1}, CounterKind::AllocatedBytes, 1000.0});
    d.counters.append(
        {2, name, trace::DeviceIndex{1}, CounterKind::AllocatedBytes, 4000.0});  // out of order
    d.counters.append({5, name, trace::DeviceIndex{1}, CounterKind::AllocatedBytes,
                       3000.0});  // same time: later wins
    d.counters.append(
        {3, d.intern("Total Reserved"), trace::DeviceIndex{1}, CounterKind::ReservedBytes, 8192.0});
    d.counters.append({3, d.intern("other"), trace::DeviceIndex{1}, CounterKind::Generic, 1e12});
    const auto tls = buildMemoryTimelines(d);
    ASSERT_EQ(tls.size(), 1u);
    const auto& tl = tls[0];
    EXPECT_EQ(tl.allocatedSource, SeriesSource::ProducerCounter);
    EXPECT_EQ(tl.reservedSource, SeriesSource::ProducerCounter);
    EXPECT_EQ(tl.allocated.timeNs, (std::vector<TimestampNs>{2, 5}));
    EXPECT_EQ(tl.allocated.bytes, (std::vector<int64_t>{4000, 3000}));
    EXPECT_EQ(tl.peakAllocatedBytes, 4000);
    EXPECT_EQ(tl.peakAllocatedTimeNs, 2);
    EXPECT_EQ(tl.peakReservedBytes, 8192);
    EXPECT_EQ(tl.memoryEvents, 1u);
}

TEST(MemoryTimeline, MemoryEventSeriesMatchesTheTimelineLevel) {
    TraceData d;
    test::addMemory(d, 1, 0xa, 10, kAlloc, MemoryLevel::Reserved);
    test::addMemory(d, 2, 0xb, 20, kAlloc, MemoryLevel::Reserved);
    test::addMemory(d, 3, 0xa, 10, kFree, MemoryLevel::Reserved);
    int64_t lift = -1;
    uint64_t unmatched = 9;
    const auto s =
        memoryEventSeries(d, trace::DeviceIndex{0}, MemoryLevel::Reserved, &lift, &unmatched);
    EXPECT_EQ(s.bytes, (std::vector<int64_t>{10, 30, 20}));
    EXPECT_EQ(lift, 0);
    EXPECT_EQ(unmatched, 0u);
    EXPECT_TRUE(memoryEventSeries(d, trace::DeviceIndex{0}, MemoryLevel::Allocated).empty());
}

TEST(MemoryTimeline, EmptyTraceHasNoTimelines) {
    EXPECT_TRUE(buildMemoryTimelines(TraceData{}).empty());
}

}  // namespace
}  // namespace vramscope::analysis
