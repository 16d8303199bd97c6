// The cause of an OOM and the free space inside the segments, on hand-built cases whose numbers
// are worked out in the comments.
#include "vramscope/analysis/memory/oom_diagnosis.h"

#include <gtest/gtest.h>

#include "memory_events.h"
#include "test_units.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {
namespace {

using trace::MemoryAction;
using trace::MemoryLevel;

using testdata::kGiB;

using test::addDeviceMemory;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(SegmentFreeSpace, IsTheLongestUncoveredRangeOfOneSegment) {
    trace::TraceData d;
    const auto R = MemoryLevel::Reserved, A = MemoryLevel::Allocated;
    // Segment 1: [0x1000, 0x1064), 100 B; segment 2: [0x2000, 0x20c8), 200 B.
    addDeviceMemory(d, 1, 0x1000, 100, MemoryAction::Alloc, R);
    addDeviceMemory(d, 1, 0x2000, 200, MemoryAction::Alloc, R);
    // Segment 1 holds [0x1000, +30) and [0x1040, +20): free 0x101e..0x1040 = 34 B and
    // 0x1054..0x1064 = 16 B.
    addDeviceMemory(d, 2, 0x1000, 30, MemoryAction::Alloc, A);
    addDeviceMemory(d, 2, 0x1040, 20, MemoryAction::Alloc, A);
    // Segment 2 holds [0x2050, +50): free 0x50 = 80 B before it and 200 - 130 = 70 B after;
    // a block freed before t frees its range.
    addDeviceMemory(d, 2, 0x2000, 16, MemoryAction::Alloc, A);
    addDeviceMemory(d, 3, 0x2000, 16, MemoryAction::Free, A);
    addDeviceMemory(d, 3, 0x2050, 50, MemoryAction::Alloc, A);
    // Two empty segments whose addresses touch, [0x3000, +64) and [0x3040, +64): 64 B each, never
    // one 128 B block.
    addDeviceMemory(d, 4, 0x3000, 64, MemoryAction::Alloc, R);
    addDeviceMemory(d, 4, 0x3040, 64, MemoryAction::Alloc, R);
    // Allocated after t: not counted.
    addDeviceMemory(d, 20, 0x2000, 80, MemoryAction::Alloc, A);
    const AllocationIndex segments(d, trace::DeviceIndex{0}, R);
    const AllocationIndex blocks(d, trace::DeviceIndex{0}, A);
    const SegmentFreeSpace s = segmentFreeSpaceAt(d, segments, blocks, 10);
    EXPECT_EQ(s.segments, 4u);
    EXPECT_EQ(s.largestFreeBlockBytes, 80);
    EXPECT_EQ(s.freeBytes, 34 + 16 + 80 + 70 + 64 + 64);
    // The levels swapped, or no segment alive yet: unknown.
    EXPECT_EQ(segmentFreeSpaceAt(d, blocks, segments, 10).largestFreeBlockBytes, -1);
    EXPECT_EQ(segmentFreeSpaceAt(d, segments, blocks, 0).largestFreeBlockBytes, -1);
}

OomFacts oom(int64_t requested, int64_t allocated, int64_t reserved, int64_t largestFree) {
    OomFacts o;
    o.requestedBytes = uint64_t(requested);
    o.allocatedBytes = allocated;
    o.reservedBytes = reserved;
    o.largestFreeBlockBytes = largestFree;
    return o;
}

TEST(OomDiagnosis, FragmentationWhenNoFreeBlockIsLargeEnoughButFreeReservedIs) {
    // 80 GiB device, 78 GiB reserved, 70 GiB allocated: 8 GiB free in the segments, the largest
    // block 1 GiB, the request 2 GiB; reserved + request = 80 GiB = 100 % (no limit below).
    const OomDiagnosis d = diagnoseOom(oom(2 * kGiB, 70 * kGiB, 78 * kGiB, kGiB), 80ull << 30);
    EXPECT_EQ(d.cause, OomCause::Fragmentation) << d.explanation;
    EXPECT_TRUE(d.fragmented);
    EXPECT_TRUE(contains(d.explanation, formatBytes(double(8 * kGiB)))) << d.explanation;
    EXPECT_TRUE(contains(d.explanation, formatBytes(double(kGiB)))) << d.explanation;
    EXPECT_TRUE(contains(d.explanation, "expandable_segments")) << d.explanation;
    EXPECT_STREQ(toString(d.cause), "fragmentation");
}

TEST(OomDiagnosis, DeviceFullWhenReservedAndRequestReachTheCapacity) {
    // 76 GiB reserved + 6 GiB request = 82 GiB of 80 GiB (102.5 %); 0.5 GiB free in the segments
    // is less than the request: not fragmentation.
    const OomDiagnosis d =
        diagnoseOom(oom(6 * kGiB, 75 * kGiB + kGiB / 2, 76 * kGiB, kGiB / 2), 80ull << 30);
    EXPECT_EQ(d.cause, OomCause::DeviceFull) << d.explanation;
    EXPECT_FALSE(d.fragmented);
    EXPECT_TRUE(contains(d.explanation, formatBytes(double(82 * kGiB)))) << d.explanation;
    EXPECT_TRUE(contains(d.explanation, formatPercent(82.0 / 80.0))) << d.explanation;
    // Without a capacity, the device's own free bytes below the request say the same.
    OomFacts o = oom(kGiB, -1, -1, -1);
    o.freeBytes = 100ull << 20;
    EXPECT_EQ(diagnoseOom(o, 0).cause, OomCause::DeviceFull);
}

TEST(OomDiagnosis, LimitBelowTheDeviceWhenReservedAndRequestAreFarBelowCapacity) {
    // 10 GiB reserved + 1 GiB request = 11 GiB = 13.75 % of 80 GiB.
    const OomDiagnosis d = diagnoseOom(oom(kGiB, 9 * kGiB, 10 * kGiB, -1), 80ull << 30);
    EXPECT_EQ(d.cause, OomCause::LimitBelowDevice) << d.explanation;
    EXPECT_TRUE(contains(d.explanation, formatBytes(double(11 * kGiB)))) << d.explanation;
    EXPECT_TRUE(contains(d.explanation, formatPercent(11.0 / 80.0))) << d.explanation;
    EXPECT_TRUE(contains(d.explanation, "MIG slice")) << d.explanation;
    // 90 % is the boundary: 71 GiB + 1 GiB = 72 GiB = 90 % still reads as a limit, 73 GiB not.
    EXPECT_EQ(diagnoseOom(oom(kGiB, 0, 71 * kGiB, -1), 80ull << 30).cause,
              OomCause::LimitBelowDevice);
    EXPECT_EQ(diagnoseOom(oom(kGiB, 0, 72 * kGiB, -1), 80ull << 30).cause, OomCause::DeviceFull);
}

TEST(OomDiagnosis, LimitBelowTheDeviceWhenTheDeviceReportedRoom) {
    // No capacity, but the producer's free bytes (129 GiB) exceed the 1000 MiB request; the
    // fragmentation seen beside it is named too.
    OomFacts o = oom(1000ll << 20, 9 * kGiB, 10 * kGiB, 500ll << 20);
    o.freeBytes = 129ull << 30;
    const OomDiagnosis d = diagnoseOom(o, 0);
    EXPECT_EQ(d.cause, OomCause::LimitBelowDevice) << d.explanation;
    EXPECT_TRUE(d.fragmented);
    EXPECT_TRUE(contains(d.explanation, formatBytes(double(129ull << 30)))) << d.explanation;
    EXPECT_TRUE(contains(d.explanation, "Also")) << d.explanation;
}

TEST(OomDiagnosis, UnknownWhenNothingSaysWhatWasFull) {
    const OomDiagnosis d = diagnoseOom(oom(kGiB, 9 * kGiB, 10 * kGiB, -1), 0);
    EXPECT_EQ(d.cause, OomCause::Unknown) << d.explanation;
    EXPECT_TRUE(contains(d.explanation, "unknown")) << d.explanation;
}

}  // namespace
}  // namespace vramscope::analysis
