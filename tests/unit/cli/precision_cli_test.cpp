// `check --advice mixed-precision` on real traces: FAIL on a fp32 job, PASS on a bf16 one, NOT
// CHECKED where the matmul work is too small to judge. Which file is which is read from the raw
// kernel names (see precision_realdata_test.cpp for the figures).
#include <gtest/gtest.h>

#include <string>

#include "cli_command.h"
#include "cli_run.h"
#include "realdata.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;

const std::string kRealData = VRAMSCOPE_REALDATA_DIR;
const std::string kResnet = kRealData +
                            "/pytorch_kineto/tb_plugin/samples/resnet50_num_workers_0/"
                            "worker0.1623143089861.pt.trace.json.gz";
const std::string kBert =
    kRealData +
    "/AMD-AGI_TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz";
// Two Tensile fp32 GEMMs of 18 and 13 us: too little matmul work for a verdict.
const std::string kMinitoy = kRealData +
                             "/facebookresearch_HolisticTraceAnalysis/tests/data/amd_trace/"
                             "mi250_minitoy_train_ROCm6_2_kineto.json.gz";

TEST(PrecisionCli, CheckFailsOnAnFp32JobAndPassesOnABf16One) {
    VRAMSCOPE_REQUIRE_INPUT(kResnet);
    VRAMSCOPE_REQUIRE_INPUT(kBert);
    CliRun r = run({"check", kResnet, "--advice", "mixed-precision"});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("mixed-precision"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fp32 / tf32 matmul time"), std::string::npos) << r.out;
    r = run({"check", kBert, "--advice", "mixed-precision"});
    EXPECT_EQ(r.code, kExitSuccess) << r.out << r.err;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("= 0.0 % <= 50 %"), std::string::npos) << r.out;
}

TEST(PrecisionCli, CheckSaysWhenTheMatmulWorkIsTooSmallToJudge) {
    VRAMSCOPE_REQUIRE_INPUT(kMinitoy);
    const CliRun r = run({"check", kMinitoy, "--advice", "mixed-precision"});
    EXPECT_NE(r.out.find("NOT CHECKED"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("too little matmul / convolution work"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2 kernels of known precision"), std::string::npos) << r.out;
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;  // a rule asked for could not be checked
    EXPECT_EQ(run({"check", kMinitoy, "--advice", "mixed-precision", "--allow-unchecked"}).code,
              kExitSuccess);
}

}  // namespace
}  // namespace vramscope::app
