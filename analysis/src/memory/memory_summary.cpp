#include "vramscope/analysis/memory/memory_summary.h"

#include <algorithm>

namespace vramscope::analysis {

int64_t MemorySummary::peakBytes() const {
    return std::max<int64_t>(0, std::max(peakReservedBytes, peakAllocatedBytes));
}

TimestampNs MemorySummary::detailPeakTimeNs() const {
    if (hasAllocated && peakAllocatedBytes > 0) {
        return peakAllocatedTimeNs;
    }
    return hasReserved ? peakReservedTimeNs : 0;
}

std::optional<double> MemorySummary::peakShare() const {
    if (capacityBytes == 0 || !hasData()) {
        return std::nullopt;
    }
    return static_cast<double>(peakBytes()) / static_cast<double>(capacityBytes);
}

bool MemorySummary::nearCapacity() const {
    const std::optional<double> share = peakShare();
    return share && *share >= kCapacityWarningShare;
}

MemorySummary MemorySummary::shifted(int64_t byNs) const {
    MemorySummary s = *this;
    if (s.hasAllocated) {
        s.peakAllocatedTimeNs += byNs;
    }
    if (s.hasReserved) {
        s.peakReservedTimeNs += byNs;
    }
    return s;
}

MemorySummary summarizeMemory(const MemoryTimeline& t) {
    MemorySummary s;
    s.capacityBytes = t.capacityBytes;
    s.hasAllocated = t.allocatedSource != SeriesSource::None;
    s.hasReserved = t.reservedSource != SeriesSource::None;
    s.peakAllocatedBytes = t.peakAllocatedBytes;
    s.peakAllocatedTimeNs = t.peakAllocatedTimeNs;
    s.peakReservedBytes = t.peakReservedBytes;
    s.peakReservedTimeNs = t.peakReservedTimeNs;
    s.memoryEvents = t.memoryEvents;
    return s;
}

int64_t bytesInUseAt(const StepSeries& allocated, const StepSeries& reserved, TimestampNs t) {
    return !reserved.empty() ? reserved.valueAt(t) : allocated.valueAt(t);
}

}  // namespace vramscope::analysis
