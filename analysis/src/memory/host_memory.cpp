#include "vramscope/analysis/memory/host_memory.h"

namespace vramscope::analysis {

const char* toString(HostSeriesSource source) {
    switch (source) {
        case HostSeriesSource::ResidentBytes:
            return "resident set";
        case HostSeriesSource::AllocatorBytes:
            return "CPU allocator's total";
        case HostSeriesSource::None:
            break;
    }
    return "none";
}

int64_t HostMemoryReport::baselineChangeBytes() const {
    if (iterations.size() < 2) {
        return 0;
    }
    return iterations.back().baselineBytes - iterations.front().baselineBytes;
}

namespace {

/// The name of the first counter of `kind` on the host, "" when there is none.
std::string hostCounterName(const trace::TraceData& data, trace::CounterKind kind) {
    const auto& c = data.counters;
    for (size_t i = 0; i < c.size(); ++i) {
        if (c.device[i] == trace::kHostDevice && c.kind[i] == kind) {
            return std::string(data.string(c.name[i]));
        }
    }
    return {};
}

}  // namespace

HostMemoryReport analyzeHostMemory(const trace::TraceData& data, const IterationSet& iterations,
                                   const LeakOptions& options) {
    HostMemoryReport r;
    // The resident set first: it is what the process holds (Python objects, data-loader queues,
    // pinned buffers); the CPU allocator's total sees only tensors.
    for (auto [kind, source] :
         {std::pair{trace::CounterKind::HostResidentBytes, HostSeriesSource::ResidentBytes},
          std::pair{trace::CounterKind::HostAllocatedBytes, HostSeriesSource::AllocatorBytes}}) {
        StepSeries s = counterSeries(data, trace::kHostDevice, kind);
        if (!s.empty()) {
            r.source = source;
            r.counterName = hostCounterName(data, kind);
            r.series = std::move(s);
            break;
        }
    }
    if (const int64_t p = r.series.peakIndex(); p >= 0) {
        r.peakBytes = r.series.bytes[size_t(p)];
        r.peakTimeNs = r.series.timeNs[size_t(p)];
    }
    const auto& m = data.memory;
    for (size_t i = 0; i < m.size(); ++i) {
        r.pinnedAllocations +=
            m.kind[i] == trace::MemoryKind::Pinned && m.action[i] == trace::MemoryAction::Alloc;
    }
    if (r.pinnedAllocations > 0) {
        const StepSeries pinned = memoryKindSeries(data, trace::MemoryKind::Pinned);
        if (const int64_t p = pinned.peakIndex(); p >= 0) {
            r.pinnedPeakBytes = pinned.bytes[size_t(p)];
            r.pinnedPeakTimeNs = pinned.timeNs[size_t(p)];
        }
    }
    r.iterationSource = iterations.source;
    if (iterations.source == IterationSource::None) {
        r.iterationReason =
            iterations.reason.empty() ? "no iteration structure." : iterations.reason;
        r.trend.reason = r.iterationReason;
        return r;
    }
    r.iterations = iterationMemory(r.series, iterations);
    r.trend = baselineTrend(r.iterations, options);
    return r;
}

}  // namespace vramscope::analysis
