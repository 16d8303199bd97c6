#include "vramscope/analysis/memory/segments.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "vramscope/analysis/memory/leak.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {

namespace {

/// One live allocation as an address range [start, end).
struct Extent {
    uint64_t start = 0;
    uint64_t end = 0;
    uint32_t event = 0;
};

std::vector<Extent> aliveExtents(const trace::TraceData& data, const AllocationIndex& index,
                                 trace::TimestampNs t) {
    std::vector<Extent> out;
    for (uint32_t e : index.aliveEventsAt(t)) {
        const uint64_t a = data.memory.address[e];
        const uint64_t size = data.memory.sizeBytes[e];
        out.push_back({a, size > UINT64_MAX - a ? UINT64_MAX : a + size, e});
    }
    std::sort(out.begin(), out.end(), [](const Extent& x, const Extent& y) {
        return x.start != y.start ? x.start < y.start : x.end > y.end;
    });
    return out;
}

/// Why the layout cannot be known from these indices, or "" when it can be tried.
std::string unknownReason(const AllocationIndex& segments, const AllocationIndex& blocks) {
    if (segments.level() != trace::MemoryLevel::Reserved ||
        blocks.level() != trace::MemoryLevel::Allocated) {
        return "the segments need a reserved-level and an allocated-level index";
    }
    if (segments.empty()) {
        return "the trace records no reserved segments with addresses (a PyTorch profiler trace "
               "gives the reserved total only, not its segments)";
    }
    if (blocks.empty()) {
        return "the trace records the reserved segments but not the allocator's blocks inside "
               "them (CUPTI under PyTorch's caching allocator sees the segments only)";
    }
    return {};
}

/// Fills each segment's gaps and covered bytes from the live blocks (sorted by start).
void fillGaps(std::vector<Segment>& segs, const std::vector<Extent>& live) {
    // prefixEnd[i]: the highest end of live[0..i], so a long block that began well below a
    // segment is seen even when shorter ones lie between.
    std::vector<uint64_t> prefixEnd(live.size());
    for (size_t i = 0; i < live.size(); ++i) {
        prefixEnd[i] = std::max(live[i].end, i > 0 ? prefixEnd[i - 1] : 0);
    }
    for (Segment& s : segs) {
        const uint64_t start = s.address;
        const uint64_t end = s.address + s.sizeBytes;
        uint64_t cursor = start;
        auto it = std::lower_bound(live.begin(), live.end(), start,
                                   [](const Extent& x, uint64_t a) { return x.start < a; });
        if (it != live.begin()) {
            const uint64_t reach = prefixEnd[size_t(it - live.begin()) - 1];
            cursor = std::max(cursor, std::min(end, reach));
        }
        auto gap = [&](uint64_t from, uint64_t to) {
            if (to > from) {
                s.gaps.push_back({from, to - from});
                const int64_t g = allocationBytes(to - from);
                s.freeBytes += g;
                s.largestFreeBytes = std::max(s.largestFreeBytes, g);
            }
        };
        for (; it != live.end() && it->start < end; ++it) {
            gap(cursor, it->start);
            cursor = std::max(cursor, std::min(end, it->end));
        }
        gap(cursor, end);
        s.allocatedBytes = allocationBytes(s.sizeBytes) - s.freeBytes;
    }
}

/// Lists each live block in the segment holding its first byte and counts the rest.
void placeBlocks(const trace::TraceData& data, std::vector<Segment>& segs,
                 const std::vector<Extent>& live, SegmentTotals& totals) {
    for (const Extent& b : live) {
        auto after = std::upper_bound(segs.begin(), segs.end(), b.start,
                                      [](uint64_t a, const Segment& s) { return a < s.address; });
        Segment* holder = nullptr;
        if (after != segs.begin()) {
            Segment& s = *std::prev(after);
            if (b.start < s.address + s.sizeBytes) {
                holder = &s;
            }
        }
        if (holder == nullptr) {
            ++totals.blocksOutsideSegments;
            totals.bytesOutsideSegments += allocationBytes(b.end - b.start);
            // It may still reach into the next segment (it covers that part; see fillGaps).
            if (after != segs.end() && b.end > after->address) {
                ++totals.straddlingBlocks;
            }
            continue;
        }
        holder->blocks.push_back({b.event, b.start, b.end - b.start, data.memory.stack[b.event]});
        ++totals.blocks;
        if (b.end > holder->address + holder->sizeBytes) {
            ++totals.straddlingBlocks;
        }
    }
}

}  // namespace

SegmentLayout segmentLayoutAt(const trace::TraceData& data, const AllocationIndex& segments,
                              const AllocationIndex& blocks, trace::TimestampNs t) {
    SegmentLayout out;
    out.timeNs = t;
    out.reason = unknownReason(segments, blocks);
    if (!out.reason.empty()) {
        return out;
    }
    const std::vector<Extent> segExtents = aliveExtents(data, segments, t);
    if (segExtents.empty()) {
        out.reason = "no reserved segment is alive at that time";
        return out;
    }
    if (segExtents.front().start == 0) {
        out.reason = "the trace's segments carry no addresses";
        return out;
    }
    SegmentTotals& totals = out.totals;
    uint64_t previousEnd = 0;
    for (const Extent& e : segExtents) {
        Segment s;
        s.eventIndex = e.event;
        s.stream = data.memory.stream[e.event];
        s.address = e.start;
        uint64_t end = e.end;
        if (e.start < previousEnd) {  // begins inside the one before: clip it
            ++totals.overlappingSegments;
            s.address = previousEnd;
            end = std::max(end, previousEnd);
        }
        s.sizeBytes = end - s.address;
        previousEnd = std::max(previousEnd, end);
        out.segments.push_back(std::move(s));
    }
    const std::vector<Extent> live = aliveExtents(data, blocks, t);
    fillGaps(out.segments, live);
    placeBlocks(data, out.segments, live, totals);
    totals.segments = out.segments.size();
    for (const Segment& s : out.segments) {
        totals.reservedBytes += allocationBytes(s.sizeBytes);
        totals.allocatedBytes += s.allocatedBytes;
        totals.freeBytes += s.freeBytes;
        totals.largestFreeBlockBytes = std::max(totals.largestFreeBlockBytes, s.largestFreeBytes);
    }
    if (totals.freeBytes > 0) {
        totals.fragmentation =
            1.0 - double(totals.largestFreeBlockBytes) / double(totals.freeBytes);
    }
    out.known = true;
    return out;
}

std::vector<size_t> segmentsLargestFirst(const SegmentLayout& layout, size_t limit) {
    std::vector<size_t> order(layout.segments.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return layout.segments[a].sizeBytes > layout.segments[b].sizeBytes;
    });
    if (limit > 0 && order.size() > limit) {
        order.resize(limit);
    }
    return order;
}

SegmentOverview segmentOverview(const SegmentLayout& layout, size_t limit) {
    SegmentOverview o;
    o.known = layout.known;
    o.reason = layout.reason;
    o.totals = layout.totals;
    for (size_t i : segmentsLargestFirst(layout, limit)) {
        const Segment& s = layout.segments[i];
        o.largest.push_back({s.address, s.sizeBytes, s.allocatedBytes, s.freeBytes,
                             s.largestFreeBytes, s.blocks.size()});
    }
    return o;
}

SegmentBlockGroups groupBlocksByStack(const trace::TraceData& data, const SegmentLayout& layout) {
    SegmentBlockGroups out;
    std::map<trace::StackId, std::string> labels;  // a stack's label is looked up once
    std::map<std::string, SegmentBlockGroups::Group> byLabel;
    for (const Segment& s : layout.segments) {
        for (const SegmentBlock& b : s.blocks) {
            auto [it, fresh] = labels.try_emplace(b.stack);
            if (fresh) {
                it->second = stackLabel(data, b.stack);
            }
            SegmentBlockGroups::Group& g = byLabel[it->second];
            g.label = it->second;
            g.bytes += allocationBytes(b.sizeBytes);
            g.blocks += 1;
        }
    }
    for (auto& [label, g] : byLabel) {
        out.groups.push_back(std::move(g));
    }
    std::stable_sort(out.groups.begin(), out.groups.end(),
                     [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    std::map<std::string, uint32_t> position;
    for (size_t i = 0; i < out.groups.size(); ++i) {
        position[out.groups[i].label] = uint32_t(i);
    }
    for (const Segment& s : layout.segments) {
        std::vector<uint32_t>& of = out.groupOf.emplace_back();
        for (const SegmentBlock& b : s.blocks) {
            of.push_back(position[labels[b.stack]]);
        }
    }
    return out;
}

std::string fragmentationText(double fragmentation) {
    return fragmentation < 0 ? std::string("unknown") : formatSignificant(fragmentation);
}

std::string segmentTotalsText(const SegmentTotals& t) {
    return "reserved " + formatBytes(double(t.reservedBytes)) + " in " +
           std::to_string(t.segments) + (t.segments == 1 ? " segment" : " segments") +
           ", allocated " + formatBytes(double(t.allocatedBytes)) + ", free " +
           formatBytes(double(t.freeBytes)) + ", largest free block " +
           formatBytes(double(t.largestFreeBlockBytes)) + ", fragmentation " +
           fragmentationText(t.fragmentation) + " (1 - largest free / free)";
}

std::string segmentFreeText(const SegmentTotals& t, uint64_t requestBytes) {
    const std::string free = formatBytes(double(t.freeBytes));
    const std::string where =
        " inside the " + std::to_string(t.segments) + (t.segments == 1 ? " segment" : " segments");
    const std::string fragmentation = "fragmentation " + fragmentationText(t.fragmentation);
    const std::string largest =
        "largest free block " + formatBytes(double(t.largestFreeBlockBytes));
    if (requestBytes == 0) {
        return largest + ", " + free + " free" + where + " (" + fragmentation + ")";
    }
    const int64_t request = allocationBytes(requestBytes);
    // The exact bytes too: PyTorch states requests in MiB ("1000.00 MiB"), formatBytes in GiB.
    const std::string vs =
        " request " + formatBytes(double(request)) + " (" + std::to_string(request) + " B): ";
    if (t.largestFreeBlockBytes >= request) {
        return largest + " >=" + vs + "a segment could have held it (" + free + " free" + where +
               ", " + fragmentation + ")";
    }
    if (t.freeBytes >= request) {
        return largest + " <" + vs + free + " was free" + where + " but in pieces (" +
               fragmentation + "), so no segment could hold it";
    }
    return largest + " <" + vs + "only " + free + " was free" + where + " (" + fragmentation +
           "), less than the request: it needed a new segment";
}

}  // namespace vramscope::analysis
