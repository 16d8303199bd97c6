#include "vramscope/analysis/memory/batch_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "vramscope/analysis/memory/memory_summary.h"
#include "vramscope/analysis/model/text_format.h"

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

/// The line's equation as the warnings print it: "-6.16 GiB + 1.21 GiB x batch".
std::string lineText(const BatchFit& fit) {
    return "peak = " + formatBytes(fit.interceptBytes) + " + " +
           formatBytes(fit.slopeBytesPerSample) + " x batch";
}

/// Found, or why not, for one answer; clears the batch when it cannot be trusted.
BatchLimit classify(const BatchFit& fit, std::optional<int64_t>& batch) {
    if (fit.slopeBytesPerSample <= 0.0) {
        batch.reset();
        return BatchLimit::NoLimit;
    }
    // A line with a negative intercept reaches 0 B at a positive batch: below the measured runs
    // it predicts less than the fixed part (weights, optimizer state) any run holds.
    if (fit.interceptBytes < 0.0 && (!batch || double(*batch) < fit.smallestMeasuredBatch)) {
        batch.reset();
        return BatchLimit::BelowMeasured;
    }
    return batch ? BatchLimit::Found : BatchLimit::NoneFits;
}

void addWarnings(BatchFit& fit) {
    if (fit.distinctBatchSizes < kBatchFitMinBatchSizes) {
        fit.warnings.push_back("only " + std::to_string(fit.distinctBatchSizes) +
                               " batch sizes: a line through two points fits them exactly (R^2 = "
                               "1 by construction), so whether peak memory grows along a line "
                               "cannot be judged; measure at least " +
                               std::to_string(kBatchFitMinBatchSizes) + " batch sizes");
    }
    if (fit.slopeBytesPerSample <= 0.0) {
        fit.warnings.push_back(
            "the peak does not grow with the batch (" + lineText(fit) +
            "): the batch does not drive the peak in these runs (or one run was given twice), "
            "so no largest batch can be derived");
    } else if (fit.interceptBytes < 0.0) {
        fit.warnings.push_back(
            "negative intercept: " + lineText(fit) + " reaches 0 B at batch " +
            formatSignificant(-fit.interceptBytes / fit.slopeBytesPerSample) +
            ", so peak memory does not grow along a line from a fixed base in these runs (are they "
            "one job at different batch sizes?); no batch below the smallest measured one, " +
            number(fit.smallestMeasuredBatch, "%g") + ", is predicted");
    }
    if (fit.distinctBatchSizes >= kBatchFitMinBatchSizes && fit.rSquared < kBatchFitMinRSquared) {
        fit.warnings.push_back(
            "poor fit: R^2 = " + formatSignificant(fit.rSquared) + " is below " +
            formatSignificant(kBatchFitMinRSquared) +
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
    fit.largestMeasuredBatch = *batches.rbegin();
    fit.smallestMeasuredBatch = *batches.begin();
    fit.distinctBatchSizes = batches.size();
    fit.largestBatchUnder80 = largestBatchUnder(fit, kCapacityWarningShare * double(capacityBytes));
    fit.largestBatchUnder100 = largestBatchUnder(fit, double(capacityBytes));
    fit.limit80 = classify(fit, fit.largestBatchUnder80);
    fit.limit100 = classify(fit, fit.largestBatchUnder100);
    addWarnings(fit);
    return fit;
}

std::string batchLimitText(const BatchFit& fit, BatchLimit limit) {
    switch (limit) {
        case BatchLimit::Found:
            return "";
        case BatchLimit::NoneFits:
            return "none (batch 1 does not fit)";
        case BatchLimit::NoLimit:
            return "no answer (the peak does not grow with the batch in these runs)";
        case BatchLimit::BelowMeasured:
            return "no answer (it lies below the smallest measured batch, " +
                   number(fit.smallestMeasuredBatch, "%g") +
                   ", where a line with a negative intercept predicts nothing; measure a smaller "
                   "batch)";
    }
    return "";
}

}  // namespace vramscope::analysis
