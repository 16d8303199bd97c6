#include "vramscope/analysis/model/summary_timeline.h"

#include <algorithm>
#include <map>

namespace vramscope::analysis {

using trace::MemoryEnvelope;
using trace::MemoryLevel;
using trace::SeriesOrigin;
using trace::SummaryBlock;

namespace {

/// The envelope that draws (device, level): the producer's counter wins over the running sum of
/// events, as in buildMemoryTimelines. An envelope that saw nothing does not count.
const MemoryEnvelope* drawnEnvelope(const trace::TraceSummary& summary, DeviceIndex device,
                                    MemoryLevel level, SeriesSource& source) {
    for (const SeriesOrigin origin : {SeriesOrigin::ProducerCounter, SeriesOrigin::MemoryEvents}) {
        const MemoryEnvelope* e = summary.envelope(device, level, origin);
        if (e != nullptr && (e->events > 0 || !e->blocks.empty())) {
            source = origin == SeriesOrigin::ProducerCounter ? SeriesSource::ProducerCounter
                                                             : SeriesSource::MemoryEvents;
            return e;
        }
    }
    source = SeriesSource::None;
    return nullptr;
}

/// Copies one level into the timeline, lifted by the deepest deficit of a running sum (counters
/// are never negative, so their lift is 0). Returns the lift.
int64_t takeLevel(const MemoryEnvelope* e, std::vector<SummaryBlock>& blocks, int64_t& peak,
                  TimestampNs& peakTime) {
    if (e == nullptr) {
        return 0;
    }
    const int64_t lift = e->lowestBytes < 0 ? -e->lowestBytes : 0;
    blocks = e->blocks;
    if (lift != 0) {
        for (auto& b : blocks) {
            b.minBytes += lift;
            b.maxBytes += lift;
            b.firstBytes += lift;
            b.lastBytes += lift;
        }
    }
    // Lifting every step by the same amount keeps the first time the peak is reached.
    peak = e->peakBytes + lift;
    peakTime = e->peakTimeNs;
    return lift;
}

}  // namespace

std::vector<SummaryTimeline> summaryTimelines(const trace::TraceSummary& summary) {
    std::map<DeviceIndex, uint64_t> devices;  // device -> capacity (0 = unknown)
    for (const auto& d : summary.header.devices) {
        if (toInt(d.index) >= 0) {
            devices[d.index] = d.totalMemoryBytes;
        }
    }
    for (const auto& e : summary.memory) {
        if (toInt(e.device) >= 0) {
            devices.try_emplace(e.device, 0);
        }
    }
    std::vector<SummaryTimeline> out;
    out.reserve(devices.size());
    for (const auto& [device, capacity] : devices) {
        SummaryTimeline tl;
        tl.device = device;
        tl.capacityBytes = capacity;
        const MemoryEnvelope* alloc =
            drawnEnvelope(summary, device, MemoryLevel::Allocated, tl.allocatedSource);
        const MemoryEnvelope* reserved =
            drawnEnvelope(summary, device, MemoryLevel::Reserved, tl.reservedSource);
        tl.allocatedPreTraceBytes =
            takeLevel(alloc, tl.allocated, tl.peakAllocatedBytes, tl.peakAllocatedTimeNs);
        tl.reservedPreTraceBytes =
            takeLevel(reserved, tl.reserved, tl.peakReservedBytes, tl.peakReservedTimeNs);
        // Memory events of both levels, whichever series draws (as MemoryTimeline counts them).
        for (const MemoryLevel level : {MemoryLevel::Allocated, MemoryLevel::Reserved}) {
            if (const auto* e = summary.envelope(device, level, SeriesOrigin::MemoryEvents)) {
                tl.memoryEvents += e->events;
            }
        }
        tl.exact = (alloc == nullptr || alloc->outOfOrder == 0) &&
                   (reserved == nullptr || reserved->outOfOrder == 0);
        out.push_back(std::move(tl));
    }
    return out;
}

std::vector<LodBucket> queryBlocks(const std::vector<SummaryBlock>& blocks, TimestampNs t0,
                                   TimestampNs t1, size_t buckets) {
    std::vector<LodBucket> out;
    if (t1 <= t0 || buckets == 0) {
        return out;
    }
    // Same bucket boundaries as LodSeries::query, so the two can be compared column by column.
    const auto span = static_cast<uint64_t>(t1) - static_cast<uint64_t>(t0);
    const uint64_t count = std::min<uint64_t>({buckets, span, LodSeries::kMaxBuckets});
    const uint64_t width = span / count;
    const uint64_t rest = span % count;
    auto boundary = [&](uint64_t i) {
        return static_cast<TimestampNs>(static_cast<uint64_t>(t0) + width * i + rest * i / count);
    };
    // First block whose last step is at or after t0: the ones before it end before the window.
    size_t lo = static_cast<size_t>(
        std::lower_bound(blocks.begin(), blocks.end(), t0,
                         [](const SummaryBlock& b, TimestampNs t) { return b.endNs < t; }) -
        blocks.begin());
    out.reserve(count);
    TimestampNs start = t0;
    int64_t carried = 0;  // the previous bucket's last value
    for (uint64_t i = 0; i < count; ++i) {
        const TimestampNs end = i + 1 == count ? t1 : boundary(i + 1);
        // The value in force at `start`: the last value of the previous block when no block
        // covers `start`; a block that straddles `start` holds unknown values there, so its
        // whole range stands for it (the envelope may be wider, never narrower).
        const int64_t before = lo > 0 ? blocks[lo - 1].lastBytes : 0;
        LodBucket bucket{start, end, before, before, before, before};
        size_t hi = lo;
        while (hi < blocks.size() && blocks[hi].startNs < end) {
            const SummaryBlock& b = blocks[hi];
            if (hi == lo && b.startNs <= start) {
                bucket.minBytes = b.minBytes;
                bucket.maxBytes = b.maxBytes;
                // Straddling: the value at `start` is somewhere in the block; continue the line.
                bucket.firstBytes =
                    b.startNs == start ? b.firstBytes : (i == 0 ? b.firstBytes : carried);
            } else {
                bucket.minBytes = std::min(bucket.minBytes, b.minBytes);
                bucket.maxBytes = std::max(bucket.maxBytes, b.maxBytes);
            }
            bucket.lastBytes = b.lastBytes;
            ++hi;
        }
        out.push_back(bucket);
        carried = bucket.lastBytes;
        start = end;
        // The last block may reach into the next bucket: keep it for that one too.
        lo = hi > lo && blocks[hi - 1].endNs >= end ? hi - 1 : hi;
    }
    return out;
}

const trace::DeviceAnalysisSummary* storedAnalysis(const trace::TraceSummary& summary,
                                                   DeviceIndex device) {
    for (const auto& a : summary.analysis) {
        if (a.device == device) {
            return &a;
        }
    }
    return nullptr;
}

std::vector<trace::DeviceAnalysisSummary> analysesForSummary(const trace::TraceData& data,
                                                             std::string_view analysedBy) {
    std::vector<trace::DeviceAnalysisSummary> out;
    for (const auto& tl : buildMemoryTimelines(data)) {
        trace::DeviceAnalysisSummary a;
        a.device = tl.device;
        a.analysedBy = std::string(analysedBy);
        auto found = findIterations(data, tl.device);
        // Default options have no regex, so findIterations cannot fail; keep the set empty if it
        // did.
        IterationSet iterations = found ? std::move(*found) : IterationSet{};
        a.iterationSource = toString(iterations.source);
        a.iterationReason = iterations.reason;
        for (const auto& it : iterations.iterations) {
            a.iterationStartNs.push_back(it.startNs);
            a.iterationEndNs.push_back(it.endNs);
        }
        const AllocationIndex index(data, tl.device, detailLevel(data, tl.device));
        const LeakReport leak = analyzeLeak(data, tl.device, iterations, index, &tl);
        for (const auto& m : leak.iterations) {
            a.baselineBytes.push_back(m.baselineBytes);
            a.iterationPeakBytes.push_back(m.peakBytes);
        }
        a.leakVerdict = toString(leak.verdict);
        a.slopeBytesPerIteration = leak.slopeBytesPerIteration;
        a.growthBytes = leak.growthBytesPerIteration;
        a.leakReason = leak.reason;
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace vramscope::analysis
