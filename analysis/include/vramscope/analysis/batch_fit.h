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

/// peak(batch) = interceptBytes + slopeBytesPerSample x batch, fitted by ordinary least squares.
struct BatchFit {
    std::vector<BatchPoint> points;
    double slopeBytesPerSample = 0.0;
    double interceptBytes = 0.0;
    double rSquared = 0.0;  ///< 1 - SS_res / SS_tot; 1 when all peaks are equal
    uint64_t capacityBytes = 0;
    /// Largest integer batch b >= 1 with intercept + slope x b <= fraction x capacity; nullopt when
    /// even batch 1 does not fit, or when the slope is <= 0 (no limit can be derived).
    std::optional<int64_t> largestBatchUnder80;  ///< fraction = kCapacityWarningShare
    std::optional<int64_t> largestBatchUnder100;
    /// Predicted peak at a batch (bytes).
    double predict(double batch) const { return interceptBytes + slopeBytesPerSample * batch; }
};

/// Fits the line and the largest batches. Errors: fewer than two points, fewer than two distinct
/// batch sizes, a batch <= 0, or capacity 0.
trace::Result<BatchFit> fitBatch(std::vector<BatchPoint> points, uint64_t capacityBytes);

/// Largest integer batch >= 1 whose predicted peak is <= limit bytes, per the fit.
std::optional<int64_t> largestBatchUnder(const BatchFit& fit, double limitBytes);

}  // namespace vramscope::analysis
