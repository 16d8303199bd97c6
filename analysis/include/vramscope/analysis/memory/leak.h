#pragma once
// Leak detection: does memory return to the same baseline every iteration (a sawtooth) or climb
// (a staircase)? And which allocations survive their iteration.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/time/iterations.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

enum class LeakVerdict { Inconclusive, Sawtooth, Staircase };
const char* toString(LeakVerdict verdict);

/// Allocated bytes of one iteration: lowest (baseline) and highest (peak) value of the running sum.
struct IterationMemory {
    int64_t number = 0;
    trace::TimestampNs startNs = 0;
    trace::TimestampNs endNs = 0;
    int64_t baselineBytes = 0;
    int64_t peakBytes = 0;
};

/// Allocations made in one iteration and still alive two iterations later, grouped by stack (by
/// NVTX range name for allocations without a stack) and size: one group is "the same tensor kept
/// every iteration".
struct SurvivorGroup {
    trace::StackId stack{0};
    std::string nvtxRange;      ///< the range name when grouped by range (stack 0), else empty
    uint64_t sizeBytes = 0;     ///< size of each allocation of the group
    uint64_t bytes = 0;         ///< summed over all examined iterations
    uint64_t count = 0;         ///< allocations
    uint64_t largestBytes = 0;  ///< = sizeBytes (kept for the JSON's readers)
    /// Examined iterations with at least one allocation of the group, and the fewest and most
    /// allocations of the group in one such iteration.
    int iterations = 0;
    uint64_t minPerIteration = 0;
    uint64_t maxPerIteration = 0;
    /// Allocations with the group's stack (range) and size made before the end of the last
    /// iteration, in any iteration (also the first and the last two, which are not examined), and
    /// not freed before that end: what of the group is alive at the end. >= count when the group
    /// is kept for good; less when some of the examined ones are freed later.
    uint64_t aliveAtEnd = 0;
    /// Up to 8 frames, leaf (innermost) first, as "function (file:line)"; empty without a stack.
    std::vector<std::string> topFrames;
    /// The innermost frame outside library code (torch/, site-packages, C/C++ sources), as
    /// "function (file:line)"; empty when there is none. Where the user's code made it.
    std::string userFrame;
    /// Up to 6 frames outside library code, innermost first: the user's call chain (e.g. the
    /// model's forward, then the training step that allocated the tensor and kept it).
    std::vector<std::string> userFrames;
};

struct LeakOptions {
    int minIterations = 4;  ///< fewer gives Inconclusive
    /// Growth across the window must exceed this many robust standard deviations of the
    /// baselines around the fitted line (1.4826 x MAD of the residuals).
    double noiseFactor = 3.0;
    /// ... and this many bytes in total across the window (byte-level jitter is no leak).
    int64_t minTotalGrowthBytes = 1 << 20;
    /// ... and at least this fraction of consecutive baseline differences must be positive.
    double minRisingFraction = 0.6;
    size_t maxSurvivorGroups = 20;
    /// Capacity for iterationsToOom when the trace names none (e.g. check --capacity); 0 = none.
    uint64_t capacityBytes = 0;
};

/// The leak verdict of one device.
struct LeakReport {
    trace::DeviceIndex device{0};
    trace::MemoryLevel level = trace::MemoryLevel::Allocated;
    IterationSource iterationSource = IterationSource::None;
    std::vector<IterationMemory> iterations;
    LeakVerdict verdict = LeakVerdict::Inconclusive;
    std::string reason;  ///< one sentence with the numbers behind the verdict
    /// Theil-Sen slope of baselines against iteration position (median of pairwise slopes).
    double slopeBytesPerIteration = 0.0;
    /// Robust noise: 1.4826 x median absolute deviation of the residuals about the line.
    double noiseBytes = 0.0;
    double risingFraction = 0.0;  ///< share of consecutive baseline differences > 0
    /// round(slope) when Staircase, else 0.
    int64_t growthBytesPerIteration = 0;
    uint64_t capacityBytes = 0;  ///< from the header, else LeakOptions::capacityBytes; 0 = unknown
    /// (capacity - last iteration's peak) / growth, when Staircase and capacity is known.
    std::optional<double> iterationsToOom;
    std::vector<SurvivorGroup> survivors;  ///< largest first
    uint64_t survivorBytes = 0;            ///< total over all groups
    int survivorIterations = 0;            ///< iterations examined for survivors
    /// Bytes of the allocations made by the end of the first iteration and alive at the end of
    /// the last (the window of model state, see analysis::modelState) that have the stack (range)
    /// and size of a survivor group, over all groups (also those beyond maxSurvivorGroups): the
    /// leak's part of what lives across all iterations.
    uint64_t firstIterationLeakBytes = 0;
};

/// Per-iteration baseline and peak of the device's memory curve at the detail level (Allocated,
/// else Reserved) as buildMemoryTimelines builds it (the producer's totals when present, else the
/// running sum of events). The curve is known from its first step on: an iteration counts only
/// its part from the first step on, and iterations that end before it are left out of
/// `iterations` (LeakReport::iterations may be shorter than the IterationSet).
///
/// Verdict (documented thresholds, see LeakOptions): fewer than minIterations -> Inconclusive.
/// Let s = Theil-Sen slope, growth = s x (n - 1), noise = 1.4826 x MAD(residuals). Staircase when
/// s > 0, growth > noiseFactor x noise, growth >= minTotalGrowthBytes and the rising fraction >=
/// minRisingFraction. Sawtooth when growth <= max(noiseFactor x noise, minTotalGrowthBytes) (no
/// significant growth, including falling baselines). Otherwise (significant but inconsistent
/// growth) Inconclusive.
/// Survivors: allocations made in iteration k (1 <= k <= n-3; the first iteration is warm-up,
/// where optimizer state and caches are created) still alive at the end of iteration k + 2,
/// grouped by stack (allocations without a stack by the name of their NVTX range) and size,
/// largest first. Each group's aliveAtEnd and the report's firstIterationLeakBytes count the
/// allocations of every iteration with a group's stack (range) and size.
/// Without iteration structure (iterations.source None) the verdict is Inconclusive with the
/// IterationSet's reason, and nothing per iteration is built (no iterations, no survivors).
/// `index` must be the AllocationIndex of (device, level). `timeline` is the device's own memory
/// timeline (buildMemoryTimelines, as analyzeJob made it once for the device), whose curve of
/// index.level() gives the baselines and peaks; null when the device has none (no iterations
/// are measured then). The timeline is read, never rebuilt.
LeakReport analyzeLeak(const trace::TraceData& data, trace::DeviceIndex device,
                       const IterationSet& iterations, const AllocationIndex& index,
                       const MemoryTimeline* timeline, const LeakOptions& options = {});

/// A short label for a stack: its first frame outside libraries (site-packages, torch, C/C++
/// sources), else its leaf frame, else "(no stack)"; frames as frameLabel.
std::string stackLabel(const trace::TraceData& data, trace::StackId stack);

/// Same, building the index for the detail level of `device` and the trace's timelines (for a
/// caller that has neither, e.g. one leak verdict of one trace; analyzeJob passes its own).
LeakReport analyzeLeak(const trace::TraceData& data, trace::DeviceIndex device,
                       const IterationSet& iterations, const LeakOptions& options = {});

/// The trend of per-iteration baselines by the leak's verdict rules (see analyzeLeak): what the
/// GPU leak and the host-memory analysis (host_memory.h) share.
struct BaselineTrend {
    LeakVerdict verdict = LeakVerdict::Inconclusive;
    std::string reason;                   ///< one sentence with the numbers behind the verdict
    double slopeBytesPerIteration = 0.0;  ///< Theil-Sen slope against iteration position
    double noiseBytes = 0.0;              ///< 1.4826 x MAD of the residuals about the line
    double risingFraction = 0.0;          ///< share of consecutive baseline differences > 0
    int64_t growthBytesPerIteration = 0;  ///< round(slope) when Staircase, else 0
};

/// The verdict on `iterations`' baselines with analyzeLeak's rules and thresholds (minIterations,
/// noiseFactor, minTotalGrowthBytes, minRisingFraction); Inconclusive with "too few iterations"
/// below minIterations (or 2).
BaselineTrend baselineTrend(const std::vector<IterationMemory>& iterations,
                            const LeakOptions& options = {});

/// Per-iteration baseline (lowest value) and peak of `curve` (any byte series: a GPU's or the
/// host's). The curve is known from its first step on: an iteration counts only its part from
/// the first step on, and one that ends before it is left out. Empty for an empty curve.
std::vector<IterationMemory> iterationMemory(const StepSeries& curve,
                                             const IterationSet& iterations);

/// Theil-Sen estimator: the median over pairs i < j of (y[j] - y[i]) / (j - i). 0 for n < 2.
/// For n > 2000, 2 million pairs are drawn at random with a fixed seed (deterministic).
double theilSenSlope(const std::vector<double>& y);

/// Where a survivor group comes from, for one line of text: its user frame, else its innermost
/// frame, else "NVTX range NAME", else "(no stack)".
std::string survivorLabel(const SurvivorGroup& group);

/// What survives each iteration: "one 64.00 MiB allocation per iteration", "two 500.00 MiB
/// allocations per iteration", "1 to 3 2.00 KiB allocations per iteration" (counts up to ten as
/// words; bytes as formatBytes).
std::string survivorPattern(const SurvivorGroup& group);

/// One line for a survivor group, what the CLI, the advice and the GUI print: "one 64.00 MiB
/// allocation per iteration from train (train.py:12), 17 iterations, 1.06 GiB in all"; with
/// "in 5 of 17 iterations" when the group did not survive every examined iteration
/// (`examinedIterations` = LeakReport::survivorIterations); and, when more of the group are alive
/// at the end than were counted in the examined iterations (the first and last two are not
/// examined), "; 30 alive at the end of the last iteration (14.65 GiB)" so that the line does not
/// understate what the job holds.
std::string describeSurvivor(const SurvivorGroup& group, int examinedIterations);

/// "function (file:line)" for a frame id; "function" when file is empty.
std::string frameLabel(const trace::TraceData& data, trace::FrameId frame);

}  // namespace vramscope::analysis
