#pragma once
// Training iterations (steps) of one device: from the trace's markers (profiler steps, ranges named
// like steps, optimizer steps), a user's regex, or detected from the periodic structure of the
// allocation sequence when the trace names none and the structure is clear enough to trust.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// Where a set of iterations came from.
enum class IterationSource {
    None,            ///< no markers, and no period clear enough to trust (see IterationOptions)
    Ranges,          ///< ProfilerStep#N / RangeKind::Iteration ranges, or ranges named like steps
    OptimizerSteps,  ///< start to start of optimizer-step annotations ("Optimizer.step#AdamW.step")
    Regex,           ///< start to start of the ranges matching the user's --iteration-regex
    Detected,        ///< period of the allocation sequence (see findIterations)
};
/// "none", "ranges", "optimizer steps", "regex", "detected".
const char* toString(IterationSource source);

/// One iteration: [startNs, endNs) in the trace's clock.
struct Iteration {
    int64_t number = 0;  ///< from the range name when it carries one ("iteration 7" -> 7), else 0..
    trace::TimestampNs startNs = 0;
    trace::TimestampNs endNs = 0;
    std::string name;  ///< range name (of the starting marker), or "detected N"
};

/// Iterations of one device in time order, non-overlapping. An empty set (source None) means
/// "no iteration structure": nothing per iteration (leak verdict, model state, survivors) may be
/// built on it, and `reason` says why.
struct IterationSet {
    IterationSource source = IterationSource::None;
    std::vector<Iteration> iterations;
    /// How far the iterations can be trusted, 0..1: 1 for markers (ranges, optimizer steps,
    /// regex), the period's match score when Detected, 0 when None.
    double confidence = 0.0;
    /// The period examined by detection (also when it was rejected; 0 when detection did not
    /// run): allocations per period; the match score, the fraction of allocations from the
    /// second whole period on (the first step is warm-up) whose key equals the one a period later
    /// (0..1); the whole periods found and their median duration in ns.
    int64_t periodAllocations = 0;
    double periodScore = 0.0;
    int64_t wholePeriods = 0;
    int64_t periodDurationNs = 0;
    /// One sentence: which markers or which period gave the iterations, or why there are none.
    std::string reason;

    size_t count() const { return iterations.size(); }
    /// Median iteration duration in ns, 0 when there are none.
    int64_t medianDurationNs() const;
};

/// How findIterations looks: the user's regex and the bar a detected period must clear (the
/// thresholds are documented with the figures of the real files they were chosen on).
struct IterationOptions {
    /// ECMAScript regex over range names (std::regex_search); empty = the default markers.
    std::string regex;
    /// A detected period is used only with a match score (IterationSet::periodScore, from the
    /// second whole period on) of at least this: the H200 GPT snapshot's real step scores 100 %,
    /// DeComFL's 1.2 ms loop 63 %, MAGMA27's 3.4 ms one 54 %, random allocations below 50 %; ...
    double minPeriodScore = 0.9;
    /// ... at least this many whole periods, ...
    int64_t minWholePeriods = 3;
    /// ... and a median period of at least this long. Shorter repetition is a layer or a kernel
    /// loop inside a step: the DeComFL snapshot (realdata) repeats every 1.2 ms inside steps of
    /// 0.77 s, while the shortest real step among realdata's profiled jobs lasts 4.4 ms
    /// (ProfilerStep of bert-small on an H100).
    int64_t minPeriodNs = 2'000'000;
    /// Fewest allocations per detected iteration (shorter periods are per-layer repetition).
    int64_t minPeriodAllocations = 4;
};

/// True when `name` names a training step or iteration as a whole (the default marker rule,
/// tier 2 of findIterations): case-insensitive, the whole name is an optional "train"/"training"
/// word, then "step", "iteration" or "iter", then optionally a number, words separated by
/// nothing, a space, '_', '-', '#' or ':'. "iteration 7", "Step#3", "train_step", "training step
/// 12" are; "Optimizer.step#AdamW.step", "stepper", "step_fn" are not.
bool isIterationName(std::string_view name);

/// True when `name` marks an optimizer step (tier 3): case-insensitive, it starts with
/// "optimizer.step", "optimizer_step" or "optimizer step" followed by the end, '#' or '.'
/// (Kineto/record_function "Optimizer.step#AdamW.step", NVTX "optimizer.step"), or is exactly
/// "optimizer". isOptimizerZeroGradName: the same with "zero_grad" (one per step as well).
bool isOptimizerStepName(std::string_view name);
bool isOptimizerZeroGradName(std::string_view name);

/// Finds the iterations of `device`. Markers win over detection, in this order (the first tier
/// that gives at least one iteration is used):
/// 1. ProfilerStep#N ranges and RangeKind::Iteration ranges, each [start, end).
/// 2. Ranges named like steps (isIterationName), each [start, end).
/// 3. Optimizer steps (isOptimizerStepName), else optimizer zero_grads: iteration k runs from the
///    start of marker k to the start of marker k + 1, so N markers give N - 1 iterations.
/// With options.regex the tiers are replaced by the ranges whose name matches it, measured start
/// to start like tier 3 (so "Optimizer\.step" gives the step period, not the optimizer's own
/// range); source Regex, and no detection when nothing matches.
/// Within a tier, one family is used: Iteration kind, else host ranges (Nvtx, UserAnnotation),
/// else the device's GpuAnnotation ranges; ranges starting inside an earlier one are dropped.
/// 4. Detected: on the device's allocation sequence at the detail level (Allocated, else Reserved),
///    the key of each allocation is (size, stack, bytes freed since the previous allocation): the
///    frees tell a step from the alike layers inside it. The period P maximises
///    score(P) = #{i : key[i] == key[i+P]} / (n - P), and the smallest P whose score is within 2 %
///    of the best is taken (multiples of the period score as well). Its confidence is the same
///    score counted from the second whole period on (periodScore). The phase is the offset within
///    a period where the allocated bytes are lowest on average (the start of a forward pass);
///    iteration m spans allocation k0 + mP to k0 + (m+1)P (only whole periods). At most 200,000
///    allocations (the last ones) and periods up to n/3 are examined. The period is used only when
///    score >= minPeriodScore, whole periods >= minWholePeriods and the median period >=
///    minPeriodNs; otherwise the set is empty (source None) with the period's figures and the
///    reason kept.
/// Errors: an invalid regex.
trace::Result<IterationSet> findIterations(const trace::TraceData& data, trace::DeviceIndex device,
                                           const IterationOptions& options = {});

}  // namespace vramscope::analysis
