#include "vramscope/analysis/model/level_of_detail.h"

#include <algorithm>
#include <limits>

namespace vramscope::analysis {

namespace {

/// Merges steps at equal times, keeping the later value.
StepSeries mergeEqualTimes(StepSeries s) {
    size_t out = 0;
    for (size_t i = 0; i < s.timeNs.size(); ++i) {
        if (out > 0 && s.timeNs[out - 1] == s.timeNs[i]) {
            s.bytes[out - 1] = s.bytes[i];
            continue;
        }
        s.timeNs[out] = s.timeNs[i];
        s.bytes[out] = s.bytes[i];
        ++out;
    }
    s.timeNs.resize(out);
    s.bytes.resize(out);
    return s;
}

/// One level of the pyramid from the level below (min and max separately).
std::vector<int64_t> reduceLevel(const std::vector<int64_t>& below, bool takeMin) {
    const size_t n = (below.size() + LodSeries::kBlock - 1) / LodSeries::kBlock;
    std::vector<int64_t> out(n);
    for (size_t j = 0; j < n; ++j) {
        const auto first = below.begin() + static_cast<ptrdiff_t>(j * LodSeries::kBlock);
        const auto last = below.begin() + static_cast<ptrdiff_t>(
                                              std::min(below.size(), (j + 1) * LodSeries::kBlock));
        out[j] = takeMin ? *std::min_element(first, last) : *std::max_element(first, last);
    }
    return out;
}

}  // namespace

LodSeries::LodSeries(StepSeries series) : m_series(mergeEqualTimes(std::move(series))) {
    const std::vector<int64_t>* belowMin = &m_series.bytes;
    const std::vector<int64_t>* belowMax = &m_series.bytes;
    while (belowMin->size() > kBlock) {
        m_min.push_back(reduceLevel(*belowMin, true));
        m_max.push_back(reduceLevel(*belowMax, false));
        belowMin = &m_min.back();
        belowMax = &m_max.back();
    }
}

std::pair<int64_t, int64_t> LodSeries::rangeMinMax(size_t first, size_t last) const {
    last = std::min(last, m_series.size());
    if (first >= last) {
        return {0, 0};
    }
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = std::numeric_limits<int64_t>::min();
    // Level 0 is the values themselves; level L > 0 is m_min/m_max[L - 1].
    size_t level = 0;
    auto take = [&](size_t i) {
        if (level == 0) {
            lo = std::min(lo, m_series.bytes[i]);
            hi = std::max(hi, m_series.bytes[i]);
        } else {
            lo = std::min(lo, m_min[level - 1][i]);
            hi = std::max(hi, m_max[level - 1][i]);
        }
    };
    while (first < last) {
        if (level == m_min.size()) {  // top level: scan what is left (at most kBlock values)
            while (first < last) {
                take(first++);
            }
            break;
        }
        while (first < last && first % kBlock != 0) {
            take(first++);
        }
        while (first < last && last % kBlock != 0) {
            take(--last);
        }
        // [first, last) is now whole blocks of this level: continue one level up.
        first /= kBlock;
        last /= kBlock;
        ++level;
    }
    return {lo, hi};
}

std::vector<LodBucket> LodSeries::query(TimestampNs t0, TimestampNs t1, size_t buckets) const {
    std::vector<LodBucket> out;
    if (t1 <= t0 || buckets == 0) {
        return out;
    }
    const auto span = static_cast<uint64_t>(t1) - static_cast<uint64_t>(t0);
    const uint64_t count = std::min<uint64_t>({buckets, span, kMaxBuckets});
    const uint64_t width = span / count;
    const uint64_t rest = span % count;  // rest * i < count^2 <= 2^48: no overflow
    auto boundary = [&](uint64_t i) {
        return static_cast<TimestampNs>(static_cast<uint64_t>(t0) + width * i + rest * i / count);
    };
    const auto& time = m_series.timeNs;
    const auto& bytes = m_series.bytes;
    out.reserve(count);
    TimestampNs start = t0;
    size_t lo = static_cast<size_t>(std::lower_bound(time.begin(), time.end(), t0) - time.begin());
    for (uint64_t b = 0; b < count; ++b) {
        const TimestampNs end = b + 1 == count ? t1 : boundary(b + 1);
        const size_t hi = static_cast<size_t>(
            std::lower_bound(time.begin() + static_cast<ptrdiff_t>(lo), time.end(), end) -
            time.begin());
        const int64_t before = lo > 0 ? bytes[lo - 1] : 0;  // in force just before `start`
        LodBucket bucket{start, end, before, before, before, before};
        if (hi > lo) {
            auto [mn, mx] = rangeMinMax(lo, hi);
            if (time[lo] == start) {  // a step at the very start hides the earlier value
                bucket.minBytes = mn;
                bucket.maxBytes = mx;
                bucket.firstBytes = bytes[lo];
            } else {
                bucket.minBytes = std::min(before, mn);
                bucket.maxBytes = std::max(before, mx);
            }
            bucket.lastBytes = bytes[hi - 1];
        }
        out.push_back(bucket);
        start = end;
        lo = hi;
    }
    return out;
}

bool LodSeries::exactSteps(TimestampNs t0, TimestampNs t1, size_t maxSteps, StepSeries& out) const {
    out = StepSeries{};
    const auto& time = m_series.timeNs;
    const size_t lo =
        static_cast<size_t>(std::lower_bound(time.begin(), time.end(), t0) - time.begin());
    const size_t hi =
        t1 <= t0
            ? lo
            : static_cast<size_t>(std::lower_bound(time.begin(), time.end(), t1) - time.begin());
    const bool withBefore = lo > 0 && (lo == time.size() || time[lo] != t0);
    const size_t first = withBefore ? lo - 1 : lo;
    if (hi - first > maxSteps) {
        return false;
    }
    out.timeNs.assign(time.begin() + static_cast<ptrdiff_t>(first),
                      time.begin() + static_cast<ptrdiff_t>(hi));
    out.bytes.assign(m_series.bytes.begin() + static_cast<ptrdiff_t>(first),
                     m_series.bytes.begin() + static_cast<ptrdiff_t>(hi));
    return true;
}

}  // namespace vramscope::analysis
