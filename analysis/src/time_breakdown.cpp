#include "vramscope/analysis/time_breakdown.h"

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

struct GapOrder {  // min-heap on (duration, later start first out)
    bool operator()(const IdleGap& a, const IdleGap& b) const {
        return a.durationNs != b.durationNs ? a.durationNs > b.durationNs : a.startNs < b.startNs;
    }
};

TimeBreakdown breakdownOf(const trace::TraceData& data, trace::DeviceIndex device,
                          std::vector<uint32_t>& idx, const BreakdownOptions& options) {
    const trace::KernelEvents& k = data.kernels;
    auto byStart = [&](uint32_t a, uint32_t b) { return k.startNs[a] < k.startNs[b]; };
    if (!std::is_sorted(idx.begin(), idx.end(), byStart)) {
        std::stable_sort(idx.begin(), idx.end(), byStart);
    }
    TimeBreakdown b;
    b.device = device;
    b.kernels = idx.size();
    std::vector<Interval> compute, comm, memory;
    std::priority_queue<IdleGap, std::vector<IdleGap>, GapOrder> heap;
    int64_t busyStart = k.startNs[idx[0]], busyEnd = k.endNs[idx[0]];
    size_t lastEnder = idx[0];
    b.firstStartNs = busyStart;
    for (size_t n = 0; n < idx.size(); ++n) {
        const uint32_t i = idx[n];
        const int64_t s = k.startNs[i], e = k.endNs[i];
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
            IdleGap g{device, busyEnd, s - busyEnd, lastEnder, i, GapCause::Other};
            bool anyComm = false, allLate = true;
            for (size_t m = n; m < idx.size() && k.startNs[idx[m]] == s; ++m) {
                anyComm |= k.category[idx[m]] == KernelCategory::Communication;
                allLate &= k.launchNs[idx[m]] >= 0 && k.launchNs[idx[m]] > busyEnd;
            }
            g.cause = anyComm   ? GapCause::CollectiveWait
                      : allLate ? GapCause::HostBound
                                : GapCause::Other;
            if (g.durationNs >= options.minGapNs) {
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
    b.spanNs = b.lastEndNs - b.firstStartNs;
    b.idleNs = b.spanNs - b.busyNs;
    b.computeNs = total(compute);
    b.communicationNs = total(comm);
    b.memoryNs = total(memory);
    b.overlapNs = intersection(comm, compute);
    b.exposedCommunicationNs = b.communicationNs - b.overlapNs;
    b.overlapPct =
        b.communicationNs > 0 ? 100.0 * double(b.overlapNs) / double(b.communicationNs) : 0.0;
    while (!heap.empty()) {
        b.gaps.push_back(heap.top());
        heap.pop();
    }
    std::reverse(b.gaps.begin(), b.gaps.end());
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
        out.push_back(breakdownOf(data, device, idx, options));
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
