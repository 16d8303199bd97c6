#include "vramscope/analysis/memory/memory_timeline.h"

#include <algorithm>
#include <map>

#include "vramscope/trace/importers.h"
#include "vramscope/trace/memory_running_sum.h"

namespace vramscope::analysis {

using trace::CounterKind;
using trace::MemoryKind;
using trace::MemoryLevel;
using trace::TraceData;

int64_t StepSeries::valueAt(TimestampNs t) const {
    auto it = std::upper_bound(timeNs.begin(), timeNs.end(), t);
    if (it == timeNs.begin()) {
        return 0;
    }
    return bytes[static_cast<size_t>(it - timeNs.begin()) - 1];
}

int64_t StepSeries::peakIndex() const {
    if (bytes.empty()) {
        return -1;
    }
    return static_cast<int64_t>(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
}

const char* toString(SeriesSource source) {
    switch (source) {
        case SeriesSource::None:
            return "none";
        case SeriesSource::MemoryEvents:
            return "memory events";
        case SeriesSource::ProducerCounter:
            return "producer counter";
        case SeriesSource::RebuiltFromBytes:
            return "rebuilt from Bytes";
    }
    return "none";
}

namespace {

/// Appends (t, v) to a series, replacing the last step when it has the same time.
void pushStep(StepSeries& s, TimestampNs t, int64_t v) {
    if (!s.timeNs.empty() && s.timeNs.back() == t) {
        s.bytes.back() = v;
        return;
    }
    s.timeNs.push_back(t);
    s.bytes.push_back(v);
}

/// Sorts event indices by time, keeping the file order of equal times; skips the sort when the
/// indices are already in time order (the common case for our own traces).
void sortByTime(const std::vector<TimestampNs>& time, std::vector<uint32_t>& indices) {
    const bool sorted = std::is_sorted(indices.begin(), indices.end(),
                                       [&](uint32_t a, uint32_t b) { return time[a] < time[b]; });
    if (!sorted) {
        std::stable_sort(indices.begin(), indices.end(),
                         [&](uint32_t a, uint32_t b) { return time[a] < time[b]; });
    }
}

/// The running-sum series over the given event indices (all of one device and one level).
StepSeries seriesFromEvents(const TraceData& data, std::vector<uint32_t>& indices,
                            int64_t* preTraceBytes, uint64_t* unmatchedFrees) {
    const auto& m = data.memory;
    sortByTime(m.timestampNs, indices);
    StepSeries s;
    s.timeNs.reserve(indices.size());
    s.bytes.reserve(indices.size());
    trace::MemoryRunningSum sum;
    for (uint32_t i : indices) {
        pushStep(s, m.timestampNs[i], sum.apply(m.action[i], m.address[i], m.sizeBytes[i]));
    }
    const int64_t lowest = sum.lowest();
    if (lowest < 0) {
        for (auto& b : s.bytes) {
            b -= lowest;
        }
    }
    if (preTraceBytes != nullptr) {
        *preTraceBytes = -lowest;
    }
    if (unmatchedFrees != nullptr) {
        *unmatchedFrees = sum.unmatchedFrees();
    }
    return s;
}

/// The producer's own totals as a series (samples stable-sorted by time).
StepSeries seriesFromCounters(const TraceData& data, std::vector<uint32_t>& indices) {
    const auto& c = data.counters;
    sortByTime(c.timestampNs, indices);
    StepSeries s;
    s.timeNs.reserve(indices.size());
    s.bytes.reserve(indices.size());
    for (uint32_t i : indices) {
        pushStep(s, c.timestampNs[i], trace::counterBytes(c.value[i]));
    }
    return s;
}

bool isTimelineEvent(const TraceData& data, size_t i) {
    return trace::isTimelineMemoryKind(data.memory.kind[i]);
}

/// Per device: event indices of each level and counter indices of each kind.
struct DeviceInputs {
    std::vector<uint32_t> events[2];    // by MemoryLevel
    std::vector<uint32_t> counters[2];  // [0] AllocatedBytes, [1] ReservedBytes
    uint64_t memoryEvents = 0;
};

void setPeak(const StepSeries& s, int64_t& peak, TimestampNs& time) {
    const int64_t i = s.peakIndex();
    if (i >= 0) {
        peak = s.bytes[static_cast<size_t>(i)];
        time = s.timeNs[static_cast<size_t>(i)];
    }
}

}  // namespace

StepSeries memoryEventSeries(const TraceData& data, DeviceIndex device, MemoryLevel level,
                             int64_t* preTraceBytes, uint64_t* unmatchedFrees) {
    std::vector<uint32_t> indices;
    const auto& m = data.memory;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.device[i] == device && m.level[i] == level && isTimelineEvent(data, i)) {
            indices.push_back(static_cast<uint32_t>(i));
        }
    }
    return seriesFromEvents(data, indices, preTraceBytes, unmatchedFrees);
}

StepSeries counterSeries(const TraceData& data, DeviceIndex device, CounterKind kind) {
    std::vector<uint32_t> indices;
    const auto& c = data.counters;
    for (size_t i = 0; i < c.size(); ++i) {
        if (c.device[i] == device && c.kind[i] == kind) {
            indices.push_back(static_cast<uint32_t>(i));
        }
    }
    return seriesFromCounters(data, indices);
}

StepSeries memoryKindSeries(const TraceData& data, MemoryKind kind) {
    std::vector<uint32_t> indices;
    const auto& m = data.memory;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.kind[i] == kind) {
            indices.push_back(static_cast<uint32_t>(i));
        }
    }
    return seriesFromEvents(data, indices, nullptr, nullptr);
}

std::vector<MemoryTimeline> buildMemoryTimelines(const TraceData& data) {
    std::map<DeviceIndex, DeviceInputs> inputs;
    for (const auto& d : data.header.devices) {
        if (toInt(d.index) >= 0) {
            inputs.try_emplace(d.index);
        }
    }
    const auto& m = data.memory;
    for (size_t i = 0; i < m.size(); ++i) {
        if (toInt(m.device[i]) < 0) {
            continue;
        }
        auto& in = inputs[m.device[i]];
        ++in.memoryEvents;
        if (isTimelineEvent(data, i)) {
            in.events[m.level[i] == MemoryLevel::Allocated ? 1 : 0].push_back(
                static_cast<uint32_t>(i));
        }
    }
    const auto& c = data.counters;
    for (size_t i = 0; i < c.size(); ++i) {
        // Only GPU memory counters draw a GPU's curve: a host counter (even one a producer put on
        // a device) or a generic one is no GPU memory.
        if (toInt(c.device[i]) < 0 || !trace::isGpuMemoryCounter(c.kind[i])) {
            continue;
        }
        inputs[c.device[i]].counters[c.kind[i] == CounterKind::AllocatedBytes ? 0 : 1].push_back(
            static_cast<uint32_t>(i));
    }

    std::vector<MemoryTimeline> out;
    out.reserve(inputs.size());
    for (auto& [device, in] : inputs) {
        MemoryTimeline tl;
        tl.device = device;
        if (const auto* info = data.device(device)) {
            tl.capacityBytes = info->totalMemoryBytes;
        }
        tl.memoryEvents = in.memoryEvents;
        auto& allocEvents = in.events[static_cast<int>(MemoryLevel::Allocated)];
        auto& reservedEvents = in.events[static_cast<int>(MemoryLevel::Reserved)];
        if (!in.counters[0].empty()) {
            tl.allocated = seriesFromCounters(data, in.counters[0]);
            const bool rebuilt =
                std::all_of(in.counters[0].begin(), in.counters[0].end(), [&](uint32_t i) {
                    return data.string(c.name[i]) == trace::kRebuiltAllocatedCounterName;
                });
            tl.allocatedSource =
                rebuilt ? SeriesSource::RebuiltFromBytes : SeriesSource::ProducerCounter;
        } else if (!allocEvents.empty()) {
            tl.allocated = seriesFromEvents(data, allocEvents, &tl.allocatedPreTraceBytes,
                                            &tl.allocatedUnmatchedFrees);
            tl.allocatedSource = SeriesSource::MemoryEvents;
        }
        if (!in.counters[1].empty()) {
            tl.reserved = seriesFromCounters(data, in.counters[1]);
            tl.reservedSource = SeriesSource::ProducerCounter;
        } else if (!reservedEvents.empty()) {
            tl.reserved = seriesFromEvents(data, reservedEvents, &tl.reservedPreTraceBytes,
                                           &tl.reservedUnmatchedFrees);
            tl.reservedSource = SeriesSource::MemoryEvents;
        }
        setPeak(tl.allocated, tl.peakAllocatedBytes, tl.peakAllocatedTimeNs);
        setPeak(tl.reserved, tl.peakReservedBytes, tl.peakReservedTimeNs);
        out.push_back(std::move(tl));
    }
    return out;
}

}  // namespace vramscope::analysis
