#include "vramscope/analysis/model/text_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace vramscope::analysis {
namespace {

// Expected strings by hand: value / 1024^unit (or / 1000^unit for time), three significant
// digits, the unit chosen so that the rounded number stays below 1000.

TEST(Unit, FormatBytesKeepsWholeBytesBelowOneThousand) {
    EXPECT_EQ(formatBytes(0), "0 B");
    EXPECT_EQ(formatBytes(1), "1 B");
    EXPECT_EQ(formatBytes(512), "512 B");
    EXPECT_EQ(formatBytes(999), "999 B");
}

TEST(Unit, FormatBytesKeepsThreeSignificantDigitsInBinaryUnits) {
    EXPECT_EQ(formatBytes(1024), "1.00 KiB");
    EXPECT_EQ(formatBytes(1536), "1.50 KiB");
    EXPECT_EQ(formatBytes(10 * 1024), "10.0 KiB");
    EXPECT_EQ(formatBytes(96.6 * 1024 * 1024), "96.6 MiB");
    EXPECT_EQ(formatBytes(100.0 * 1024 * 1024), "100 MiB");
    EXPECT_EQ(formatBytes(999.0 * 1024 * 1024), "999 MiB");
    EXPECT_EQ(formatBytes(11.9 * 1024 * 1024 * 1024), "11.9 GiB");
    EXPECT_EQ(formatBytes(2000.0 * 1024 * 1024), "1.95 GiB");  // 2000 / 1024 = 1.953
    EXPECT_EQ(formatBytes(std::ldexp(1.0, 40)), "1.00 TiB");
    EXPECT_EQ(formatBytes(std::ldexp(1.0, 60)), "1.00 EiB");
    // EiB is the largest unit: larger values stay in it, without decimals.
    EXPECT_EQ(formatBytes(std::ldexp(1.0, 70)), "1024 EiB");
}

TEST(Unit, FormatBytesNeverPrintsFourDigitsOfAUnit) {
    // 1000 .. 1023.x of a unit read in the next one.
    EXPECT_EQ(formatBytes(1000), "0.977 KiB");  // 1000 / 1024 = 0.9766
    EXPECT_EQ(formatBytes(1023), "0.999 KiB");  // 0.999
    EXPECT_EQ(formatBytes(1000.0 * 1024 * 1024), "0.977 GiB");
    EXPECT_EQ(formatBytes(999.6 * 1024 * 1024), "0.976 GiB");  // would round to "1000 MiB"
    EXPECT_EQ(formatBytes(1024.0 * 1024 - 1), "1.00 MiB");     // 1023.999 KiB
    EXPECT_EQ(formatBytes(1024.0 * 1024 * 1024 - 1), "1.00 GiB");
}

TEST(Unit, FormatBytesJudgesTheDigitsOnTheRoundedValue) {
    EXPECT_EQ(formatBytes(99.96 * 1024 * 1024), "100 MiB");  // not "100.0 MiB"
    EXPECT_EQ(formatBytes(9.996 * 1024), "10.0 KiB");        // not "10.00 KiB"
    EXPECT_EQ(formatBytes(9.99 * 1024), "9.99 KiB");
}

TEST(Unit, FormatBytesKeepsTheSignOfNegativeValues) {
    EXPECT_EQ(formatBytes(-1), "-1 B");
    EXPECT_EQ(formatBytes(-1536), "-1.50 KiB");
    EXPECT_EQ(formatBytes(-12.3 * 1024 * 1024), "-12.3 MiB");
    EXPECT_EQ(formatBytes(-(1024.0 * 1024 - 1)), "-1.00 MiB");
}

TEST(Unit, FormatDurationKeepsThreeSignificantDigits) {
    EXPECT_EQ(formatDuration(0), "0 ns");
    EXPECT_EQ(formatDuration(850), "850 ns");
    EXPECT_EQ(formatDuration(999), "999 ns");
    EXPECT_EQ(formatDuration(1000), "1.00 us");
    EXPECT_EQ(formatDuration(12'200), "12.2 us");
    EXPECT_EQ(formatDuration(150'000), "150 us");
    EXPECT_EQ(formatDuration(345.8e6), "346 ms");
    EXPECT_EQ(formatDuration(1.73e9), "1.73 s");
    EXPECT_EQ(formatDuration(3600e9), "3600 s");  // seconds are the largest unit
    EXPECT_EQ(formatDuration(-15'000), "-15.0 us");
}

TEST(Unit, FormatDurationMovesToTheNextUnitWhenRoundingReachesIt) {
    EXPECT_EQ(formatDuration(999.6), "1.00 us");    // would read "1000 ns"
    EXPECT_EQ(formatDuration(999'600), "1.00 ms");  // would read "1000 us"
    EXPECT_EQ(formatDuration(999'400), "999 us");
    EXPECT_EQ(formatDuration(99'960), "100 us");  // not "100.0 us"
}

TEST(Unit, CompactNameDropsWhatTheRestRepeats) {
    // A PyTorch kernel as Kineto names it.
    EXPECT_EQ(compactName("void at::native::vectorized_elementwise_kernel<4, "
                          "at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, "
                          "at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"),
              "vectorized_elementwise_kernel<4, FillFunctor<float>, Array<char*, 1>>");
    EXPECT_EQ(compactName("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, "
                          "unsigned int, 2, 128, 1>(float*, int)"),
              "CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>");
    // A frame's location keeps its file name.
    EXPECT_EQ(compactName("forward (/home/u/proj/model.py:12)"), "forward (model.py:12)");
    // Names without template arguments keep their namespaces and parameters.
    EXPECT_EQ(compactName("aten::add"), "aten::add");
    EXPECT_EQ(compactName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
              "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)");
    EXPECT_EQ(compactName("<module> (train.py:3)"), "<module> (train.py:3)");
    EXPECT_EQ(compactName("ProfilerStep#12"), "ProfilerStep#12");
}

TEST(Unit, ShortenNameElidesTheMiddle) {
    // width 12: tail 12 / 5 = 2, head 12 - 3 - 2 = 7.
    EXPECT_EQ(shortenName("abcdefghijklmnopqrstuvwxyz", 12), "abcdefg...yz");
    EXPECT_EQ(shortenName("abcdefghijklmnopqrstuvwxyz", 26), "abcdefghijklmnopqrstuvwxyz");
    EXPECT_EQ(shortenName("abcdefghijklmnopqrstuvwxyz", 5), "abcde");  // too narrow to elide
    EXPECT_EQ(shortenName("void f<int>(int)", 40), "f<int>");
    // A multi-byte character is never cut: "é" is bytes 5..6, and width 11 asks for a head of
    // 11 - 3 - 2 = 6 bytes, which would end inside it.
    EXPECT_EQ(shortenName("abcdeéfghijklmnopqrstuvwxyz", 11), "abcde...yz");
}

TEST(Unit, ShortenNamesKeepsTheDifferingMiddleVisible) {
    const std::string p(40, 'p'), q(20, 's');
    const std::vector<std::string> names = {p + "ALPHA" + q, p + "BRAVO" + q};
    const std::vector<std::string> out = shortenNames(names, 30);
    // Common prefix 40 and suffix 20 leave no room at the head or tail: a window around byte 40
    // (head 30 / 4 = 7, tail 30 / 6 = 5, window 30 - 7 - 5 - 6 = 12 from 40 - 12 / 3 = 36).
    EXPECT_EQ(out[0], "ppppppp...ppppALPHAsss...sssss");
    EXPECT_EQ(out[1], "ppppppp...ppppBRAVOsss...sssss");
}

TEST(Unit, ShortenNamesKeepsADifferingTailVisible) {
    const std::string p(50, 'p');
    const std::vector<std::string> out = shortenNames({p + "one", p + "two", "short"}, 20);
    EXPECT_NE(out[0], out[1]);
    EXPECT_TRUE(out[0].ends_with("one")) << out[0];
    EXPECT_TRUE(out[1].ends_with("two")) << out[1];
    EXPECT_EQ(out[2], "short");
    EXPECT_LE(out[0].size(), 20u);
}

TEST(Unit, ShortenNamesGivesEqualNamesEqualTextAndKeepsOrder) {
    const std::vector<std::string> out = shortenNames({"b", "a", "b"}, 10);
    EXPECT_EQ(out, (std::vector<std::string>{"b", "a", "b"}));
}

TEST(Unit, ShortenNamesKeepsNamesApartWhoseCompactFormsCoincide) {
    // Both compact to "k<A>": the full names are kept, which differ.
    const std::vector<std::string> out = shortenNames({"void x::k<x::A>", "void y::k<y::A>"}, 40);
    EXPECT_EQ(out[0], "void x::k<x::A>");
    EXPECT_EQ(out[1], "void y::k<y::A>");
}

TEST(Unit, FormatPercentMultipliesByHundredWithTheGivenDecimals) {
    EXPECT_EQ(formatPercent(0.4251), "42.5 %");
    EXPECT_EQ(formatPercent(1.0), "100.0 %");
    EXPECT_EQ(formatPercent(0.0), "0.0 %");
    EXPECT_EQ(formatPercent(0.5, 0), "50 %");
    EXPECT_EQ(formatPercent(0.123456, 2), "12.35 %");
    EXPECT_EQ(formatPercent(-0.25), "-25.0 %");
}

TEST(Unit, FormatSignificantKeepsThreeSignificantDigits) {
    EXPECT_EQ(formatSignificant(0.222571), "0.223");  // a batch fit's R^2, once "0.222571"
    EXPECT_EQ(formatSignificant(0.9), "0.900");
    EXPECT_EQ(formatSignificant(1.0), "1.00");
    EXPECT_EQ(formatSignificant(0.99961), "1.00");  // not "1.000"
    EXPECT_EQ(formatSignificant(27.46), "27.5");
    EXPECT_EQ(formatSignificant(150.2), "150");
    EXPECT_EQ(formatSignificant(0.042), "0.0420");
    EXPECT_EQ(formatSignificant(-0.5), "-0.500");
    EXPECT_EQ(formatSignificant(0.0), "0.00");
    EXPECT_EQ(formatSignificant(131.75), "132");  // iterations until full, once "131.8"
    EXPECT_EQ(formatSignificant(12345.6), "12346");
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
