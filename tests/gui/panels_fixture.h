#pragma once
// Builds a LoadedJob for the panel tests directly from traces (no loader involved), with every
// rank shifted onto job time by a known offset.

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "vramscope/trace/open_trace.h"
#include "vramscope/widgets/loaded_job.h"

namespace panels_test {

using namespace vramscope;

/// job time = trace time + toJobNs for every rank.
inline std::shared_ptr<widgets::LoadedJob> makeJob(std::vector<trace::TraceData> traces,
                                                   int64_t toJobNs) {
    auto job = std::make_shared<widgets::LoadedJob>();
    job->title = "test job";
    int64_t end = 0;
    for (size_t r = 0; r < traces.size(); ++r) {
        trace::RankTrace rt;
        rt.path = "rank" + std::to_string(r);
        rt.trace.data = std::move(traces[r]);
        const trace::TraceData& data = rt.trace.data;
        widgets::RankInfo info;
        info.rank = data.header.rank >= 0 ? data.header.rank : int32_t(r);
        info.path = rt.path;
        info.toJobNs = toJobNs;
        for (size_t i = 0; i < data.ranges.size(); ++i) {
            info.ranges.push_back(widgets::RangeSpan{data.ranges.startNs[i] + toJobNs,
                                                     data.ranges.endNs[i] + toJobNs,
                                                     std::string(data.string(data.ranges.name[i])),
                                                     data.ranges.depth[i], data.ranges.kind[i]});
            end = std::max(end, data.ranges.endNs[i] + toJobNs);
        }
        std::set<trace::DeviceIndex> devices;
        for (size_t i = 0; i < data.memory.size(); ++i) {
            devices.insert(data.memory.device[i]);
            end = std::max(end, data.memory.timestampNs[i] + toJobNs);
        }
        for (size_t i = 0; i < data.kernels.size(); ++i) {
            end = std::max(end, data.kernels.endNs[i] + toJobNs);
        }
        for (trace::DeviceIndex d : devices) {
            widgets::GpuSeries g;
            g.key = widgets::GpuKey{int(r), d};
            g.rank = info.rank;
            if (const trace::DeviceInfo* di = data.device(d)) {
                g.capacityBytes = di->totalMemoryBytes;
                g.deviceName = di->name;
            }
            for (const trace::OomEvent& o : data.ooms) {
                if (o.device == d) {
                    g.ooms.push_back(widgets::OomMark{o.timestampNs + toJobNs, o.requestedBytes});
                }
            }
            job->gpus.push_back(std::move(g));
        }
        job->job.ranks.push_back(std::move(rt));
        job->ranks.push_back(std::move(info));
    }
    job->durationNs = end + 1;
    return job;
}

/// The earliest timestamp of any memory event, kernel or range in `traces` (0 when empty).
inline int64_t earliestTime(const std::vector<trace::TraceData>& traces) {
    int64_t t = INT64_MAX;
    for (const trace::TraceData& d : traces) {
        for (int64_t v : d.memory.timestampNs)
            t = std::min(t, v);
        for (int64_t v : d.kernels.startNs)
            t = std::min(t, v);
        for (int64_t v : d.ranges.startNs)
            t = std::min(t, v);
    }
    return t == INT64_MAX ? 0 : t;
}

/// A job from files opened with trace::openJob, job time 0 at the earliest event.
inline std::shared_ptr<widgets::LoadedJob> openAsJob(const std::vector<std::string>& paths) {
    auto job = trace::openJob(paths);
    if (!job.ok()) {
        return nullptr;
    }
    std::vector<trace::TraceData> traces;
    for (trace::RankTrace& r : job->ranks) {
        traces.push_back(std::move(r.trace.data));
    }
    const int64_t origin = earliestTime(traces);
    return makeJob(std::move(traces), -origin);
}

/// Allocated bytes on (device, level) at time t (trace time) by replaying the memory events in
/// time order: an alloc adds its size under its address, a free removes what its address holds.
/// DeviceStatic memory is left out, as in the timeline.
inline int64_t replayLiveBytes(const trace::TraceData& data, trace::DeviceIndex device,
                               trace::MemoryLevel level, int64_t t) {
    std::vector<size_t> order;
    for (size_t i = 0; i < data.memory.size(); ++i) {
        if (data.memory.device[i] == device && data.memory.level[i] == level &&
            data.memory.kind[i] != trace::MemoryKind::DeviceStatic &&
            data.memory.timestampNs[i] <= t) {
            order.push_back(i);
        }
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return data.memory.timestampNs[a] < data.memory.timestampNs[b];
    });
    std::map<uint64_t, int64_t> live;
    for (size_t i : order) {
        if (data.memory.action[i] == trace::MemoryAction::Alloc) {
            live[data.memory.address[i]] = int64_t(data.memory.sizeBytes[i]);
        } else {
            live.erase(data.memory.address[i]);
        }
    }
    int64_t bytes = 0;
    for (const auto& [address, size] : live) {
        bytes += size;
    }
    return bytes;
}

}  // namespace panels_test
