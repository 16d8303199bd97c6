#include "vramscope/analysis/time/slow_down.h"

#include <algorithm>
#include <map>

#include "sample_stats.h"
#include "vramscope/analysis/collectives/straggler.h"
#include "vramscope/analysis/time/time_breakdown.h"

namespace vramscope::analysis {

using Interval = std::pair<int64_t, int64_t>;

const char* toString(IterationPart part) {
    switch (part) {
        case IterationPart::Compute:
            return "compute";
        case IterationPart::Transfer:
            return "communication transfer";
        case IterationPart::Wait:
            return "waiting for the last rank";
        case IterationPart::Copies:
            return "copies";
        case IterationPart::HostBound:
            return "host-bound gaps";
        case IterationPart::OtherIdle:
            return "other idle";
    }
    return "other idle";
}

namespace {

/// Intervals sorted by start, with the longest length, so the ones overlapping a window are
/// found by a binary search.
struct SortedIntervals {
    std::vector<Interval> items;
    int64_t longest = 0;

    explicit SortedIntervals(std::vector<Interval> v) : items(std::move(v)) {
        std::sort(items.begin(), items.end());
        for (const Interval& i : items) {
            longest = std::max(longest, i.second - i.first);
        }
    }
    /// The intervals overlapping [from, to), clipped to it, appended to `out`.
    void clipInto(int64_t from, int64_t to, std::vector<Interval>& out) const {
        auto it = std::lower_bound(items.begin(), items.end(), Interval{from - longest, INT64_MIN});
        for (; it != items.end() && it->first < to; ++it) {
            const int64_t s = std::max(it->first, from), e = std::min(it->second, to);
            if (e > s) {
                out.emplace_back(s, e);
            }
        }
    }
};

std::vector<Interval> periodsOf(const std::vector<Iteration>& its) {
    std::vector<Interval> out;
    bool backToBack = true;
    for (size_t k = 0; k + 1 < its.size(); ++k) {
        out.emplace_back(its[k].startNs, its[k + 1].startNs);
        backToBack &= its[k].endNs >= its[k + 1].startNs;
    }
    if (!its.empty() && backToBack && its.back().endNs > its.back().startNs) {
        out.emplace_back(its.back().startNs, its.back().endNs);
    }
    return out;
}

std::vector<Interval> computeKernels(const trace::TraceData& data, trace::DeviceIndex device) {
    std::vector<Interval> out;
    const trace::KernelEvents& k = data.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] == device && k.category[i] == trace::KernelCategory::Compute &&
            k.endNs[i] > k.startNs[i]) {
            out.emplace_back(k.startNs[i], k.endNs[i]);
        }
    }
    return out;
}

/// The rank last most often among the matched collectives of (device, matchedRank) that began
/// inside one of `windows` (local clock); ties: the lower rank.
trace::RankId lastRankIn(const CollectiveMatch& match, trace::DeviceIndex device,
                         trace::RankId matchedRank, int64_t clockOffsetNs,
                         const std::vector<Interval>& windows) {
    std::map<trace::RankId, size_t> last;
    for (const MatchedCollective& c : match.collectives) {
        if (c.skewNs <= 0 || toInt(c.stragglerRank) < 0) {
            continue;
        }
        for (const CollectiveParticipant& p : c.participants) {
            const int64_t t = p.startNs - clockOffsetNs;
            if (p.rank == matchedRank && p.device == device &&
                std::any_of(windows.begin(), windows.end(),
                            [&](const Interval& w) { return t >= w.first && t < w.second; })) {
                last[c.stragglerRank] += 1;
            }
        }
    }
    trace::RankId best = trace::kUnknownRank;
    size_t most = 0;
    for (const auto& [rank, n] : last) {
        if (n > most) {
            best = rank;
            most = n;
        }
    }
    return best;
}

void summarise(SlowDownReport& r) {
    const size_t m = r.steadyIterations, third = r.thirdIterations;
    auto durations = [&](size_t from, size_t count, int part) {
        std::vector<int64_t> v;
        for (size_t i = from; i < from + count; ++i) {
            const IterationTime& it = r.iterations[1 + i];
            v.push_back(part < 0 ? it.durationNs : it.partNs[size_t(part)]);
        }
        return v;
    };
    const std::vector<int64_t> early = durations(0, third, -1);
    r.earlyMedianNs = median(early);
    r.lateMedianNs = median(durations(m - third, third, -1));
    std::vector<int64_t> deviation;
    for (int64_t d : early) {
        deviation.push_back(d > r.earlyMedianNs ? d - r.earlyMedianNs : r.earlyMedianNs - d);
    }
    r.earlyMadNs = median(deviation);
    for (size_t p = 0; p < kIterationParts; ++p) {
        r.parts.push_back({IterationPart(p), median(durations(0, third, int(p))),
                           median(durations(m - third, third, int(p)))});
    }
    std::stable_sort(r.parts.begin(), r.parts.end(), [](const PartGrowth& a, const PartGrowth& b) {
        return a.growthNs() > b.growthNs();
    });
}

}  // namespace

SlowDownReport slowDown(const trace::TraceData& data, trace::DeviceIndex device,
                        const IterationSet& iterations, const CollectiveMatch* match,
                        trace::RankId matchedRank, int64_t clockOffsetNs) {
    SlowDownReport r;
    r.device = device;
    if (std::find(data.kernels.device.begin(), data.kernels.device.end(), device) ==
        data.kernels.device.end()) {
        r.reason =
            "no kernels on this GPU: iteration time cannot be split (PyTorch memory snapshots "
            "record none)";
        return r;
    }
    if (iterations.count() == 0) {
        r.reason = "no iterations: " + iterations.reason;
        return r;
    }
    const std::vector<Interval> periods = periodsOf(iterations.iterations);
    size_t collectives = 0;
    std::vector<Interval> waits;
    if (match != nullptr) {
        waits = waitIntervals(*match, device, matchedRank, clockOffsetNs, &collectives);
    }
    r.waitKnown = collectives > 0;
    const std::vector<TimeBreakdown> parts = computeWindowBreakdowns(data, device, periods);
    const SortedIntervals waitSorted(std::move(waits));
    const SortedIntervals computeSorted(computeKernels(data, device));
    for (size_t k = 0; k < periods.size(); ++k) {
        const auto [from, to] = periods[k];
        const TimeBreakdown& b = parts[k];
        IterationTime it;
        it.index = k;
        it.number = iterations.iterations[k].number;
        it.startNs = from;
        it.durationNs = to - from;
        int64_t wait = 0;
        if (r.waitKnown && b.exposedCommunicationNs > 0) {
            std::vector<Interval> both;
            waitSorted.clipInto(from, to, both);
            computeSorted.clipInto(from, to, both);
            wait = std::clamp<int64_t>(unionLength(std::move(both)) - b.computeNs, 0,
                                       b.exposedCommunicationNs);
        }
        auto& p = it.partNs;
        p[size_t(IterationPart::Compute)] = b.computeNs;
        p[size_t(IterationPart::Wait)] = wait;
        p[size_t(IterationPart::Transfer)] = b.exposedCommunicationNs - wait;
        p[size_t(IterationPart::Copies)] =
            std::max<int64_t>(0, b.busyNs - b.computeNs - b.exposedCommunicationNs);
        p[size_t(IterationPart::HostBound)] = b.gapNsByCause[int(GapCause::HostBound)];
        p[size_t(IterationPart::OtherIdle)] =
            it.durationNs - b.busyNs - b.gapNsByCause[int(GapCause::HostBound)];
        r.iterations.push_back(it);
    }
    r.steadyIterations = r.iterations.empty() ? 0 : r.iterations.size() - 1;
    if (r.steadyIterations < 3) {
        r.reason = std::to_string(r.iterations.size()) + " iteration period(s) (" +
                   std::to_string(r.steadyIterations) +
                   " after the warm-up); a first and a last third need at least 3";
        return r;
    }
    r.assessable = true;
    r.thirdIterations = r.steadyIterations / 3;
    summarise(r);
    if (match != nullptr && r.waitKnown) {
        const std::vector<Interval> late(periods.end() - ptrdiff_t(r.thirdIterations),
                                         periods.end());
        r.lateLastRank = lastRankIn(*match, device, matchedRank, clockOffsetNs, late);
    }
    return r;
}

}  // namespace vramscope::analysis
