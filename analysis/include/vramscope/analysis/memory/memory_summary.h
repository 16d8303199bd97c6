#pragma once
// The memory figures of one GPU that every view and the CLI print: capacity, the peaks of both
// levels and the share of capacity at the peak, computed once from the GPU's memory timeline.

#include <cstdint>
#include <optional>

#include "vramscope/analysis/memory/memory_timeline.h"

namespace vramscope::analysis {

/// The rule of thumb (docs/DESIGN.md "The 80 % capacity rule"): keep a GPU's peak below 80 % of its
/// capacity, so that fragmentation, a longer sequence or another kernel's workspace does not tip
/// the job into an OOM. The warning line on the plots, the heat strip's bold rows, the peak advice
/// and `check`'s default
/// --max-peak-fraction all use this one value.
inline constexpr double kCapacityWarningShare = 0.8;

/// Peaks and capacity of one GPU of one rank. Plain value; times are in the clock of the timeline
/// it was made from (the rank's trace time, or job time after shifted()).
struct MemorySummary {
    uint64_t capacityBytes = 0;  ///< the device's total memory from the trace header; 0 = unknown
    bool hasAllocated = false;   ///< an allocated-level series exists (events or counters)
    bool hasReserved = false;    ///< a reserved-level series exists
    int64_t peakAllocatedBytes = 0;
    TimestampNs peakAllocatedTimeNs = 0;  ///< first time the allocated peak is reached
    int64_t peakReservedBytes = 0;
    TimestampNs peakReservedTimeNs = 0;  ///< first time the reserved peak is reached
    uint64_t memoryEvents = 0;           ///< memory events (both levels) on the device

    /// Whether any memory curve is known for the GPU.
    bool hasData() const { return hasAllocated || hasReserved; }
    /// The peak the capacity figures use: max(peak reserved, peak allocated), in bytes. Reserved
    /// is what the driver handed out and what an OOM is about; the max keeps a trace that only
    /// records the allocated level (or whose reserved curve starts late) from reading as empty.
    int64_t peakBytes() const;
    /// Where to look first for what holds the memory: the allocated peak's time when that level
    /// has data (its live set names tensors), else the reserved peak's time; 0 without data.
    TimestampNs detailPeakTimeNs() const;
    /// peakBytes() / capacityBytes, nullopt when the capacity is unknown or there is no memory
    /// data (a share of an unknown whole is not printed as a percentage).
    std::optional<double> peakShare() const;
    /// peakShare() >= kCapacityWarningShare; false when the share is unknown.
    bool nearCapacity() const;
    /// The same figures with every time moved by `byNs` (e.g. rank trace time -> job time).
    MemorySummary shifted(int64_t byNs) const;
};

/// The summary of `timeline` (see buildMemoryTimelines for how its peaks are found). Device-static
/// memory (module globals) is not in the peaks, as it is not in the timeline; that matches
/// PyTorch's max_memory_reserved(), which counts only its allocator's segments.
MemorySummary summarizeMemory(const MemoryTimeline& timeline);

/// Bytes in use on a GPU at time t, from its two curves: the reserved curve's value when that
/// level has steps, else the allocated curve's; what "share of capacity now" divides.
int64_t bytesInUseAt(const StepSeries& allocated, const StepSeries& reserved, TimestampNs t);

}  // namespace vramscope::analysis
