#include "vramscope/analysis/time/iterations.h"

#include "ascii_text.h"
#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/analysis/model/text_format.h"

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
        case IterationSource::OptimizerSteps:
            return "optimizer steps";
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

/// Trailing integer of a name ("step_12" -> 12).
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

/// Consumes `word` at the front of `s` when it is there.
bool eat(std::string_view& s, std::string_view word) {
    if (s.substr(0, word.size()) != word) {
        return false;
    }
    s.remove_prefix(word.size());
    return true;
}

void eatSeparators(std::string_view& s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '_' || s.front() == '-' ||
                          s.front() == '#' || s.front() == ':')) {
        s.remove_prefix(1);
    }
}

/// "optimizer" + one of ". _" + `what`, then the end, '#' or '.'.
bool isOptimizerName(std::string_view name, std::string_view what) {
    const std::string low = asciiLower(name);
    std::string_view s = low;
    if (!eat(s, "optimizer")) {
        return false;
    }
    if (s.empty()) {
        return what == "step";  // a range named just "optimizer" covers the step
    }
    if (s.front() != '.' && s.front() != '_' && s.front() != ' ') {
        return false;
    }
    s.remove_prefix(1);
    return eat(s, what) && (s.empty() || s.front() == '#' || s.front() == '.');
}

struct Candidate {
    size_t range;
    int64_t number;
    bool hasNumber;
};

/// Candidates in time order without the ones starting inside (or overlapping) an earlier one.
std::vector<Candidate> outermost(const trace::RangeEvents& r, std::vector<Candidate> cands) {
    std::stable_sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) {
        return r.startNs[a.range] < r.startNs[b.range];
    });
    std::vector<Candidate> out;
    TimestampNs lastEnd = INT64_MIN;
    for (const Candidate& c : cands) {
        if (r.startNs[c.range] < lastEnd || r.endNs[c.range] < r.startNs[c.range]) {
            continue;  // nested in (or overlapping) the previous one, or malformed
        }
        lastEnd = r.endNs[c.range];
        out.push_back(c);
    }
    return out;
}

/// Each range is an iteration, [start, end).
IterationSet wholeRanges(const trace::TraceData& data, const std::vector<Candidate>& cands) {
    const trace::RangeEvents& r = data.ranges;
    IterationSet set;
    for (const Candidate& c : outermost(r, cands)) {
        Iteration it;
        it.number = c.hasNumber ? c.number : int64_t(set.iterations.size());
        it.startNs = r.startNs[c.range];
        it.endNs = r.endNs[c.range];
        it.name = std::string(data.string(r.name[c.range]));
        set.iterations.push_back(std::move(it));
    }
    return set;
}

/// Iteration k runs from the start of range k to the start of range k + 1.
IterationSet startToStart(const trace::TraceData& data, const std::vector<Candidate>& cands) {
    const trace::RangeEvents& r = data.ranges;
    const std::vector<Candidate> marks = outermost(r, cands);
    IterationSet set;
    for (size_t k = 0; k + 1 < marks.size(); ++k) {
        Iteration it;
        it.number = marks[k].hasNumber ? marks[k].number : int64_t(k);
        it.startNs = r.startNs[marks[k].range];
        it.endNs = r.startNs[marks[k + 1].range];
        it.name = std::string(data.string(r.name[marks[k].range]));
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

/// The ranges of `device` (or the host) for which `accept(name, kind)` gives a number or true.
template <typename Accept>
std::vector<Candidate> candidates(const trace::TraceData& data, trace::DeviceIndex device,
                                  Accept accept) {
    const trace::RangeEvents& r = data.ranges;
    std::vector<Candidate> out;
    for (size_t i = 0; i < r.size(); ++i) {
        if (r.device[i] != device && r.device[i] != trace::kHostDevice) {
            continue;
        }
        if (accept(data.string(r.name[i]), r.kind[i])) {
            auto n = trailingNumber(data.string(r.name[i]));
            out.push_back({i, n.value_or(0), n.has_value()});
        }
    }
    return out;
}

std::string quoted(std::string_view s) {
    return "\"" + std::string(s) + "\"";
}

/// Allocation sequence of the detail level: time-ordered alloc events and allocated bytes before
/// each. The key of an allocation is its size, its stack and the bytes freed since the previous
/// allocation: the frees tell a step (which gives back its activations) from the layers inside it
/// (which allocate alike, one after another, without freeing).
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
    uint64_t freed = 0;  // bytes freed since the previous allocation
    for (size_t i : idx) {
        if (m.action[i] == trace::MemoryAction::Alloc) {
            seq.key.push_back(
                (m.sizeBytes[i] * 0x9E3779B97F4A7C15ull ^ (uint64_t(m.stack[i]) << 1)) +
                freed * 0xC2B2AE3D27D4EB4Full);
            seq.time.push_back(m.timestampNs[i]);
            seq.bytesBefore.push_back(bytes);
            bytes += allocationBytes(m.sizeBytes[i]);
            freed = 0;
        } else {
            bytes = std::max<int64_t>(0, bytes - allocationBytes(m.sizeBytes[i]));
            freed += m.sizeBytes[i];
        }
    }
    return seq;
}

/// Match score of every period minP..maxP over key[0, n), sampled to bound the work.
std::vector<double> periodScores(const uint64_t* key, size_t n, int64_t minP, int64_t maxP) {
    // Bound the work to about 60M comparisons by sampling positions evenly.
    const size_t budget = 60'000'000;
    std::vector<double> score(size_t(maxP + 1), 0.0);
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
    }
    return score;
}

/// The match score of `period` from the second whole period on (every position, no sampling):
/// the first step of a recording is warm-up (optimizer state and caches are created in it), so
/// it says little about whether the steps repeat.
double steadyScore(const uint64_t* key, size_t n, size_t period, size_t phase) {
    const size_t from = phase + period;
    if (from + period >= n) {
        return 0.0;
    }
    size_t hits = 0;
    for (size_t i = from; i + period < n; ++i) {
        hits += key[i] == key[i + period];
    }
    return double(hits) / double(n - period - from);
}

/// Offset in the period with the lowest mean allocated bytes before the allocation.
int64_t lowestPhase(const int64_t* before, size_t n, int64_t period) {
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
    return phase;
}

/// Accepts the candidate period in `set` or empties it, writing the reason either way.
void judgePeriod(IterationSet& set, const IterationOptions& options) {
    set.wholePeriods = int64_t(set.iterations.size());
    set.periodDurationNs = set.medianDurationNs();
    const std::string figures = std::to_string(set.periodAllocations) + " allocations, " +
                                formatPercent(set.periodScore, 0) +
                                " of allocations after the first period repeat one period later, " +
                                std::to_string(set.wholePeriods) + " whole periods of median " +
                                formatDuration(set.periodDurationNs);
    std::vector<std::string> missing;
    if (set.periodScore < options.minPeriodScore) {
        missing.push_back("a score of at least " + formatPercent(options.minPeriodScore, 0));
    }
    if (set.wholePeriods < options.minWholePeriods) {
        missing.push_back("at least " + std::to_string(options.minWholePeriods) + " whole periods");
    }
    if (set.periodDurationNs < options.minPeriodNs) {
        missing.push_back("a period of at least " + formatDuration(options.minPeriodNs) +
                          " (shorter repetition is a layer or a loop inside a step)");
    }
    if (missing.empty()) {
        set.source = IterationSource::Detected;
        set.confidence = set.periodScore;
        set.reason = "detected: the allocation sequence repeats every " + figures + ".";
        return;
    }
    std::string need;
    for (size_t i = 0; i < missing.size(); ++i) {
        need += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
    }
    set.source = IterationSource::None;
    set.confidence = 0.0;
    set.iterations.clear();
    set.reason =
        "no iteration structure: no step markers, and the best period of the allocation "
        "sequence (" +
        figures + ") is not trusted: it needs " + need + ".";
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
        set.reason = "no iteration structure: no step markers, and too few allocations (" +
                     std::to_string(n) + ") to look for a period (at least " +
                     std::to_string(3 * minP) + ").";
        return set;
    }
    const std::vector<double> score = periodScores(seq.key.data() + base, n, minP, maxP);
    const double best = *std::max_element(score.begin() + minP, score.end());
    int64_t period = minP;
    while (score[size_t(period)] < best - 0.02) {
        ++period;
    }
    const int64_t phase = lowestPhase(seq.bytesBefore.data() + base, n, period);
    set.periodAllocations = period;
    set.periodScore = steadyScore(seq.key.data() + base, n, size_t(period), size_t(phase));
    for (size_t k = size_t(phase), m = 0; k + size_t(period) < n; k += size_t(period), ++m) {
        Iteration it;
        it.number = int64_t(m);
        it.startNs = seq.time[base + k];
        it.endNs = seq.time[base + k + size_t(period)];
        it.name = "detected " + std::to_string(m);
        set.iterations.push_back(std::move(it));
    }
    judgePeriod(set, options);
    return set;
}

/// Iterations from the user's regex, start to start.
trace::Result<IterationSet> regexIterations(const trace::TraceData& data, trace::DeviceIndex device,
                                            const std::string& regex) {
    std::optional<std::regex> re;
    try {
        re.emplace(regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        return trace::Error::make(trace::ErrorCode::Invalid, "",
                                  "invalid iteration regex \"" + regex + "\": " + e.what());
    }
    std::unordered_map<std::string_view, bool> matches;
    auto cands = candidates(data, device, [&](std::string_view name, RangeKind) {
        auto [it, inserted] = matches.try_emplace(name, false);
        if (inserted) {
            it->second = std::regex_search(std::string(name), *re);
        }
        return it->second;
    });
    const size_t markers = outermost(data.ranges, pickFamily(data, cands)).size();
    IterationSet set = startToStart(data, pickFamily(data, std::move(cands)));
    set.source = IterationSource::Regex;
    set.confidence = 1.0;
    set.reason = set.iterations.empty()
                     ? "no iteration structure: " + std::to_string(markers) +
                           " ranges match --iteration-regex " + quoted(regex) +
                           " (two are needed: an iteration runs from the start of one to the "
                           "start of the next)."
                     : "regex: from the start of one range matching " + quoted(regex) +
                           " to the start of the next (" + std::to_string(markers) + " ranges).";
    if (set.iterations.empty()) {
        set.source = IterationSource::None;
        set.confidence = 0.0;
    }
    return set;
}

/// Tiers 1 to 3 of findIterations; an empty set when no tier gives an iteration.
IterationSet markerIterations(const trace::TraceData& data, trace::DeviceIndex device) {
    auto steps = candidates(data, device, [](std::string_view name, RangeKind kind) {
        return kind == RangeKind::Iteration ||
               (trailingNumber(name).has_value() && name.starts_with("ProfilerStep#"));
    });
    IterationSet set = wholeRanges(data, pickFamily(data, std::move(steps)));
    if (!set.iterations.empty()) {
        set.reason = "ranges: " + std::to_string(set.count()) +
                     " ProfilerStep#N or iteration ranges, each from its start to its end.";
    } else {
        auto named = candidates(
            data, device, [](std::string_view name, RangeKind) { return isIterationName(name); });
        set = wholeRanges(data, pickFamily(data, std::move(named)));
        if (!set.iterations.empty()) {
            set.reason = "ranges: " + std::to_string(set.count()) + " ranges named like steps (" +
                         quoted(set.iterations.front().name) + "), each from its start to its end.";
        }
    }
    if (!set.iterations.empty()) {
        set.source = IterationSource::Ranges;
        set.confidence = 1.0;
        return set;
    }
    for (auto* rule : {&isOptimizerStepName, &isOptimizerZeroGradName}) {
        auto marks = pickFamily(
            data, candidates(data, device,
                             [rule](std::string_view name, RangeKind) { return rule(name); }));
        const size_t markers = outermost(data.ranges, marks).size();
        set = startToStart(data, marks);
        if (!set.iterations.empty()) {
            set.source = IterationSource::OptimizerSteps;
            set.confidence = 1.0;
            set.reason = "optimizer steps: from the start of one " +
                         quoted(set.iterations.front().name) + " to the start of the next (" +
                         std::to_string(markers) + " markers).";
            return set;
        }
    }
    return {};
}

}  // namespace

bool isIterationName(std::string_view name) {
    const std::string low = asciiLower(name);
    std::string_view s = low;
    if (eat(s, "training") || eat(s, "train")) {
        eatSeparators(s);
    }
    if (!eat(s, "iteration") && !eat(s, "iter") && !eat(s, "step")) {
        return false;
    }
    eatSeparators(s);
    while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
        s.remove_prefix(1);
    }
    return s.empty();
}

bool isOptimizerStepName(std::string_view name) {
    return isOptimizerName(name, "step");
}

bool isOptimizerZeroGradName(std::string_view name) {
    return isOptimizerName(name, "zero_grad");
}

trace::Result<IterationSet> findIterations(const trace::TraceData& data, trace::DeviceIndex device,
                                           const IterationOptions& options) {
    if (!options.regex.empty()) {
        return regexIterations(data, device, options.regex);
    }
    IterationSet set = markerIterations(data, device);
    if (!set.iterations.empty()) {
        return set;
    }
    return detectIterations(data, device, options);
}

}  // namespace vramscope::analysis
