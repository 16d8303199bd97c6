#pragma once
// Level-of-detail reduction of a step series: min/max per time bucket, so a plot of a
// 10-million-step series draws a few thousand points at any zoom without touching every step.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "vramscope/analysis/memory/memory_timeline.h"

namespace vramscope::analysis {

/// One bucket of a reduced series: over [startNs, endNs) the series took values in
/// [minBytes, maxBytes]; it entered the bucket at firstBytes and left it at lastBytes.
struct LodBucket {
    TimestampNs startNs = 0;
    TimestampNs endNs = 0;
    int64_t minBytes = 0;
    int64_t maxBytes = 0;
    int64_t firstBytes = 0;
    int64_t lastBytes = 0;
};

/// Immutable min/max pyramid over a StepSeries (which it owns). Build is O(n) time and about
/// n/7 extra values of memory (blocks of kBlock steps, then of kBlock blocks, ...); a query of B
/// buckets costs O(B log n). Thread-safe for concurrent queries (all methods are const).
class LodSeries {
public:
    /// Steps per block of the pyramid's first level, and blocks per block of the next.
    static constexpr size_t kBlock = 16;
    /// Most buckets one query returns (a screen has a few thousand columns).
    static constexpr size_t kMaxBuckets = size_t{1} << 24;

    LodSeries() = default;
    /// Takes the series; steps at equal times are merged first, keeping the later value (the value
    /// that holds from then on), so series() may be shorter than the input.
    explicit LodSeries(StepSeries series);

    const StepSeries& series() const { return m_series; }
    /// Reduces the series over [t0, t1) into min(buckets, t1 - t0, kMaxBuckets) buckets of equal
    /// width (bucket i starts at t0 + floor(i * (t1 - t0) / count)), so every bucket is at least
    /// 1 ns wide. A bucket's min/max cover the value in force at its start (0 before the first
    /// step, as StepSeries::valueAt) and every step inside it; buckets with no step inside them
    /// carry the value held across them (min == max). Empty when t1 <= t0 or buckets == 0.
    std::vector<LodBucket> query(TimestampNs t0, TimestampNs t1, size_t buckets) const;
    /// The exact steps inside [t0, t1) plus, when no step falls exactly on t0, the step in force at
    /// t0 (with its own, earlier time), when there are at most `maxSteps` of them: returns true
    /// and fills `out`. Otherwise returns false and leaves `out` empty. For deep zoom.
    bool exactSteps(TimestampNs t0, TimestampNs t1, size_t maxSteps, StepSeries& out) const;
    /// Min and max of the values at step indices [first, last) in O(log n); {0, 0} when the range
    /// is empty. `last` is clamped to the series length.
    std::pair<int64_t, int64_t> rangeMinMax(size_t first, size_t last) const;

private:
    StepSeries m_series;
    // m_min[k][j] / m_max[k][j]: min / max over values [j * kBlock^(k+1), (j+1) * kBlock^(k+1)).
    std::vector<std::vector<int64_t>> m_min;
    std::vector<std::vector<int64_t>> m_max;
};

}  // namespace vramscope::analysis
