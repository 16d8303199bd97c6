// The one time <-> pixel mapping of the time views.
#include <gtest/gtest.h>

#include <cmath>

#include "vramscope/widgets/time_mapper.h"

using vramscope::widgets::TimeMapper;

TEST(TimeMapper, MapsBothWaysByTheLinearFormula) {
    // 2,000 ns over 500 px: 4 ns per px, startNs at x = 100.
    const TimeMapper m{{1000, 3000}, 100.0, 600.0};
    EXPECT_DOUBLE_EQ(m.widthPx(), 500.0);
    EXPECT_DOUBLE_EQ(m.spanNs(), 2000.0);
    EXPECT_DOUBLE_EQ(m.nsPerPixel(), 4.0);
    EXPECT_EQ(m.timeAt(100.0), 1000);
    EXPECT_EQ(m.timeAt(600.0), 3000);
    EXPECT_EQ(m.timeAt(225.0), 1500);  // 125 px * 4
    EXPECT_EQ(m.timeAt(50.0), 800);    // left of the plot: before startNs, not clamped
    EXPECT_EQ(m.timeAt(700.0), 3400);  // right of it: after endNs
    // Half a ns rounds away from zero on both sides of startNs.
    EXPECT_EQ(m.timeAt(100.125), 1001);
    EXPECT_EQ(m.timeAt(99.875), 999);
    EXPECT_EQ(m.timeAt(100.1), 1000);  // 0.4 ns
    EXPECT_EQ(m.durationAt(-10.0), -40);
    EXPECT_EQ(m.durationAt(0.3), 1);  // 1.2 ns
    EXPECT_DOUBLE_EQ(m.xAt(1000), 100.0);
    EXPECT_DOUBLE_EQ(m.xAt(3000), 600.0);
    EXPECT_DOUBLE_EQ(m.xAt(1500), 225.0);
    EXPECT_DOUBLE_EQ(m.xAt(1001), 100.25);  // not rounded to a pixel
    EXPECT_DOUBLE_EQ(m.xAt(0), -150.0);
    EXPECT_TRUE(m.contains(100.0));
    EXPECT_TRUE(m.contains(600.0));
    EXPECT_FALSE(m.contains(99.9));
    EXPECT_FALSE(m.contains(600.1));
}

TEST(TimeMapper, RoundTripsWithinHalfANanosecond) {
    // Coarse (3,000 ns per px) and fine (0.1 ns per px) views.
    for (const TimeMapper m :
         {TimeMapper{{-2'000'000, 1'000'000}, 80.0, 1080.0}, TimeMapper{{500, 600}, 0.0, 1000.0}}) {
        for (int64_t t = m.range.startNs; t <= m.range.endNs; t += m.range.durationNs() / 97) {
            EXPECT_EQ(m.timeAt(m.xAt(t)), t);
        }
        const double halfNsInPx = 0.5 * m.widthPx() / m.spanNs();
        for (double x = m.left; x <= m.right; x += 7.3) {
            EXPECT_LE(std::abs(m.xAt(m.timeAt(x)) - x), halfNsInPx + 1e-9) << x;
        }
    }
}

TEST(TimeMapper, DegenerateSpansNeverDivideByZero) {
    const TimeMapper collapsed{{0, 1000}, 200.0, 200.0};  // a plot squeezed to nothing
    EXPECT_DOUBLE_EQ(collapsed.widthPx(), 1.0);
    EXPECT_EQ(collapsed.timeAt(201.0), 1000);
    const TimeMapper inverted{{0, 1000}, 300.0, 200.0};  // margins wider than the widget
    EXPECT_DOUBLE_EQ(inverted.widthPx(), 1.0);
    const TimeMapper empty{{5, 5}, 0.0, 100.0};
    EXPECT_DOUBLE_EQ(empty.spanNs(), 1.0);
    EXPECT_DOUBLE_EQ(empty.xAt(5), 0.0);
    EXPECT_DOUBLE_EQ(empty.xAt(6), 100.0);
    EXPECT_TRUE(std::isfinite(empty.xAt(INT64_C(1) << 40)));
}
