#include "vramscope/analysis/model/level_of_detail.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace vramscope::analysis {
namespace {

/// Value in force at t by the StepSeries rule, by a linear scan (the later of equal times wins).
int64_t bruteValueAt(const StepSeries& s, TimestampNs t) {
    int64_t v = 0;
    for (size_t i = 0; i < s.size() && s.timeNs[i] <= t; ++i) {
        v = s.bytes[i];
    }
    return v;
}

/// A random step series with some equal times; values may be negative.
StepSeries randomSeries(std::mt19937_64& rng, size_t n) {
    StepSeries s;
    TimestampNs t = static_cast<TimestampNs>(rng() % 100);
    for (size_t i = 0; i < n; ++i) {
        t += static_cast<TimestampNs>(rng() % 4 == 0 ? 0 : 1 + rng() % 50);
        s.timeNs.push_back(t);
        s.bytes.push_back(static_cast<int64_t>(rng() % 2001) - 500);
    }
    return s;
}

TEST(LodSeries, RangeMinMaxMatchesBruteForceOnRandomRanges) {
    std::mt19937_64 rng(7);
    for (size_t n : {1u, 15u, 16u, 17u, 255u, 256u, 257u, 5000u}) {
        StepSeries s;
        for (size_t i = 0; i < n; ++i) {
            s.timeNs.push_back(static_cast<TimestampNs>(i));
            s.bytes.push_back(static_cast<int64_t>(rng() % 100000) - 50000);
        }
        const LodSeries lod(s);
        for (int q = 0; q < 2000; ++q) {
            size_t a = rng() % (n + 1);
            size_t b = rng() % (n + 1);
            if (a > b) {
                std::swap(a, b);
            }
            if (a == b) {
                EXPECT_EQ(lod.rangeMinMax(a, b), (std::pair<int64_t, int64_t>{0, 0}));
                continue;
            }
            const auto first = s.bytes.begin() + static_cast<ptrdiff_t>(a);
            const auto last = s.bytes.begin() + static_cast<ptrdiff_t>(b);
            const auto [mn, mx] = lod.rangeMinMax(a, b);
            ASSERT_EQ(mn, *std::min_element(first, last)) << "n=" << n << " [" << a << "," << b;
            ASSERT_EQ(mx, *std::max_element(first, last)) << "n=" << n << " [" << a << "," << b;
        }
    }
}

TEST(LodSeries, QueryMatchesBruteForceMinMaxOverRandomSeriesAndWindows) {
    std::mt19937_64 rng(42);
    for (int trial = 0; trial < 30; ++trial) {
        const StepSeries s = randomSeries(rng, 1 + rng() % 3000);
        const LodSeries lod(s);
        const TimestampNs end = s.timeNs.back() + 100;
        // Distinct step times: where the value can change.
        std::vector<TimestampNs> times = s.timeNs;
        times.erase(std::unique(times.begin(), times.end()), times.end());
        for (int q = 0; q < 40; ++q) {
            TimestampNs t0 = static_cast<TimestampNs>(rng() % static_cast<uint64_t>(end)) - 50;
            TimestampNs t1 = t0 + 1 + static_cast<TimestampNs>(rng() % static_cast<uint64_t>(end));
            const size_t buckets = 1 + rng() % 300;
            const auto out = lod.query(t0, t1, buckets);
            ASSERT_EQ(out.size(), std::min<size_t>(buckets, static_cast<size_t>(t1 - t0)));
            ASSERT_EQ(out.front().startNs, t0);
            ASSERT_EQ(out.back().endNs, t1);
            for (size_t b = 0; b < out.size(); ++b) {
                const auto& k = out[b];
                ASSERT_LT(k.startNs, k.endNs);
                if (b > 0) {
                    ASSERT_EQ(k.startNs, out[b - 1].endNs);
                }
                int64_t mn = bruteValueAt(s, k.startNs);
                int64_t mx = mn;
                for (TimestampNs t : times) {
                    if (t > k.startNs && t < k.endNs) {
                        mn = std::min(mn, bruteValueAt(s, t));
                        mx = std::max(mx, bruteValueAt(s, t));
                    }
                }
                ASSERT_EQ(k.minBytes, mn) << "bucket " << b << " [" << k.startNs << "," << k.endNs;
                ASSERT_EQ(k.maxBytes, mx) << "bucket " << b;
                ASSERT_EQ(k.firstBytes, bruteValueAt(s, k.startNs));
                ASSERT_EQ(k.lastBytes, bruteValueAt(s, k.endNs - 1));
            }
        }
    }
}

TEST(LodSeries, BucketsAreEqualWidthAndNeverNarrowerThanOneNs) {
    const LodSeries lod(StepSeries{{0, 10}, {1, 2}});
    const auto out = lod.query(0, 10, 3);  // 10 ns in 3 buckets: starts at 0, 3, 6
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].startNs, 0);
    EXPECT_EQ(out[1].startNs, 3);
    EXPECT_EQ(out[2].startNs, 6);
    EXPECT_EQ(out[2].endNs, 10);
    EXPECT_EQ(lod.query(0, 5, 1000).size(), 5u);
    EXPECT_TRUE(lod.query(5, 5, 10).empty());
    EXPECT_TRUE(lod.query(0, 5, 0).empty());
    EXPECT_TRUE(LodSeries().query(0, 100, 10).size() == 10u);  // empty series: zeros
}

TEST(LodSeries, ConstructorMergesEqualTimesKeepingTheLaterValue) {
    const LodSeries lod(StepSeries{{1, 2, 2, 3}, {10, 99, 20, 30}});
    EXPECT_EQ(lod.series().timeNs, (std::vector<TimestampNs>{1, 2, 3}));
    EXPECT_EQ(lod.series().bytes, (std::vector<int64_t>{10, 20, 30}));
    const auto out = lod.query(0, 4, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].minBytes, 0);
    EXPECT_EQ(out[0].maxBytes, 30);  // 99 never held for any time
}

TEST(LodSeries, ExactStepsReturnsStepsInWindowPlusTheOneInForce) {
    const LodSeries lod(StepSeries{{10, 20, 30, 40}, {1, 2, 3, 4}});
    StepSeries out;
    ASSERT_TRUE(lod.exactSteps(25, 41, 10, out));
    EXPECT_EQ(out.timeNs, (std::vector<TimestampNs>{20, 30, 40}));
    EXPECT_EQ(out.bytes, (std::vector<int64_t>{2, 3, 4}));
    ASSERT_TRUE(lod.exactSteps(20, 30, 10, out));  // a step right at t0: no earlier one needed
    EXPECT_EQ(out.timeNs, (std::vector<TimestampNs>{20}));
    ASSERT_TRUE(lod.exactSteps(0, 10, 10, out));  // before the first step: nothing
    EXPECT_TRUE(out.empty());
    ASSERT_TRUE(lod.exactSteps(50, 60, 10, out));  // after the last: the last one
    EXPECT_EQ(out.timeNs, (std::vector<TimestampNs>{40}));
    EXPECT_FALSE(lod.exactSteps(0, 100, 3, out));
    EXPECT_TRUE(out.empty());
    EXPECT_TRUE(lod.exactSteps(0, 100, 4, out));
}

TEST(LodSeries, ExactStepsMatchesBruteForce) {
    std::mt19937_64 rng(3);
    StepSeries s;
    for (int i = 0; i < 500; ++i) {
        s.timeNs.push_back(i * 10);
        s.bytes.push_back(static_cast<int64_t>(rng() % 1000));
    }
    const LodSeries lod(s);
    for (int q = 0; q < 500; ++q) {
        const auto t0 = static_cast<TimestampNs>(rng() % 5200) - 100;
        const auto t1 = t0 + static_cast<TimestampNs>(rng() % 2000);
        StepSeries expected;
        for (size_t i = 0; i < s.size(); ++i) {
            const bool inForce = s.timeNs[i] < t0 && (i + 1 == s.size() || s.timeNs[i + 1] > t0);
            if (inForce || (s.timeNs[i] >= t0 && s.timeNs[i] < t1)) {
                expected.timeNs.push_back(s.timeNs[i]);
                expected.bytes.push_back(s.bytes[i]);
            }
        }
        StepSeries out;
        ASSERT_TRUE(lod.exactSteps(t0, t1, expected.size(), out));
        EXPECT_EQ(out.timeNs, expected.timeNs);
        EXPECT_EQ(out.bytes, expected.bytes);
        if (!expected.empty()) {
            EXPECT_FALSE(lod.exactSteps(t0, t1, expected.size() - 1, out));
        }
    }
}

}  // namespace
}  // namespace vramscope::analysis
