#include "vramscope/analysis/text_format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vramscope::analysis {
namespace {

TEST(Unit, FormatBytesKeepsWholeBytesBelowOneKibibyte) {
    EXPECT_EQ(formatBytes(0), "0 B");
    EXPECT_EQ(formatBytes(1), "1 B");
    EXPECT_EQ(formatBytes(1023), "1023 B");
    EXPECT_EQ(formatBytes(1023, 5), "1023 B");  // no decimals for bytes
}

TEST(Unit, FormatBytesUsesBinaryUnitsWithTwoDecimalsByDefault) {
    EXPECT_EQ(formatBytes(1024), "1.00 KiB");
    EXPECT_EQ(formatBytes(1536), "1.50 KiB");
    EXPECT_EQ(formatBytes(1024.0 * 1024), "1.00 MiB");
    EXPECT_EQ(formatBytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
    EXPECT_EQ(formatBytes(std::ldexp(1.0, 40)), "1.00 TiB");
    EXPECT_EQ(formatBytes(std::ldexp(1.0, 50)), "1.00 PiB");
    EXPECT_EQ(formatBytes(std::ldexp(1.0, 60)), "1.00 EiB");
    // EiB is the largest unit: larger values stay in it.
    EXPECT_EQ(formatBytes(std::ldexp(1.0, 70)), "1024.00 EiB");
}

TEST(Unit, FormatBytesMovesToTheNextUnitWhenRoundingReachesIt) {
    // 1 MiB - 1 = 1023.999 KiB reads "1.00 MiB", not "1024.00 KiB".
    EXPECT_EQ(formatBytes(1024.0 * 1024 - 1), "1.00 MiB");
    EXPECT_EQ(formatBytes(1024.0 * 1024 - 1, 4), "1023.9990 KiB");  // more digits: still KiB
    EXPECT_EQ(formatBytes(1024.0 * 1024 * 1024 - 1), "1.00 GiB");
    EXPECT_EQ(formatBytes(1023.5 * 1024, 0), "1 MiB");
}

TEST(Unit, FormatBytesKeepsTheSignOfNegativeValues) {
    EXPECT_EQ(formatBytes(-1), "-1 B");
    EXPECT_EQ(formatBytes(-1536), "-1.50 KiB");
    EXPECT_EQ(formatBytes(-12.25 * 1024 * 1024), "-12.25 MiB");
    EXPECT_EQ(formatBytes(-(1024.0 * 1024 - 1)), "-1.00 MiB");
}

TEST(Unit, FormatBytesHonoursTheDecimalsArgument) {
    EXPECT_EQ(formatBytes(1536, 1), "1.5 KiB");
    EXPECT_EQ(formatBytes(1536, 3), "1.500 KiB");
    EXPECT_EQ(formatBytes(1024 + 256, 0), "1 KiB");  // 1.25 rounds down
    EXPECT_EQ(formatBytes(13.92 * 1024 * 1024 * 1024, 2), "13.92 GiB");
}

TEST(Unit, FormatDurationUsesTheLargestUnitAtLeastOne) {
    EXPECT_EQ(formatDuration(0), "0 ns");
    EXPECT_EQ(formatDuration(999), "999 ns");
    EXPECT_EQ(formatDuration(1000), "1.000 us");
    EXPECT_EQ(formatDuration(1500), "1.500 us");
    EXPECT_EQ(formatDuration(12'500), "12.500 us");
    EXPECT_EQ(formatDuration(1e6), "1.000 ms");
    EXPECT_EQ(formatDuration(3.25e6), "3.250 ms");
    EXPECT_EQ(formatDuration(2.5e9), "2.500 s");
    EXPECT_EQ(formatDuration(3600e9), "3600.000 s");  // seconds are the largest unit
}

TEST(Unit, FormatDurationKeepsTheSignAndFixedDecimals) {
    EXPECT_EQ(formatDuration(-1500), "-1.500 us");
    EXPECT_EQ(formatDuration(-850), "-850 ns");
    EXPECT_EQ(formatDuration(1500, 1), "1.5 us");
    EXPECT_EQ(formatDuration(2.5e9, 0), "2 s");   // printf rounds half to even
    EXPECT_EQ(formatDuration(850, 3), "850 ns");  // never decimals for ns
}

TEST(Unit, FormatDurationKeepsThreeSignificantDigitsWhenDecimalsIsNegative) {
    EXPECT_EQ(formatDuration(1500, -1), "1.50 us");
    EXPECT_EQ(formatDuration(15'000, -1), "15.0 us");
    EXPECT_EQ(formatDuration(150'000, -1), "150 us");
    EXPECT_EQ(formatDuration(2.5e9, -1), "2.50 s");
    EXPECT_EQ(formatDuration(-15'000, -1), "-15.0 us");
    EXPECT_EQ(formatDuration(999, -1), "999 ns");
}

TEST(Unit, FormatDurationMovesToTheNextUnitWhenRoundingReachesIt) {
    // 999.9996 us would print "1000.000 us"; 999.6 us with 3 significant digits "1000 us".
    EXPECT_EQ(formatDuration(999'999.6), "1.000 ms");
    EXPECT_EQ(formatDuration(999'600, -1), "1.00 ms");
    EXPECT_EQ(formatDuration(999.6), "1.000 us");
    EXPECT_EQ(formatDuration(999'400, -1), "999 us");
}

TEST(Unit, FormatPercentMultipliesByHundredWithTheGivenDecimals) {
    EXPECT_EQ(formatPercent(0.4251), "42.5 %");
    EXPECT_EQ(formatPercent(1.0), "100.0 %");
    EXPECT_EQ(formatPercent(0.0), "0.0 %");
    EXPECT_EQ(formatPercent(0.5, 0), "50 %");
    EXPECT_EQ(formatPercent(0.123456, 2), "12.35 %");
    EXPECT_EQ(formatPercent(-0.25), "-25.0 %");
}

TEST(Unit, RankAndDeviceLabelsSayQuestionMarkWhenTheRankIsUnknown) {
    EXPECT_EQ(rankLabel(trace::RankId{0}), "rank 0");
    EXPECT_EQ(rankLabel(trace::RankId{3}), "rank 3");
    EXPECT_EQ(rankLabel(trace::RankId{-1}), "rank ?");
    EXPECT_EQ(rankLabel(trace::RankId{-7}), "rank ?");
    EXPECT_EQ(deviceLabel(trace::RankId{3}, trace::DeviceIndex{1}), "rank 3 GPU 1");
    EXPECT_EQ(deviceLabel(trace::RankId{-1}, trace::DeviceIndex{0}), "rank ? GPU 0");
}

}  // namespace
}  // namespace vramscope::analysis
