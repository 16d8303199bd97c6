#include "vramscope/analysis/memory/live_set.h"

#include <gtest/gtest.h>

#include "memory_events.h"

#include "vramscope/analysis/memory/memory_timeline.h"

namespace vramscope::analysis {
namespace {

using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;
using trace::TraceData;

using test::kAlloc;
using test::kFree;

TraceData sample() {
    TraceData d;
    test::addMemory(d, 10, 0x100, 64, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{0},
                    trace::StackId{1});
    test::addMemory(d, 20, 0x200, 256, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{0},
                    trace::StackId{2});
    test::addMemory(d, 30, 0x300, 64, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{0},
                    trace::StackId{3});
    test::addMemory(d, 40, 0x200, 256, kFree);
    test::addMemory(d, 50, 0x200, 128, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{0},
                    trace::StackId{4});                                  // address reused
    test::addMemory(d, 60, 0x999, 32, kFree);                            // never allocated: ignored
    test::addMemory(d, 25, 0x400, 4096, kAlloc, MemoryLevel::Reserved);  // other level
    test::addMemory(d, 25, 0x500, 4096, kAlloc, MemoryLevel::Allocated,
                    trace::DeviceIndex{1});  // other device
    test::addMemory(d, 5, 0x600, 15, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{0},
                    trace::StackId{0}, MemoryKind::DeviceStatic);
    return d;
}

TEST(LiveSet, HoldsAllocationsAllocatedAndNotYetFreedSortedBySizeThenAddress) {
    const TraceData d = sample();
    const auto live = liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Allocated, 35);
    ASSERT_EQ(live.size(), 3u);
    EXPECT_EQ(live[0].address, 0x200u);
    EXPECT_EQ(live[0].sizeBytes, 256u);
    EXPECT_EQ(live[0].allocTimeNs, 20);
    EXPECT_EQ(live[0].stack, trace::StackId{2});
    EXPECT_EQ(live[0].eventIndex, 1u);
    EXPECT_EQ(live[1].address, 0x100u);  // equal sizes: lower address first
    EXPECT_EQ(live[2].address, 0x300u);
}

TEST(LiveSet, EventsAtTheQueriedTimeAreApplied) {
    const TraceData d = sample();
    EXPECT_EQ(liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Allocated, 9).size(), 0u);
    EXPECT_EQ(liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Allocated, 10).size(), 1u);
    const auto afterFree = liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Allocated, 40);
    ASSERT_EQ(afterFree.size(), 2u);
    EXPECT_EQ(afterFree[0].sizeBytes, 64u);
}

TEST(LiveSet, ReusedAddressIsANewAllocationAndUnknownFreesAreIgnored) {
    const TraceData d = sample();
    const auto live = liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Allocated, 1000);
    ASSERT_EQ(live.size(), 3u);
    EXPECT_EQ(live[0].address, 0x200u);
    EXPECT_EQ(live[0].sizeBytes, 128u);
    EXPECT_EQ(live[0].allocTimeNs, 50);
    EXPECT_EQ(live[0].stack, trace::StackId{4});
    EXPECT_EQ(live[0].eventIndex, 4u);
}

TEST(LiveSet, LevelsAndDevicesAreSeparate) {
    const TraceData d = sample();
    const auto reserved = liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Reserved, 1000);
    ASSERT_EQ(reserved.size(), 1u);
    EXPECT_EQ(reserved[0].address, 0x400u);
    const auto dev1 = liveSetAt(d, trace::DeviceIndex{1}, MemoryLevel::Allocated, 1000);
    ASSERT_EQ(dev1.size(), 1u);
    EXPECT_EQ(dev1[0].address, 0x500u);
    EXPECT_TRUE(liveSetAt(d, trace::DeviceIndex{7}, MemoryLevel::Allocated, 1000).empty());
}

TEST(LiveSet, SumsToTheTimelineValueAtAnyTime) {
    const TraceData d = sample();
    const auto tls = buildMemoryTimelines(d);
    ASSERT_FALSE(tls.empty());
    ASSERT_EQ(tls[0].device, trace::DeviceIndex{0});
    // Up to the free of an unknown address at 60, which the timeline subtracts and the live set
    // cannot place.
    for (TimestampNs t = 0; t < 60; t += 5) {
        uint64_t sum = 0;
        for (const auto& a : liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Allocated, t)) {
            sum += a.sizeBytes;
        }
        EXPECT_EQ(static_cast<int64_t>(sum), tls[0].allocated.valueAt(t)) << "t=" << t;
    }
}

TEST(LiveSet, UnsortedEventsAreReplayedInTimeOrder) {
    TraceData d;
    test::addMemory(d, 30, 0x1, 10, kFree);
    test::addMemory(d, 10, 0x1, 10, kAlloc);
    EXPECT_EQ(liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Allocated, 20).size(), 1u);
    EXPECT_TRUE(liveSetAt(d, trace::DeviceIndex{0}, MemoryLevel::Allocated, 30).empty());
}

TEST(DetailLevel, IsAllocatedWhenTheDeviceHasAllocatedEventsElseReserved) {
    const TraceData d = sample();
    EXPECT_EQ(detailLevel(d, trace::DeviceIndex{0}), MemoryLevel::Allocated);
    TraceData r;
    test::addMemory(r, 1, 0x1, 10, kAlloc, MemoryLevel::Reserved);
    test::addMemory(r, 1, 0x1, 10, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{1});
    EXPECT_EQ(detailLevel(r, trace::DeviceIndex{0}), MemoryLevel::Reserved);
    EXPECT_EQ(detailLevel(r, trace::DeviceIndex{1}), MemoryLevel::Allocated);
    EXPECT_EQ(detailLevel(TraceData{}, trace::DeviceIndex{0}), MemoryLevel::Reserved);
}

TEST(LiveSetEvidence, IsKnownWhenEveryAllocationHasAnAddress) {
    const TraceData d = sample();
    // Device 0, allocated level: allocations at 0x100, 0x200, 0x300, 0x200 again and the
    // DeviceStatic one at 0x600 (frees do not count).
    const LiveSetEvidence e = liveSetEvidence(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    EXPECT_TRUE(e.known);
    EXPECT_EQ(e.allocations, 5u);
    EXPECT_EQ(e.allocationsWithoutAddress, 0u);
    EXPECT_TRUE(e.reason.empty());
    EXPECT_TRUE(liveSetEvidence(d, trace::DeviceIndex{0}, MemoryLevel::Reserved).known);
}

TEST(LiveSetEvidence, IsUnknownWhenAllocationsCarryNoAddress) {
    TraceData d;
    // As the Kineto importer writes an old trace: memory before the trace as PreExisting at
    // address 0 (not counted), then allocations and frees without addresses.
    test::addMemory(d, 1, 0, 1000, kAlloc, MemoryLevel::Allocated, trace::DeviceIndex{0},
                    trace::StackId{0}, MemoryKind::PreExisting);
    test::addMemory(d, 10, 0, 64, kAlloc);
    test::addMemory(d, 20, 0, 32, kAlloc);
    test::addMemory(d, 30, 0, 64, kFree);
    test::addMemory(d, 40, 0x700, 16, kAlloc);
    const LiveSetEvidence e = liveSetEvidence(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    EXPECT_FALSE(e.known);
    EXPECT_EQ(e.allocations, 3u);
    EXPECT_EQ(e.allocationsWithoutAddress, 2u);
    EXPECT_NE(e.reason.find("2 of its 3 allocations carry no address"), std::string::npos)
        << e.reason;
}

TEST(LiveSetEvidence, IsUnknownWithoutAllocationEvents) {
    const TraceData d = sample();
    const LiveSetEvidence e = liveSetEvidence(d, trace::DeviceIndex{2}, MemoryLevel::Allocated);
    EXPECT_FALSE(e.known);
    EXPECT_EQ(e.allocations, 0u);
    EXPECT_NE(e.reason.find("no allocations"), std::string::npos) << e.reason;
}

}  // namespace
}  // namespace vramscope::analysis
