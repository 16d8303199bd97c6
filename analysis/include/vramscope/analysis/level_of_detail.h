#pragma once
// Level-of-detail reduction of a step series: min/max per time bucket, so a plot of a
// 10-million-step series draws a few thousand points at any zoom without touching every step.

#include <cstdint>
#include <vector>

#include "vramscope/analysis/memory_timeline.h"

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

/// Immutable min/max pyramid over a StepSeries (which it copies the time column of, or shares).
/// Build is O(n); a query of B buckets costs O(B log n). Thread-safe for concurrent queries.
class LodSeries {
public:
    LodSeries() = default;
    explicit LodSeries(StepSeries series);

    const StepSeries& series() const { return m_series; }
    /// Reduces the series over [t0, t1) into `buckets` equal-width buckets. Buckets with no step
    /// inside them carry the value held across them (min == max). Empty when the series is empty
    /// or t1 <= t0 or buckets == 0.
    std::vector<LodBucket> query(TimestampNs t0, TimestampNs t1, size_t buckets) const;
    /// The exact steps inside [t0, t1) plus the step in force at t0, when there are at most
    /// `maxSteps` of them; otherwise returns false and leaves `out` empty.
    bool exactSteps(TimestampNs t0, TimestampNs t1, size_t maxSteps, StepSeries& out) const;
    /// Min and max of the values at step indices [first, last) in O(log n).
    std::pair<int64_t, int64_t> rangeMinMax(size_t first, size_t last) const;

private:
    StepSeries m_series;
    // m_levels[k] holds min/max over blocks of kBlock^(k+1) consecutive steps.
    std::vector<std::vector<int64_t>> m_min;
    std::vector<std::vector<int64_t>> m_max;
};

}  // namespace vramscope::analysis
