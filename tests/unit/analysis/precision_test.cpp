// Kernel name classification, the precision mix of a hand-built device, and the mixed-precision
// rule's thresholds. Expected classes come from the libraries' naming (precision.h cites each);
// expected times and shares are worked out by hand in the comments.
#include "vramscope/analysis/memory/precision.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/model/job_analysis.h"

namespace vramscope::analysis {
namespace {

using trace::KernelCategory;
using P = KernelPrecision;

struct NameCase {
    const char* name;
    MathKind kind;
    P precision;
};

TEST(PrecisionClassify, ReadsTheLibrariesNamingConventions) {
    const NameCase cases[] = {
        // cuBLAS legacy SIMT and tensor-core GEMMs.
        {"volta_sgemm_128x64_nn", MathKind::Matmul, P::Fp32},
        {"ampere_sgemm_32x128_tn", MathKind::Matmul, P::Fp32},
        {"volta_h884gemm_64x64_ldg8_nn", MathKind::Matmul, P::Fp16},
        {"volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", MathKind::Matmul, P::Fp16},
        {"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", MathKind::Matmul, P::Bf16},
        {"sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16", MathKind::Matmul, P::Tf32},
        {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_"
         "execute_segment_k_off_kernel__5x_cublas",
         MathKind::Matmul, P::Bf16},
        {"void gemvNSP_kernel<float, float, float, float, 1, 16, 4, 1024>(int)", MathKind::Matmul,
         P::Fp32},
        {"void gemmk1_kernel<int, float, 256, 5, false>(cublasGemmk1Params<float>)",
         MathKind::Matmul, P::Fp32},
        {"void magma_sgemmEx_kernel<float, float, float, true, false, 6, 4, 6, 3, 4>(int)",
         MathKind::Matmul, P::Fp32},
        // CUTLASS wrappers: the operation is the template argument.
        {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>("
         "cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1::Params)",
         MathKind::Matmul, P::Tf32},
        {"void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(Params)",
         MathKind::Matmul, P::Fp32},
        {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_"
         "align8>(Params)",
         MathKind::Matmul, P::Bf16},
        {"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_"
         "32x3_nhwc_align4>(Params)",
         MathKind::Convolution, P::Tf32},
        {"void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK<"
         "cutlass_cudnn_train::MatrixShape<4, 128> > >(Params)",
         MathKind::None, P::Unknown},
        // cuDNN.
        {"volta_scudnn_128x64_relu_interior_nn_v1", MathKind::Convolution, P::Fp32},
        {"cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1", MathKind::Convolution, P::Fp32},
        {"volta_hcudnn_128x128_relu_interior_nn_v1", MathKind::Convolution, P::Fp16},
        {"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>("
         "int, int)",
         MathKind::Convolution, P::Fp32},
        {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)",
         MathKind::Convolution, P::Fp32},
        {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128"
         "x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
         MathKind::Convolution, P::Tf32},
        {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct)",
         MathKind::None, P::Unknown},
        {"cask_cudnn::computeWgradSplitKOffsetsKernel(cask_cudnn::ComputeSplitKOffsetsParams)",
         MathKind::None, P::Unknown},
        // Mangled CUTLASS convolution with its element type name.
        {"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11thread"
         "block22ImplicitGemmMultistageENS_10tfloat32_tEEEEEvNT_6ParamsE",
         MathKind::Convolution, P::Tf32},
        // Mangled CUTLASS GEMMs: the operation is a source name of its own (length 43, 52).
        {"_ZN7cutlass6KernelI43cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE",
         MathKind::Matmul, P::Fp32},
        {"_ZN7cutlass6KernelI52cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4EEvNT_"
         "6ParamsE",
         MathKind::Matmul, P::Tf32},
        // ROCm: Tensile, MIOpen, composable kernel.
        {"Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN", MathKind::Matmul,
         P::Fp32},
        {"Cijk_Ailk_Bljk_BBS_BH_MT64x64x64_MI16x16x16x1_SN_1LDSB0", MathKind::Matmul, P::Bf16},
        {"Cijk_Ailk_Bljk_HHS_BH_MT64x64x64_MI16x16x16x1_SN", MathKind::Matmul, P::Fp16},
        {"Cijk_Ailk_Bljk_F8SS_BH_MT64x64x64", MathKind::Matmul, P::Fp8},
        {"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x256x32_wt16x64x4_ws1x1_wr1x2",
         MathKind::Convolution, P::Bf16},
        {"_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_"
         "v3INS_28GridwiseGemm_xdl_cshuffle_v3ttfttEEEEv",
         MathKind::Convolution, P::Unknown},
        // cuBLASLt on Hopper / Blackwell: no type in the name.
        {"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", MathKind::Matmul, P::Unknown},
        // TensorRT-LLM: the first operand's type.
        {"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16", MathKind::Matmul, P::Fp8},
        {"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16", MathKind::Matmul, P::Bf16},
        // Not math: PyTorch's own kernels, fbgemm, NCCL, attention.
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
         "at::detail::Array<char*, 3> >(int)",
         MathKind::None, P::Unknown},
        {"void fbgemm_gpu::permute_2D_data_kernel<false, int, int>(int)", MathKind::None,
         P::Unknown},
        {"void reduce_1Block_kernel<float, 128, 7, cublasGemvTensorStridedBatched<float> >(float)",
         MathKind::None, P::Unknown},
        {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", MathKind::None, P::Unknown},
        {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128", MathKind::None,
         P::Unknown},
        {"", MathKind::None, P::Unknown},
    };
    for (const NameCase& c : cases) {
        const KernelClass k = classifyKernelName(c.name);
        EXPECT_EQ(k.kind, c.kind) << c.name;
        EXPECT_EQ(k.precision, c.precision) << c.name;
    }
}

void addKernelUs(trace::TraceData& d, int64_t startUs, int64_t endUs, const char* name,
                 KernelCategory category = KernelCategory::Compute, uint64_t stream = 7) {
    trace::KernelEvent k;
    k.startNs = startUs * 1000;
    k.endNs = endUs * 1000;
    k.category = category;
    k.stream = stream;
    k.name = d.intern(name);
    d.kernels.append(k);
}

constexpr const char* kSgemm = "volta_sgemm_128x64_nn";
constexpr const char* kTf32 =
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nt_"
    "align4>(cutlass_80_tensorop_s1688gemm_64x64_32x4_nt_align4::Params)";
constexpr const char* kBf16 = "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn";
constexpr const char* kNvjet = "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT";
constexpr const char* kAdd = "void at::native::vectorized_elementwise_kernel<4, add>(int)";

/// Device 0 (us): sgemm [0,400) and, on another stream, [300,500); tf32 [500,700); bf16
/// [800,900); nvjet [1000,1050); an elementwise add [1100,1600); an NCCL kernel [0,2000).
trace::TraceData handBuiltDevice() {
    trace::TraceData d;
    addKernelUs(d, 0, 400, kSgemm);
    addKernelUs(d, 300, 500, kSgemm, KernelCategory::Compute, 8);
    addKernelUs(d, 500, 700, kTf32);
    addKernelUs(d, 800, 900, kBf16);
    addKernelUs(d, 1000, 1050, kNvjet);
    addKernelUs(d, 1100, 1600, kAdd);
    addKernelUs(d, 0, 2000, "ncclKernel_AllReduce_RING_LL_Sum_float",
                KernelCategory::Communication);
    return d;
}

TEST(PrecisionMix, TakesUnionsPerClassAndSumsPerName) {
    const PrecisionMix m = precisionMix(handBuiltDevice(), trace::DeviceIndex{0});
    EXPECT_EQ(m.mathKernels, 5u);                  // 2 sgemm, tf32, bf16, nvjet
    EXPECT_EQ(m.mathNs, (700 + 100 + 50) * 1000);  // [0,700) + [800,900) + [1000,1050)
    EXPECT_EQ(m.ns(P::Fp32), 500'000);             // [0,400) u [300,500)
    EXPECT_EQ(m.kernels(P::Fp32), 2u);
    EXPECT_EQ(m.ns(P::Tf32), 200'000);
    EXPECT_EQ(m.ns(P::Bf16), 100'000);
    EXPECT_EQ(m.ns(P::Unknown), 50'000);
    EXPECT_EQ(m.fullPrecisionNs, 700'000);
    EXPECT_EQ(m.classifiedNs, 800'000);
    EXPECT_EQ(m.classifiedKernels, 4u);
    ASSERT_EQ(m.topFullPrecision.size(), 2u);
    EXPECT_EQ(m.topFullPrecision[0].name, kSgemm);
    EXPECT_EQ(m.topFullPrecision[0].timeNs, 600'000);  // 400 + 200 us summed, not the union
    EXPECT_EQ(m.topFullPrecision[1].precision, P::Tf32);
    ASSERT_EQ(m.topUnknown.size(), 1u);
    EXPECT_EQ(m.topUnknown[0].name, kNvjet);
    // Another device has nothing.
    EXPECT_EQ(precisionMix(handBuiltDevice(), trace::DeviceIndex{1}).mathKernels, 0u);
}

TEST(PrecisionClassify, OperandTypesNamePyTorchScalarTypes) {
    EXPECT_EQ(precisionOfOperandType("float"), P::Fp32);
    EXPECT_EQ(precisionOfOperandType("c10::Half"), P::Fp16);
    EXPECT_EQ(precisionOfOperandType("c10::BFloat16"), P::Bf16);
    EXPECT_EQ(precisionOfOperandType("c10::Float8_e4m3fn"), P::Fp8);
    EXPECT_EQ(precisionOfOperandType("c10::Float8_e5m2"), P::Fp8);
    EXPECT_EQ(precisionOfOperandType("double"), P::Fp64);
    for (const char* other : {"", "Scalar", "long int", "c10::complex<float>", "floatx"}) {
        EXPECT_EQ(precisionOfOperandType(other), P::Unknown) << other;
    }
}

/// Appends a kernel launched by an operator whose first input is of `type`.
void kernelUnder(trace::TraceData& d, int64_t startUs, int64_t endUs, const char* name,
                 const char* type) {
    addKernelUs(d, startUs, endUs, name);
    d.kernels.operandType.back() = d.intern(type);
}

// Device 0 (us): nvjet under bf16 [0,100) and [100,150), nvjet under float [200,300), nvjet
// under "Scalar" [400,450) (stays unknown), an sgemm under a bf16 op [500,600) (its name wins:
// fp32), an elementwise add under bf16 [700,800) (not a matmul: not counted).
TEST(PrecisionMix, TakesTheOperatorsInputTypeOnlyWhenTheNameSaysNothing) {
    trace::TraceData d;
    kernelUnder(d, 0, 100, kNvjet, "c10::BFloat16");
    kernelUnder(d, 100, 150, kNvjet, "c10::BFloat16");
    kernelUnder(d, 200, 300, kNvjet, "float");
    kernelUnder(d, 400, 450, kNvjet, "Scalar");
    kernelUnder(d, 500, 600, kSgemm, "c10::BFloat16");
    kernelUnder(d, 700, 800, kAdd, "c10::BFloat16");
    const PrecisionMix m = precisionMix(d, trace::DeviceIndex{0});
    EXPECT_EQ(m.mathKernels, 5u);
    EXPECT_EQ(m.kernels(P::Bf16), 2u);
    EXPECT_EQ(m.ns(P::Bf16), 150'000);
    EXPECT_EQ(m.kernels(P::Fp32), 2u);           // nvjet under float + sgemm
    EXPECT_EQ(m.ns(P::Fp32), 200'000);           // [200,300) + [500,600)
    EXPECT_EQ(m.kernels(P::Unknown), 1u);        // under "Scalar"
    EXPECT_EQ(m.operatorClassifiedKernels, 3u);  // 2 bf16 + 1 float nvjet
    EXPECT_EQ(m.operatorFloatKernels, 1u);
    // nvjet appears once per precision it ran at; the float one is marked as by its operator.
    ASSERT_EQ(m.topFullPrecision.size(), 2u);
    EXPECT_EQ(m.topFullPrecision[0].name, kNvjet);  // 100 us, ties by name: n < v
    EXPECT_TRUE(m.topFullPrecision[0].fromOperator);
    EXPECT_EQ(m.topFullPrecision[1].name, kSgemm);
    EXPECT_FALSE(m.topFullPrecision[1].fromOperator);
    ASSERT_EQ(m.topUnknown.size(), 1u);
    EXPECT_EQ(m.topUnknown[0].timeNs, 50'000);
    // Without the column (a trace from another producer) the nvjet kernels stay unknown.
    d.kernels.operandType.assign(d.kernels.size(), 0);
    const PrecisionMix byName = precisionMix(d, trace::DeviceIndex{0});
    EXPECT_EQ(byName.kernels(P::Unknown), 4u);
    EXPECT_EQ(byName.operatorClassifiedKernels, 0u);
}

/// A mix and a breakdown built by hand for the rule.
struct HandBuiltMix {
    PrecisionMix mix;
    TimeBreakdown breakdown;
    DeviceFacts facts() const {
        DeviceFacts f;
        f.rank = trace::RankId{0};
        f.precision = &mix;
        f.breakdown = &breakdown;
        return f;
    }
};

HandBuiltMix mixOf(int64_t fp32Us, int64_t bf16Us, int64_t unknownUs, int64_t computeUs,
                   uint64_t kernels = 20) {
    HandBuiltMix c;
    PrecisionMix& m = c.mix;
    m.nsByPrecision[size_t(P::Fp32)] = fp32Us * 1000;
    m.nsByPrecision[size_t(P::Bf16)] = bf16Us * 1000;
    m.nsByPrecision[size_t(P::Unknown)] = unknownUs * 1000;
    m.fullPrecisionNs = fp32Us * 1000;
    m.classifiedNs = (fp32Us + bf16Us) * 1000;
    m.mathNs = (fp32Us + bf16Us + unknownUs) * 1000;
    m.classifiedKernels = kernels;
    m.mathKernels = kernels + (unknownUs > 0 ? 1 : 0);
    m.fullPrecisionKernels = fp32Us > 0 ? kernels / 2 : 0;
    m.kernelsByPrecision[size_t(P::Unknown)] = unknownUs > 0 ? 1 : 0;
    m.topFullPrecision = {{kSgemm, P::Fp32, fp32Us * 1000, kernels / 2}};
    c.breakdown.computeNs = computeUs * 1000;
    c.breakdown.spanNs = computeUs * 1000;
    c.breakdown.kernels = kernels;
    return c;
}

std::vector<AdviceAssessment> precisionAssessments(const std::vector<AdviceAssessment>& all) {
    std::vector<AdviceAssessment> out;
    std::copy_if(all.begin(), all.end(), std::back_inserter(out),
                 [](const AdviceAssessment& a) { return a.rule == "mixed-precision"; });
    return out;
}

TEST(MixedPrecisionRule, FiresOnMostlyFp32MatmulsThatAreAShareOfCompute) {
    // fp32 700 us of 800 us classified = 87.5 % > 50 %; 700 / 1350 us compute = 51.9 % >= 10 %.
    const HandBuiltMix c = mixOf(700, 100, 0, 1350);
    std::vector<AdviceAssessment> assessments;
    const std::vector<Advice> advice = adviseOn({c.facts()}, {}, &assessments);
    const auto it = std::find_if(advice.begin(), advice.end(),
                                 [](const Advice& a) { return a.rule == "mixed-precision"; });
    ASSERT_NE(it, advice.end());
    EXPECT_EQ(it->severity, Severity::Warning);
    EXPECT_NE(it->message.find("87.5 %"), std::string::npos) << it->message;
    EXPECT_NE(it->message.find("51.9 %"), std::string::npos) << it->message;
    EXPECT_NE(it->message.find(kSgemm), std::string::npos) << it->message;
    EXPECT_NE(it->message.find("autocast"), std::string::npos);
    const auto fraction = std::find_if(it->evidence.begin(), it->evidence.end(), [](auto& e) {
        return e.name == "full_precision_matmul_fraction";
    });
    ASSERT_NE(fraction, it->evidence.end());
    EXPECT_DOUBLE_EQ(fraction->value, 700.0 / 800.0);
    const auto mine = precisionAssessments(assessments);
    ASSERT_EQ(mine.size(), 1u);
    EXPECT_EQ(mine[0].outcome, AssessmentOutcome::Fired);
    EXPECT_EQ(mine[0].severity, Severity::Warning);
}

TEST(MixedPrecisionRule, IsClearWhenMostMatmulTimeIsHalfOrFp32IsASmallShareOfCompute) {
    for (const HandBuiltMix& c : {mixOf(100, 700, 0, 1350),       // 12.5 % of matmul time
                                  mixOf(400, 400, 0, 1350),       // exactly 50 %: not above
                                  mixOf(700, 100, 0, 10'000)}) {  // 87.5 %, but 7 % of compute
        std::vector<AdviceAssessment> assessments;
        const std::vector<Advice> advice = adviseOn({c.facts()}, {}, &assessments);
        EXPECT_TRUE(std::none_of(advice.begin(), advice.end(),
                                 [](const Advice& a) { return a.rule == "mixed-precision"; }));
        const auto mine = precisionAssessments(assessments);
        ASSERT_EQ(mine.size(), 1u);
        EXPECT_EQ(mine[0].outcome, AssessmentOutcome::Clear) << mine[0].detail;
    }
    std::vector<AdviceAssessment> assessments;
    const HandBuiltMix half = mixOf(100, 700, 0, 1350);
    adviseOn({half.facts()}, {}, &assessments);
    EXPECT_EQ(precisionAssessments(assessments)[0].detail,
              "fp32 / tf32 matmul time 100 us / matmul time of known precision 800 us = 12.5 % "
              "<= 50 % (half precision 700 us, fp8 0 ns)");
}

TEST(MixedPrecisionRule, IsNotAssessedWithoutMatmulsWithUnknownNamesOrTooLittleWork) {
    HandBuiltMix none = mixOf(0, 0, 0, 1000, 0);
    HandBuiltMix unknown = mixOf(100, 100, 300, 1000);  // 300 / 500 us unknown = 60 % > 50 %
    HandBuiltMix tiny = mixOf(50, 0, 0, 100, 3);        // 3 kernels, 50 us
    HandBuiltMix fewKernels = mixOf(5000, 0, 0, 6000, 9);
    for (const HandBuiltMix* c : {&none, &unknown, &tiny, &fewKernels}) {
        std::vector<AdviceAssessment> assessments;
        const std::vector<Advice> advice = adviseOn({c->facts()}, {}, &assessments);
        EXPECT_TRUE(std::none_of(advice.begin(), advice.end(),
                                 [](const Advice& a) { return a.rule == "mixed-precision"; }));
        const auto mine = precisionAssessments(assessments);
        ASSERT_EQ(mine.size(), 1u);
        EXPECT_EQ(mine[0].outcome, AssessmentOutcome::NotAssessed) << mine[0].detail;
    }
    std::vector<AdviceAssessment> assessments;
    adviseOn({unknown.facts()}, {}, &assessments);
    EXPECT_NE(precisionAssessments(assessments)[0].detail.find("60.0 % > 50 %"), std::string::npos)
        << precisionAssessments(assessments)[0].detail;
    DeviceFacts noKernels;
    assessments.clear();
    adviseOn({noKernels}, {}, &assessments);
    EXPECT_EQ(precisionAssessments(assessments)[0].outcome, AssessmentOutcome::NotAssessed);
}

TEST(MixedPrecisionRule, RunsInTheJobAnalysisOnAHandBuiltTrace) {
    // 20 sgemm kernels of 100 us and one 100 us elementwise kernel, 1 ms apart: fp32 2 ms of
    // 2 ms classified matmul time, and 2 ms of 2.1 ms compute.
    trace::TraceData d;
    for (int i = 0; i < 20; ++i) {
        addKernelUs(d, i * 1000, i * 1000 + 100, kSgemm);
    }
    addKernelUs(d, 30'000, 30'100, kAdd);
    RankInput in;
    in.data = &d;
    in.rank = trace::RankId{0};
    JobAnalysisOptions options;
    options.threads = 1;
    auto job = analyzeJob({in}, options);
    ASSERT_TRUE(job.ok());
    ASSERT_EQ(job.value().devices.size(), 1u);
    ASSERT_TRUE(job.value().devices[0].precision.has_value());
    EXPECT_EQ(job.value().devices[0].precision->fullPrecisionNs, 2'000'000);
    const auto mine = precisionAssessments(job.value().assessments);
    ASSERT_EQ(mine.size(), 1u);
    EXPECT_EQ(mine[0].outcome, AssessmentOutcome::Fired) << mine[0].detail;
}

TEST(MixedPrecisionRule, FiresOnNvjetKernelsUnderFloatOpsAndSaysHowTheyWereClassified) {
    // 20 nvjet kernels of 100 us under float operators, 1 ms apart, and one 100 us elementwise
    // kernel: fp32 / tf32 2 ms of 2 ms matmul time, 2 ms of 2.1 ms compute.
    trace::TraceData d;
    for (int i = 0; i < 20; ++i) {
        kernelUnder(d, i * 1000, i * 1000 + 100, kNvjet, "float");
    }
    addKernelUs(d, 30'000, 30'100, kAdd);
    RankInput in;
    in.data = &d;
    in.rank = trace::RankId{0};
    JobAnalysisOptions options;
    options.threads = 1;
    auto job = analyzeJob({in}, options);
    ASSERT_TRUE(job.ok());
    const auto mine = precisionAssessments(job.value().assessments);
    ASSERT_EQ(mine.size(), 1u);
    EXPECT_EQ(mine[0].outcome, AssessmentOutcome::Fired) << mine[0].detail;
    const std::string note =
        "20 matmul / convolution kernels, of which 20 classified from their operator's input "
        "type (Kineto cpu_op Input type), 20 of them float: fp32, or tf32 if "
        "torch.backends.cuda.matmul.allow_tf32 was on";
    EXPECT_NE(mine[0].detail.find(note), std::string::npos) << mine[0].detail;
    const auto& advice = job.value().advice;
    const auto it = std::find_if(advice.begin(), advice.end(),
                                 [](const Advice& a) { return a.rule == "mixed-precision"; });
    ASSERT_NE(it, advice.end());
    EXPECT_NE(it->message.find(note), std::string::npos) << it->message;
    EXPECT_NE(it->message.find("(fp32 / tf32 by its operator's input type) 2.00 ms"),
              std::string::npos)
        << it->message;
}

TEST(KernelClass, NoNcclOrRcclKernelIsMath) {
    // A communication kernel whose name carries a GEMM token (fused communication + GEMM) is
    // no math kernel: the rule of trace::isCommunicationKernel, "rccl" as well as "nccl".
    EXPECT_EQ(classifyKernelName("volta_sgemm_128x64_nn").kind, MathKind::Matmul);
    EXPECT_EQ(classifyKernelName("ncclKernel_gemm_fused_AllReduce").kind, MathKind::None);
    EXPECT_EQ(classifyKernelName("rcclKernel_gemm_fused_AllReduce").kind, MathKind::None);
    EXPECT_EQ(classifyKernelName("RCCL_gemm_overlap").kind, MathKind::None);
}

}  // namespace
}  // namespace vramscope::analysis
