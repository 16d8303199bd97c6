// Kernel time per name and per category on each GPU (definitions: top_kernels.h).
#include "vramscope/analysis/time/top_kernels.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "vramscope/analysis/time/time_breakdown.h"

namespace vramscope::analysis {

namespace {

using trace::KernelCategory;

constexpr KernelCategory kCategories[] = {KernelCategory::Compute, KernelCategory::Communication,
                                          KernelCategory::Memcpy, KernelCategory::Memset};

void addLaunch(KernelTime& t, int64_t durationNs) {
    t.count += 1;
    t.totalNs += durationNs;
    t.maxNs = std::max(t.maxNs, durationNs);
}

void merge(KernelTime& into, const KernelTime& t) {
    into.count += t.count;
    into.totalNs += t.totalNs;
    into.maxNs = std::max(into.maxNs, t.maxNs);
}

bool largerFirst(const KernelTime& a, const KernelTime& b) {
    return std::tie(b.totalNs, a.name, a.category) < std::tie(a.totalNs, b.name, b.category);
}

/// The kernels of one device gathered per (string id, category), then per (name, category):
/// a trace read from a file may hold the same name under two string ids.
struct DeviceTally {
    std::unordered_map<uint64_t, KernelTime> byId;
    std::vector<std::pair<int64_t, int64_t>> intervals;
};

DeviceKernelTimes finish(const trace::TraceData& data, trace::DeviceIndex device,
                         DeviceTally& tally, size_t limit) {
    DeviceKernelTimes out;
    out.device = device;
    out.kernels = tally.intervals.size();
    out.busyNs = unionLength(std::move(tally.intervals));
    std::map<std::pair<std::string_view, KernelCategory>, KernelTime> byName;
    for (auto& [key, t] : tally.byId) {
        const std::string_view name = data.string(trace::StringId(key >> 8));
        KernelTime& row = byName[{name, t.category}];
        if (row.count == 0) {
            row.name = std::string(name);
            row.category = t.category;
        }
        merge(row, t);
    }
    KernelTime categories[std::size(kCategories)];
    for (auto& [key, t] : byName) {
        merge(categories[size_t(t.category)], t);
        out.byName.push_back(std::move(t));
    }
    const double busy = double(out.busyNs);
    auto share = [&](int64_t ns) { return busy > 0 ? double(ns) / busy : 0.0; };
    for (KernelCategory c : kCategories) {
        KernelTime& t = categories[size_t(c)];
        if (t.count > 0) {
            t.name = trace::toString(c);
            t.category = c;
            t.busyShare = share(t.totalNs);
            out.byCategory.push_back(std::move(t));
        }
    }
    std::sort(out.byCategory.begin(), out.byCategory.end(), largerFirst);
    std::sort(out.byName.begin(), out.byName.end(), largerFirst);
    out.kernelNames = out.byName.size();
    for (KernelTime& t : out.byName) {
        t.busyShare = share(t.totalNs);
    }
    if (limit > 0 && out.byName.size() > limit) {
        for (size_t i = limit; i < out.byName.size(); ++i) {
            out.otherNames += 1;
            out.otherCount += out.byName[i].count;
            out.otherTotalNs += out.byName[i].totalNs;
        }
        out.otherBusyShare = share(out.otherTotalNs);
        out.byName.resize(limit);
    }
    return out;
}

}  // namespace

std::vector<DeviceKernelTimes> topKernels(const trace::TraceData& data, size_t limit) {
    const trace::KernelEvents& k = data.kernels;
    std::map<trace::DeviceIndex, DeviceTally> devices;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.endNs[i] < k.startNs[i]) {
            continue;
        }
        DeviceTally& d = devices[k.device[i]];
        const int64_t durationNs = k.endNs[i] - k.startNs[i];
        // One key for (string id, category): the id above the category's 8 bits.
        const uint64_t key = (uint64_t(k.name[i]) << 8) | uint64_t(k.category[i]);
        KernelTime& t = d.byId[key];
        t.category = k.category[i];
        addLaunch(t, durationNs);
        d.intervals.emplace_back(k.startNs[i], k.endNs[i]);
    }
    std::vector<DeviceKernelTimes> out;
    out.reserve(devices.size());
    for (auto& [device, tally] : devices) {
        out.push_back(finish(data, device, tally, limit));
    }
    return out;
}

}  // namespace vramscope::analysis
