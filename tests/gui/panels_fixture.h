#pragma once
// Job models for the panel tests, built by the production pipeline (analysis::buildJobModel)
// from synthetic traces or real files, and an independent replay of live bytes to check them.

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/open_trace.h"

namespace panels_test {

using namespace vramscope;

/// The earliest timestamp of any memory event, counter sample, kernel, range, collective or OOM
/// in `traces` (0 when empty): where the job time axis starts (job time 0 = the earliest event:
/// docs/DESIGN.md "Clocks").
inline int64_t earliestTime(const std::vector<trace::TraceData>& traces) {
    int64_t t = INT64_MAX;
    for (const trace::TraceData& d : traces) {
        for (int64_t v : d.memory.timestampNs)
            t = std::min(t, v);
        for (int64_t v : d.counters.timestampNs)
            t = std::min(t, v);
        for (int64_t v : d.kernels.startNs)
            t = std::min(t, v);
        for (int64_t v : d.ranges.startNs)
            t = std::min(t, v);
        for (int64_t v : d.collectives.startNs)
            t = std::min(t, v);
        for (const trace::OomEvent& o : d.ooms)
            t = std::min(t, o.timestampNs);
    }
    return t == INT64_MAX ? 0 : t;
}

/// A job of `traces` (one rank each, clock offset 0) built by the production pipeline
/// (analysis::buildJobModel), so job time = trace time - earliestTime(traces).
inline std::shared_ptr<const analysis::JobModel> makeJob(std::vector<trace::TraceData> traces) {
    trace::Job job;
    for (size_t r = 0; r < traces.size(); ++r) {
        trace::RankTrace rt;
        rt.path = "rank" + std::to_string(r);
        rt.trace.data = std::move(traces[r]);
        job.ranks.push_back(std::move(rt));
    }
    auto model = analysis::buildJobModel(std::move(job), "test job");
    return model.ok() ? model.value() : nullptr;
}

/// A job from files opened with trace::openJob, through the production pipeline.
inline std::shared_ptr<const analysis::JobModel> openAsJob(const std::vector<std::string>& paths) {
    auto job = trace::openJob(paths);
    if (!job.ok()) {
        return nullptr;
    }
    auto model = analysis::buildJobModel(std::move(job).value(), "test job");
    return model.ok() ? model.value() : nullptr;
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
