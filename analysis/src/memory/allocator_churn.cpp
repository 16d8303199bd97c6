#include "vramscope/analysis/memory/allocator_churn.h"

#include <algorithm>

#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/time/time_breakdown.h"

namespace vramscope::analysis {

using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;

bool isEmptyCacheFrame(std::string_view name) {
    return name.find("empty_cache") != std::string_view::npos ||
           name.find("emptyCache") != std::string_view::npos;
}

namespace {

bool stackEmptiesCache(const trace::TraceData& data, trace::StackId stack) {
    if (size_t(stack) >= data.stacks.size()) {
        return false;
    }
    for (const trace::FrameId f : data.stacks[size_t(stack)]) {
        if (size_t(f) < data.frames.size() &&
            isEmptyCacheFrame(data.string(data.frames[size_t(f)].name))) {
            return true;
        }
    }
    return false;
}

bool hasKernels(const trace::TraceData& data, trace::DeviceIndex device) {
    return std::find(data.kernels.device.begin(), data.kernels.device.end(), device) !=
           data.kernels.device.end();
}

/// The idle time of each iteration spent in gaps that contain one of its segment frees.
void syncIdle(const trace::TraceData& data, trace::DeviceIndex device,
              const std::vector<std::vector<trace::TimestampNs>>& freeTimes, AllocatorChurn& c) {
    std::vector<std::pair<trace::TimestampNs, trace::TimestampNs>> windows;
    for (const IterationChurn& it : c.iterations) {
        windows.emplace_back(it.startNs, it.endNs);
    }
    BreakdownOptions keepAll;
    keepAll.maxGaps = SIZE_MAX;
    const std::vector<TimeBreakdown> perIteration =
        computeWindowBreakdowns(data, device, windows, keepAll);
    for (size_t i = 0; i < c.iterations.size(); ++i) {
        int64_t idle = 0;
        for (const IdleGap& g : perIteration[i].gaps) {
            const trace::TimestampNs end = g.startNs + g.durationNs;
            const bool holdsFree =
                std::any_of(freeTimes[i].begin(), freeTimes[i].end(),
                            [&](trace::TimestampNs t) { return t >= g.startNs && t <= end; });
            idle += holdsFree ? g.durationNs : 0;
        }
        c.iterations[i].syncIdleNs = idle;
        if (i > 0) {
            c.syncIdleNs += idle;
        }
    }
}

}  // namespace

AllocatorChurn allocatorChurn(const trace::TraceData& data, trace::DeviceIndex device,
                              const IterationSet& iterations) {
    AllocatorChurn c;
    c.device = device;
    const LiveSetEvidence evidence = liveSetEvidence(data, device, MemoryLevel::Reserved);
    if (!evidence.known) {
        c.reason = evidence.allocations == 0
                       ? "no segment allocation recorded on this GPU (reserved-level memory "
                         "events: snapshot segment_alloc, CUPTI cudaMalloc)"
                       : "reserved-level events without addresses: " + evidence.reason;
        return c;
    }
    if (iterations.count() == 0) {
        c.reason = "no iterations: " + iterations.reason;
        return c;
    }
    c.assessable = true;
    const std::vector<Iteration>& its = iterations.iterations;
    for (size_t i = 0; i < its.size(); ++i) {
        c.iterations.push_back({i, its[i].number, its[i].startNs, its[i].endNs});
    }
    std::vector<std::vector<trace::TimestampNs>> freeTimes(its.size());
    const trace::MemoryEvents& m = data.memory;
    for (size_t e = 0; e < m.size(); ++e) {
        if (m.device[e] != device || m.level[e] != MemoryLevel::Reserved ||
            m.kind[e] == MemoryKind::PreExisting) {
            continue;
        }
        const trace::TimestampNs t = m.timestampNs[e];
        // Iterations are in time order and do not overlap: the last one starting at or before t.
        auto after = std::upper_bound(its.begin(), its.end(), t,
                                      [](int64_t v, const Iteration& x) { return v < x.startNs; });
        if (after == its.begin() || t >= std::prev(after)->endNs) {
            continue;
        }
        const size_t i = size_t(std::prev(after) - its.begin());
        IterationChurn& ic = c.iterations[i];
        if (m.action[e] == MemoryAction::Alloc) {
            ic.segmentAllocs += 1;
            ic.allocBytes += m.sizeBytes[e];
        } else {
            ic.segmentFrees += 1;
            ic.freeBytes += m.sizeBytes[e];
            ic.emptyCacheFrees += stackEmptiesCache(data, m.stack[e]) ? 1 : 0;
            freeTimes[i].push_back(t);
        }
    }
    for (size_t i = 1; i < c.iterations.size(); ++i) {
        const IterationChurn& ic = c.iterations[i];
        c.steadyIterations += 1;
        c.churnIterations += ic.churns() ? 1 : 0;
        c.segmentAllocs += ic.segmentAllocs;
        c.segmentFrees += ic.segmentFrees;
        c.allocBytes += ic.allocBytes;
        c.freeBytes += ic.freeBytes;
        c.emptyCacheFrees += ic.emptyCacheFrees;
    }
    c.timeKnown = hasKernels(data, device);
    if (c.timeKnown) {
        syncIdle(data, device, freeTimes, c);
    } else {
        c.timeUnknownReason =
            "the time the device sat synchronised around the frees is unknown: no kernel on "
            "this GPU (a PyTorch memory snapshot records none)";
    }
    return c;
}

}  // namespace vramscope::analysis
