#pragma once
// The largest batch that fits: a least-squares line of peak memory against batch size.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/trace/error.h"

namespace vramscope::analysis {

/// One run: its batch size and peak memory (bytes).
struct BatchPoint {
    double batch = 0.0;
    double peakBytes = 0.0;
    std::string label;  ///< e.g. the file it came from
};

/// Below this R² the line explains too little of the measured peaks to extrapolate from.
inline constexpr double kBatchFitMinRSquared = 0.9;
/// A largest batch beyond this multiple of the largest measured batch is an extrapolation too far
/// to trust without a run near it (activations, workspaces and allocator rounding need not stay
/// linear).
inline constexpr double kBatchFitMaxExtrapolation = 2.0;

/// Whether a largest batch could be derived from the fit, and if not, why.
enum class BatchLimit {
    Found,          ///< the batch is given
    NoneFits,       ///< even batch 1 is predicted above the limit
    NoLimit,        ///< slope <= 0: the peak does not grow with the batch in these runs
    BelowMeasured,  ///< negative intercept and the answer lies below the smallest measured batch
};

/// At least this many different batch sizes are needed to judge a line: through two points any
/// line fits exactly (R² = 1 by construction).
inline constexpr size_t kBatchFitMinBatchSizes = 3;

/// peak(batch) = interceptBytes + slopeBytesPerSample x batch, fitted by ordinary least squares.
struct BatchFit {
    std::vector<BatchPoint> points;
    double slopeBytesPerSample = 0.0;
    double interceptBytes = 0.0;
    /// 1 - SS_res / SS_tot (SS_res = sum of (peak - predicted)^2, SS_tot = sum of (peak - mean
    /// peak)^2); 1 when all peaks are equal.
    double rSquared = 0.0;
    double largestMeasuredBatch = 0.0;
    double smallestMeasuredBatch = 0.0;
    size_t distinctBatchSizes = 0;
    uint64_t capacityBytes = 0;
    /// Largest integer batch b >= 1 with intercept + slope x b <= fraction x capacity; nullopt
    /// when limit80 / limit100 is not Found: even batch 1 does not fit, the slope is <= 0 (no
    /// limit can be derived), or the intercept is negative and b is below the smallest measured
    /// batch (such a line says nothing about smaller batches: it would reach 0 B at batch
    /// -intercept / slope).
    std::optional<int64_t> largestBatchUnder80;  ///< fraction = kCapacityWarningShare
    std::optional<int64_t> largestBatchUnder100;
    BatchLimit limit80 = BatchLimit::Found;
    BatchLimit limit100 = BatchLimit::Found;
    /// Why the answer may not hold, one sentence each with its numbers: fewer than
    /// kBatchFitMinBatchSizes batch sizes; a negative intercept; a slope <= 0; R² below
    /// kBatchFitMinRSquared; a largest batch above kBatchFitMaxExtrapolation x the largest
    /// measured batch.
    std::vector<std::string> warnings;
    /// Predicted peak at a batch (bytes).
    double predict(double batch) const { return interceptBytes + slopeBytesPerSample * batch; }
};

/// Fits the line and the largest batches. Errors: fewer than two points, fewer than two distinct
/// batch sizes, a batch <= 0, or capacity 0.
trace::Result<BatchFit> fitBatch(std::vector<BatchPoint> points, uint64_t capacityBytes);

/// What to print in place of a largest batch that is not Found: "none (batch 1 does not fit)",
/// "no answer (...)" with the reason and its numbers; "" for Found.
std::string batchLimitText(const BatchFit& fit, BatchLimit limit);

/// Largest integer batch >= 1 whose predicted peak is <= limit bytes, per the fit.
std::optional<int64_t> largestBatchUnder(const BatchFit& fit, double limitBytes);

}  // namespace vramscope::analysis
