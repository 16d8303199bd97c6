// The mixed-precision rule of the training checklist (facts: precision.h).
#include <string>
#include <vector>

#include "advice/advice_rules.h"
#include "vramscope/analysis/memory/precision.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis::detail {

namespace {

constexpr const char* kMixedPrecisionRule = "mixed-precision";

std::string ms(int64_t ns) {
    return formatDuration(double(ns));
}

/// "volta_sgemm_128x32_nt (fp32) 83.0 ms, ..." for the names with the most time.
std::string topNamesText(const std::vector<KernelNameTime>& names) {
    std::vector<std::string> raw;
    for (const KernelNameTime& n : names) {
        raw.push_back(n.name);
    }
    const std::vector<std::string> shown = shortenNames(raw, 60);
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        const KernelNameTime& n = names[i];
        const std::string precision =
            !n.fromOperator ? toString(n.precision)
            : n.precision == KernelPrecision::Fp32
                ? std::string("fp32 / tf32 by its operator's input type")
                : std::string(toString(n.precision)) + " by its operator's input type";
        out += (i ? ", " : "") + shown[i] + " (" + precision + ") " + ms(n.timeNs);
    }
    return out;
}

/// "; precision unknown for 1.20 ms (28 kernels), not counted" when some names said nothing.
std::string unknownNote(const PrecisionMix& m) {
    const int64_t unknownNs = m.ns(KernelPrecision::Unknown);
    if (unknownNs == 0) {
        return {};
    }
    return "; precision unknown for " + ms(unknownNs) + " (" +
           std::to_string(m.kernels(KernelPrecision::Unknown)) + " kernels), not counted";
}

/// "; 130 matmul / convolution kernels, of which 109 classified from their operator's input
/// type" when the names alone did not give every precision.
std::string operatorNote(const PrecisionMix& m) {
    if (m.operatorClassifiedKernels == 0) {
        return {};
    }
    std::string note = "; " + std::to_string(m.mathKernels) +
                       " matmul / convolution kernels, of which " +
                       std::to_string(m.operatorClassifiedKernels) +
                       " classified from their operator's input type (Kineto cpu_op Input type)";
    if (m.operatorFloatKernels > 0) {
        note += ", " + std::to_string(m.operatorFloatKernels) +
                " of them float: fp32, or tf32 if torch.backends.cuda.matmul.allow_tf32 was on "
                "(the trace does not record it), counted as fp32";
    }
    return note;
}

/// What is missing for a verdict, or "" when the mix supports one.
std::string missingEvidence(const PrecisionMix& m, const AdviceOptions& o) {
    if (m.mathKernels == 0) {
        return "no matmul or convolution kernel on this GPU (no compute kernel is named like a "
               "cuBLAS, cuDNN, CUTLASS, Tensile or MIOpen matmul or convolution)";
    }
    const int64_t unknownNs = m.ns(KernelPrecision::Unknown);
    if (m.mathNs > 0 && double(unknownNs) / double(m.mathNs) > o.maxUnknownMatmulShare) {
        return "the kernel names do not give the precision of " + ms(unknownNs) + " of the " +
               ms(m.mathNs) + " matmul / convolution time (" +
               formatPercent(double(unknownNs) / double(m.mathNs)) + " > " +
               formatPercent(o.maxUnknownMatmulShare, 0) + "; " +
               std::to_string(m.kernels(KernelPrecision::Unknown)) + " of " +
               std::to_string(m.mathKernels) + " kernels, e.g. " + topNamesText(m.topUnknown) + ")";
    }
    if (m.classifiedKernels < o.minMatmulKernels || m.classifiedNs < o.minMatmulTimeNs) {
        return "too little matmul / convolution work to judge: " +
               std::to_string(m.classifiedKernels) + " kernels of known precision, " +
               ms(m.classifiedNs) + " (needs >= " + std::to_string(o.minMatmulKernels) +
               " kernels and >= " + ms(o.minMatmulTimeNs) + ")";
    }
    return {};
}

std::vector<Evidence> evidenceOf(const PrecisionMix& m, int64_t computeNs) {
    using P = KernelPrecision;
    return {{"fp32_matmul_ns", double(m.ns(P::Fp32)), "ns"},
            {"tf32_matmul_ns", double(m.ns(P::Tf32)), "ns"},
            {"fp16_matmul_ns", double(m.ns(P::Fp16)), "ns"},
            {"bf16_matmul_ns", double(m.ns(P::Bf16)), "ns"},
            {"fp8_matmul_ns", double(m.ns(P::Fp8)), "ns"},
            {"unknown_precision_matmul_ns", double(m.ns(P::Unknown)), "ns"},
            {"full_precision_matmul_ns", double(m.fullPrecisionNs), "ns"},
            {"classified_matmul_ns", double(m.classifiedNs), "ns"},
            {"compute_ns", double(computeNs), "ns"},
            {"full_precision_matmul_fraction", double(m.fullPrecisionNs) / double(m.classifiedNs),
             "fraction"},
            {"full_precision_compute_fraction",
             computeNs > 0 ? double(m.fullPrecisionNs) / double(computeNs) : 0.0, "fraction"},
            {"matmul_kernels", double(m.mathKernels), "kernels"},
            {"full_precision_matmul_kernels", double(m.fullPrecisionKernels), "kernels"},
            {"operator_classified_matmul_kernels", double(m.operatorClassifiedKernels), "kernels"}};
}

std::string adviceText(const DeviceFacts& f, const PrecisionMix& m, int64_t computeNs) {
    const double ofMatmul = double(m.fullPrecisionNs) / double(m.classifiedNs);
    const double ofCompute = double(m.fullPrecisionNs) / double(computeNs);
    std::string text =
        deviceLabel(f.rank, f.device) + ": fp32 / tf32 matmul and convolution kernels (" +
        std::to_string(m.fullPrecisionKernels) + ") ran " + ms(m.fullPrecisionNs) + ", " +
        formatPercent(ofMatmul) + " of the matmul / convolution time of known precision " +
        ms(m.classifiedNs) + " and " + formatPercent(ofCompute) + " of compute time " +
        ms(computeNs) + " (unions of kernel intervals" + unknownNote(m) + operatorNote(m) +
        "). Most time: " + topNamesText(m.topFullPrecision) + ".";
    if (const int64_t tf32 = m.ns(KernelPrecision::Tf32); tf32 > 0) {
        text += " The tf32 part (" + ms(tf32) +
                ") already runs on tensor cores, at half their bf16 / fp16 rate.";
    }
    text +=
        " Try bf16 or fp16 autocast (torch.autocast): the activations kept for backward take "
        "about half the memory, and half-precision tensor cores run 2x the tf32 and 15-16x "
        "the fp32 rate (dense peaks 312 / 156 / 19.5 TFLOPS on A100, 990 / 495 / 67 on H100 "
        "SXM: NVIDIA A100 and H100 datasheets).";
    return text;
}

}  // namespace

void mixedPrecisionRule(const DeviceFacts& facts, const AdviceOptions& options,
                        std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments) {
    if (facts.precision == nullptr || facts.breakdown == nullptr) {
        assess(assessments, facts, kMixedPrecisionRule, AssessmentOutcome::NotAssessed,
               "no kernel on this GPU: the trace records no matmul or convolution time");
        return;
    }
    const PrecisionMix& m = *facts.precision;
    if (std::string missing = missingEvidence(m, options); !missing.empty()) {
        assess(assessments, facts, kMixedPrecisionRule, AssessmentOutcome::NotAssessed,
               std::move(missing));
        return;
    }
    const int64_t computeNs = facts.breakdown->computeNs;
    const double ofMatmul = double(m.fullPrecisionNs) / double(m.classifiedNs);
    const double ofCompute = computeNs > 0 ? double(m.fullPrecisionNs) / double(computeNs) : 0.0;
    const std::string matmulFormula = "fp32 / tf32 matmul time " + ms(m.fullPrecisionNs) +
                                      " / matmul time of known precision " + ms(m.classifiedNs) +
                                      " = " + formatPercent(ofMatmul);
    if (ofMatmul <= options.fullPrecisionMatmulShare) {
        assess(assessments, facts, kMixedPrecisionRule, AssessmentOutcome::Clear,
               matmulFormula + " <= " + formatPercent(options.fullPrecisionMatmulShare, 0) +
                   " (half precision " +
                   ms(m.ns(KernelPrecision::Fp16) + m.ns(KernelPrecision::Bf16)) + ", fp8 " +
                   ms(m.ns(KernelPrecision::Fp8)) + unknownNote(m) + operatorNote(m) + ")");
        return;
    }
    if (ofCompute < options.fullPrecisionComputeShare) {
        assess(assessments, facts, kMixedPrecisionRule, AssessmentOutcome::Clear,
               matmulFormula + ", but fp32 / tf32 matmul time / compute time " + ms(computeNs) +
                   " = " + formatPercent(ofCompute) + " < " +
                   formatPercent(options.fullPrecisionComputeShare, 0) +
                   ": half precision would save little" + operatorNote(m));
        return;
    }
    Advice a =
        makeAdvice(facts, kMixedPrecisionRule, Severity::Warning, adviceText(facts, m, computeNs));
    a.evidence = evidenceOf(m, computeNs);
    advice.push_back(std::move(a));
    assess(assessments, facts, kMixedPrecisionRule, AssessmentOutcome::Fired,
           matmulFormula + " > " + formatPercent(options.fullPrecisionMatmulShare, 0) +
               "; / compute time " + ms(computeNs) + " = " + formatPercent(ofCompute) +
               " >= " + formatPercent(options.fullPrecisionComputeShare, 0) + operatorNote(m),
           Severity::Warning);
}

}  // namespace vramscope::analysis::detail
