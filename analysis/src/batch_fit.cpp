#include "vramscope/analysis/batch_fit.h"

#include <cmath>
#include <set>

#include "vramscope/analysis/memory_summary.h"

namespace vramscope::analysis {

std::optional<int64_t> largestBatchUnder(const BatchFit& fit, double limitBytes) {
    if (fit.slopeBytesPerSample <= 0.0) {
        return std::nullopt;
    }
    const double b = std::floor((limitBytes - fit.interceptBytes) / fit.slopeBytesPerSample);
    if (!(b >= 1.0) || b > 9e15) {
        return std::nullopt;
    }
    int64_t batch = int64_t(b);
    // Guard against rounding at the boundary.
    while (batch >= 1 && fit.predict(double(batch)) > limitBytes) {
        --batch;
    }
    return batch >= 1 ? std::optional<int64_t>(batch) : std::nullopt;
}

trace::Result<BatchFit> fitBatch(std::vector<BatchPoint> points, uint64_t capacityBytes) {
    if (points.size() < 2) {
        return trace::Error::make(trace::ErrorCode::Invalid, "",
                                  "batch-fit needs at least two runs with different batch "
                                  "sizes; got " +
                                      std::to_string(points.size()));
    }
    if (capacityBytes == 0) {
        return trace::Error::make(
            trace::ErrorCode::Invalid, "",
            "the device capacity is unknown: none of the traces names its GPU's "
            "total memory");
    }
    std::set<double> batches;
    for (const BatchPoint& p : points) {
        if (!(p.batch > 0.0)) {
            return trace::Error::make(trace::ErrorCode::Invalid, p.label,
                                      "batch size must be positive");
        }
        batches.insert(p.batch);
    }
    if (batches.size() < 2) {
        return trace::Error::make(trace::ErrorCode::Invalid, "",
                                  "batch-fit needs at least two different batch sizes");
    }
    const double n = double(points.size());
    double sx = 0, sy = 0;
    for (const BatchPoint& p : points) {
        sx += p.batch;
        sy += p.peakBytes;
    }
    const double mx = sx / n, my = sy / n;
    double sxx = 0, sxy = 0, syy = 0;
    for (const BatchPoint& p : points) {
        sxx += (p.batch - mx) * (p.batch - mx);
        sxy += (p.batch - mx) * (p.peakBytes - my);
        syy += (p.peakBytes - my) * (p.peakBytes - my);
    }
    BatchFit fit;
    fit.slopeBytesPerSample = sxy / sxx;
    fit.interceptBytes = my - fit.slopeBytesPerSample * mx;
    double ssRes = 0;
    for (const BatchPoint& p : points) {
        const double r = p.peakBytes - fit.predict(p.batch);
        ssRes += r * r;
    }
    fit.rSquared = syy > 0 ? 1.0 - ssRes / syy : 1.0;
    fit.capacityBytes = capacityBytes;
    fit.points = std::move(points);
    fit.largestBatchUnder80 = largestBatchUnder(fit, kCapacityWarningShare * double(capacityBytes));
    fit.largestBatchUnder100 = largestBatchUnder(fit, double(capacityBytes));
    return fit;
}

}  // namespace vramscope::analysis
