#include "vramscope/analysis/memory/leak.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string_view>
#include <unordered_map>

#include "sample_stats.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {

using trace::TimestampNs;

const char* toString(LeakVerdict verdict) {
    switch (verdict) {
        case LeakVerdict::Inconclusive:
            return "inconclusive";
        case LeakVerdict::Sawtooth:
            return "sawtooth";
        case LeakVerdict::Staircase:
            return "staircase";
    }
    return "inconclusive";
}

namespace {

bool isLibraryFile(std::string_view file) {
    auto has = [&](std::string_view s) { return file.find(s) != std::string_view::npos; };
    return file.empty() || has("site-packages") || has("dist-packages") || has("/torch/") ||
           has("\\torch\\") || has("<frozen") || file.front() == '?' || file.ends_with(".cpp") ||
           file.ends_with(".cc") || file.ends_with(".h") || file.ends_with(".hpp") ||
           file.ends_with(".cu") || file.ends_with(".c");
}

}  // namespace

std::vector<IterationMemory> iterationMemory(const StepSeries& curve,
                                             const IterationSet& iterations) {
    std::vector<IterationMemory> out;
    if (curve.empty()) {
        return out;
    }
    const TimestampNs known = curve.timeNs.front();
    for (const Iteration& it : iterations.iterations) {
        if (it.endNs <= known) {
            continue;
        }
        // The value entering the iteration (before the events at its start time) when the curve
        // is known by then, else the curve's first value.
        const bool knownBefore = it.startNs > known;
        const int64_t v = knownBefore ? curve.valueAt(it.startNs - 1) : curve.bytes.front();
        IterationMemory m{it.number, it.startNs, it.endNs, v, v};
        auto p = knownBefore
                     ? std::lower_bound(curve.timeNs.begin(), curve.timeNs.end(), it.startNs)
                     : curve.timeNs.begin() + 1;
        for (; p != curve.timeNs.end() && *p < it.endNs; ++p) {
            const int64_t b = curve.bytes[size_t(p - curve.timeNs.begin())];
            m.baselineBytes = std::min(m.baselineBytes, b);
            m.peakBytes = std::max(m.peakBytes, b);
        }
        out.push_back(m);
    }
    return out;
}

namespace {

/// The curve of `level` in `timeline` (the producer's totals when it has them, else the running
/// sum of events); empty without a timeline.
const StepSeries& levelCurve(const MemoryTimeline* timeline, trace::MemoryLevel level) {
    static const StepSeries kNone;
    if (timeline == nullptr) {
        return kNone;
    }
    return level == trace::MemoryLevel::Reserved ? timeline->reserved : timeline->allocated;
}

/// A survivor group while it is being counted: the allocations seen in the current iteration.
struct GroupTally {
    SurvivorGroup group;
    size_t iteration = SIZE_MAX;  ///< the iteration `inIteration` counts
    uint64_t inIteration = 0;

    /// Closes the iteration being counted into the group's per-iteration figures.
    void fold() {
        if (inIteration == 0) {
            return;
        }
        SurvivorGroup& g = group;
        g.minPerIteration =
            g.iterations == 0 ? inIteration : std::min(g.minPerIteration, inIteration);
        g.maxPerIteration = std::max(g.maxPerIteration, inIteration);
        g.iterations += 1;
        inIteration = 0;
    }
};

/// A survivor group's key: (the stack, or for an allocation without one the name of its NVTX
/// range with the high bit set; the size).
using GroupKey = std::pair<uint64_t, uint64_t>;

/// The key of the allocation at event `e`; `rangeName` receives its range's name when grouped by
/// range, else 0.
GroupKey groupKey(const trace::TraceData& data, uint32_t e, trace::StringId& rangeName) {
    const trace::StackId stack = data.memory.stack[e];
    const uint32_t range = data.memory.nvtxRange[e];
    rangeName = toInt(stack) == 0 && range > 0 && range <= data.ranges.size()
                    ? data.ranges.name[range - 1]
                    : 0;
    return {toInt(stack) != 0 ? uint64_t(toInt(stack)) : (1ull << 63) | rangeName,
            data.memory.sizeBytes[e]};
}

/// Counts, for every group, its allocations alive at the end of the last iteration (aliveAtEnd),
/// and the bytes of those made by the end of the first (`firstIterationBytes`).
void countKeptToTheEnd(const trace::TraceData& data, const AllocationIndex& index,
                       const IterationSet& iterations, std::map<GroupKey, GroupTally>& groups,
                       uint64_t& firstIterationBytes) {
    firstIterationBytes = 0;
    if (groups.empty()) {
        return;
    }
    const TimestampNs firstEnd = iterations.iterations.front().endNs;
    const TimestampNs lastEnd = iterations.iterations.back().endNs;
    const size_t firstUntil = index.positionAfter(firstEnd - 1);
    const size_t until = index.positionAfter(lastEnd - 1);
    for (size_t p = 0; p < until; ++p) {
        if (!index.isAlloc(p)) {
            continue;
        }
        const uint32_t f = index.freePosition(p);
        if (f != AllocationIndex::kNever && index.timeAt(f) < lastEnd) {
            continue;
        }
        trace::StringId rangeName = 0;
        const uint32_t e = index.eventAt(p);
        const auto g = groups.find(groupKey(data, e, rangeName));
        if (g == groups.end()) {
            continue;
        }
        g->second.group.aliveAtEnd += 1;
        if (p < firstUntil) {
            firstIterationBytes += uint64_t(allocationBytes(data.memory.sizeBytes[e]));
        }
    }
}

std::vector<SurvivorGroup> survivorGroups(const trace::TraceData& data,
                                          const AllocationIndex& index,
                                          const IterationSet& iterations, int& examined,
                                          uint64_t& firstIterationBytes) {
    const auto& its = iterations.iterations;
    std::map<GroupKey, GroupTally> groups;
    examined = 0;
    for (size_t k = 1; k + 2 < its.size(); ++k) {
        ++examined;
        const TimestampNs horizon = its[k + 2].endNs;
        const size_t first = index.positionAfter(its[k].startNs - 1);
        const size_t last = index.positionAfter(its[k].endNs - 1);
        for (size_t p = first; p < last; ++p) {
            if (!index.isAlloc(p)) {
                continue;
            }
            const uint32_t f = index.freePosition(p);
            if (f != AllocationIndex::kNever && index.timeAt(f) < horizon) {
                continue;
            }
            const uint32_t e = index.eventAt(p);
            trace::StringId rangeName = 0;
            GroupTally& t = groups[groupKey(data, e, rangeName)];
            const uint64_t size = data.memory.sizeBytes[e];
            SurvivorGroup& g = t.group;
            g.stack = data.memory.stack[e];
            if (rangeName != 0) {
                g.nvtxRange = std::string(data.string(rangeName));
            }
            g.sizeBytes = g.largestBytes = size;
            g.bytes += size;
            g.count += 1;
            if (t.iteration != k) {
                t.fold();
                t.iteration = k;
            }
            t.inIteration += 1;
        }
    }
    countKeptToTheEnd(data, index, iterations, groups, firstIterationBytes);
    std::vector<SurvivorGroup> out;
    out.reserve(groups.size());
    for (auto& [key, t] : groups) {
        t.fold();
        out.push_back(std::move(t.group));
    }
    std::sort(out.begin(), out.end(), [](const SurvivorGroup& a, const SurvivorGroup& b) {
        if (a.bytes != b.bytes) {
            return a.bytes > b.bytes;
        }
        if (a.stack != b.stack) {
            return a.stack < b.stack;
        }
        return a.nvtxRange != b.nvtxRange ? a.nvtxRange < b.nvtxRange : a.sizeBytes < b.sizeBytes;
    });
    return out;
}

void describeFrames(const trace::TraceData& data, SurvivorGroup& g) {
    if (toInt(g.stack) >= data.stacks.size()) {
        return;
    }
    const std::vector<trace::FrameId>& frames = data.stacks[toInt(g.stack)];
    for (size_t i = 0; i < frames.size() && g.topFrames.size() < 8; ++i) {
        g.topFrames.push_back(frameLabel(data, frames[i]));
    }
    for (trace::FrameId f : frames) {
        if (toInt(f) < data.frames.size() &&
            !isLibraryFile(data.string(data.frames[toInt(f)].file)) && g.userFrames.size() < 6) {
            g.userFrames.push_back(frameLabel(data, f));
        }
    }
    if (!g.userFrames.empty()) {
        g.userFrame = g.userFrames.front();
    }
}

void decide(LeakReport& r, const LeakOptions& options) {
    BaselineTrend t = baselineTrend(r.iterations, options);
    r.verdict = t.verdict;
    r.reason = std::move(t.reason);
    r.slopeBytesPerIteration = t.slopeBytesPerIteration;
    r.noiseBytes = t.noiseBytes;
    r.risingFraction = t.risingFraction;
    r.growthBytesPerIteration = t.growthBytesPerIteration;
    if (r.verdict == LeakVerdict::Staircase && r.capacityBytes > 0 &&
        r.growthBytesPerIteration > 0) {
        const double left = double(r.capacityBytes) - double(r.iterations.back().peakBytes);
        r.iterationsToOom = std::max(0.0, left / double(r.growthBytesPerIteration));
    }
}

}  // namespace

BaselineTrend baselineTrend(const std::vector<IterationMemory>& iterations,
                            const LeakOptions& options) {
    BaselineTrend r;
    const size_t n = iterations.size();
    if (n < size_t(std::max(2, options.minIterations))) {
        r.verdict = LeakVerdict::Inconclusive;
        r.reason = "too few iterations with memory data: " + std::to_string(n) + " (at least " +
                   std::to_string(options.minIterations) + " are needed).";
        return r;
    }
    std::vector<double> y;
    for (const IterationMemory& m : iterations) {
        y.push_back(double(m.baselineBytes));
    }
    const double s = theilSenSlope(y);
    std::vector<double> resid(n);
    for (size_t i = 0; i < n; ++i) {
        resid[i] = y[i] - s * double(i);
    }
    const double med = median(resid);
    for (double& v : resid) {
        v = std::fabs(v - med);
    }
    const double noise = 1.4826 * median(resid);
    size_t rising = 0;
    for (size_t i = 1; i < n; ++i) {
        rising += y[i] > y[i - 1];
    }
    r.slopeBytesPerIteration = s;
    r.noiseBytes = noise;
    r.risingFraction = double(rising) / double(n - 1);
    const double growth = s * double(n - 1);
    const double bar = std::max(options.noiseFactor * noise, double(options.minTotalGrowthBytes));
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.1f", options.noiseFactor);
    r.reason = "baseline slope " + formatBytes(s) + " per iteration (Theil-Sen over " +
               std::to_string(n) + " iterations), growth " + formatBytes(growth) +
               " = slope x (n - 1), noise " + formatBytes(noise) + " = 1.4826 x MAD, threshold " +
               formatBytes(bar) + " = max(" + factor + " x noise, " +
               formatBytes(double(options.minTotalGrowthBytes)) + "), rising in " +
               formatPercent(r.risingFraction, 0) + " of iterations.";
    if (s > 0 && growth > bar && r.risingFraction >= options.minRisingFraction) {
        r.verdict = LeakVerdict::Staircase;
        r.growthBytesPerIteration = int64_t(std::llround(s));
    } else if (growth <= bar) {
        r.verdict = LeakVerdict::Sawtooth;
    } else {
        r.verdict = LeakVerdict::Inconclusive;
        r.reason += " Significant growth, but not rising consistently.";
    }
    return r;
}

std::string survivorLabel(const SurvivorGroup& g) {
    if (!g.userFrame.empty()) {
        return g.userFrame;
    }
    if (!g.topFrames.empty()) {
        return g.topFrames.front();
    }
    return g.nvtxRange.empty() ? "(no stack)" : "NVTX range " + g.nvtxRange;
}

std::string survivorPattern(const SurvivorGroup& g) {
    static const char* const kWords[] = {"no",  "one",   "two",   "three", "four", "five",
                                         "six", "seven", "eight", "nine",  "ten"};
    auto count = [](uint64_t n) { return n <= 10 ? std::string(kWords[n]) : std::to_string(n); };
    const std::string size = formatBytes(double(g.sizeBytes));
    if (g.minPerIteration == g.maxPerIteration) {
        return count(g.maxPerIteration) + " " + size +
               (g.maxPerIteration == 1 ? " allocation" : " allocations") + " per iteration";
    }
    return std::to_string(g.minPerIteration) + " to " + std::to_string(g.maxPerIteration) + " " +
           size + " allocations per iteration";
}

std::string describeSurvivor(const SurvivorGroup& g, int examinedIterations) {
    std::string s = survivorPattern(g) + " from " + survivorLabel(g) + ", ";
    if (g.iterations < examinedIterations) {
        s += "in " + std::to_string(g.iterations) + " of " + std::to_string(examinedIterations);
    } else {
        s += std::to_string(g.iterations);
    }
    s += g.iterations == 1 && g.iterations >= examinedIterations ? " iteration" : " iterations";
    s += ", " + formatBytes(double(g.bytes)) + " in all";
    if (g.aliveAtEnd > g.count) {
        // The first and the last two iterations are not examined, yet a group kept every
        // iteration holds its allocations of those too.
        s += "; " + std::to_string(g.aliveAtEnd) + " alive at the end of the last iteration (" +
             formatBytes(double(g.aliveAtEnd) * double(g.sizeBytes)) + ")";
    }
    return s;
}

std::string stackLabel(const trace::TraceData& data, trace::StackId stack) {
    const uint32_t s = toInt(stack);
    if (s == 0 || s >= data.stacks.size() || data.stacks[s].empty()) {
        return "(no stack)";
    }
    for (trace::FrameId f : data.stacks[s]) {
        if (toInt(f) < data.frames.size() &&
            !isLibraryFile(data.string(data.frames[toInt(f)].file))) {
            return frameLabel(data, f);
        }
    }
    return frameLabel(data, data.stacks[s].front());
}

std::string frameLabel(const trace::TraceData& data, trace::FrameId frame) {
    if (toInt(frame) >= data.frames.size()) {
        return "?";
    }
    const trace::Frame& f = data.frames[toInt(frame)];
    std::string s(data.string(f.name));
    if (s.empty()) {
        s = "?";
    }
    const std::string_view file = data.string(f.file);
    if (!file.empty()) {
        s += " (";
        s += file;
        s += ':';
        s += std::to_string(f.line);
        s += ')';
    }
    return s;
}

double theilSenSlope(const std::vector<double>& y) {
    const size_t n = y.size();
    if (n < 2) {
        return 0.0;
    }
    std::vector<double> slopes;
    if (n <= 2000) {
        slopes.reserve(n * (n - 1) / 2);
        for (size_t i = 0; i < n; ++i) {
            for (size_t j = i + 1; j < n; ++j) {
                slopes.push_back((y[j] - y[i]) / double(j - i));
            }
        }
    } else {
        // About 2 million pairs drawn with a fixed seed: the same input gives the same slope.
        std::mt19937_64 rng(0x5eed);
        slopes.reserve(2'000'000);
        while (slopes.size() < 2'000'000) {
            size_t i = size_t(rng() % n), j = size_t(rng() % n);
            if (i == j) {
                continue;
            }
            if (i > j) {
                std::swap(i, j);
            }
            slopes.push_back((y[j] - y[i]) / double(j - i));
        }
    }
    return median(std::move(slopes));
}

LeakReport analyzeLeak(const trace::TraceData& data, trace::DeviceIndex device,
                       const IterationSet& iterations, const AllocationIndex& index,
                       const MemoryTimeline* timeline, const LeakOptions& options) {
    LeakReport r;
    r.device = device;
    r.level = index.level();
    r.iterationSource = iterations.source;
    if (const trace::DeviceInfo* info = data.device(device)) {
        r.capacityBytes = info->totalMemoryBytes;
    }
    if (r.capacityBytes == 0) {
        r.capacityBytes = options.capacityBytes;
    }
    if (iterations.source == IterationSource::None) {
        // Nothing per iteration without iterations one can trust (see findIterations).
        r.verdict = LeakVerdict::Inconclusive;
        r.reason = iterations.reason.empty() ? "no iteration structure." : iterations.reason;
        return r;
    }
    r.iterations = iterationMemory(levelCurve(timeline, index.level()), iterations);
    decide(r, options);
    std::vector<SurvivorGroup> groups =
        survivorGroups(data, index, iterations, r.survivorIterations, r.firstIterationLeakBytes);
    for (const SurvivorGroup& g : groups) {
        r.survivorBytes += g.bytes;
    }
    if (groups.size() > options.maxSurvivorGroups) {
        groups.resize(options.maxSurvivorGroups);
    }
    for (SurvivorGroup& g : groups) {
        describeFrames(data, g);
    }
    r.survivors = std::move(groups);
    return r;
}

LeakReport analyzeLeak(const trace::TraceData& data, trace::DeviceIndex device,
                       const IterationSet& iterations, const LeakOptions& options) {
    const AllocationIndex index(data, device, detailLevel(data, device));
    const std::vector<MemoryTimeline> timelines = buildMemoryTimelines(data);
    const auto own = std::find_if(timelines.begin(), timelines.end(),
                                  [&](const MemoryTimeline& t) { return t.device == device; });
    return analyzeLeak(data, device, iterations, index, own == timelines.end() ? nullptr : &*own,
                       options);
}

}  // namespace vramscope::analysis
