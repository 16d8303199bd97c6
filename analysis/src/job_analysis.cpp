#include "vramscope/analysis/job_analysis.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "vramscope/analysis/live_set.h"
#include "vramscope/analysis/memory_timeline.h"

namespace vramscope::analysis {

int64_t modelStateBytes(const trace::TraceData& data, const AllocationIndex& index,
                        const IterationSet& iterations) {
    if (iterations.count() < 2) {
        return -1;
    }
    const trace::TimestampNs firstEnd = iterations.iterations.front().endNs;
    const trace::TimestampNs lastEnd = iterations.iterations.back().endNs;
    int64_t bytes = 0;
    const size_t until = index.positionAfter(firstEnd - 1);
    for (size_t p = 0; p < until; ++p) {
        if (!index.isAlloc(p)) {
            continue;
        }
        const uint32_t f = index.freePosition(p);
        if (f == AllocationIndex::kNever || index.timeAt(f) >= lastEnd) {
            bytes += allocationBytes(data.memory.sizeBytes[index.eventAt(p)]);
        }
    }
    return bytes;
}

namespace {

trace::TimestampNs firstEventNs(const trace::TraceData& d) {
    trace::TimestampNs t = std::numeric_limits<trace::TimestampNs>::max();
    auto low = [&](const auto& column) {
        if (!column.empty()) {
            t = std::min(t, *std::min_element(column.begin(), column.end()));
        }
    };
    low(d.memory.timestampNs);
    low(d.kernels.startNs);
    low(d.collectives.startNs);
    low(d.ranges.startNs);
    low(d.counters.timestampNs);
    for (const trace::OomEvent& o : d.ooms) {
        t = std::min(t, o.timestampNs);
    }
    return t == std::numeric_limits<trace::TimestampNs>::max() ? 0 : t;
}

OomFacts oomFacts(const trace::TraceData& data, const trace::OomEvent& o, const MemoryTimeline* tl,
                  const AllocationIndex& index, trace::TimestampNs start) {
    OomFacts f;
    f.timeNs = o.timestampNs;
    f.sinceStartNs = o.timestampNs - start;
    f.requestedBytes = o.requestedBytes;
    f.freeBytes = o.freeBytes;
    if (tl != nullptr && tl->allocatedSource != SeriesSource::None) {
        f.allocatedBytes = tl->allocated.valueAt(o.timestampNs);
    }
    if (tl != nullptr && tl->reservedSource != SeriesSource::None) {
        f.reservedBytes = tl->reserved.valueAt(o.timestampNs);
    }
    const std::vector<LiveAllocation> live = liveSetAt(data, index, o.timestampNs);
    f.liveAllocations = live.size();
    std::map<trace::StackId, LiveGroup> groups;
    for (const LiveAllocation& a : live) {
        LiveGroup& g = groups[a.stack];
        g.bytes += a.sizeBytes;
        g.count += 1;
    }
    for (auto& [stack, g] : groups) {
        g.label = stackLabel(data, stack);
        f.topLive.push_back(std::move(g));
    }
    std::stable_sort(f.topLive.begin(), f.topLive.end(),
                     [](const LiveGroup& a, const LiveGroup& b) { return a.bytes > b.bytes; });
    if (f.topLive.size() > 3) {
        f.topLive.resize(3);
    }
    return f;
}

void costOf(JobAnalysis& job, const JobAnalysisOptions& options) {
    CostInput in;
    in.gpuHourPrice = *options.gpuHourPrice;
    std::vector<int64_t> medians;
    int64_t maxSpan = 0;
    int64_t maxIterations = 0;
    for (const DeviceAnalysis& d : job.devices) {
        const bool used =
            d.breakdown.has_value() || d.leak.iterations.size() > 0 || d.memory.peakBytes() > 0;
        in.gpus += used ? 1 : 0;
        if (d.iterations.count() > 0) {
            medians.push_back(d.iterations.medianDurationNs());
            maxIterations = std::max<int64_t>(maxIterations, int64_t(d.iterations.count()));
        }
        if (d.breakdown) {
            in.idleNs += d.breakdown->idleNs;
            in.spanNs += d.breakdown->spanNs;
            maxSpan = std::max(maxSpan, d.breakdown->spanNs);
        }
    }
    if (!medians.empty()) {
        std::nth_element(medians.begin(), medians.begin() + ptrdiff_t(medians.size() / 2),
                         medians.end());
        in.stepTimeNs = medians[medians.size() / 2];
        in.stepTimeSource = "median iteration";
    } else {
        in.stepTimeNs = maxSpan;
        in.stepTimeSource = "trace span";
    }
    if (options.plannedSteps) {
        in.steps = *options.plannedSteps;
        in.stepsSource = "planned";
    } else {
        in.steps = std::max<int64_t>(1, maxIterations);
        in.stepsSource = maxIterations > 0 ? "observed iterations" : "one step (the trace)";
    }
    job.cost = estimateCost(in);
}

const MemoryTimeline* timelineOf(const std::vector<MemoryTimeline>& timelines,
                                 trace::DeviceIndex device) {
    for (const MemoryTimeline& t : timelines) {
        if (t.device == device) {
            return &t;
        }
    }
    return nullptr;
}

/// The analyses of one device; `breakdowns` gives up the device's breakdown (moved out).
trace::Result<DeviceAnalysis> analyzeDevice(const RankInput& input, size_t inputIndex,
                                            trace::DeviceIndex dev,
                                            const std::vector<MemoryTimeline>& timelines,
                                            std::vector<TimeBreakdown>& breakdowns,
                                            const JobAnalysisOptions& options) {
    const trace::TraceData& data = *input.data;
    DeviceAnalysis d;
    d.input = inputIndex;
    d.rank = input.rank;
    d.device = dev;
    const MemoryTimeline* tl = timelineOf(timelines, dev);
    if (tl != nullptr) {
        d.memory = summarizeMemory(*tl);
    }
    if (const trace::DeviceInfo* info = data.device(dev); info && info->totalMemoryBytes > 0) {
        d.memory.capacityBytes = info->totalMemoryBytes;
    }
    auto its = findIterations(data, dev, options.iterations);
    if (!its.ok()) {
        return its.error();
    }
    d.iterations = std::move(its).value();
    d.index = std::make_shared<const AllocationIndex>(data, dev, detailLevel(data, dev));
    d.leak = analyzeLeak(data, dev, d.iterations, *d.index, options.leak);
    const trace::TimestampNs start = firstEventNs(data);
    for (const trace::OomEvent& o : data.ooms) {
        if (o.device == dev) {
            d.ooms.push_back(oomFacts(data, o, tl, *d.index, start));
        }
    }
    std::stable_sort(d.ooms.begin(), d.ooms.end(),
                     [](const OomFacts& a, const OomFacts& b) { return a.timeNs < b.timeNs; });
    d.hadOom = !d.ooms.empty();
    d.modelStateBytes = modelStateBytes(data, *d.index, d.iterations);
    for (TimeBreakdown& b : breakdowns) {
        if (b.device == dev) {
            for (const IdleGap& g : b.gaps) {
                d.gapKernelNames.emplace_back(data.string(data.kernels.name[g.kernelBefore]),
                                              data.string(data.kernels.name[g.kernelAfter]));
            }
            d.breakdown = std::move(b);
        }
    }
    return d;
}

}  // namespace

trace::Result<JobAnalysis> analyzeJob(const std::vector<RankInput>& inputs,
                                      const JobAnalysisOptions& options,
                                      const AnalysisProgress& progress,
                                      std::vector<std::vector<MemoryTimeline>>* timelinesOut) {
    JobAnalysis job;
    if (timelinesOut) {
        timelinesOut->assign(inputs.size(), {});
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        const trace::TraceData* data = inputs[i].data;
        if (data == nullptr) {
            continue;
        }
        std::vector<MemoryTimeline> timelines = buildMemoryTimelines(*data);
        std::vector<TimeBreakdown> breakdowns = computeTimeBreakdowns(*data, options.breakdown);
        std::set<trace::DeviceIndex> devices;
        for (const MemoryTimeline& t : timelines) {
            devices.insert(t.device);
        }
        for (const TimeBreakdown& b : breakdowns) {
            devices.insert(b.device);
        }
        size_t done = 0;
        for (trace::DeviceIndex dev : devices) {
            const double share =
                (double(i) + double(done++) / double(devices.size())) / double(inputs.size());
            if (progress && !progress(share)) {
                return trace::Error::cancelled("");
            }
            auto d = analyzeDevice(inputs[i], i, dev, timelines, breakdowns, options);
            if (!d.ok()) {
                return d.error();
            }
            job.devices.push_back(std::move(d).value());
        }
        if (timelinesOut) {
            (*timelinesOut)[i] = std::move(timelines);
        }
    }
    // Inputs of unknown rank (-1) take a free number (their position where it is free) for
    // matching only.
    std::vector<trace::RankId> ranks;
    for (const RankInput& in : inputs) {
        ranks.push_back(in.rank);
    }
    const std::vector<trace::RankId> matchedRanks = collectiveRanks(ranks);
    std::vector<RankInput> matched = inputs;
    for (size_t i = 0; i < matched.size(); ++i) {
        matched[i].rank = matchedRanks[i];
    }
    job.collectives = matchCollectives(matched);
    std::vector<DeviceFacts> facts;
    for (const DeviceAnalysis& d : job.devices) {
        DeviceFacts f;
        f.rank = d.rank;
        f.device = d.device;
        f.memory = d.memory;
        f.hadOom = d.hadOom;
        f.ooms = &d.ooms;
        f.leak = &d.leak;
        f.breakdown = d.breakdown ? &*d.breakdown : nullptr;
        f.modelStateBytes = d.modelStateBytes;
        facts.push_back(f);
    }
    job.advice = adviseOn(facts, options.advice);
    if (options.gpuHourPrice) {
        costOf(job, options);
    }
    return job;
}

}  // namespace vramscope::analysis
