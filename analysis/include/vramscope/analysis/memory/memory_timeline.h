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
    None,             ///< nothing recorded at this level
    MemoryEvents,     ///< running sum of alloc (+) and free (-) events, sorted by time
    ProducerCounter,  ///< the producer's own totals (CounterKind AllocatedBytes / ReservedBytes)
    RebuiltFromBytes  ///< an importer's running sum of event sizes, written as a counter named
                      ///< trace::kRebuiltAllocatedCounterName (no producer totals)
};
const char* toString(SeriesSource source);

/// Memory over time on one device of one rank.
struct MemoryTimeline {
    DeviceIndex device{0};
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
    /// Bytes the series was lifted by because frees of memory allocated before the trace began
    /// would have taken the running sum below zero (0 when the sum never went negative, and for
    /// counter-sourced series). See buildMemoryTimelines.
    int64_t allocatedPreTraceBytes = 0;
    int64_t reservedPreTraceBytes = 0;
    uint64_t allocatedUnmatchedFrees = 0;  ///< frees of addresses not alive at that level
    uint64_t reservedUnmatchedFrees = 0;
};

/// Builds one timeline per GPU (device index >= 0) that has memory events, memory counters or a
/// header entry, sorted by device index; host memory (device -1) has no timeline.
///
/// A level is taken from the producer's counters when the trace has them for that device (they are
/// the producer's own truth, e.g. Kineto "Total Allocated"; samples at equal times keep the later
/// one), otherwise from the running sum of that level's events, stable-sorted by time, with
/// DeviceStatic memory left out (module globals: noise on a timeline).
///
/// Running sum rules: an alloc adds its size. A free of an address alive at that level subtracts
/// the size recorded at its alloc (the free's own size is not trusted). A free of an address not
/// alive (memory allocated before the trace began, or a producer without addresses) subtracts the
/// free's own size and is counted in *UnmatchedFrees. If the running sum would go below zero, the
/// whole series is lifted by its deepest deficit, the least memory that must have been alive before
/// the trace began, and *PreTraceBytes records the lift; the curve keeps its shape. Events at equal
/// times give one step holding the value after all of them. The peak is the largest step value,
/// at the first time it is reached. O(n log n) in the number of events (O(n) when already sorted).
std::vector<MemoryTimeline> buildMemoryTimelines(const trace::TraceData& data);

/// The series of one level on one device, by the same rules as buildMemoryTimelines (without
/// counters). `preTraceBytes` and `unmatchedFrees` may be null.
StepSeries memoryEventSeries(const trace::TraceData& data, DeviceIndex device,
                             trace::MemoryLevel level, int64_t* preTraceBytes = nullptr,
                             uint64_t* unmatchedFrees = nullptr);

/// The counters of `kind` on `device` as a step series (samples at equal times keep the later one;
/// values rounded to whole non-negative bytes), as buildMemoryTimelines takes a producer's totals.
/// E.g. the host's memory: counterSeries(data, kHostDevice, CounterKind::HostResidentBytes).
StepSeries counterSeries(const trace::TraceData& data, DeviceIndex device, trace::CounterKind kind);

/// The running sum of the memory events of `kind` on every device (both levels), by the event
/// rules of buildMemoryTimelines: e.g. the pinned host memory (MemoryKind::Pinned) in use.
StepSeries memoryKindSeries(const trace::TraceData& data, trace::MemoryKind kind);

}  // namespace vramscope::analysis
