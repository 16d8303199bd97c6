#include "vramscope/analysis/time/time_breakdown.h"

#include <algorithm>
#include <map>
#include <queue>

namespace vramscope::analysis {

using trace::KernelCategory;
using Interval = std::pair<int64_t, int64_t>;

const char* toString(GapCause cause) {
    switch (cause) {
        case GapCause::CollectiveWait:
            return "collective wait";
        case GapCause::HostBound:
            return "host-bound";
        case GapCause::Other:
            return "other";
    }
    return "other";
}

double TimeBreakdown::exposedCommunicationFraction() const {
    return spanNs > 0 ? double(exposedCommunicationNs) / double(spanNs) : 0.0;
}

namespace {

/// Appends [s, e) to a union being built from intervals in start order.
void extend(std::vector<Interval>& u, int64_t s, int64_t e) {
    if (!u.empty() && s <= u.back().second) {
        u.back().second = std::max(u.back().second, e);
    } else {
        u.emplace_back(s, e);
    }
}

int64_t total(const std::vector<Interval>& u) {
    int64_t t = 0;
    for (const Interval& i : u) {
        t += i.second - i.first;
    }
    return t;
}

int64_t intersection(const std::vector<Interval>& a, const std::vector<Interval>& b) {
    int64_t t = 0;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const int64_t s = std::max(a[i].first, b[j].first);
        const int64_t e = std::min(a[i].second, b[j].second);
        if (e > s) {
            t += e - s;
        }
        if (a[i].second < b[j].second) {
            ++i;
        } else {
            ++j;
        }
    }
    return t;
}

void sortByStart(const trace::KernelEvents& k, std::vector<uint32_t>& idx) {
    auto byStart = [&](uint32_t a, uint32_t b) { return k.startNs[a] < k.startNs[b]; };
    if (!std::is_sorted(idx.begin(), idx.end(), byStart)) {
        std::stable_sort(idx.begin(), idx.end(), byStart);
    }
}

struct GapOrder {  // min-heap on (duration, later start first out)
    bool operator()(const IdleGap& a, const IdleGap& b) const {
        return a.durationNs != b.durationNs ? a.durationNs > b.durationNs : a.startNs < b.startNs;
    }
};

/// What a window's edges touch: the device ran kernels before it (its idle then counts from the
/// window's start) or after it (its idle counts up to the window's end). Whole-device: neither.
struct WindowEdges {
    int64_t from = INT64_MIN;
    int64_t to = INT64_MAX;
    bool lead = false;                  ///< a kernel starts before `from`
    int64_t leadOriginNs = 0;           ///< the latest end among those: where the idle began
    size_t leadKernel = 0;              ///< the kernel ending there
    const uint32_t* next = nullptr;     ///< first kernel starting at or after `to` (null: none)
    const uint32_t* nextEnd = nullptr;  ///< end of the device's kernels, for the ties of `next`
};

/// The cause of an idle gap that began at `origin` and ends when the kernels [first, last) that
/// start together (at the gap's end) begin: the rule of docs/DESIGN.md "Metric definitions", see
/// computeTimeBreakdowns.
GapCause causeOf(const trace::KernelEvents& k, const uint32_t* first, const uint32_t* last,
                 int64_t origin) {
    bool anyComm = false, allLate = true;
    for (const uint32_t* m = first; m != last && k.startNs[*m] == k.startNs[*first]; ++m) {
        anyComm |= k.category[*m] == KernelCategory::Communication;
        allLate &= k.launchNs[*m] >= 0 && k.launchNs[*m] > origin;
    }
    return anyComm ? GapCause::CollectiveWait : allLate ? GapCause::HostBound : GapCause::Other;
}

/// Counts a gap by cause and keeps the largest ones.
struct GapTally {
    TimeBreakdown& b;
    const BreakdownOptions& options;
    std::priority_queue<IdleGap, std::vector<IdleGap>, GapOrder> heap;

    void add(const IdleGap& g) {
        if (g.durationNs <= 0 || g.durationNs < options.minGapNs) {
            return;
        }
        b.gapNsByCause[int(g.cause)] += g.durationNs;
        b.gapCountByCause[int(g.cause)] += 1;
        if (options.maxGaps > 0) {
            if (heap.size() < options.maxGaps) {
                heap.push(g);
            } else if (GapOrder()(g, heap.top())) {
                heap.pop();
                heap.push(g);
            }
        }
    }
    void finish() {
        while (!heap.empty()) {
            b.gaps.push_back(heap.top());
            heap.pop();
        }
        std::reverse(b.gaps.begin(), b.gaps.end());
    }
};

/// The breakdown of the kernels `idx` (in start order, each overlapping [w.from, w.to)) with
/// every kernel clipped to the window (clipping keeps the start order), and the idle at the
/// window's edges that w says the device's timeline holds there.
TimeBreakdown breakdownOf(const trace::TraceData& data, trace::DeviceIndex device,
                          const std::vector<uint32_t>& idx, const BreakdownOptions& options,
                          const WindowEdges& w = {}) {
    const trace::KernelEvents& k = data.kernels;
    TimeBreakdown b;
    b.device = device;
    b.kernels = idx.size();
    GapTally gaps{b, options, {}};
    if (idx.empty()) {
        if (w.lead && w.next != nullptr) {  // the whole window lies in one idle gap
            gaps.add({device, w.from, w.to - w.from, w.leadKernel, *w.next,
                      causeOf(k, w.next, w.nextEnd, w.leadOriginNs)});
            b.firstStartNs = w.from;
            b.lastEndNs = w.to;
            b.spanNs = b.idleNs = w.to - w.from;
            gaps.finish();
        }
        return b;
    }
    auto startOf = [&](uint32_t i) { return std::max(k.startNs[i], w.from); };
    auto endOf = [&](uint32_t i) { return std::min(k.endNs[i], w.to); };
    std::vector<Interval> compute, comm, memory;
    int64_t busyStart = startOf(idx[0]), busyEnd = endOf(idx[0]);
    size_t lastEnder = idx[0];
    b.firstStartNs = busyStart;
    if (w.lead && busyStart > w.from) {
        gaps.add({device, w.from, busyStart - w.from, w.leadKernel, idx[0],
                  causeOf(k, idx.data(), idx.data() + idx.size(), w.leadOriginNs)});
        b.firstStartNs = w.from;
    }
    for (size_t n = 0; n < idx.size(); ++n) {
        const uint32_t i = idx[n];
        const int64_t s = startOf(i), e = endOf(i);
        switch (k.category[i]) {
            case KernelCategory::Compute:
                extend(compute, s, e);
                break;
            case KernelCategory::Communication:
                extend(comm, s, e);
                break;
            case KernelCategory::Memcpy:
            case KernelCategory::Memset:
                extend(memory, s, e);
                break;
        }
        if (n > 0 && s > busyEnd) {
            b.busyNs += busyEnd - busyStart;
            gaps.add({device, busyEnd, s - busyEnd, lastEnder, i,
                      causeOf(k, idx.data() + n, idx.data() + idx.size(), busyEnd)});
            busyStart = s;
            busyEnd = e;
            lastEnder = i;
        } else if (e > busyEnd) {
            busyEnd = e;
            lastEnder = i;
        }
    }
    b.busyNs += busyEnd - busyStart;
    b.lastEndNs = busyEnd;
    if (w.next != nullptr && busyEnd < w.to) {
        gaps.add({device, busyEnd, w.to - busyEnd, lastEnder, *w.next,
                  causeOf(k, w.next, w.nextEnd, busyEnd)});
        b.lastEndNs = w.to;
    }
    b.spanNs = b.lastEndNs - b.firstStartNs;
    b.idleNs = b.spanNs - b.busyNs;
    b.computeNs = total(compute);
    b.communicationNs = total(comm);
    b.memoryNs = total(memory);
    b.overlapNs = intersection(comm, compute);
    b.exposedCommunicationNs = b.communicationNs - b.overlapNs;
    b.overlapPct =
        b.communicationNs > 0 ? 100.0 * double(b.overlapNs) / double(b.communicationNs) : 0.0;
    gaps.finish();
    return b;
}

}  // namespace

std::vector<TimeBreakdown> computeTimeBreakdowns(const trace::TraceData& data,
                                                 const BreakdownOptions& options) {
    const trace::KernelEvents& k = data.kernels;
    std::map<trace::DeviceIndex, std::vector<uint32_t>> byDevice;
    trace::DeviceIndex lastDevice{0};
    std::vector<uint32_t>* bucket = nullptr;
    for (size_t i = 0; i < k.size() && i < UINT32_MAX; ++i) {
        if (k.endNs[i] < k.startNs[i]) {
            continue;
        }
        if (bucket == nullptr || k.device[i] != lastDevice) {
            lastDevice = k.device[i];
            bucket = &byDevice[lastDevice];
        }
        bucket->push_back(uint32_t(i));
    }
    std::vector<TimeBreakdown> out;
    for (auto& [device, idx] : byDevice) {
        sortByStart(k, idx);
        out.push_back(breakdownOf(data, device, idx, options));
    }
    return out;
}

std::vector<TimeBreakdown> computeWindowBreakdowns(
    const trace::TraceData& data, trace::DeviceIndex device,
    const std::vector<std::pair<trace::TimestampNs, trace::TimestampNs>>& windows,
    const BreakdownOptions& options) {
    const trace::KernelEvents& k = data.kernels;
    std::vector<uint32_t> idx;
    int64_t longest = 0;
    for (size_t i = 0; i < k.size() && i < UINT32_MAX; ++i) {
        if (k.device[i] == device && k.endNs[i] >= k.startNs[i]) {
            idx.push_back(uint32_t(i));
            longest = std::max(longest, k.endNs[i] - k.startNs[i]);
        }
    }
    sortByStart(k, idx);
    // The latest end among idx[0..n] and its kernel: where the idle before a window began.
    std::vector<std::pair<int64_t, uint32_t>> latestEnd;
    latestEnd.reserve(idx.size());
    for (const uint32_t i : idx) {
        latestEnd.emplace_back(k.endNs[i], i);
        if (latestEnd.size() > 1 && latestEnd[latestEnd.size() - 2].first >= k.endNs[i]) {
            latestEnd.back() = latestEnd[latestEnd.size() - 2];
        }
    }
    auto firstAtOrAfter = [&](int64_t t) {
        return std::lower_bound(idx.begin(), idx.end(), t,
                                [&](uint32_t i, int64_t v) { return k.startNs[i] < v; });
    };
    std::vector<TimeBreakdown> out;
    out.reserve(windows.size());
    std::vector<uint32_t> in;
    for (const auto& [from, to] : windows) {
        WindowEdges w;
        w.from = from;
        w.to = to;
        const auto atFrom = firstAtOrAfter(from);
        if (atFrom != idx.begin()) {
            const auto& [end, kernel] = latestEnd[size_t(atFrom - idx.begin()) - 1];
            w.lead = end < from;  // else a kernel runs across `from`: no idle there
            w.leadOriginNs = end;
            w.leadKernel = kernel;
        }
        const auto atTo = firstAtOrAfter(to);
        if (atTo != idx.end()) {
            w.next = &*atTo;
            w.nextEnd = idx.data() + idx.size();
        }
        // A kernel overlapping [from, to) starts before `to` and no earlier than from - longest.
        in.clear();
        for (auto it = firstAtOrAfter(from > INT64_MIN + longest ? from - longest : INT64_MIN);
             it != atTo; ++it) {
            if (k.endNs[*it] > from || k.startNs[*it] >= from) {  // zero-length ones inside too
                in.push_back(*it);
            }
        }
        TimeBreakdown b = breakdownOf(data, device, in, options, w);
        if (b.kernels == 0 && b.spanNs == 0) {
            b.firstStartNs = from;
            b.lastEndNs = from;
        }
        out.push_back(std::move(b));
    }
    return out;
}

int64_t unionLength(std::vector<std::pair<int64_t, int64_t>> intervals) {
    std::sort(intervals.begin(), intervals.end());
    std::vector<Interval> u;
    for (const Interval& i : intervals) {
        if (i.second > i.first) {
            extend(u, i.first, i.second);
        }
    }
    return total(u);
}

}  // namespace vramscope::analysis
