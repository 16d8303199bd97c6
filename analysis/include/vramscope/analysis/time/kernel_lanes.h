#pragma once
// Kernels of one device in start order, answering "what ran in this time window" for a lane of a
// timeline, with kernels closer together than a pixel merged into one block.

#include <array>
#include <cstdint>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// The three rows of a kernel lane: compute kernels, communication (NCCL / RCCL) kernels, and
/// memory operations (memcpy and memset).
enum class LaneClass : uint8_t { Compute = 0, Communication = 1, Memory = 2 };
inline constexpr size_t kLaneClassCount = 3;
LaneClass laneClassOf(trace::KernelCategory category);
const char* toString(LaneClass laneClass);

/// Kernels merged for drawing: [startNs, endNs) covers them all (ns, the trace's clock).
struct LaneBlock {
    trace::TimestampNs startNs = 0;
    trace::TimestampNs endNs = 0;
    uint32_t kernels = 0;        ///< kernels merged into the block
    uint32_t longestKernel = 0;  ///< index into TraceData::kernels of the longest one
    int64_t busyNs = 0;  ///< summed kernel durations (may exceed the width when they overlap)
};

/// What a window of one device shows: blocks per LaneClass and, in `busy`, the blocks of all
/// kernels together (the complement of `busy` inside the window is idle time).
struct LaneBlocks {
    std::array<std::vector<LaneBlock>, kLaneClassCount> byClass;
    std::vector<LaneBlock> busy;
};

/// Immutable index of one device's kernels (copies, memsets included) sorted by start, holding
/// copies of their start, end and class so that queries do not need the trace. Thread-safe for
/// concurrent const queries. Kernels with end < start are left out.
class KernelLaneIndex {
public:
    KernelLaneIndex() = default;
    KernelLaneIndex(const trace::TraceData& data, trace::DeviceIndex device);

    trace::DeviceIndex device() const { return m_device; }
    size_t size() const { return m_kernel.size(); }
    bool empty() const { return m_kernel.empty(); }
    /// Start of the first kernel and the latest end, ns; 0 when empty.
    trace::TimestampNs firstStartNs() const { return m_start.empty() ? 0 : m_start.front(); }
    trace::TimestampNs lastEndNs() const { return m_maxEnd.empty() ? 0 : m_maxEnd.back(); }

    /// The kernels that overlap [t0, t1) (start < t1 and end > t0; a zero-length kernel at t0
    /// counts), merged per class: a kernel joins the current block of its class when it starts no
    /// later than mergeNs after the block's end (mergeNs = the duration of one pixel makes every
    /// sub-pixel gap disappear, as it would on screen). Blocks are in start order and not clipped
    /// to the window. Cost: O(log n + kernels in the window).
    LaneBlocks blocks(trace::TimestampNs t0, trace::TimestampNs t1, int64_t mergeNs) const;

    /// Index into TraceData::kernels of a kernel of class `laneClass` running at time t (the one
    /// that started last), or -1.
    int64_t kernelAt(trace::TimestampNs t, LaneClass laneClass) const;

private:
    size_t firstOverlapping(trace::TimestampNs t0) const;

    trace::DeviceIndex m_device{0};
    std::vector<uint32_t> m_kernel;  // position -> index into TraceData::kernels
    std::vector<trace::TimestampNs> m_start;
    std::vector<trace::TimestampNs> m_end;
    std::vector<trace::TimestampNs> m_maxEnd;  // running maximum of m_end, for the first overlap
    std::vector<LaneClass> m_class;
};

/// Devices that ran at least one kernel, ascending (the host device is left out).
std::vector<trace::DeviceIndex> kernelDevices(const trace::TraceData& data);

}  // namespace vramscope::analysis
