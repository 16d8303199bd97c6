#include "vramscope/analysis/model/job_analysis.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <thread>

#include "vramscope/analysis/memory/host_memory.h"
#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/memory/segments.h"
#include "vramscope/trace/time_span.h"

namespace vramscope::analysis {

ModelState modelState(const trace::TraceData& data, const AllocationIndex& index,
                      const IterationSet& iterations, const LeakReport& leak) {
    // The leak is told apart by its survivors (see kModelStateMinIterations); with fewer
    // iterations a tensor kept every iteration would read as model state.
    if (iterations.count() < kModelStateMinIterations) {
        return {};
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
    // The leak's bytes are a subset of `bytes` (same window, same index); the clamp only guards
    // a report built on another index.
    const int64_t leakBytes = std::min(bytes, int64_t(leak.firstIterationLeakBytes));
    return {bytes - leakBytes, leakBytes};
}

SegmentLayout segmentLayoutAt(const trace::TraceData& data, const DeviceAnalysis& d,
                              trace::TimestampNs t) {
    if (d.index && d.segments) {
        return segmentLayoutAt(data, *d.segments, *d.index, t);
    }
    SegmentLayout out;
    out.timeNs = t;
    if (!d.index || d.index->level() != trace::MemoryLevel::Allocated) {
        out.reason =
            "the trace records no allocator blocks on this GPU, only its reserved memory, so "
            "the free space inside the segments is unknown";
    } else {
        out.reason =
            "the trace records no reserved segments with addresses on this GPU (a PyTorch "
            "profiler trace gives the reserved total only, not its segments)";
    }
    return out;
}

namespace {

/// The facts of one OOM of device `d` (its indices built).
OomFacts oomFacts(const trace::TraceData& data, const trace::OomEvent& o, const MemoryTimeline* tl,
                  const DeviceAnalysis& d, trace::TimestampNs start) {
    const AllocationIndex& index = *d.index;
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
    f.segments = segmentOverview(segmentLayoutAt(data, d, o.timestampNs));
    if (f.segments.known) {
        f.largestFreeBlockBytes = f.segments.totals.largestFreeBlockBytes;
        f.segmentFreeBytes = f.segments.totals.freeBytes;
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

/// The highest value of `series` over [start, end) and its first time there; {-1, start} when
/// the series holds nothing in that span.
std::pair<int64_t, trace::TimestampNs> peakWithin(const StepSeries& series,
                                                  trace::TimestampNs start,
                                                  trace::TimestampNs end) {
    std::pair<int64_t, trace::TimestampNs> best{-1, start};
    if (series.empty() || series.timeNs.front() >= end) {
        return best;
    }
    auto it = std::upper_bound(series.timeNs.begin(), series.timeNs.end(), start);
    size_t i = size_t(it - series.timeNs.begin());
    if (i > 0) {
        best = {series.bytes[i - 1], start};  // the value holding when the span begins
    }
    for (; i < series.size() && series.timeNs[i] < end; ++i) {
        if (series.bytes[i] > best.first) {
            best = {series.bytes[i], series.timeNs[i]};
        }
    }
    return best;
}

/// Roles of the device's allocations, at its peak and at each iteration's peak (the curve of
/// the index's level).
void classifyRoles(const trace::TraceData& data, const MemoryTimeline* tl, DeviceAnalysis& d) {
    auto roles =
        std::make_shared<const MemoryRoles>(MemoryRoles::classify(data, *d.index, d.iterations));
    d.roles = roles;
    if (tl == nullptr) {
        return;
    }
    const bool allocated = d.index->level() == trace::MemoryLevel::Allocated;
    const StepSeries& curve = allocated ? tl->allocated : tl->reserved;
    if (curve.empty()) {
        return;
    }
    // The peak and each iteration's peak, in one pass over the index (times ascending).
    std::vector<trace::TimestampNs> times{allocated ? tl->peakAllocatedTimeNs
                                                    : tl->peakReservedTimeNs};
    std::vector<std::pair<int64_t, int64_t>> iterationPeaks;  // (number, peak bytes)
    for (const Iteration& it : d.iterations.iterations) {
        const auto [peak, time] = peakWithin(curve, it.startNs, it.endNs);
        if (peak >= 0) {
            iterationPeaks.emplace_back(it.number, peak);
            times.push_back(time);
        }
    }
    for (const OomFacts& o : d.ooms) {
        times.push_back(o.timeNs);
    }
    std::vector<size_t> order(times.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return times[a] < times[b]; });
    std::vector<trace::TimestampNs> sorted;
    for (const size_t i : order) {
        sorted.push_back(times[i]);
    }
    const std::vector<RolesAt> at = roles->rolesAtTimes(data, *d.index, sorted);
    std::vector<RolesAt> byInput(times.size());
    for (size_t k = 0; k < order.size(); ++k) {
        byInput[order[k]] = at[k];
    }
    d.rolesAtPeak = byInput[0];
    for (size_t i = 0; i < iterationPeaks.size(); ++i) {
        d.iterationRoles.push_back(
            {iterationPeaks[i].first, iterationPeaks[i].second, byInput[i + 1]});
    }
    for (size_t i = 0; i < d.ooms.size(); ++i) {
        d.ooms[i].roles = byInput[1 + iterationPeaks.size() + i];
    }
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
    } else if (options.capacityBytes > 0) {
        d.memory.capacityBytes = options.capacityBytes;
        d.capacityGiven = true;
    }
    for (const trace::DataLoss& l : data.dataLoss) {
        d.partialInput |= trace::lossCounterInfo(l.counter).severity != trace::LossSeverity::Info;
    }
    auto its = findIterations(data, dev, options.iterations);
    if (!its.ok()) {
        return its.error();
    }
    d.iterations = std::move(its).value();
    d.index = std::make_shared<const AllocationIndex>(data, dev, detailLevel(data, dev));
    LeakOptions leakOptions = options.leak;
    if (leakOptions.capacityBytes == 0) {
        leakOptions.capacityBytes = options.capacityBytes;
    }
    d.leak = analyzeLeak(data, dev, d.iterations, *d.index, tl, leakOptions);
    d.liveSet = liveSetEvidence(data, dev, d.index->level());
    if (!d.liveSet.known) {
        // Survivors pair frees with allocations by address: without addresses they are invented.
        d.leak.survivors.clear();
        d.leak.survivorBytes = 0;
        d.leak.firstIterationLeakBytes = 0;
    }
    const trace::TimestampNs start = trace::traceTimeSpan(data).value_or(trace::TimeSpan{}).firstNs;
    // The segments are indexed only for a device with blocks to place in them.
    if (d.index->level() == trace::MemoryLevel::Allocated) {
        auto segments =
            std::make_shared<const AllocationIndex>(data, dev, trace::MemoryLevel::Reserved);
        if (!segments->empty()) {
            d.segments = std::move(segments);
        }
    }
    d.churn = allocatorChurn(data, dev, d.iterations);
    for (const trace::OomEvent& o : data.ooms) {
        if (o.device == dev) {
            d.ooms.push_back(oomFacts(data, o, tl, d, start));
        }
    }
    std::stable_sort(d.ooms.begin(), d.ooms.end(),
                     [](const OomFacts& a, const OomFacts& b) { return a.timeNs < b.timeNs; });
    d.hadOom = !d.ooms.empty();
    if (d.liveSet.known) {
        const ModelState state = modelState(data, *d.index, d.iterations, d.leak);
        d.modelStateBytes = state.bytes;
        d.modelStateExcludedLeakBytes = state.excludedLeakBytes;
    }
    if (d.liveSet.known && !d.index->empty()) {
        classifyRoles(data, tl, d);
    }
    if (OperatorMemoryTable ops = operatorMemory(data, *d.index, d.memory.detailPeakTimeNs());
        ops.hasOperators()) {
        d.operators = std::move(ops);
    }
    for (TimeBreakdown& b : breakdowns) {
        if (b.device == dev) {
            for (const IdleGap& g : b.gaps) {
                d.gapKernelNames.emplace_back(data.string(data.kernels.name[g.kernelBefore]),
                                              data.string(data.kernels.name[g.kernelAfter]));
            }
            d.breakdown = std::move(b);
        }
    }
    if (d.breakdown) {
        d.precision = precisionMix(data, dev);
    }
    return d;
}

/// What one input gives: its devices' analyses and timelines, or the first error.
struct InputAnalysis {
    std::vector<DeviceAnalysis> devices;
    std::vector<MemoryTimeline> timelines;
    std::optional<trace::Error> error;
};

/// Analyses every device of one input; `progress(share of this input done)` before each device.
/// Runs on a worker thread: touches only its input, and catches what it cannot finish (an
/// allocation failure on a huge trace) into `error` rather than ending the process.
InputAnalysis analyzeInput(const RankInput& input, size_t index, const JobAnalysisOptions& options,
                           const std::function<bool(double)>& progress) {
    InputAnalysis out;
    if (input.data == nullptr) {
        return out;
    }
    try {
        out.timelines = buildMemoryTimelines(*input.data);
        std::vector<TimeBreakdown> breakdowns =
            computeTimeBreakdowns(*input.data, options.breakdown);
        std::vector<DeviceKernelTimes> kernelTimes = topKernels(*input.data);
        std::set<trace::DeviceIndex> devices;
        for (const MemoryTimeline& t : out.timelines) {
            devices.insert(t.device);
        }
        for (const TimeBreakdown& b : breakdowns) {
            devices.insert(b.device);
        }
        size_t done = 0;
        for (trace::DeviceIndex dev : devices) {
            if (!progress(double(done++) / double(devices.size()))) {
                return out;
            }
            auto d = analyzeDevice(input, index, dev, out.timelines, breakdowns, options);
            if (!d.ok()) {
                out.error = d.error();
                return out;
            }
            out.devices.push_back(std::move(d).value());
            for (DeviceKernelTimes& t : kernelTimes) {
                if (t.device == dev) {
                    out.devices.back().kernelTimes = std::move(t);
                }
            }
        }
        // The host is the rank's, not a GPU's: analysed once, over the first GPU's iterations.
        if (!out.devices.empty()) {
            out.devices.front().host = std::make_shared<const HostMemoryReport>(
                analyzeHostMemory(*input.data, out.devices.front().iterations, options.leak));
        }
        progress(1.0);
    } catch (const std::bad_alloc&) {
        out.error =
            trace::Error::make(trace::ErrorCode::Limit, "",
                               "not enough memory to analyse input " + std::to_string(index + 1));
    }
    return out;
}

/// The facts that need every rank at once: each GPU's communication split and the straggler.
void crossRankFacts(JobAnalysis& job, const std::vector<RankInput>& inputs,
                    const std::vector<trace::RankId>& matchedRanks,
                    const JobAnalysisOptions& options) {
    std::map<trace::RankId, int64_t> communication;
    int64_t steps = 0;
    for (DeviceAnalysis& d : job.devices) {
        steps = std::max<int64_t>(steps, int64_t(d.iterations.count()));
        d.slowDown = slowDown(*inputs[d.input].data, d.device, d.iterations, &job.collectives,
                              matchedRanks[d.input], inputs[d.input].clockOffsetNs);
        if (!d.breakdown) {
            continue;
        }
        const RankInput& in = inputs[d.input];
        d.communication =
            splitCommunication(*in.data, d.device, *d.breakdown, job.collectives,
                               matchedRanks[d.input], in.clockOffsetNs, job.coverage.partial());
        communication[matchedRanks[d.input]] += d.breakdown->communicationNs;
    }
    const std::vector<std::pair<trace::RankId, int64_t>> byRank(communication.begin(),
                                                                communication.end());
    job.straggler = findStraggler(job.collectives, byRank, steps, job.coverage, options.straggler);
}

}  // namespace

size_t gpusRecorded(const JobAnalysis& job) {
    return size_t(std::count_if(job.devices.begin(), job.devices.end(), deviceRecorded));
}

trace::Result<JobAnalysis> analyzeJob(const std::vector<RankInput>& inputs,
                                      const JobAnalysisOptions& options,
                                      const AnalysisProgress& progress,
                                      std::vector<std::vector<MemoryTimeline>>* timelinesOut) {
    const size_t n = inputs.size();
    std::vector<InputAnalysis> perInput(n);
    // Progress: each input's share done, summed under one lock (the callback need not be
    // thread-safe); a false answer stops every worker at its next device.
    std::mutex progressMutex;
    std::vector<double> shares(n, 0.0);
    std::atomic<bool> stop = false;
    auto report = [&](size_t input, double share) {
        std::lock_guard lock(progressMutex);
        shares[input] = share;
        double done = 0;
        for (double v : shares) {
            done += v;
        }
        if (progress && !stop && !progress(done / double(n), {})) {
            stop = true;
        }
        return !stop.load();
    };
    std::atomic<size_t> next = 0;
    auto work = [&] {
        for (size_t i = next++; i < n && !stop; i = next++) {
            perInput[i] =
                analyzeInput(inputs[i], i, options, [&](double share) { return report(i, share); });
        }
    };
    const size_t threads = std::min(
        n, options.threads > 0 ? size_t(options.threads)
                               : size_t(std::max(1u, std::thread::hardware_concurrency())));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) {
        pool.emplace_back(work);
    }
    work();
    for (std::thread& t : pool) {
        t.join();
    }
    if (stop) {
        return trace::Error::cancelled("");
    }
    JobAnalysis job;
    if (timelinesOut) {
        timelinesOut->assign(n, {});
    }
    for (size_t i = 0; i < n; ++i) {
        if (perInput[i].error) {
            return *perInput[i].error;
        }
        for (DeviceAnalysis& d : perInput[i].devices) {
            job.devices.push_back(std::move(d));
        }
        if (timelinesOut) {
            (*timelinesOut)[i] = std::move(perInput[i].timelines);
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
    job.coverage = jobCoverage(inputs);
    if (job.coverage.notOneJob.empty()) {
        job.collectives = matchCollectives(matched);
    } else {
        job.collectives.method = "none";
    }
    crossRankFacts(job, inputs, matchedRanks, options);
    {
        // Matched ranks, so the occurrences join the match's participants.
        CollectiveBandwidthOptions bandwidth = options.bandwidth;
        bandwidth.partialJob = bandwidth.partialJob || job.coverage.partial();
        job.bandwidth = collectiveBandwidth(matched, job.collectives, bandwidth);
    }
    std::vector<DeviceFacts> facts;
    for (const DeviceAnalysis& d : job.devices) {
        DeviceFacts f;
        f.input = d.input;
        f.partialInput = d.partialInput;
        f.rank = d.rank;
        f.device = d.device;
        f.memory = d.memory;
        f.hadOom = d.hadOom;
        f.ooms = &d.ooms;
        f.leak = &d.leak;
        f.breakdown = d.breakdown ? &*d.breakdown : nullptr;
        f.modelStateBytes = d.modelStateBytes;
        f.communication = d.communication ? &*d.communication : nullptr;
        f.rolesAtPeak = d.rolesAtPeak ? &*d.rolesAtPeak : nullptr;
        f.ranks = job.coverage.worldSize > 0 ? job.coverage.worldSize
                                             : int32_t(job.coverage.ranksPresent);
        // --- mixed-precision ---
        f.precision = d.precision ? &*d.precision : nullptr;

        // --- allocator-churn ---
        f.churn = &d.churn;

        // --- host-memory ---
        f.host = d.host.get();

        // --- slow-down ---
        f.slowDown = &d.slowDown;

        facts.push_back(f);
    }
    job.advice = adviseOn(facts, options.advice, &job.assessments);
    if (job.straggler) {
        if (auto a = stragglerAdvice(*job.straggler, options.gpuHourPrice, options.straggler)) {
            job.advice.push_back(std::move(*a));
            sortAdvice(job.advice);
        }
    }
    if (options.gpuHourPrice) {
        costOf(job, options);
    }
    return job;
}

}  // namespace vramscope::analysis
