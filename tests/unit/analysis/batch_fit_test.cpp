#include "vramscope/analysis/batch_fit.h"

#include <gtest/gtest.h>

namespace vramscope::analysis {
namespace {

constexpr double kGiB = double(1ull << 30);

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

TEST(BatchFit, NothingFitsOrNoLimit) {
    auto big = fitBatch({{1, 90 * kGiB, ""}, {2, 100 * kGiB, ""}}, 80ull << 30);
    ASSERT_TRUE(big.ok());
    EXPECT_FALSE(big->largestBatchUnder80.has_value());
    auto flat = fitBatch({{1, 5 * kGiB, ""}, {2, 5 * kGiB, ""}}, 80ull << 30);
    ASSERT_TRUE(flat.ok());
    EXPECT_FALSE(flat->largestBatchUnder100.has_value());
}

TEST(BatchFit, RejectsTooFewPointsOneBatchSizeAndUnknownCapacity) {
    EXPECT_FALSE(fitBatch({{1, 1, ""}}, 100).ok());
    EXPECT_FALSE(fitBatch({{2, 1, ""}, {2, 3, ""}}, 100).ok());
    EXPECT_FALSE(fitBatch({{1, 1, ""}, {2, 3, ""}}, 0).ok());
    EXPECT_FALSE(fitBatch({{0, 1, ""}, {2, 3, ""}}, 100).ok());
}

}  // namespace
}  // namespace vramscope::analysis
