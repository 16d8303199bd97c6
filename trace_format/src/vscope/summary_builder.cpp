// SummaryBuilder: the memory envelopes, kernel histograms and frame index of trace/summary.h,
// built batch by batch with memory bounded by the live allocations (no events kept).

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "vramscope/trace/memory_running_sum.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/time_span.h"

namespace vramscope::trace {
namespace {

/// (device, level, origin): the order TraceSummary::memory is sorted in.
using SeriesKey = std::tuple<int32_t, int, int>;
/// (device, category): the order of TraceSummary::kernels.
using KernelKey = std::pair<int32_t, int>;

/// One memory series being summarised: the running sum (event series only), the step whose time
/// may still get more events, the open block and the cumulative figures.
struct SeriesState {
    MemoryRunningSum sum;
    bool hasPending = false;
    TimestampNs pendingNs = 0;
    int64_t pendingBytes = 0;
    bool hasStep = false;  ///< a step was finished (its time is lastStepNs)
    TimestampNs lastStepNs = 0;
    bool stepInDelta = false;  ///< the last finished step went out in a takeDelta()
    SummaryBlock open;         ///< steps == 0: none open
    MemoryEnvelope env;        ///< blocks: closed since the last takeDelta()
    bool hasPeak = false;

    void finishStep(TimestampNs t, int64_t v) {
        if (open.steps == 0) {
            open = SummaryBlock{t, t, v, v, v, v, 0};
        }
        open.endNs = t;
        open.minBytes = std::min(open.minBytes, v);
        open.maxBytes = std::max(open.maxBytes, v);
        open.lastBytes = v;
        ++open.steps;
        ++env.totalSteps;
        if (!hasPeak || v > env.peakBytes) {
            env.peakBytes = v;
            env.peakTimeNs = t;
            hasPeak = true;
        }
        hasStep = true;
        lastStepNs = t;
        stepInDelta = false;
        if (open.steps == kSummaryBlockSteps) {
            closeBlock();
        }
    }
    void closeBlock() {
        if (open.steps > 0) {
            env.blocks.push_back(open);
            open = {};
        }
    }
    /// Takes one value at time t: equal times give one step holding the later value. A time
    /// before the series' last step, or at a step already handed out in a delta, cannot be put
    /// where sorting would: it joins the latest step and is counted.
    void take(TimestampNs t, int64_t v) {
        ++env.events;
        const TimestampNs latest = hasPending ? pendingNs : lastStepNs;
        if ((hasPending || hasStep) && t < latest) {
            ++env.outOfOrder;
            t = latest;
        }
        if (hasPending && t == pendingNs) {
            pendingBytes = v;
            return;
        }
        if (!hasPending && hasStep && stepInDelta && t == lastStepNs) {
            ++env.outOfOrder;  // the step at t is already stored; this gives a second one
        }
        if (hasPending) {
            finishStep(pendingNs, pendingBytes);
        }
        hasPending = true;
        pendingNs = t;
        pendingBytes = v;
    }
    /// Finishes the pending step and the open block; returns the delta of this series.
    MemoryEnvelope takeDelta() {
        if (hasPending) {
            finishStep(pendingNs, pendingBytes);
            hasPending = false;
        }
        stepInDelta = hasStep;
        closeBlock();
        env.lowestBytes = env.origin == SeriesOrigin::MemoryEvents ? sum.lowest() : 0;
        env.unmatchedFrees = sum.unmatchedFrees();
        MemoryEnvelope delta = env;
        env.blocks.clear();
        return delta;
    }
};

/// floor(log2(d)) for d > 0, bucket 0 for d == 0 (KernelHistogram::log2Counts).
size_t durationBucket(uint64_t d) {
    return d == 0 ? 0 : static_cast<size_t>(std::bit_width(d) - 1);
}

/// Indices of `time` in the order a series takes them: by time, file order kept among equal
/// times (analysis::buildMemoryTimelines' stable sort).
void sortStable(const std::vector<TimestampNs>& time, std::vector<uint32_t>& idx) {
    auto earlier = [&](uint32_t a, uint32_t b) { return time[a] < time[b]; };
    if (!std::is_sorted(idx.begin(), idx.end(), earlier)) {
        std::stable_sort(idx.begin(), idx.end(), earlier);
    }
}

}  // namespace

struct SummaryBuilder::Impl {
    std::map<SeriesKey, SeriesState> series;
    std::map<KernelKey, KernelHistogram> kernels;
    std::vector<FrameIndexEntry> frames;
    std::array<uint64_t, 5> tableRows{};
    std::optional<TimeSpan> span;  ///< of every batch so far (time_span.h)

    SeriesState& state(DeviceIndex device, MemoryLevel level, SeriesOrigin origin) {
        auto [it, added] = series.try_emplace(
            SeriesKey{toInt(device), static_cast<int>(level), static_cast<int>(origin)});
        if (added) {
            it->second.env.device = device;
            it->second.env.level = level;
            it->second.env.origin = origin;
        }
        return it->second;
    }
    void addMemory(const MemoryEvents& m);
    void addCounters(const CounterSamples& c);
    void addKernels(const KernelEvents& k);
};

void SummaryBuilder::Impl::addMemory(const MemoryEvents& m) {
    std::map<std::pair<int32_t, int>, std::vector<uint32_t>> bySeries;
    for (size_t i = 0; i < m.size(); ++i) {
        if (toInt(m.device[i]) >= 0 && isTimelineMemoryKind(m.kind[i])) {
            bySeries[{toInt(m.device[i]), static_cast<int>(m.level[i])}].push_back(
                static_cast<uint32_t>(i));
        }
    }
    for (auto& [key, idx] : bySeries) {
        sortStable(m.timestampNs, idx);
        SeriesState& s = state(DeviceIndex{key.first}, static_cast<MemoryLevel>(key.second),
                               SeriesOrigin::MemoryEvents);
        for (uint32_t i : idx) {
            s.take(m.timestampNs[i], s.sum.apply(m.action[i], m.address[i], m.sizeBytes[i]));
        }
    }
}

void SummaryBuilder::Impl::addCounters(const CounterSamples& c) {
    std::map<std::pair<int32_t, int>, std::vector<uint32_t>> bySeries;
    for (size_t i = 0; i < c.size(); ++i) {
        // Only GPU memory counters draw a GPU's curve (as buildMemoryTimelines).
        if (toInt(c.device[i]) >= 0 && isGpuMemoryCounter(c.kind[i])) {
            const MemoryLevel level = c.kind[i] == CounterKind::AllocatedBytes
                                          ? MemoryLevel::Allocated
                                          : MemoryLevel::Reserved;
            bySeries[{toInt(c.device[i]), static_cast<int>(level)}].push_back(
                static_cast<uint32_t>(i));
        }
    }
    for (auto& [key, idx] : bySeries) {
        sortStable(c.timestampNs, idx);
        SeriesState& s = state(DeviceIndex{key.first}, static_cast<MemoryLevel>(key.second),
                               SeriesOrigin::ProducerCounter);
        for (uint32_t i : idx) {
            s.take(c.timestampNs[i], counterBytes(c.value[i]));
        }
    }
}

void SummaryBuilder::Impl::addKernels(const KernelEvents& k) {
    for (size_t i = 0; i < k.size(); ++i) {
        const TimestampNs start = k.startNs[i];
        const TimestampNs end = std::max(k.startNs[i], k.endNs[i]);
        auto [it, added] =
            kernels.try_emplace(KernelKey{toInt(k.device[i]), static_cast<int>(k.category[i])});
        KernelHistogram& h = it->second;
        if (added) {
            h.device = k.device[i];
            h.category = k.category[i];
            h.firstStartNs = start;
            h.lastEndNs = end;
        }
        const auto d = static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
        ++h.count;
        h.busyNs += d;
        ++h.log2Counts[durationBucket(d)];
        h.firstStartNs = std::min(h.firstStartNs, start);
        h.lastEndNs = std::max(h.lastEndNs, end);
    }
}

SummaryBuilder::SummaryBuilder() : m_impl(std::make_unique<Impl>()) {}
SummaryBuilder::~SummaryBuilder() = default;
SummaryBuilder::SummaryBuilder(SummaryBuilder&&) noexcept = default;
SummaryBuilder& SummaryBuilder::operator=(SummaryBuilder&&) noexcept = default;

void SummaryBuilder::addBatch(const TraceData& batch) {
    Impl& d = *m_impl;
    d.addMemory(batch.memory);
    d.addCounters(batch.counters);
    d.addKernels(batch.kernels);
    widen(d.span, traceTimeSpan(batch));
    d.tableRows[0] += batch.memory.size();
    d.tableRows[1] += batch.kernels.size();
    d.tableRows[2] += batch.collectives.size();
    d.tableRows[3] += batch.ranges.size();
    d.tableRows[4] += batch.counters.size();
}

void SummaryBuilder::addFrame(const FrameIndexEntry& frame) {
    m_impl->frames.push_back(frame);
}

TraceSummary SummaryBuilder::takeDelta(bool final) {
    Impl& d = *m_impl;
    TraceSummary out;
    out.memory.reserve(d.series.size());
    for (auto& [key, s] : d.series) {
        out.memory.push_back(s.takeDelta());
    }
    for (const auto& [key, h] : d.kernels) {
        out.kernels.push_back(h);
    }
    out.frames = std::move(d.frames);
    d.frames.clear();
    out.firstNs = d.span ? d.span->firstNs : 0;
    out.lastNs = d.span ? d.span->lastNs : 0;
    out.tableRows = d.tableRows;
    out.summaryFrames = 1;
    out.final = final;
    return out;
}

TraceSummary summarizeTrace(const TraceData& data) {
    SummaryBuilder builder;
    builder.addBatch(data);
    TraceSummary s = builder.takeDelta(true);
    s.header = data.header;
    s.summaryFrames = 0;
    return s;
}

void mergeSummary(TraceSummary& into, TraceSummary delta) {
    for (MemoryEnvelope& e : delta.memory) {
        auto key = [](const MemoryEnvelope& x) {
            return SeriesKey{toInt(x.device), static_cast<int>(x.level),
                             static_cast<int>(x.origin)};
        };
        auto it = std::lower_bound(
            into.memory.begin(), into.memory.end(), key(e),
            [&](const MemoryEnvelope& x, const SeriesKey& k) { return key(x) < k; });
        if (it == into.memory.end() || key(*it) != key(e)) {
            into.memory.insert(it, std::move(e));
            continue;
        }
        std::vector<SummaryBlock> blocks = std::move(it->blocks);
        blocks.insert(blocks.end(), e.blocks.begin(), e.blocks.end());
        *it = std::move(e);
        it->blocks = std::move(blocks);
    }
    for (const KernelHistogram& h : delta.kernels) {
        auto key = [](const KernelHistogram& x) {
            return KernelKey{toInt(x.device), static_cast<int>(x.category)};
        };
        auto it = std::lower_bound(
            into.kernels.begin(), into.kernels.end(), key(h),
            [&](const KernelHistogram& x, const KernelKey& k) { return key(x) < k; });
        if (it != into.kernels.end() && key(*it) == key(h)) {
            *it = h;
        } else {
            into.kernels.insert(it, h);
        }
    }
    into.frames.insert(into.frames.end(), delta.frames.begin(), delta.frames.end());
    if (!delta.analysis.empty()) {
        into.analysis = std::move(delta.analysis);
    }
    into.firstNs = delta.firstNs;
    into.lastNs = delta.lastNs;
    into.tableRows = delta.tableRows;
    into.summaryFrames += delta.summaryFrames;
    into.final = into.final || delta.final;
}

const MemoryEnvelope* TraceSummary::envelope(DeviceIndex device, MemoryLevel level,
                                             SeriesOrigin origin) const {
    for (const MemoryEnvelope& e : memory) {
        if (e.device == device && e.level == level && e.origin == origin) {
            return &e;
        }
    }
    return nullptr;
}

}  // namespace vramscope::trace
