// The segment layout on hand-built segments and blocks; every figure is worked out by hand in the
// comments (addresses in hex, sizes in bytes).
#include "vramscope/analysis/memory/segments.h"

#include <gtest/gtest.h>

#include "memory_events.h"
#include "vramscope/analysis/memory/oom_diagnosis.h"

namespace vramscope::analysis {
namespace {

using trace::MemoryAction;
using trace::MemoryLevel;

constexpr auto kR = MemoryLevel::Reserved;
constexpr auto kA = MemoryLevel::Allocated;

using test::addDeviceMemory;

void alloc(trace::TraceData& d, int64_t t, uint64_t address, uint64_t size, MemoryLevel level) {
    addDeviceMemory(d, t, address, size, MemoryAction::Alloc, level);
}

SegmentLayout layoutAt(const trace::TraceData& d, trace::TimestampNs t) {
    const AllocationIndex segments(d, trace::DeviceIndex{0}, kR);
    const AllocationIndex blocks(d, trace::DeviceIndex{0}, kA);
    return segmentLayoutAt(d, segments, blocks, t);
}

/// Four segments alive at t = 10:
///   S1 [0x1000, +256): blocks [0x1010, +32) and [0x1040, +64); gaps 16 at the start
///      (0x1000..0x1010), 16 in the middle (0x1030..0x1040), 128 at the end (0x1080..0x1100).
///   S2 [0x2000, +128) and S3 [0x2080, +128) touch: S2 holds [0x2000, +64), gap 64 at its end;
///      S3 holds [0x20c0, +64), gap 64 at its start. Joined they would be 128: they must not be.
///   S4 [0x3000, +96): empty, one gap of 96.
/// Besides: a block [0x5000, +16) outside every segment, a block of S1 freed before t, a block
/// allocated after t, and a segment freed before t.
trace::TraceData handBuilt() {
    trace::TraceData d;
    addDeviceMemory(d, 1, 0x1000, 256, MemoryAction::Alloc, kR, 7);
    alloc(d, 1, 0x2000, 128, kR);
    alloc(d, 1, 0x2080, 128, kR);
    alloc(d, 1, 0x3000, 96, kR);
    alloc(d, 1, 0x4000, 256, kR);
    addDeviceMemory(d, 5, 0x4000, 256, MemoryAction::Free, kR);
    alloc(d, 2, 0x1040, 64, kA);
    alloc(d, 2, 0x1010, 32, kA);
    alloc(d, 2, 0x1080, 16, kA);
    addDeviceMemory(d, 3, 0x1080, 16, MemoryAction::Free, kA);
    alloc(d, 4, 0x2000, 64, kA);
    alloc(d, 4, 0x20c0, 64, kA);
    alloc(d, 4, 0x5000, 16, kA);
    alloc(d, 20, 0x3000, 96, kA);
    return d;
}

TEST(SegmentLayout, GivesEverySegmentWithItsBlocksAndGaps) {
    const trace::TraceData d = handBuilt();
    const SegmentLayout l = layoutAt(d, 10);
    ASSERT_TRUE(l.known) << l.reason;
    EXPECT_EQ(l.timeNs, 10);
    ASSERT_EQ(l.segments.size(), 4u);

    const Segment& s1 = l.segments[0];
    EXPECT_EQ(s1.address, 0x1000u);
    EXPECT_EQ(s1.sizeBytes, 256u);
    EXPECT_EQ(s1.stream, 7u);
    EXPECT_EQ(s1.eventIndex, 0u);
    ASSERT_EQ(s1.blocks.size(), 2u);
    // By address, though the block at 0x1040 was allocated first; event 7 is [0x1010, +32).
    EXPECT_EQ(s1.blocks[0].address, 0x1010u);
    EXPECT_EQ(s1.blocks[0].sizeBytes, 32u);
    EXPECT_EQ(s1.blocks[0].eventIndex, 7u);
    EXPECT_EQ(s1.blocks[1].address, 0x1040u);
    EXPECT_EQ(s1.blocks[1].eventIndex, 6u);
    ASSERT_EQ(s1.gaps.size(), 3u);
    EXPECT_EQ(s1.gaps[0].address, 0x1000u);
    EXPECT_EQ(s1.gaps[0].sizeBytes, 16u);
    EXPECT_EQ(s1.gaps[1].address, 0x1030u);
    EXPECT_EQ(s1.gaps[1].sizeBytes, 16u);
    EXPECT_EQ(s1.gaps[2].address, 0x1080u);
    EXPECT_EQ(s1.gaps[2].sizeBytes, 128u);
    EXPECT_EQ(s1.allocatedBytes, 96);
    EXPECT_EQ(s1.freeBytes, 160);
    EXPECT_EQ(s1.largestFreeBytes, 128);

    const Segment& s2 = l.segments[1];
    const Segment& s3 = l.segments[2];
    ASSERT_EQ(s2.gaps.size(), 1u);
    EXPECT_EQ(s2.gaps[0].address, 0x2040u);
    EXPECT_EQ(s2.gaps[0].sizeBytes, 64u);
    ASSERT_EQ(s3.gaps.size(), 1u);
    EXPECT_EQ(s3.gaps[0].address, 0x2080u);
    EXPECT_EQ(s3.gaps[0].sizeBytes, 64u);
    EXPECT_EQ(s2.largestFreeBytes, 64);
    EXPECT_EQ(s3.largestFreeBytes, 64);

    const Segment& s4 = l.segments[3];
    EXPECT_TRUE(s4.blocks.empty());
    ASSERT_EQ(s4.gaps.size(), 1u);
    EXPECT_EQ(s4.gaps[0].sizeBytes, 96u);
    EXPECT_EQ(s4.allocatedBytes, 0);
}

TEST(SegmentLayout, TotalsAndFragmentationByHand) {
    const SegmentTotals t = layoutAt(handBuilt(), 10).totals;
    EXPECT_EQ(t.segments, 4u);
    EXPECT_EQ(t.blocks, 4u);
    EXPECT_EQ(t.reservedBytes, 256 + 128 + 128 + 96);        // 608
    EXPECT_EQ(t.allocatedBytes, 96 + 64 + 64 + 0);           // 224
    EXPECT_EQ(t.freeBytes, 160 + 64 + 64 + 96);              // 384
    EXPECT_EQ(t.largestFreeBlockBytes, 128);                 // S1's end, not S2 + S3 joined
    EXPECT_DOUBLE_EQ(t.fragmentation, 1.0 - 128.0 / 384.0);  // 0.667
    EXPECT_EQ(t.blocksOutsideSegments, 1u);
    EXPECT_EQ(t.bytesOutsideSegments, 16);
    EXPECT_EQ(t.straddlingBlocks, 0u);
    EXPECT_EQ(t.overlappingSegments, 0u);
}

TEST(SegmentLayout, FreeSpaceOfTheOomDiagnosisIsItsTotals) {
    const trace::TraceData d = handBuilt();
    const AllocationIndex segments(d, trace::DeviceIndex{0}, kR);
    const AllocationIndex blocks(d, trace::DeviceIndex{0}, kA);
    const SegmentFreeSpace s = segmentFreeSpaceAt(d, segments, blocks, 10);
    EXPECT_EQ(s.segments, 4u);
    EXPECT_EQ(s.largestFreeBlockBytes, 128);
    EXPECT_EQ(s.freeBytes, 384);
}

TEST(SegmentLayout, LargestFirstOrderAndOverview) {
    const SegmentLayout l = layoutAt(handBuilt(), 10);
    // Sizes 256, 128 (0x2000), 128 (0x2080), 96: ties keep address order.
    EXPECT_EQ(segmentsLargestFirst(l), (std::vector<size_t>{0, 1, 2, 3}));
    EXPECT_EQ(segmentsLargestFirst(l, 2), (std::vector<size_t>{0, 1}));
    const SegmentOverview o = segmentOverview(l, 3);
    ASSERT_TRUE(o.known);
    ASSERT_EQ(o.largest.size(), 3u);
    EXPECT_EQ(o.largest[0].address, 0x1000u);
    EXPECT_EQ(o.largest[0].allocatedBytes, 96);
    EXPECT_EQ(o.largest[0].largestFreeBytes, 128);
    EXPECT_EQ(o.largest[0].blocks, 2u);
    EXPECT_EQ(o.largest[2].address, 0x2080u);
}

TEST(SegmentLayout, BlockRunningPastItsSegmentCoversTheNextOne) {
    trace::TraceData d;
    // A [0x1000, +256) and B [0x1100, +256) touch; the block [0x10f0, +32) starts in A and runs
    // 16 B into B: A's gap 0x1000..0x10f0 = 240, B's gap 0x1110..0x1200 = 240.
    alloc(d, 1, 0x1000, 256, kR);
    alloc(d, 1, 0x1100, 256, kR);
    alloc(d, 2, 0x10f0, 32, kA);
    const SegmentLayout l = layoutAt(d, 5);
    ASSERT_TRUE(l.known);
    ASSERT_EQ(l.segments.size(), 2u);
    EXPECT_EQ(l.segments[0].blocks.size(), 1u);
    EXPECT_TRUE(l.segments[1].blocks.empty());
    EXPECT_EQ(l.segments[0].freeBytes, 240);
    EXPECT_EQ(l.segments[1].freeBytes, 240);
    EXPECT_EQ(l.segments[1].gaps.at(0).address, 0x1110u);
    EXPECT_EQ(l.totals.allocatedBytes, 32);
    EXPECT_EQ(l.totals.straddlingBlocks, 1u);
    EXPECT_EQ(l.totals.blocksOutsideSegments, 0u);
}

TEST(SegmentLayout, BlockReachingInFromBelowIsOutsideButCoversWhatItOverlaps) {
    trace::TraceData d;
    // Segment [0x1000, +256); a block [0xf00, +0x110) ends at 0x1010, and a short block
    // [0xf10, +16) lies between it and the segment: the long one still covers 0x1000..0x1010.
    alloc(d, 1, 0x1000, 256, kR);
    alloc(d, 2, 0xf00, 0x110, kA);
    alloc(d, 2, 0xf10, 16, kA);
    const SegmentLayout l = layoutAt(d, 5);
    ASSERT_TRUE(l.known);
    EXPECT_EQ(l.segments[0].freeBytes, 256 - 16);
    EXPECT_EQ(l.segments[0].gaps.at(0).address, 0x1010u);
    EXPECT_EQ(l.totals.blocksOutsideSegments, 2u);
    EXPECT_EQ(l.totals.bytesOutsideSegments, 0x110 + 16);
    EXPECT_EQ(l.totals.straddlingBlocks, 1u);
}

TEST(SegmentLayout, OverlappingSegmentsAreClippedSoNoByteCountsTwice) {
    trace::TraceData d;
    // C [0x8000, +256); E [0x8010, +16) lies inside C (clipped to nothing); D [0x8080, +256)
    // begins inside C and is clipped to [0x8100, 0x8180), 128 B. Reserved 256 + 0 + 128.
    alloc(d, 1, 0x8000, 256, kR);
    alloc(d, 1, 0x8010, 16, kR);
    alloc(d, 1, 0x8080, 256, kR);
    alloc(d, 2, 0x8100, 64, kA);  // first byte in the clipped D
    const SegmentLayout l = layoutAt(d, 5);
    ASSERT_TRUE(l.known);
    ASSERT_EQ(l.segments.size(), 3u);
    EXPECT_EQ(l.totals.overlappingSegments, 2u);
    EXPECT_EQ(l.segments[1].sizeBytes, 0u);
    EXPECT_EQ(l.segments[2].address, 0x8100u);
    EXPECT_EQ(l.segments[2].sizeBytes, 128u);
    EXPECT_EQ(l.segments[2].blocks.size(), 1u);
    EXPECT_EQ(l.totals.reservedBytes, 384);
    EXPECT_EQ(l.totals.freeBytes, 256 + 64);
    EXPECT_EQ(l.totals.largestFreeBlockBytes, 256);
}

TEST(SegmentLayout, FragmentationIsUnknownWhenNothingIsFree) {
    trace::TraceData d;
    alloc(d, 1, 0x1000, 256, kR);
    alloc(d, 2, 0x1000, 256, kA);
    const SegmentLayout l = layoutAt(d, 5);
    ASSERT_TRUE(l.known);
    EXPECT_EQ(l.totals.freeBytes, 0);
    EXPECT_LT(l.totals.fragmentation, 0.0);
    EXPECT_EQ(fragmentationText(l.totals.fragmentation), "unknown");
    // Before the block: all free in one block, fragmentation 0.
    const SegmentLayout before = layoutAt(d, 1);
    ASSERT_TRUE(before.known) << before.reason;
    EXPECT_EQ(before.totals.freeBytes, 256);
    EXPECT_DOUBLE_EQ(before.totals.fragmentation, 0.0);
}

TEST(SegmentLayout, UnknownWithAReasonWhenTheTraceCannotGiveIt) {
    trace::TraceData segmentsOnly;
    alloc(segmentsOnly, 1, 0x1000, 256, kR);
    const SegmentLayout noBlocks = layoutAt(segmentsOnly, 5);
    EXPECT_FALSE(noBlocks.known);
    EXPECT_NE(noBlocks.reason.find("blocks"), std::string::npos) << noBlocks.reason;

    trace::TraceData blocksOnly;
    alloc(blocksOnly, 1, 0x1000, 256, kA);
    const SegmentLayout noSegments = layoutAt(blocksOnly, 5);
    EXPECT_FALSE(noSegments.known);
    EXPECT_NE(noSegments.reason.find("segments"), std::string::npos) << noSegments.reason;

    trace::TraceData d = handBuilt();
    EXPECT_FALSE(layoutAt(d, 0).known);  // before the first segment
    const AllocationIndex segments(d, trace::DeviceIndex{0}, kR);
    const AllocationIndex blocks(d, trace::DeviceIndex{0}, kA);
    EXPECT_FALSE(segmentLayoutAt(d, blocks, segments, 10).known);  // levels swapped

    trace::TraceData noAddress;
    alloc(noAddress, 1, 0, 256, kR);
    alloc(noAddress, 2, 0x10, 16, kA);
    EXPECT_FALSE(layoutAt(noAddress, 5).known);
}

TEST(SegmentBlockGroups, GroupsTheBlocksByStackLabelMostBytesFirst) {
    trace::TraceData d = handBuilt();
    const trace::FrameId f = d.internFrame({d.intern("forward"), d.intern("/job/train.py"), 12});
    const trace::StackId stack = d.internStack({f});
    // The blocks at 0x1010 (32 B, event 7) and 0x20c0 (64 B, event 11) get the stack; 0x1040
    // (64 B) and 0x2000 (64 B) keep none: "(no stack)" 128 B first, then the stack's 96 B.
    d.memory.stack[7] = stack;
    d.memory.stack[11] = stack;
    const SegmentLayout l = layoutAt(d, 10);
    const SegmentBlockGroups g = groupBlocksByStack(d, l);
    ASSERT_EQ(g.groups.size(), 2u);
    EXPECT_EQ(g.groups[0].label, "(no stack)");
    EXPECT_EQ(g.groups[0].bytes, 128);
    EXPECT_EQ(g.groups[0].blocks, 2u);
    EXPECT_NE(g.groups[1].label.find("forward"), std::string::npos) << g.groups[1].label;
    EXPECT_EQ(g.groups[1].bytes, 96);
    ASSERT_EQ(g.groupOf.size(), 4u);
    EXPECT_EQ(g.groupOf[0], (std::vector<uint32_t>{1, 0}));  // S1: 0x1010, 0x1040
    EXPECT_EQ(g.groupOf[1], (std::vector<uint32_t>{0}));     // S2: 0x2000
    EXPECT_EQ(g.groupOf[2], (std::vector<uint32_t>{1}));     // S3: 0x20c0
    EXPECT_TRUE(g.groupOf[3].empty());
}

TEST(SegmentFreeText, ComparesTheLargestFreeBlockWithTheRequest) {
    SegmentTotals t;
    t.segments = 2;
    t.freeBytes = 3 << 20;
    t.largestFreeBlockBytes = 1 << 20;
    t.fragmentation = 1.0 - 1.0 / 3.0;
    // 1 MiB < 2 MiB <= 3 MiB free: fragmentation.
    EXPECT_EQ(segmentFreeText(t, 2 << 20),
              "largest free block 1.00 MiB < request 2.00 MiB (2097152 B): 3.00 MiB was free "
              "inside the 2 segments but in pieces (fragmentation 0.667), so no segment could "
              "hold it");
    EXPECT_EQ(segmentFreeText(t, 8 << 20),
              "largest free block 1.00 MiB < request 8.00 MiB (8388608 B): only 3.00 MiB was "
              "free inside the 2 segments (fragmentation 0.667), less than the request: it "
              "needed a new segment");
    EXPECT_EQ(segmentFreeText(t, 1 << 20),
              "largest free block 1.00 MiB >= request 1.00 MiB (1048576 B): a segment could have "
              "held it (3.00 MiB free inside the 2 segments, fragmentation 0.667)");
    EXPECT_EQ(segmentFreeText(t, 0),
              "largest free block 1.00 MiB, 3.00 MiB free inside the 2 segments (fragmentation "
              "0.667)");
}

}  // namespace
}  // namespace vramscope::analysis
