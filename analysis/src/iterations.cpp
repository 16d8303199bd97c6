#include "vramscope/analysis/iterations.h"

#include "vramscope/analysis/allocation_index.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <regex>
#include <unordered_map>

namespace vramscope::analysis {

using trace::RangeKind;
using trace::TimestampNs;

const char* toString(IterationSource source) {
    switch (source) {
        case IterationSource::None:
            return "none";
        case IterationSource::Ranges:
            return "ranges";
        case IterationSource::Regex:
            return "regex";
        case IterationSource::Detected:
            return "detected";
    }
    return "none";
}

int64_t IterationSet::medianDurationNs() const {
    if (iterations.empty()) {
        return 0;
    }
    std::vector<int64_t> d;
    d.reserve(iterations.size());
    for (const Iteration& it : iterations) {
        d.push_back(it.endNs - it.startNs);
    }
    std::nth_element(d.begin(), d.begin() + ptrdiff_t(d.size() / 2), d.end());
    return d[d.size() / 2];
}

namespace {

/// The number after `prefix` when `name` is exactly prefix + integer.
std::optional<int64_t> numberAfter(std::string_view name, std::string_view prefix) {
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) {
        return std::nullopt;
    }
    std::string_view rest = name.substr(prefix.size());
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec != std::errc() || ptr != rest.data() + rest.size()) {
        return std::nullopt;
    }
    return v;
}

std::optional<int64_t> defaultIterationNumber(std::string_view name) {
    if (auto n = numberAfter(name, "iteration ")) {
        return n;
    }
    if (auto n = numberAfter(name, "ProfilerStep#")) {
        return n;
    }
    return std::nullopt;
}

/// Trailing integer of a name, for regex-matched ranges ("step_12" -> 12).
std::optional<int64_t> trailingNumber(std::string_view name) {
    size_t i = name.size();
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') {
        --i;
    }
    if (i == name.size() || name.size() - i > 18) {
        return std::nullopt;
    }
    int64_t v = 0;
    std::from_chars(name.data() + i, name.data() + name.size(), v);
    return v;
}

struct Candidate {
    size_t range;
    int64_t number;
    bool hasNumber;
};

IterationSet fromCandidates(const trace::TraceData& data, std::vector<Candidate> cands,
                            IterationSource source) {
    const trace::RangeEvents& r = data.ranges;
    std::stable_sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) {
        return r.startNs[a.range] < r.startNs[b.range];
    });
    IterationSet set;
    set.source = source;
    TimestampNs lastEnd = INT64_MIN;
    for (const Candidate& c : cands) {
        if (r.startNs[c.range] < lastEnd || r.endNs[c.range] < r.startNs[c.range]) {
            continue;  // nested in (or overlapping) the previous iteration, or malformed
        }
        Iteration it;
        it.number = c.hasNumber ? c.number : int64_t(set.iterations.size());
        it.startNs = r.startNs[c.range];
        it.endNs = r.endNs[c.range];
        it.name = std::string(data.string(r.name[c.range]));
        lastEnd = it.endNs;
        set.iterations.push_back(std::move(it));
    }
    return set;
}

/// Picks one family of candidate ranges: Iteration kind first, then host ranges, then GPU ones.
std::vector<Candidate> pickFamily(const trace::TraceData& data, std::vector<Candidate> all) {
    const trace::RangeEvents& r = data.ranges;
    for (int family = 0; family < 3; ++family) {
        std::vector<Candidate> out;
        for (const Candidate& c : all) {
            const RangeKind k = r.kind[c.range];
            const bool in = family == 0   ? k == RangeKind::Iteration
                            : family == 1 ? (k == RangeKind::Nvtx || k == RangeKind::UserAnnotation)
                                          : k == RangeKind::GpuAnnotation;
            if (in) {
                out.push_back(c);
            }
        }
        if (!out.empty()) {
            return out;
        }
    }
    return {};
}

/// Allocation sequence of the detail level: time-ordered alloc events and allocated bytes before
/// each.
struct AllocSequence {
    std::vector<uint64_t> key;
    std::vector<TimestampNs> time;
    std::vector<int64_t> bytesBefore;
};

AllocSequence allocSequence(const trace::TraceData& data, trace::DeviceIndex device) {
    const trace::MemoryEvents& m = data.memory;
    bool haveAllocated = false;
    for (size_t i = 0; i < m.size() && !haveAllocated; ++i) {
        haveAllocated = m.device[i] == device && m.level[i] == trace::MemoryLevel::Allocated;
    }
    const trace::MemoryLevel level =
        haveAllocated ? trace::MemoryLevel::Allocated : trace::MemoryLevel::Reserved;
    std::vector<size_t> idx;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.device[i] == device && m.level[i] == level &&
            m.kind[i] != trace::MemoryKind::DeviceStatic) {
            idx.push_back(i);
        }
    }
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return m.timestampNs[a] < m.timestampNs[b]; });
    AllocSequence seq;
    int64_t bytes = 0;
    for (size_t i : idx) {
        if (m.action[i] == trace::MemoryAction::Alloc) {
            seq.key.push_back(m.sizeBytes[i] * 0x9E3779B97F4A7C15ull ^ (uint64_t(m.stack[i]) << 1));
            seq.time.push_back(m.timestampNs[i]);
            seq.bytesBefore.push_back(bytes);
            bytes += allocationBytes(m.sizeBytes[i]);
        } else {
            bytes = std::max<int64_t>(0, bytes - allocationBytes(m.sizeBytes[i]));
        }
    }
    return seq;
}

IterationSet detectIterations(const trace::TraceData& data, trace::DeviceIndex device,
                              const IterationOptions& options) {
    IterationSet set;
    AllocSequence seq = allocSequence(data, device);
    constexpr size_t kMaxAllocs = 200000;
    size_t base = seq.key.size() > kMaxAllocs ? seq.key.size() - kMaxAllocs : 0;
    const size_t n = seq.key.size() - base;
    const int64_t minP = std::max<int64_t>(1, options.minPeriodAllocations);
    const int64_t maxP = int64_t(n / 3);
    if (maxP < minP) {
        return set;
    }
    const uint64_t* key = seq.key.data() + base;
    // Bound the work to about 60M comparisons by sampling positions evenly.
    const size_t budget = 60'000'000;
    std::vector<double> score(size_t(maxP + 1), 0.0);
    double best = 0.0;
    for (int64_t p = minP; p <= maxP; ++p) {
        const size_t span = n - size_t(p);
        const size_t samples = std::min(span, std::max<size_t>(512, budget / size_t(maxP)));
        const double stride = double(span) / double(samples);
        size_t hits = 0;
        for (size_t s = 0; s < samples; ++s) {
            const size_t i = size_t(double(s) * stride);
            hits += key[i] == key[i + size_t(p)];
        }
        score[size_t(p)] = double(hits) / double(samples);
        best = std::max(best, score[size_t(p)]);
    }
    if (best < options.minPeriodScore) {
        return set;
    }
    int64_t period = minP;
    while (score[size_t(period)] < best - 0.02) {
        ++period;
    }
    // Phase: offset in the period with the lowest mean allocated bytes before the allocation.
    const int64_t* before = seq.bytesBefore.data() + base;
    int64_t phase = 0;
    double lowest = 0.0;
    for (int64_t r = 0; r < period; ++r) {
        double sum = 0.0;
        int64_t cnt = 0;
        for (size_t i = size_t(r); i < n; i += size_t(period)) {
            sum += double(before[i]);
            ++cnt;
        }
        const double mean = sum / double(std::max<int64_t>(1, cnt));
        if (r == 0 || mean < lowest) {
            lowest = mean;
            phase = r;
        }
    }
    set.source = IterationSource::Detected;
    set.periodAllocations = period;
    set.periodScore = score[size_t(period)];
    for (size_t k = size_t(phase), m = 0; k + size_t(period) < n; k += size_t(period), ++m) {
        Iteration it;
        it.number = int64_t(m);
        it.startNs = seq.time[base + k];
        it.endNs = seq.time[base + k + size_t(period)];
        it.name = "detected " + std::to_string(m);
        set.iterations.push_back(std::move(it));
    }
    if (set.iterations.empty()) {
        set.source = IterationSource::None;
    }
    return set;
}

}  // namespace

trace::Result<IterationSet> findIterations(const trace::TraceData& data, trace::DeviceIndex device,
                                           const IterationOptions& options) {
    const trace::RangeEvents& r = data.ranges;
    std::vector<Candidate> cands;
    if (!options.regex.empty()) {
        std::optional<std::regex> re;
        try {
            re.emplace(options.regex, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            return trace::Error::make(
                trace::ErrorCode::Invalid, "",
                "invalid iteration regex \"" + options.regex + "\": " + e.what());
        }
        std::unordered_map<trace::StringId, bool> matches;
        for (size_t i = 0; i < r.size(); ++i) {
            if (r.device[i] != device && r.device[i] != trace::kHostDevice) {
                continue;
            }
            auto [it, inserted] = matches.try_emplace(r.name[i], false);
            if (inserted) {
                const std::string name(data.string(r.name[i]));
                it->second = std::regex_search(name, *re);
            }
            if (it->second) {
                auto n = trailingNumber(data.string(r.name[i]));
                cands.push_back({i, n.value_or(0), n.has_value()});
            }
        }
        return fromCandidates(data, pickFamily(data, std::move(cands)), IterationSource::Regex);
    }
    for (size_t i = 0; i < r.size(); ++i) {
        if (r.device[i] != device && r.device[i] != trace::kHostDevice) {
            continue;
        }
        auto n = defaultIterationNumber(data.string(r.name[i]));
        if (n || r.kind[i] == RangeKind::Iteration) {
            cands.push_back({i, n.value_or(0), n.has_value()});
        }
    }
    if (!cands.empty()) {
        IterationSet set =
            fromCandidates(data, pickFamily(data, std::move(cands)), IterationSource::Ranges);
        if (!set.iterations.empty()) {
            return set;
        }
    }
    return detectIterations(data, device, options);
}

}  // namespace vramscope::analysis
