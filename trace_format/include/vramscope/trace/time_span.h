#pragma once
// The time span of a trace: its first and last event time. One rule for every layer (the
// summary frames, the job time axis, the OOM facts, the CLI's report, info and replay), so a
// trace's start and end are the same wherever they are shown.

#include <algorithm>
#include <optional>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::trace {

/// First and last event time of a trace, ns in its own clock (FileHeader::clockDomain).
/// firstNs <= lastNs always.
struct TimeSpan {
    TimestampNs firstNs = 0;
    TimestampNs lastNs = 0;

    /// lastNs - firstNs, ns; 0 for a trace whose events all fall on one instant.
    int64_t durationNs() const { return lastNs - firstNs; }
    bool operator==(const TimeSpan&) const = default;
};

/// Whether the end of an interval (kernel, collective, range) counts toward a span.
enum class SpanEnds : uint8_t {
    /// The span reaches the latest end: what the trace covers (the default).
    Included,
    /// Only start times count: the span of the times rows are sorted and cut by (a replay
    /// sends rows in start order, so its last batch begins at the latest start).
    StartsOnly,
};

/// Widens `span` (nullopt = no event yet) to hold [firstNs, lastNs] (firstNs <= lastNs).
inline void widen(std::optional<TimeSpan>& span, TimestampNs firstNs, TimestampNs lastNs) {
    if (!span) {
        span = TimeSpan{firstNs, lastNs};
        return;
    }
    span->firstNs = std::min(span->firstNs, firstNs);
    span->lastNs = std::max(span->lastNs, lastNs);
}

/// Widens `span` to hold `other` (nullopt = nothing to add).
inline void widen(std::optional<TimeSpan>& span, const std::optional<TimeSpan>& other) {
    if (other) {
        widen(span, other->firstNs, other->lastNs);
    }
}

namespace detail {

inline void widenInstants(std::optional<TimeSpan>& span, const std::vector<TimestampNs>& t) {
    if (!t.empty()) {
        // Instants need not be in time order (importers append as they parse).
        const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
        widen(span, *lo, *hi);
    }
}

inline void widenIntervals(std::optional<TimeSpan>& span, const std::vector<TimestampNs>& start,
                           const std::vector<TimestampNs>& end, SpanEnds ends) {
    if (ends == SpanEnds::StartsOnly) {
        widenInstants(span, start);
        return;
    }
    if (start.empty()) {
        return;
    }
    TimestampNs lo = start[0];
    TimestampNs hi = start[0];
    for (size_t i = 0; i < start.size(); ++i) {
        lo = std::min(lo, start[i]);
        // An end before its start (a damaged record) counts as an instant at the start.
        hi = std::max(hi, std::max(start[i], end[i]));
    }
    widen(span, lo, hi);
}

}  // namespace detail

/// The span of every event of `d`: memory events, counter samples and OOMs at their time;
/// kernels, collectives and ranges from their start to their end (with SpanEnds::Included; an
/// end before its start counts as the start) or at their start (SpanEnds::StartsOnly).
/// Annotations, communicators and the header's anchors are not events and do not count.
/// nullopt when `d` has no event. Linear in the number of rows; the tables need no order.
inline std::optional<TimeSpan> traceTimeSpan(const TraceData& d,
                                             SpanEnds ends = SpanEnds::Included) {
    std::optional<TimeSpan> span;
    detail::widenInstants(span, d.memory.timestampNs);
    detail::widenInstants(span, d.counters.timestampNs);
    detail::widenIntervals(span, d.kernels.startNs, d.kernels.endNs, ends);
    detail::widenIntervals(span, d.collectives.startNs, d.collectives.endNs, ends);
    detail::widenIntervals(span, d.ranges.startNs, d.ranges.endNs, ends);
    for (const OomEvent& o : d.ooms) {
        widen(span, o.timestampNs, o.timestampNs);
    }
    return span;
}

}  // namespace vramscope::trace
