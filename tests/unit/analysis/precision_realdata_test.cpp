// The precision mix and the mixed-precision rule on real Kineto traces. Expected times are
// recomputed here from the raw JSON (zlib + nlohmann-json) with this test's own list of the
// matmul / convolution names each file holds (looked up in the files, written out below), never
// with the classifier under test: |union of [ts, ts + dur)| over the kernels a list selects.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/memory/precision.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

using testdata::eventsOf;
using testdata::loadGzJson;
using P = KernelPrecision;

using Select = std::function<bool(const std::string&)>;

bool has(const std::string& s, const char* t) {
    return s.find(t) != std::string::npos;
}
bool starts(const std::string& s, const char* t) {
    return s.rfind(t, 0) == 0;
}

/// |union| in us of the GPU kernels (cat "kernel", any case; ph "X") whose name `select` takes,
/// and how many there were.
std::pair<double, size_t> selectedKernelUnionUs(const nlohmann::json& doc, const Select& select) {
    std::vector<std::pair<double, double>> v;
    for (const auto& e : eventsOf(doc)) {
        std::string cat = e.value("cat", "");
        std::transform(cat.begin(), cat.end(), cat.begin(), ::tolower);
        if (cat != "kernel" || e.value("ph", "") != "X" || !e.contains("name")) {
            continue;
        }
        if (select(e["name"].get<std::string>())) {
            const double ts = e["ts"].get<double>();
            v.emplace_back(ts, ts + e["dur"].get<double>());
        }
    }
    std::sort(v.begin(), v.end());
    double total = 0, start = 0, end = -1e300;
    for (const auto& [s, e] : v) {
        if (s > end) {
            total += end > -1e300 ? end - start : 0.0;
            start = s;
            end = e;
        } else {
            end = std::max(end, e);
        }
    }
    total += v.empty() ? 0.0 : end - start;
    return {total, v.size()};
}

/// The analysis of a one-GPU file, its one device with kernels, and that device's assessment.
struct AnalysedOneGpuTrace {
    trace::LoadedTrace trace;
    JobAnalysis job;
    const DeviceAnalysis* device = nullptr;
    const AdviceAssessment* assessment = nullptr;
};

void analyseOneGpuTrace(const std::string& path, AnalysedOneGpuTrace& out) {
    auto t = trace::openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().message;
    out.trace = std::move(t).value();
    auto job = analyzeJob({{&out.trace.data, trace::RankId{0}, 0}});
    ASSERT_TRUE(job.ok());
    out.job = std::move(job).value();
    for (const DeviceAnalysis& d : out.job.devices) {
        if (d.precision) {
            ASSERT_EQ(out.device, nullptr) << "one GPU with kernels expected";
            out.device = &d;
        }
    }
    ASSERT_NE(out.device, nullptr);
    for (const AdviceAssessment& a : out.job.assessments) {
        if (a.rule == "mixed-precision" && a.device == out.device->device) {
            out.assessment = &a;
        }
    }
    ASSERT_NE(out.assessment, nullptr);
}

/// The rule's verdict on `a`'s device by the kernel names alone (the operand types dropped): the
/// verdict before the operators' input types were read.
AssessmentOutcome outcomeByNamesAlone(const AnalysedOneGpuTrace& a) {
    trace::TraceData names = a.trace.data;
    names.kernels.operandType.assign(names.kernels.size(), trace::StringId{0});
    const PrecisionMix m = precisionMix(names, a.device->device);
    DeviceFacts f;
    f.rank = trace::RankId{0};
    f.device = a.device->device;
    f.precision = &m;
    f.breakdown = &*a.device->breakdown;
    std::vector<AdviceAssessment> assessments;
    adviseOn({f}, {}, &assessments);
    for (const AdviceAssessment& x : assessments) {
        if (x.rule == "mixed-precision") {
            return x.outcome;
        }
    }
    ADD_FAILURE() << "no mixed-precision assessment";
    return AssessmentOutcome::NotAssessed;
}

double us(int64_t ns) {
    return double(ns) / 1000.0;
}

/// Kernel times are rounded to whole ns by the importer: two roundings per kernel at most.
double kernelUnionToleranceUs(size_t kernels) {
    return 0.002 * double(kernels) + 0.01;
}

TEST(PrecisionRealdata, Resnet50Fp32SampleFiresOnSgemmAndScudnn) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kResnetTrace);
    // 2021 PyTorch, V100, no autocast: cuBLAS sgemm and cuDNN fp32 convolution kernels
    // (volta_scudnn_*, implicit / explicit_convolve_sgemm<float>, dgrad_engine<float>,
    // wgrad_alg0_engine<float>, winograd<float>); no half precision name at all.
    const Select fp32 = [](const std::string& n) {
        return has(n, "sgemm") || has(n, "scudnn") || has(n, "cudnn::detail::dgrad_engine<float") ||
               has(n, "cudnn::cnn::wgrad_alg0_engine<float") || has(n, "winograd");
    };
    const Select half = [](const std::string& n) {
        return has(n, "h884") || has(n, "hcudnn") || has(n, "fp16") || has(n, "bf16");
    };
    const nlohmann::json doc = loadGzJson(realdata::kResnetTrace);
    const auto [fp32Us, fp32Count] = selectedKernelUnionUs(doc, fp32);
    ASSERT_GT(fp32Count, 100u);
    EXPECT_EQ(selectedKernelUnionUs(doc, half).second, 0u);
    AnalysedOneGpuTrace a;
    ASSERT_NO_FATAL_FAILURE(analyseOneGpuTrace(realdata::kResnetTrace, a));
    const PrecisionMix& m = *a.device->precision;
    EXPECT_EQ(m.kernels(P::Fp32), fp32Count);
    EXPECT_NEAR(us(m.ns(P::Fp32)), fp32Us, kernelUnionToleranceUs(fp32Count));
    EXPECT_EQ(m.ns(P::Fp16) + m.ns(P::Bf16) + m.ns(P::Tf32) + m.ns(P::Unknown), 0);
    EXPECT_EQ(a.assessment->outcome, AssessmentOutcome::Fired) << a.assessment->detail;
    // The share of compute time, recomputed: every kernel but copies / memsets / NCCL.
    const auto [computeUs, computeCount] = selectedKernelUnionUs(doc, [](const std::string& n) {
        return !has(n, "nccl") && !starts(n, "Memcpy") && !starts(n, "Memset");
    });
    ASSERT_GT(computeCount, 0u);
    EXPECT_GE(fp32Us / computeUs, 0.1);
    EXPECT_NEAR(us(a.device->breakdown->computeNs), computeUs,
                kernelUnionToleranceUs(computeCount));
}

TEST(PrecisionRealdata, DfIndexResolverFiresOnVoltaSgemm) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDfIndexTrace);
    // cuBLAS fp32 GEMM / GEMV kernels of a fp32 job (gemmSN / gemmk1 / gemv: cuBLAS small-N,
    // k = 1 and matrix-vector kernels templated on float).
    const Select fp32 = [](const std::string& n) {
        return has(n, "sgemm") || starts(n, "void gemmSN_") || starts(n, "void gemmk1_kernel<") ||
               starts(n, "void gemv") || has(n, "internal::gemvx::kernel<");
    };
    const nlohmann::json doc = loadGzJson(realdata::kDfIndexTrace);
    const auto [fp32Us, fp32Count] = selectedKernelUnionUs(doc, fp32);
    ASSERT_GT(fp32Count, 1000u);
    AnalysedOneGpuTrace a;
    ASSERT_NO_FATAL_FAILURE(analyseOneGpuTrace(realdata::kDfIndexTrace, a));
    const PrecisionMix& m = *a.device->precision;
    EXPECT_EQ(m.kernels(P::Fp32), fp32Count);
    EXPECT_NEAR(us(m.ns(P::Fp32)), fp32Us, kernelUnionToleranceUs(fp32Count));
    EXPECT_EQ(m.fullPrecisionNs, m.classifiedNs);  // nothing in half precision
    EXPECT_EQ(a.assessment->outcome, AssessmentOutcome::Fired) << a.assessment->detail;
    ASSERT_FALSE(m.topFullPrecision.empty());
    EXPECT_EQ(m.topFullPrecision[0].name, "volta_sgemm_128x32_nt");  // 83.0 ms in the file
}

TEST(PrecisionRealdata, BertSmallBf16OnH100IsClear) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    // CUTLASS bf16 tensor-op GEMMs and one cuBLAS sm90 bf16 xmma GEMM; flash attention is not
    // a matmul here.
    const Select bf16 = [](const std::string& n) {
        return (has(n, "cutlass_80_tensorop_bf16_s16816gemm") ||
                has(n, "cutlass_80_wmma_tensorop_bf16_s161616gemm") ||
                starts(n, "sm90_xmma_gemm_bf16bf16"));
    };
    const nlohmann::json doc = loadGzJson(realdata::kBertTrace);
    const auto [bf16Us, bf16Count] = selectedKernelUnionUs(doc, bf16);
    ASSERT_EQ(bf16Count, 26u);  // 17 + 1 + 4 + 4 in the file
    AnalysedOneGpuTrace a;
    ASSERT_NO_FATAL_FAILURE(analyseOneGpuTrace(realdata::kBertTrace, a));
    const PrecisionMix& m = *a.device->precision;
    EXPECT_EQ(m.kernels(P::Bf16), bf16Count);
    EXPECT_EQ(m.mathKernels, bf16Count);
    EXPECT_NEAR(us(m.ns(P::Bf16)), bf16Us, kernelUnionToleranceUs(bf16Count));
    EXPECT_EQ(m.fullPrecisionNs, 0);
    EXPECT_EQ(a.assessment->outcome, AssessmentOutcome::Clear) << a.assessment->detail;
}

TEST(PrecisionRealdata, B200NvjetKernelsTakeBf16FromTheirOperator) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kB200Trace);
    // cuBLASLt nvjet_* names carry no type; every one is launched by an aten::addmm / aten::mm
    // whose first input is c10::BFloat16 (the operand types are checked kernel by kernel against
    // the raw JSON in kineto_operand_type_test), so they count as bf16. The TensorRT-LLM MoE
    // bmm_<A>_ kernels are classified by name.
    const nlohmann::json doc = loadGzJson(realdata::kB200Trace);
    const Select nvjet = [](const std::string& n) { return starts(n, "nvjet_"); };
    const Select fp8 = [](const std::string& n) { return starts(n, "bmm_MxE4m3_"); };
    const Select bmmBf16 = [](const std::string& n) { return starts(n, "bmm_Bfloat16_"); };
    const auto [nvjetUs, nvjetCount] = selectedKernelUnionUs(doc, nvjet);
    const auto [fp8Us, fp8Count] = selectedKernelUnionUs(doc, fp8);
    const auto [bf16Us, bf16Count] =
        selectedKernelUnionUs(doc, [&](const std::string& n) { return nvjet(n) || bmmBf16(n); });
    ASSERT_EQ(nvjetCount, 109u);  // 36 + 36 + 36 + 1
    AnalysedOneGpuTrace a;
    ASSERT_NO_FATAL_FAILURE(analyseOneGpuTrace(realdata::kB200Trace, a));
    const PrecisionMix& m = *a.device->precision;
    EXPECT_EQ(m.kernels(P::Unknown), 0u);
    EXPECT_EQ(m.operatorClassifiedKernels, nvjetCount);
    EXPECT_EQ(m.operatorFloatKernels, 0u);
    EXPECT_EQ(m.kernels(P::Fp8), fp8Count);
    EXPECT_NEAR(us(m.ns(P::Fp8)), fp8Us, kernelUnionToleranceUs(fp8Count));
    EXPECT_EQ(m.kernels(P::Bf16), bf16Count);
    EXPECT_NEAR(us(m.ns(P::Bf16)), bf16Us, kernelUnionToleranceUs(bf16Count));
    EXPECT_GT(nvjetUs, 0.0);
    EXPECT_EQ(m.fullPrecisionNs, 0);
    // Clear by the names alone (0 % of the known-precision time in fp32) and still clear.
    EXPECT_EQ(outcomeByNamesAlone(a), AssessmentOutcome::Clear);
    EXPECT_EQ(a.assessment->outcome, AssessmentOutcome::Clear) << a.assessment->detail;
    EXPECT_NE(a.assessment->detail.find("of which 109 classified from their operator's input type"),
              std::string::npos)
        << a.assessment->detail;
}

TEST(PrecisionRealdata, Mi300ComposableKernelConvolutionsTakeBf16FromTheirOperator) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kMi300Trace);
    // A bf16 ResNet on MI300X: MIOpen igemm_*_bf16 and Tensile BBS kernels say bf16 by name;
    // the composable-kernel convolutions (mangled ck::...kernel_grouped_conv_fwd and
    // kernel_batched_gemm_xdlops_bwd_weight) say nothing and run under bf16 aten ops.
    const nlohmann::json doc = loadGzJson(realdata::kMi300Trace);
    const Select ck = [](const std::string& n) {
        return starts(n, "_ZN2ck") &&
               (has(n, "kernel_grouped_conv_fwd") || has(n, "xdlops_bwd_weight"));
    };
    // Only those whose correlation id has a runtime event (hipLaunchKernel, ...) in the file can
    // be linked to an operator: 81 of the 108, the other 27 stay of unknown precision.
    std::set<uint64_t> launched;
    for (const auto& e : eventsOf(doc)) {
        const std::string cat = e.value("cat", "");
        if ((cat == "cuda_runtime" || cat == "cuda_driver") && e.contains("args") &&
            e["args"].contains("correlation")) {
            launched.insert(e["args"]["correlation"].get<uint64_t>());
        }
    }
    size_t ckCount = 0, ckLaunched = 0;
    for (const auto& e : eventsOf(doc)) {
        if (e.value("cat", "") == "kernel" && ck(e.value("name", ""))) {
            ++ckCount;
            ckLaunched += launched.count(e["args"].value("correlation", uint64_t{0}));
        }
    }
    ASSERT_EQ(ckCount, 108u);
    ASSERT_EQ(ckLaunched, 81u);
    AnalysedOneGpuTrace a;
    ASSERT_NO_FATAL_FAILURE(analyseOneGpuTrace(realdata::kMi300Trace, a));
    const PrecisionMix& m = *a.device->precision;
    EXPECT_EQ(m.operatorClassifiedKernels, ckLaunched);
    EXPECT_GE(m.kernels(P::Unknown), ckCount - ckLaunched);
    EXPECT_EQ(m.operatorFloatKernels, 0u);
    EXPECT_EQ(m.fullPrecisionNs, 0);
    EXPECT_EQ(outcomeByNamesAlone(a), AssessmentOutcome::Clear);
    EXPECT_EQ(a.assessment->outcome, AssessmentOutcome::Clear) << a.assessment->detail;
}

}  // namespace
}  // namespace vramscope::analysis
