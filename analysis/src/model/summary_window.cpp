#include "vramscope/analysis/model/summary_window.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "vramscope/trace/memory_running_sum.h"

namespace vramscope::analysis {

using trace::MemoryEnvelope;
using trace::SummaryBlock;

namespace {

/// Addresses of the stand-in allocations: at the top of the 64-bit space, where no GPU maps
/// memory, one per (device, level), so that they never match a real free.
uint64_t standInAddress(trace::DeviceIndex device, trace::MemoryLevel level) {
    return ~uint64_t{0} - 2 * static_cast<uint64_t>(static_cast<uint32_t>(toInt(device))) -
           static_cast<uint64_t>(level);
}

/// The last block whose first step is at or before t, or blocks.end().
std::vector<SummaryBlock>::const_iterator blockInForce(const std::vector<SummaryBlock>& blocks,
                                                       TimestampNs t) {
    auto it = std::upper_bound(blocks.begin(), blocks.end(), t,
                               [](TimestampNs v, const SummaryBlock& b) { return v < b.startNs; });
    return it == blocks.begin() ? blocks.end() : std::prev(it);
}

bool fedByEvents(const MemoryEnvelope& e) {
    return e.origin == trace::SeriesOrigin::MemoryEvents && !e.blocks.empty();
}

/// Drops memory events outside [from, to], keeping the order of the rest.
void keepMemoryBetween(trace::MemoryEvents& m, TimestampNs from, TimestampNs to) {
    trace::MemoryEvents kept;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.timestampNs[i] >= from && m.timestampNs[i] <= to) {
            kept.append(m.at(i));
        }
    }
    m = std::move(kept);
}

/// c of anchorWindowMemory for one series, or false when no block starts among its events.
bool aliveBefore(const trace::MemoryEvents& m, const std::vector<size_t>& rows,
                 const MemoryEnvelope& e, int64_t& c) {
    const TimestampNs first = m.timestampNs[rows.front()];
    const TimestampNs last = m.timestampNs[rows.back()];
    auto b =
        std::lower_bound(e.blocks.begin(), e.blocks.end(), first,
                         [](const SummaryBlock& blk, TimestampNs v) { return blk.startNs < v; });
    if (b == e.blocks.end() || b->startNs > last) {
        return false;
    }
    trace::MemoryRunningSum sum;
    for (size_t r : rows) {
        if (m.timestampNs[r] > b->startNs) {
            break;
        }
        sum.apply(m.action[r], m.address[r], m.sizeBytes[r]);
    }
    const int64_t lift = e.lowestBytes < 0 ? -e.lowestBytes : 0;
    c = b->firstBytes - sum.sum() + lift;
    return true;
}

}  // namespace

TimestampNs windowReadStart(const trace::TraceSummary& summary, TimestampNs t0) {
    TimestampNs start = t0;
    for (const MemoryEnvelope& e : summary.memory) {
        if (!fedByEvents(e)) {
            continue;
        }
        if (auto b = blockInForce(e.blocks, t0); b != e.blocks.end()) {
            start = std::min(start, b->startNs);
        }
    }
    return start;
}

WindowAnchor anchorWindowMemory(trace::TraceData& window, const trace::TraceSummary& summary,
                                TimestampNs t0, TimestampNs t1) {
    TimestampNs from = t0;
    const trace::FrameFilter overlaps = trace::framesOverlapping(t0, t1);
    for (const trace::FrameIndexEntry& f : summary.frames) {
        if ((f.contents & trace::kFrameMemory) != 0 && overlaps(f)) {
            from = std::min(from, f.minNs);
        }
    }
    trace::MemoryEvents& m = window.memory;
    keepMemoryBetween(m, from, t1);

    WindowAnchor out;
    std::vector<trace::MemoryEvent> standIns;
    for (const MemoryEnvelope& e : summary.memory) {
        if (!fedByEvents(e)) {
            continue;
        }
        std::vector<size_t> rows;
        for (size_t i = 0; i < m.size(); ++i) {
            if (m.device[i] == e.device && m.level[i] == e.level &&
                trace::isTimelineMemoryKind(m.kind[i])) {
                rows.push_back(i);
            }
        }
        std::stable_sort(rows.begin(), rows.end(),
                         [&](size_t a, size_t b) { return m.timestampNs[a] < m.timestampNs[b]; });
        int64_t c = 0;
        TimestampNs at = from;
        if (rows.empty()) {
            auto b = blockInForce(e.blocks, from);
            if (b == e.blocks.end()) {
                continue;  // the series starts after the window
            }
            const int64_t lift = e.lowestBytes < 0 ? -e.lowestBytes : 0;
            c = b->lastBytes + lift;
        } else if (aliveBefore(m, rows, e, c)) {
            at = m.timestampNs[rows.front()] - 1;
        } else {
            ++out.unanchoredSeries;
            continue;
        }
        ++out.anchoredSeries;
        if (c > 0) {
            trace::MemoryEvent s;
            s.timestampNs = at;
            s.address = standInAddress(e.device, e.level);
            s.sizeBytes = static_cast<uint64_t>(c);
            s.action = trace::MemoryAction::Alloc;
            s.level = e.level;
            s.kind = trace::MemoryKind::PreExisting;
            s.device = e.device;
            standIns.push_back(s);
        }
    }
    if (!standIns.empty()) {
        trace::MemoryEvents merged;
        merged.reserve(m.size() + standIns.size());
        for (const trace::MemoryEvent& s : standIns) {
            merged.append(s);
        }
        for (size_t i = 0; i < m.size(); ++i) {
            merged.append(m.at(i));
        }
        m = std::move(merged);
    }
    return out;
}

}  // namespace vramscope::analysis
