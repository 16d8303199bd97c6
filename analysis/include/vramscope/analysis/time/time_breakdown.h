#pragma once
// Compute / communication / memory / idle time per GPU, and the idle gaps between kernels
// classified by what ends them (docs/DESIGN.md "Metric definitions").

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// What ends an idle gap.
enum class GapCause {
    CollectiveWait,  ///< a communication kernel: waiting on a collective or a straggler rank
    HostBound,       ///< the next kernel was launched by the host after the gap began
    Other,           ///< anything else (including launch times unknown)
};
const char* toString(GapCause cause);

/// A time on one device when no kernel, copy or memset ran.
struct IdleGap {
    trace::DeviceIndex device{0};
    trace::TimestampNs startNs = 0;
    int64_t durationNs = 0;
    size_t kernelBefore = 0;  ///< index into TraceData::kernels of the kernel ending at startNs
    size_t kernelAfter = 0;   ///< index of the kernel starting at startNs + durationNs
    GapCause cause = GapCause::Other;
};

/// Time totals of one device. All durations in ns; see computeTimeBreakdowns for the formulas.
struct TimeBreakdown {
    trace::DeviceIndex device{0};
    size_t kernels = 0;  ///< kernels, copies and memsets on the device
    trace::TimestampNs firstStartNs = 0;
    trace::TimestampNs lastEndNs = 0;
    int64_t spanNs = 0;
    int64_t busyNs = 0;
    int64_t idleNs = 0;
    int64_t computeNs = 0;
    int64_t communicationNs = 0;
    int64_t memoryNs = 0;
    int64_t overlapNs = 0;
    int64_t exposedCommunicationNs = 0;
    double overlapPct = 0.0;  ///< 0..100; 0 when there is no communication
    /// Gap totals by cause (indexed by GapCause), over all gaps, not only those kept.
    int64_t gapNsByCause[3] = {0, 0, 0};
    int64_t gapCountByCause[3] = {0, 0, 0};
    /// The largest gaps, largest first (ties: earlier first), at most BreakdownOptions::maxGaps.
    std::vector<IdleGap> gaps;

    /// exposed communication / span, 0..1 (0 when the span is 0).
    double exposedCommunicationFraction() const;
};

struct BreakdownOptions {
    size_t maxGaps = 1000;  ///< gaps kept per device (the largest)
    int64_t minGapNs = 1;   ///< shorter gaps are neither kept nor counted by cause
};

/// One TimeBreakdown per device with kernels, sorted by device. Formulas (docs/DESIGN.md "Metric
/// definitions"):
///   compute = |union of Compute kernels|, communication = |union of Communication kernels|,
///   memory = |union of Memcpy and Memset|, span = last end - first start over all three,
///   busy = |union of all|, idle = span - busy, overlap = |union(communication) intersect
///   union(compute)|, exposed communication = communication - overlap,
///   overlap % = 100 x overlap / communication.
/// A gap is an interval inside the span covered by no kernel. Its cause: CollectiveWait when a
/// kernel starting at its end is a communication kernel; else HostBound when the launch times of
/// the kernels starting at its end are known and all are after the gap's start; else Other.
/// Kernels with end < start are skipped. O(n log n), O(n) when kernels are already in start order.
std::vector<TimeBreakdown> computeTimeBreakdowns(const trace::TraceData& data,
                                                 const BreakdownOptions& options = {});

/// The breakdown of `device` inside each of `windows` ([startNs, endNs) in the trace's clock,
/// e.g. the iterations), in the same order: the formulas of computeTimeBreakdowns over the
/// device's kernels that overlap the window, each clipped to it, and over the device's idle gaps
/// clipped to it, so the figures of windows that tile the device's span add up to the whole
/// device's (a kernel or a gap across a boundary is split there; a gap keeps the cause of the
/// whole gap, from the kernel that ends it, even when that kernel lies past the window). span is
/// the part of the window between the device's first kernel start and last kernel end; a
/// window outside that (or without kernels before and after it) gives kernels 0 and every
/// figure 0 (firstStartNs = lastEndNs = its start). Gaps are counted by cause and kept
/// (options.maxGaps) per window. O(k log k) to sort the device's k kernels, then O(log k +
/// kernels overlapping) per window.
std::vector<TimeBreakdown> computeWindowBreakdowns(
    const trace::TraceData& data, trace::DeviceIndex device,
    const std::vector<std::pair<trace::TimestampNs, trace::TimestampNs>>& windows,
    const BreakdownOptions& options = {});

/// Total length of the union of [start, end) intervals (any order). Helper, exposed for tests.
int64_t unionLength(std::vector<std::pair<int64_t, int64_t>> intervals);

}  // namespace vramscope::analysis
