#include "vramscope/analysis/batch_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

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

namespace {

std::string number(double v, const char* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

void addWarnings(BatchFit& fit) {
    if (fit.rSquared < kBatchFitMinRSquared) {
        fit.warnings.push_back(
            "poor fit: R^2 = " + number(fit.rSquared, "%.3f") + " is below " +
            number(kBatchFitMinRSquared, "%.2f") +
            " (R^2 = 1 - SS_res / SS_tot), so peak memory does not grow along a line with the "
            "batch in these runs; the largest batches are guesses");
    }
    const double limit = kBatchFitMaxExtrapolation * fit.largestMeasuredBatch;
    for (const auto& [what, batch] : {std::pair{"80 %", fit.largestBatchUnder80},
                                      std::pair{"100 %", fit.largestBatchUnder100}}) {
        if (batch && double(*batch) > limit) {
            fit.warnings.push_back("extrapolated: the largest batch under " + std::string(what) +
                                   " of capacity, " + std::to_string(*batch) + ", is more than " +
                                   number(kBatchFitMaxExtrapolation, "%g") +
                                   " x the largest measured batch " +
                                   number(fit.largestMeasuredBatch, "%g") +
                                   "; measure a run near it before relying on it");
        }
    }
}

}  // namespace

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
    for (const BatchPoint& p : fit.points) {
        fit.largestMeasuredBatch = std::max(fit.largestMeasuredBatch, p.batch);
    }
    addWarnings(fit);
    return fit;
}

}  // namespace vramscope::analysis
