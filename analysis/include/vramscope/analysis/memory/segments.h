#pragma once
// The reserved segments of a device at one moment: each segment with the allocator blocks alive
// inside it and the free gaps between them, and the totals that tell fragmentation from a real
// shortage (largest free block against free reserved bytes). Pure functions over plain data; what
// `report`'s OOM lines, `vramscope-cli segments` and the GUI's segment view show.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// An allocator block alive inside a segment.
struct SegmentBlock {
    uint32_t eventIndex = 0;  ///< its alloc event in TraceData::memory
    uint64_t address = 0;
    uint64_t sizeBytes = 0;  ///< as the trace records it (PyTorch: the requested size)
    trace::StackId stack{0};
};

/// A range of a segment that no live block covers.
struct SegmentGap {
    uint64_t address = 0;
    uint64_t sizeBytes = 0;
};

/// One reserved segment alive at the layout's time.
struct Segment {
    uint32_t eventIndex = 0;  ///< its alloc event in TraceData::memory (Reserved level)
    uint64_t address = 0;
    uint64_t sizeBytes = 0;  ///< see SegmentLayout on overlapping segments
    uint64_t stream = 0;
    std::vector<SegmentBlock> blocks;  ///< blocks whose first byte lies in it, by address
    std::vector<SegmentGap> gaps;      ///< by address; never joined across segments
    int64_t allocatedBytes = 0;        ///< bytes covered by live blocks = sizeBytes - freeBytes
    int64_t freeBytes = 0;             ///< sum of the gaps
    int64_t largestFreeBytes = 0;      ///< the largest gap, 0 when none
};

/// Totals over the segments of a layout. Bytes are signed for sums (allocationBytes).
struct SegmentTotals {
    size_t segments = 0;
    size_t blocks = 0;           ///< live blocks listed in a segment
    int64_t reservedBytes = 0;   ///< sum of the segments' sizes
    int64_t allocatedBytes = 0;  ///< sum of the segments' allocatedBytes
    int64_t freeBytes = 0;       ///< reservedBytes - allocatedBytes: the gaps together
    int64_t largestFreeBlockBytes = 0;
    /// 1 - largestFreeBlockBytes / freeBytes (docs/DESIGN.md "Metric definitions"): 0 when all
    /// free memory is one block, near 1 when it is scattered; -1 = unknown (freeBytes is 0).
    double fragmentation = -1.0;
    /// Live blocks whose first byte lies in no segment alive then (0 in a sound trace: the
    /// allocator carves every block out of a segment), and their bytes.
    size_t blocksOutsideSegments = 0;
    int64_t bytesOutsideSegments = 0;
    /// Blocks that run past an end of the segment they are listed in, or reach into a segment
    /// from outside it (a damaged trace).
    size_t straddlingBlocks = 0;
    /// Segments that begin inside the one before them (a damaged trace); see SegmentLayout.
    size_t overlappingSegments = 0;
};

/// The segments of one device at one time.
struct SegmentLayout {
    /// False when the trace cannot give the segments then; `reason` says why, as a sentence
    /// without the GPU's name ("the trace records no reserved segments with addresses: ...").
    bool known = false;
    std::string reason;
    trace::TimestampNs timeNs = 0;  ///< the time asked for, in the trace's clock
    std::vector<Segment> segments;  ///< by address
    SegmentTotals totals;
};

/// The layout at time t of the Reserved-level allocations of `segments` (cudaMalloc segments,
/// PyTorch segment_alloc and the segments alive before recording, with their addresses) and the
/// Allocated-level blocks of `blocks`, both alive at t as liveSetAt counts it (allocated at or
/// before t, not freed at or before t). Rules, each safe on any input:
/// - A block is listed in the segment that holds its first byte; a block whose first byte lies in
///   no segment is counted in blocksOutsideSegments and listed nowhere.
/// - A segment's gaps are its ranges that no live block covers, whichever segment the block is
///   listed in: a block running past its segment's end, or reaching into a segment from below,
///   covers what it overlaps (counted in straddlingBlocks). Gaps of two segments are never joined,
///   even when their addresses touch: the allocator cannot hand out a block across two segments.
/// - A segment that begins inside the one before it (by address) is clipped to begin at that one's
///   end (empty when it lies wholly inside), so no byte counts twice; counted in
///   overlappingSegments.
/// - Block sizes are those the trace records (PyTorch: the requested size), so a gap also holds
///   the allocator's rounding of the block before it (under 512 B per block in PyTorch).
/// Unknown (known = false, with the reason) when `segments` is not a Reserved index or `blocks`
/// not an Allocated one, when the device has no Reserved events (Kineto traces give the reserved
/// total as a counter, not its segments), when it has no Allocated events (CUPTI under PyTorch's
/// caching allocator sees the segments only, not the blocks in them), when no segment is alive
/// at t, or when an alive segment has no address (0). A time with segments but no live block is
/// known: every segment is free. Both indices must be built from `data`.
/// O(events of one checkpoint interval of each index + (S + B) log(S + B)) for S segments and B
/// blocks alive at t.
SegmentLayout segmentLayoutAt(const trace::TraceData& data, const AllocationIndex& segments,
                              const AllocationIndex& blocks, trace::TimestampNs t);

/// Positions in layout.segments, largest segment first (ties by address), at most `limit`
/// (0 = all): the order of the report's largest_segments and of the segment view.
std::vector<size_t> segmentsLargestFirst(const SegmentLayout& layout, size_t limit = 0);

/// A segment without its blocks and gaps, for the report.
struct SegmentRow {
    uint64_t address = 0;
    uint64_t sizeBytes = 0;
    int64_t allocatedBytes = 0;
    int64_t freeBytes = 0;
    int64_t largestFreeBytes = 0;
    size_t blocks = 0;
};

/// What the report keeps of a layout at an OOM: the totals and the largest segments.
struct SegmentOverview {
    bool known = false;
    std::string reason;  ///< why unknown; empty when known
    SegmentTotals totals;
    std::vector<SegmentRow> largest;  ///< segmentsLargestFirst order
};

/// The overview of `layout` with at most `limit` segments (the report shows 10).
SegmentOverview segmentOverview(const SegmentLayout& layout, size_t limit = 10);

/// One line on the free space against a request, from the totals, in three cases:
/// "largest free block 500 MiB < request 0.977 GiB (1048576000 B): 1.18 GiB was free inside the
/// 95 segments but in pieces (fragmentation 0.586), so no segment could hold it" (fragmentation);
/// "... < request ...: only 300 MiB was free inside the 95 segments (fragmentation 0.2), less than
/// the request: it needed a new segment"; "... >= request ...: a segment could have held it (...)".
/// `requestBytes` 0 = no request: "largest free block X, Y free inside the N segments
/// (fragmentation F)". The one wording of the report's, the CLI's and the GUI's segment figures;
/// bytes through formatBytes.
std::string segmentFreeText(const SegmentTotals& totals, uint64_t requestBytes);

/// "reserved 9.70 GiB in 95 segments, allocated 6.70 GiB, free 3.00 GiB, largest free block
/// 1000 MiB, fragmentation 0.67": the totals in one line (fragmentation "unknown" when nothing
/// is free).
std::string segmentTotalsText(const SegmentTotals& totals);

/// The blocks of a layout grouped by the label of their stack (stackLabel, leak.h: the first user
/// frame, else the leaf, "(no stack)"), for colouring and a legend.
struct SegmentBlockGroups {
    struct Group {
        std::string label;
        int64_t bytes = 0;  ///< sizes of its blocks together
        size_t blocks = 0;
    };
    std::vector<Group> groups;  ///< most bytes first (ties by label)
    /// groupOf[s][b]: the group of layout.segments[s].blocks[b].
    std::vector<std::vector<uint32_t>> groupOf;
};

/// Groups the blocks of `layout` (made from `data`) by stack label. O(B log B) for B blocks.
SegmentBlockGroups groupBlocksByStack(const trace::TraceData& data, const SegmentLayout& layout);

/// fragmentation as printed: three significant digits (formatSignificant), "unknown" below 0.
std::string fragmentationText(double fragmentation);

}  // namespace vramscope::analysis
