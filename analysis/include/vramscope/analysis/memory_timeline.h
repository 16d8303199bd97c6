#pragma once
// Per-device memory timelines: reserved and allocated bytes as step series, with peaks.

#include <cstdint>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

using trace::DeviceIndex;
using trace::TimestampNs;

/// A step function: bytes[i] holds from timeNs[i] until timeNs[i+1] (the last value holds to the
/// end of the trace). timeNs is non-decreasing; equal times keep the later value. Both columns have
/// the same length.
struct StepSeries {
    std::vector<TimestampNs> timeNs;
    std::vector<int64_t> bytes;

    size_t size() const { return timeNs.size(); }
    bool empty() const { return timeNs.empty(); }
    /// Value at time t (the last step at or before t); 0 before the first step.
    int64_t valueAt(TimestampNs t) const;
    /// Index of the largest value (first one on ties), or -1 when empty.
    int64_t peakIndex() const;
};

/// Where a series' values came from.
enum class SeriesSource {
    None,            ///< nothing recorded at this level
    MemoryEvents,    ///< running sum of alloc (+) and free (-) events, sorted by time
    ProducerCounter  ///< the producer's own totals (CounterKind AllocatedBytes / ReservedBytes)
};
const char* toString(SeriesSource source);

/// Memory over time on one device of one rank.
struct MemoryTimeline {
    DeviceIndex device = 0;
    uint64_t capacityBytes = 0;  ///< from the header, 0 = unknown
    StepSeries allocated;
    StepSeries reserved;
    SeriesSource allocatedSource = SeriesSource::None;
    SeriesSource reservedSource = SeriesSource::None;
    int64_t peakAllocatedBytes = 0;
    TimestampNs peakAllocatedTimeNs = 0;
    int64_t peakReservedBytes = 0;
    TimestampNs peakReservedTimeNs = 0;
    uint64_t memoryEvents = 0;  ///< memory events (both levels) on this device
};

/// Builds one timeline per device that has memory events, memory counters or a header entry,
/// sorted by device index. A level is taken from the producer's counters when the trace has them
/// for that device (they are the producer's own truth, e.g. Kineto "Total Allocated"), otherwise
/// from the running sum of that level's events (stable-sorted by time; DeviceStatic memory is
/// left out of the timeline). Running sums below zero (a free of memory allocated before the trace)
/// are clamped at 0. O(n log n) in the number of events.
std::vector<MemoryTimeline> buildMemoryTimelines(const trace::TraceData& data);

}  // namespace vramscope::analysis
