#include "vramscope/trace/plausibility.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace vramscope::trace {
namespace {

uint64_t dropImplausibleSizes(TraceData& data) {
    uint64_t dropped = 0;
    std::vector<bool> keep(data.memory.size());
    for (size_t i = 0; i < keep.size(); ++i) {
        keep[i] = data.memory.sizeBytes[i] <= kMaxPlausibleMemoryBytes;
        dropped += keep[i] ? 0 : 1;
    }
    if (dropped > 0) {
        data.memory.keepRows(keep);
    }
    uint64_t droppedCounters = 0;
    keep.assign(data.counters.size(), true);
    constexpr auto kMax = static_cast<double>(kMaxPlausibleMemoryBytes);
    for (size_t i = 0; i < keep.size(); ++i) {
        const CounterKind kind = data.counters.kind[i];
        const double v = data.counters.value[i];
        if ((isGpuMemoryCounter(kind) || isHostMemoryCounter(kind) ||
             isDriverGpuMemoryCounter(kind)) &&
            (!std::isfinite(v) || v > kMax)) {
            keep[i] = false;
            ++droppedCounters;
        }
    }
    if (droppedCounters > 0) {
        data.counters.keepRows(keep);
    }
    return dropped + droppedCounters;
}

/// Calls fn(t) for every instant of `data`.
template <typename Fn>
void forEachInstant(const TraceData& data, Fn&& fn) {
    for (TimestampNs t : data.memory.timestampNs)
        fn(t);
    for (TimestampNs t : data.counters.timestampNs)
        fn(t);
    for (const OomEvent& o : data.ooms)
        fn(o.timestampNs);
    for (const auto* column :
         {&data.kernels.startNs, &data.kernels.endNs, &data.collectives.startNs,
          &data.collectives.endNs, &data.ranges.startNs, &data.ranges.endNs}) {
        for (TimestampNs t : *column)
            fn(t);
    }
}

/// Whether a gap of `gap` ns is an outlier gap at `extent` ns from the median.
bool isOutlierGap(int64_t gap, int64_t extent) {
    const double threshold = std::max(static_cast<double>(kMinOutlierGapNs),
                                      static_cast<double>(kOutlierGapRatio) * extent);
    return static_cast<double>(gap) > threshold;
}

/// The instants kept, [lo, hi] (the first and last instant when nothing is cut), by the outlier-gap
/// rule over sorted instants `s`.
std::pair<int64_t, int64_t> keptSpan(const std::vector<int64_t>& s) {
    const size_t n = s.size();
    const auto most =
        std::max<uint64_t>(kMinOutlierInstants, static_cast<uint64_t>(kMaxOutlierFraction * n));
    const size_t mid = n / 2;
    const int64_t median = s[mid];
    int64_t lo = s.front();
    for (size_t i = mid; i-- > 0;) {
        if (i + 1 > most) {
            continue;  // too many beyond this gap to be outliers
        }
        if (isOutlierGap(s[i + 1] - s[i], median - s[i + 1])) {
            lo = s[i + 1];
            break;
        }
    }
    int64_t hi = s.back();
    for (size_t i = mid + 1; i < n; ++i) {
        if (n - i > most) {
            continue;
        }
        if (isOutlierGap(s[i] - s[i - 1], s[i - 1] - median)) {
            hi = s[i - 1];
            break;
        }
    }
    return {lo, hi};
}

uint64_t dropOutOfSpanTimes(TraceData& data, int64_t& spanLo, int64_t& spanHi) {
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
    size_t n = 0;
    forEachInstant(data, [&](int64_t t) {
        first = std::min(first, t);
        last = std::max(last, t);
        ++n;
    });
    // A trace within a day has no gap longer than a day: nothing to sort.
    if (n < 3 || static_cast<double>(last) - static_cast<double>(first) <= kMinOutlierGapNs) {
        return 0;
    }
    std::vector<int64_t> sorted;
    sorted.reserve(n);
    forEachInstant(data, [&](int64_t t) { sorted.push_back(t); });
    std::sort(sorted.begin(), sorted.end());
    std::tie(spanLo, spanHi) = keptSpan(sorted);
    const int64_t lo = spanLo;
    const int64_t hi = spanHi;
    auto in = [lo, hi](int64_t t) { return t >= lo && t <= hi; };
    uint64_t dropped = 0;
    auto keepInstants = [&](const std::vector<TimestampNs>& t) {
        std::vector<bool> keep(t.size());
        for (size_t i = 0; i < t.size(); ++i) {
            keep[i] = in(t[i]);
            dropped += keep[i] ? 0 : 1;
        }
        return keep;
    };
    auto keepIntervals = [&](const std::vector<TimestampNs>& a, const std::vector<TimestampNs>& b) {
        std::vector<bool> keep(a.size());
        for (size_t i = 0; i < a.size(); ++i) {
            keep[i] = in(a[i]) && in(b[i]);
            dropped += keep[i] ? 0 : 1;
        }
        return keep;
    };
    // Ranges first: memory events name them by 1-based index, renumbered below.
    const std::vector<bool> keptRanges = keepIntervals(data.ranges.startNs, data.ranges.endNs);
    std::vector<uint32_t> newId(keptRanges.size() + 1, 0);
    for (size_t i = 0, next = 1; i < keptRanges.size(); ++i) {
        newId[i + 1] = keptRanges[i] ? static_cast<uint32_t>(next++) : 0;
    }
    data.ranges.keepRows(keptRanges);
    for (uint32_t& id : data.memory.nvtxRange) {
        id = id < newId.size() ? newId[id] : 0;
    }
    // Memory alive before the trace began (MemoryKind::PreExisting, which importers place at the
    // first event's time) is no event of its own: when that first event was an outlier, it moves
    // to the start of the kept span instead of taking the memory out of the trace with it.
    for (size_t i = 0; i < data.memory.size(); ++i) {
        if (data.memory.kind[i] == MemoryKind::PreExisting && data.memory.timestampNs[i] < lo) {
            data.memory.timestampNs[i] = lo;
        }
    }
    data.memory.keepRows(keepInstants(data.memory.timestampNs));
    data.counters.keepRows(keepInstants(data.counters.timestampNs));
    data.kernels.keepRows(keepIntervals(data.kernels.startNs, data.kernels.endNs));
    data.collectives.keepRows(keepIntervals(data.collectives.startNs, data.collectives.endNs));
    const auto oomsBefore = data.ooms.size();
    std::erase_if(data.ooms, [&](const OomEvent& o) { return !in(o.timestampNs); });
    dropped += oomsBefore - data.ooms.size();
    return dropped;
}

}  // namespace

PlausibilityResult dropImplausibleEvents(TraceData& data) {
    PlausibilityResult result;
    result.sizesOutOfRange = dropImplausibleSizes(data);
    if (result.sizesOutOfRange > 0) {
        data.dataLoss.push_back(
            {LossCounter::SizesOutOfRange, result.sizesOutOfRange,
             "removed " + std::to_string(result.sizesOutOfRange) +
                 " memory events or memory counter samples above 2^50 bytes (1 PiB)",
             0, 0});
    }
    int64_t lo = 0;
    int64_t hi = 0;
    result.timesOutOfSpan = dropOutOfSpanTimes(data, lo, hi);
    if (result.timesOutOfSpan > 0) {
        data.dataLoss.push_back(
            {LossCounter::TimesOutOfSpan, result.timesOutOfSpan,
             "removed " + std::to_string(result.timesOutOfSpan) +
                 " events with a time more than a day (and 1000x the trace's extent) away from "
                 "the rest; span kept " +
                 std::to_string(lo) + ".." + std::to_string(hi) + " ns",
             0, 0});
    }
    return result;
}

}  // namespace vramscope::trace
