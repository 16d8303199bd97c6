// `check --advice mixed-precision` on real traces: FAIL on a fp32 job, PASS on a bf16 one, NOT
// CHECKED where the matmul work is too small to judge. Which file is which is read from the raw
// kernel names (see precision_realdata_test.cpp for the figures).
#include <gtest/gtest.h>

#include <string>

#include "cli_command.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_paths.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;

// Two Tensile fp32 GEMMs of 18 and 13 us: too little matmul work for a verdict.

TEST(PrecisionCli, CheckFailsOnAnFp32JobAndPassesOnABf16One) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kResnetTrace);
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    CliRun r = run({"check", realdata::kResnetTrace, "--advice", "mixed-precision"});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("mixed-precision"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fp32 / tf32 matmul time"), std::string::npos) << r.out;
    r = run({"check", realdata::kBertTrace, "--advice", "mixed-precision"});
    EXPECT_EQ(r.code, kExitSuccess) << r.out << r.err;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("= 0.0 % <= 50 %"), std::string::npos) << r.out;
}

TEST(PrecisionCli, CheckSaysWhenTheMatmulWorkIsTooSmallToJudge) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kMi250Trace);
    const CliRun r = run({"check", realdata::kMi250Trace, "--advice", "mixed-precision"});
    EXPECT_NE(r.out.find("NOT CHECKED"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("too little matmul / convolution work"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2 kernels of known precision"), std::string::npos) << r.out;
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;  // a rule asked for could not be checked
    EXPECT_EQ(
        run({"check", realdata::kMi250Trace, "--advice", "mixed-precision", "--allow-unchecked"})
            .code,
        kExitSuccess);
}

}  // namespace
}  // namespace vramscope::app
