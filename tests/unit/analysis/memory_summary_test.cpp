#include "vramscope/analysis/memory/memory_summary.h"

#include <gtest/gtest.h>

#include "memory_events.h"

namespace vramscope::analysis {
namespace {

using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;
using trace::TraceData;

/// A summary with both levels known and the given peaks and capacity.
MemorySummary both(int64_t allocated, int64_t reserved, uint64_t capacity) {
    MemorySummary s;
    s.capacityBytes = capacity;
    s.hasAllocated = true;
    s.hasReserved = true;
    s.peakAllocatedBytes = allocated;
    s.peakAllocatedTimeNs = 100;
    s.peakReservedBytes = reserved;
    s.peakReservedTimeNs = 200;
    return s;
}

TEST(Unit, PeakBytesIsTheLargerOfBothLevelsWhenEitherLeads) {
    EXPECT_EQ(both(300, 512, 0).peakBytes(), 512);
    EXPECT_EQ(both(700, 512, 0).peakBytes(), 700);  // reserved curve starting late
    MemorySummary onlyAllocated;
    onlyAllocated.hasAllocated = true;
    onlyAllocated.peakAllocatedBytes = 42;
    EXPECT_EQ(onlyAllocated.peakBytes(), 42);
    EXPECT_EQ(MemorySummary{}.peakBytes(), 0);
}

TEST(Unit, PeakShareIsNulloptWhenCapacityIsZeroOrThereIsNoData) {
    EXPECT_FALSE(both(300, 512, 0).peakShare().has_value());
    MemorySummary noData;
    noData.capacityBytes = 1000;
    EXPECT_FALSE(noData.hasData());
    EXPECT_FALSE(noData.peakShare().has_value());
    EXPECT_FALSE(noData.nearCapacity());
    EXPECT_FALSE(both(900, 900, 0).nearCapacity());  // unknown share is never "near"
}

TEST(Unit, PeakShareIsPeakOverCapacityWhenBothAreKnown) {
    const auto share = both(256, 512, 2048).peakShare();
    ASSERT_TRUE(share.has_value());
    EXPECT_DOUBLE_EQ(*share, 0.25);  // 512 / 2048
    const auto whole = both(4096, 0, 4096).peakShare();
    ASSERT_TRUE(whole.has_value());
    EXPECT_DOUBLE_EQ(*whole, 1.0);
}

TEST(Unit, NearCapacityIsTrueAtExactlyEightyPercentAndFalseJustBelow) {
    EXPECT_DOUBLE_EQ(kCapacityWarningShare, 0.8);
    EXPECT_TRUE(both(0, 800, 1000).nearCapacity());   // 0.8 exactly
    EXPECT_TRUE(both(4, 0, 5).nearCapacity());        // 4 / 5 = 0.8 exactly
    EXPECT_FALSE(both(0, 799, 1000).nearCapacity());  // 0.799
    EXPECT_FALSE(both(0, 7999999, 10000000).nearCapacity());
    EXPECT_TRUE(both(0, 950, 1000).nearCapacity());
}

TEST(Unit, DetailPeakTimePrefersAllocatedOnlyWhenItHasDataAndAPositivePeak) {
    EXPECT_EQ(both(10, 20, 0).detailPeakTimeNs(), 100);
    // Allocated known but flat at zero: the reserved peak says more.
    EXPECT_EQ(both(0, 20, 0).detailPeakTimeNs(), 200);
    // A positive allocated peak without the level having data is not trusted.
    MemorySummary s = both(10, 20, 0);
    s.hasAllocated = false;
    EXPECT_EQ(s.detailPeakTimeNs(), 200);
    // No data at all: 0 whatever the stored times say.
    s.hasReserved = false;
    EXPECT_EQ(s.detailPeakTimeNs(), 0);
}

TEST(Unit, ShiftedMovesOnlyTheTimesOfKnownLevels) {
    MemorySummary s = both(10, 20, 1000);
    s.memoryEvents = 7;
    const MemorySummary moved = s.shifted(-50);
    EXPECT_EQ(moved.peakAllocatedTimeNs, 50);
    EXPECT_EQ(moved.peakReservedTimeNs, 150);
    EXPECT_EQ(moved.peakAllocatedBytes, 10);
    EXPECT_EQ(moved.peakReservedBytes, 20);
    EXPECT_EQ(moved.capacityBytes, 1000u);
    EXPECT_EQ(moved.memoryEvents, 7u);

    s.hasReserved = false;
    const MemorySummary allocatedOnly = s.shifted(1000);
    EXPECT_EQ(allocatedOnly.peakAllocatedTimeNs, 1100);
    EXPECT_EQ(allocatedOnly.peakReservedTimeNs, 200);  // unknown level: untouched

    s.hasAllocated = false;
    s.hasReserved = true;
    const MemorySummary reservedOnly = s.shifted(1000);
    EXPECT_EQ(reservedOnly.peakAllocatedTimeNs, 100);
    EXPECT_EQ(reservedOnly.peakReservedTimeNs, 1200);
}

TEST(Unit, SummarizeMemoryCopiesTheTimelinesPeaksWhenBuiltFromHandEvents) {
    TraceData d;
    d.header.devices.push_back({trace::DeviceIndex{0}, "GPU-x", "Test GPU", 10000});
    // Allocated: 300 at 10, 800 at 20, 300 at 30, 700 at 40 -> peak 800 first at 20.
    test::addMemory(d, 10, 0xa, 300, MemoryAction::Alloc, MemoryLevel::Allocated);
    test::addMemory(d, 20, 0xb, 500, MemoryAction::Alloc, MemoryLevel::Allocated);
    test::addMemory(d, 30, 0xb, 500, MemoryAction::Free, MemoryLevel::Allocated);
    test::addMemory(d, 40, 0xc, 400, MemoryAction::Alloc, MemoryLevel::Allocated);
    // Reserved: 1024 at 5, 2048 at 25 -> peak 2048 at 25.
    test::addMemory(d, 5, 0x100, 1024, MemoryAction::Alloc, MemoryLevel::Reserved,
                    trace::DeviceIndex{0}, trace::StackId{0}, MemoryKind::Device);
    test::addMemory(d, 25, 0x200, 1024, MemoryAction::Alloc, MemoryLevel::Reserved,
                    trace::DeviceIndex{0}, trace::StackId{0}, MemoryKind::Device);
    const auto tls = buildMemoryTimelines(d);
    ASSERT_EQ(tls.size(), 1u);
    const MemorySummary s = summarizeMemory(tls[0]);
    EXPECT_EQ(s.capacityBytes, 10000u);
    EXPECT_TRUE(s.hasAllocated);
    EXPECT_TRUE(s.hasReserved);
    EXPECT_EQ(s.peakAllocatedBytes, 800);
    EXPECT_EQ(s.peakAllocatedTimeNs, 20);
    EXPECT_EQ(s.peakReservedBytes, 2048);
    EXPECT_EQ(s.peakReservedTimeNs, 25);
    EXPECT_EQ(s.memoryEvents, 6u);
    EXPECT_EQ(s.peakBytes(), 2048);
    ASSERT_TRUE(s.peakShare().has_value());
    EXPECT_DOUBLE_EQ(*s.peakShare(), 0.2048);
    EXPECT_EQ(s.detailPeakTimeNs(), 20);
}

TEST(Unit, SummarizeMemoryReportsNoLevelWhenTheTimelineIsEmpty) {
    MemoryTimeline t;
    t.device = trace::DeviceIndex{3};
    t.capacityBytes = 80;
    const MemorySummary s = summarizeMemory(t);
    EXPECT_FALSE(s.hasAllocated);
    EXPECT_FALSE(s.hasReserved);
    EXPECT_FALSE(s.hasData());
    EXPECT_EQ(s.capacityBytes, 80u);
    EXPECT_FALSE(s.peakShare().has_value());
}

TEST(Unit, BytesInUseAtReadsReservedWhenItHasStepsElseAllocated) {
    const StepSeries allocated{{10, 20}, {100, 300}};
    const StepSeries reserved{{15}, {1024}};
    EXPECT_EQ(bytesInUseAt(allocated, reserved, 12), 0);  // before reserved's first step
    EXPECT_EQ(bytesInUseAt(allocated, reserved, 25), 1024);
    EXPECT_EQ(bytesInUseAt(allocated, StepSeries{}, 12), 100);
    EXPECT_EQ(bytesInUseAt(allocated, StepSeries{}, 25), 300);
    EXPECT_EQ(bytesInUseAt(StepSeries{}, StepSeries{}, 25), 0);
}

}  // namespace
}  // namespace vramscope::analysis
