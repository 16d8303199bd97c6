#include "vramscope/analysis/memory/batch_fit.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "refusal.h"
#include "test_units.h"

namespace vramscope::analysis {
namespace {

using testdata::kGiB;
using ::vramscope::test::refused;

TEST(BatchFit, FitsALineAndFindsTheLargestBatches) {
    // peak = 2 GiB + 1 GiB x batch, exactly.
    auto fit =
        fitBatch({{4, 6 * kGiB, "a"}, {8, 10 * kGiB, "b"}, {16, 18 * kGiB, "c"}}, 80ull << 30);
    ASSERT_TRUE(fit.ok()) << fit.error().message;
    EXPECT_NEAR(fit->slopeBytesPerSample, kGiB, 1e-3);
    EXPECT_NEAR(fit->interceptBytes, 2 * kGiB, 1e-3);
    EXPECT_NEAR(fit->rSquared, 1.0, 1e-12);
    // 2 + b <= 64 -> b = 62; 2 + b <= 80 -> b = 78.
    EXPECT_EQ(fit->largestBatchUnder80, 62);
    EXPECT_EQ(fit->largestBatchUnder100, 78);
}

TEST(BatchFit, LeastSquaresOnNoisyPoints) {
    // x = 1, 2, 3; y = 1, 3, 2 (GiB): slope 0.5, intercept 1, R^2 = 0.25.
    auto fit = fitBatch({{1, 1 * kGiB, ""}, {2, 3 * kGiB, ""}, {3, 2 * kGiB, ""}}, 4ull << 30);
    ASSERT_TRUE(fit.ok());
    EXPECT_NEAR(fit->slopeBytesPerSample / kGiB, 0.5, 1e-12);
    EXPECT_NEAR(fit->interceptBytes / kGiB, 1.0, 1e-12);
    EXPECT_NEAR(fit->rSquared, 0.25, 1e-12);
    // 1 + 0.5 b <= 3.2 -> b = 4; <= 4 -> b = 6.
    EXPECT_EQ(fit->largestBatchUnder80, 4);
    EXPECT_EQ(fit->largestBatchUnder100, 6);
}

TEST(BatchFit, RSquaredIsOneMinusResidualOverTotalSumOfSquares) {
    // x = 1, 2, 3; y = 2, 4, 5 (GiB): slope 1.5, intercept 2/3; residuals -1/6, 1/3, -1/6:
    // SS_res = 1/6, SS_tot = 42/9, R^2 = 1 - (1/6) / (42/9) = 27/28, above 0.9: no warning.
    // Capacity 8 GiB: 2/3 + 1.5 b <= 6.4 -> b = 3, <= 8 -> b = 4, both within 2 x 3.
    auto fit = fitBatch({{1, 2 * kGiB, ""}, {2, 4 * kGiB, ""}, {3, 5 * kGiB, ""}}, 8ull << 30);
    ASSERT_TRUE(fit.ok());
    EXPECT_NEAR(fit->rSquared, 27.0 / 28.0, 1e-12);
    EXPECT_EQ(fit->largestBatchUnder80, 3);
    EXPECT_EQ(fit->largestBatchUnder100, 4);
    EXPECT_TRUE(fit->warnings.empty()) << fit->warnings.front();
}

TEST(BatchFit, WarnsWhenTheFitIsPoor) {
    // The noisy points above: R^2 = 0.25, below 0.9.
    auto fit = fitBatch({{1, 1 * kGiB, ""}, {2, 3 * kGiB, ""}, {3, 2 * kGiB, ""}}, 4ull << 30);
    ASSERT_TRUE(fit.ok());
    ASSERT_FALSE(fit->warnings.empty());
    EXPECT_NE(fit->warnings[0].find("poor fit"), std::string::npos) << fit->warnings[0];
    EXPECT_NE(fit->warnings[0].find("R^2 = 0.250 is below 0.900"), std::string::npos)
        << fit->warnings[0];
}

TEST(BatchFit, WarnsWhenTheLargestBatchIsMoreThanTwiceTheLargestMeasured) {
    // peak = 2 GiB + 1 GiB x batch measured up to batch 16: on 80 GiB the answers 62 and 78 are
    // beyond 2 x 16 = 32.
    auto far = fitBatch({{4, 6 * kGiB, ""}, {8, 10 * kGiB, ""}, {16, 18 * kGiB, ""}}, 80ull << 30);
    ASSERT_TRUE(far.ok());
    EXPECT_EQ(far->largestMeasuredBatch, 16.0);
    ASSERT_EQ(far->warnings.size(), 2u);
    EXPECT_NE(far->warnings[0].find("extrapolated"), std::string::npos) << far->warnings[0];
    EXPECT_NE(far->warnings[0].find("62"), std::string::npos) << far->warnings[0];
    EXPECT_NE(far->warnings[1].find("78"), std::string::npos) << far->warnings[1];
    // On 30 GiB: 2 + b <= 24 -> 22 and 2 + b <= 30 -> 28, both within 32: no warning.
    auto near = fitBatch({{4, 6 * kGiB, ""}, {8, 10 * kGiB, ""}, {16, 18 * kGiB, ""}}, 30ull << 30);
    ASSERT_TRUE(near.ok());
    EXPECT_EQ(near->largestBatchUnder100, 28);
    EXPECT_TRUE(near->warnings.empty());
}

TEST(BatchFit, NothingFitsOrNoLimit) {
    // peak = 80 GiB + 10 GiB x batch: batch 1 needs 90 GiB of 80.
    auto big = fitBatch({{1, 90 * kGiB, ""}, {2, 100 * kGiB, ""}}, 80ull << 30);
    ASSERT_TRUE(big.ok());
    EXPECT_FALSE(big->largestBatchUnder80.has_value());
    EXPECT_EQ(big->limit100, BatchLimit::NoneFits);
    EXPECT_EQ(batchLimitText(*big, big->limit100), "none (batch 1 does not fit)");
    // Equal peaks at batch 1 and 2: the batch does not drive the peak, no answer either way.
    auto flat = fitBatch({{1, 5 * kGiB, ""}, {2, 5 * kGiB, ""}}, 80ull << 30);
    ASSERT_TRUE(flat.ok());
    EXPECT_FALSE(flat->largestBatchUnder100.has_value());
    EXPECT_EQ(flat->limit80, BatchLimit::NoLimit);
    EXPECT_EQ(flat->limit100, BatchLimit::NoLimit);
    const auto grows = std::find_if(flat->warnings.begin(), flat->warnings.end(), [](auto& w) {
        return w.find("the peak does not grow with the batch") != std::string::npos;
    });
    EXPECT_NE(grows, flat->warnings.end());
}

TEST(BatchFit, NegativeInterceptNeverPredictsBelowTheSmallestMeasuredBatch) {
    // x = 8, 12, 16; y = 4, 8, 12 GiB: slope 1 GiB, intercept -4 GiB (zero at batch 4).
    const std::vector<BatchPoint> points = {
        {8, 4 * kGiB, ""}, {12, 8 * kGiB, ""}, {16, 12 * kGiB, ""}};
    // On 8 GiB: -4 + b <= 6.4 -> 10, <= 8 -> 12; both at or above 8: given, with the warning.
    auto roomy = fitBatch(points, 8ull << 30);
    ASSERT_TRUE(roomy.ok());
    EXPECT_NEAR(roomy->interceptBytes, -4 * kGiB, 1e-3);
    EXPECT_EQ(roomy->smallestMeasuredBatch, 8.0);
    EXPECT_EQ(roomy->largestBatchUnder80, 10);
    EXPECT_EQ(roomy->largestBatchUnder100, 12);
    ASSERT_EQ(roomy->warnings.size(), 1u);
    EXPECT_NE(roomy->warnings[0].find("negative intercept: peak = -4.00 GiB + 1.00 GiB x batch "
                                      "reaches 0 B at batch 4.00"),
              std::string::npos)
        << roomy->warnings[0];
    EXPECT_NE(roomy->warnings[0].find("smallest measured one, 8,"), std::string::npos);
    // On 4 GiB: -4 + b <= 3.2 -> 7, below 8: withheld; <= 4 -> 8, the smallest measured: given.
    auto tight = fitBatch(points, 4ull << 30);
    ASSERT_TRUE(tight.ok());
    EXPECT_FALSE(tight->largestBatchUnder80.has_value());
    EXPECT_EQ(tight->limit80, BatchLimit::BelowMeasured);
    EXPECT_EQ(tight->largestBatchUnder100, 8);
    EXPECT_EQ(tight->limit100, BatchLimit::Found);
    EXPECT_NE(batchLimitText(*tight, tight->limit80).find("below the smallest measured batch, 8"),
              std::string::npos);
}

TEST(BatchFit, WarnsThatTwoBatchSizesCannotJudgeTheLine) {
    // Two batch sizes, three runs: still a line through two x values.
    for (const auto& points :
         {std::vector<BatchPoint>{{4, 6 * kGiB, ""}, {8, 10 * kGiB, ""}},
          std::vector<BatchPoint>{{4, 6 * kGiB, ""}, {4, 7 * kGiB, ""}, {8, 10 * kGiB, ""}}}) {
        auto fit = fitBatch(points, 80ull << 30);
        ASSERT_TRUE(fit.ok());
        EXPECT_EQ(fit->distinctBatchSizes, 2u);
        ASSERT_FALSE(fit->warnings.empty());
        EXPECT_NE(fit->warnings[0].find("only 2 batch sizes"), std::string::npos)
            << fit->warnings[0];
        EXPECT_NE(fit->warnings[0].find("at least 3 batch sizes"), std::string::npos);
    }
}

TEST(BatchFit, RejectsTooFewPointsOneBatchSizeAndUnknownCapacity) {
    using trace::ErrorCode;
    EXPECT_TRUE(refused(fitBatch({{1, 1, ""}}, 100), ErrorCode::Invalid,
                        {"at least two runs with different batch sizes; got 1"}));
    EXPECT_TRUE(refused(fitBatch({{2, 1, ""}, {2, 3, ""}}, 100), ErrorCode::Invalid,
                        {"at least two different batch sizes"}));
    EXPECT_TRUE(refused(fitBatch({{1, 1, ""}, {2, 3, ""}}, 0), ErrorCode::Invalid,
                        {"the device capacity is unknown"}));
    EXPECT_TRUE(refused(fitBatch({{0, 1, "b0.vscope"}, {2, 3, ""}}, 100), ErrorCode::Invalid,
                        {"b0.vscope", "batch size must be positive"}));
}

}  // namespace
}  // namespace vramscope::analysis
