#include "vramscope/analysis/time/kernel_lanes.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace vramscope::analysis {

using trace::TimestampNs;

LaneClass laneClassOf(trace::KernelCategory category) {
    switch (category) {
        case trace::KernelCategory::Compute:
            return LaneClass::Compute;
        case trace::KernelCategory::Communication:
            return LaneClass::Communication;
        case trace::KernelCategory::Memcpy:
        case trace::KernelCategory::Memset:
            return LaneClass::Memory;
    }
    return LaneClass::Compute;
}

const char* toString(LaneClass laneClass) {
    switch (laneClass) {
        case LaneClass::Compute:
            return "compute";
        case LaneClass::Communication:
            return "communication";
        case LaneClass::Memory:
            return "memory";
    }
    return "compute";
}

KernelLaneIndex::KernelLaneIndex(const trace::TraceData& data, trace::DeviceIndex device)
    : m_device(device) {
    const trace::KernelEvents& k = data.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] == device && k.endNs[i] >= k.startNs[i]) {
            m_kernel.push_back(uint32_t(i));
        }
    }
    std::stable_sort(m_kernel.begin(), m_kernel.end(),
                     [&](uint32_t a, uint32_t b) { return k.startNs[a] < k.startNs[b]; });
    const size_t n = m_kernel.size();
    m_start.resize(n);
    m_end.resize(n);
    m_maxEnd.resize(n);
    m_class.resize(n);
    TimestampNs maxEnd = INT64_MIN;
    for (size_t p = 0; p < n; ++p) {
        const uint32_t i = m_kernel[p];
        m_start[p] = k.startNs[i];
        m_end[p] = k.endNs[i];
        maxEnd = std::max(maxEnd, m_end[p]);
        m_maxEnd[p] = maxEnd;
        m_class[p] = laneClassOf(k.category[i]);
    }
}

size_t KernelLaneIndex::firstOverlapping(TimestampNs t0) const {
    // Every kernel before the first position whose running maximum end reaches t0 ended before t0.
    return size_t(std::lower_bound(m_maxEnd.begin(), m_maxEnd.end(), t0) - m_maxEnd.begin());
}

LaneBlocks KernelLaneIndex::blocks(TimestampNs t0, TimestampNs t1, int64_t mergeNs) const {
    LaneBlocks out;
    if (t1 <= t0) {
        return out;
    }
    mergeNs = std::max<int64_t>(mergeNs, 0);
    std::array<int64_t, kLaneClassCount> longest{};
    int64_t busyLongest = 0;
    auto add = [&](std::vector<LaneBlock>& list, int64_t& longestNs, size_t p) {
        const int64_t duration = m_end[p] - m_start[p];
        if (!list.empty() && m_start[p] <= list.back().endNs + mergeNs) {
            LaneBlock& b = list.back();
            b.endNs = std::max(b.endNs, m_end[p]);
            b.kernels += 1;
            b.busyNs += duration;
            if (duration > longestNs) {
                longestNs = duration;
                b.longestKernel = m_kernel[p];
            }
            return;
        }
        list.push_back(LaneBlock{m_start[p], m_end[p], 1, m_kernel[p], duration});
        longestNs = duration;
    };
    for (size_t p = firstOverlapping(t0); p < m_start.size() && m_start[p] < t1; ++p) {
        if (m_end[p] < t0 || (m_end[p] == t0 && m_start[p] != t0)) {
            continue;
        }
        const size_t c = size_t(m_class[p]);
        add(out.byClass[c], longest[c], p);
        add(out.busy, busyLongest, p);
    }
    return out;
}

int64_t KernelLaneIndex::kernelAt(TimestampNs t, LaneClass laneClass) const {
    const size_t first = firstOverlapping(t);
    const size_t last =
        size_t(std::upper_bound(m_start.begin(), m_start.end(), t) - m_start.begin());
    for (size_t p = last; p > first; --p) {
        const size_t q = p - 1;
        if (m_class[q] == laneClass && m_start[q] <= t && t < std::max(m_end[q], m_start[q] + 1)) {
            return m_kernel[q];
        }
    }
    return -1;
}

std::vector<trace::DeviceIndex> kernelDevices(const trace::TraceData& data) {
    std::set<trace::DeviceIndex> devices;
    for (trace::DeviceIndex d : data.kernels.device) {
        if (d != trace::kHostDevice) {
            devices.insert(d);
        }
    }
    return {devices.begin(), devices.end()};
}

}  // namespace vramscope::analysis
