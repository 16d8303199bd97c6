#pragma once
// Values no real job produces (damaged or hostile input): memory sizes larger than any machine
// holds and times far outside the rest of the trace. openTrace / openJob apply the rules once,
// to every importer's output (.vscope, snapshot, Kineto, nsys), so that peaks, totals, spans and
// timelines never see them; what was removed is counted in TraceData::dataLoss.

#include <cstdint>

#include "vramscope/trace/trace_data.h"

namespace vramscope::trace {

/// Largest memory size a memory event or a memory counter may carry: 2^50 B = 1 PiB. The largest
/// GPU holds 288 GB (B300) and the largest single hosts a few tens of TiB; 1 PiB is ~35x the
/// latter, so no allocation, segment or total of one process comes near it, while an overflowed
/// or hostile value (8 EiB, 2^63) lies far above.
inline constexpr uint64_t kMaxPlausibleMemoryBytes = 1ull << 50;

/// The time rule's figures (see dropImplausibleEvents): a gap that cuts off outliers is longer
/// than a day and than kOutlierGapRatio x the extent of the events between it and the median,
/// and at most kMaxOutlierFraction of the instants (or kMinOutlierInstants) lie beyond it.
inline constexpr int64_t kMinOutlierGapNs = 86'400'000'000'000;  // one day
inline constexpr int64_t kOutlierGapRatio = 1000;
inline constexpr double kMaxOutlierFraction = 0.01;
inline constexpr uint64_t kMinOutlierInstants = 2;

/// What dropImplausibleEvents removed.
struct PlausibilityResult {
    uint64_t sizesOutOfRange = 0;  ///< memory events + memory counter samples removed
    uint64_t timesOutOfSpan = 0;   ///< events of any kind removed for their times
};

/// Removes from `data` (and appends one DataLoss row per rule that removed anything):
/// - sizes: memory events with sizeBytes above kMaxPlausibleMemoryBytes, and GPU / host memory
///   counter samples (isGpuMemoryCounter, isHostMemoryCounter) above it or not finite
///   (LossCounter::SizesOutOfRange);
/// - times: events with an instant (a memory / counter / OOM time, a kernel, collective or range
///   start or end) beyond an outlier gap (LossCounter::TimesOutOfSpan). All instants are sorted
///   and, from the median outwards on each side, the first gap longer than a day and longer than
///   1000x the distance from its inner edge to the median cuts off what lies beyond it, provided
///   that is at most 1 % of the instants (at least 2, so one kernel at 0 in a tiny trace counts).
///   A kernel at 0 beside epoch-ns times (55 years away) or a duration of years beside seconds
///   of trace is cut; a real trace is never cut unless its events lie more than a day apart.
///   Traces spanning under a day are not sorted at all (nothing can be cut).
/// Memory events' nvtxRange ids are renumbered after removed ranges (0 when theirs was removed).
/// O(n log n) in the number of events when the trace spans more than a day, else O(n).
PlausibilityResult dropImplausibleEvents(TraceData& data);

}  // namespace vramscope::trace
