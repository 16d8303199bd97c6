#pragma once
// Which matmul and convolution kernels of a GPU ran in full precision (fp32, tf32) and which in
// half or lower precision, read from the kernel names; the mixed-precision rule's facts.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// What a compute kernel does, as far as its name tells.
enum class MathKind : uint8_t {
    None,         ///< not a matmul or convolution (elementwise, norm, attention, copy, ...)
    Matmul,       ///< GEMM / batched GEMM / GEMV (cuBLAS, cuBLASLt, CUTLASS, Tensile, ...)
    Convolution,  ///< cuDNN / MIOpen convolution (implicit GEMM, Winograd, ...)
};
const char* toString(MathKind kind);  ///< "none", "matmul", "convolution"

/// The operand precision of a matmul or convolution kernel.
enum class KernelPrecision : uint8_t {
    Fp32,     ///< fp32 on the CUDA cores (no tensor cores): sgemm, scudnn, float templates
    Tf32,     ///< fp32 tensors run on tensor cores at tf32 precision (Ampere and later)
    Fp16,     ///< IEEE half
    Bf16,     ///< bfloat16
    Fp8,      ///< 8 bits or narrower: fp8 (e4m3 / e5m2), MX / fp4 (e2m1), int8
    Fp64,     ///< double
    Unknown,  ///< the name does not say (cuBLASLt nvjet_*, mangled composable-kernel names)
};
inline constexpr size_t kKernelPrecisionCount = 7;
const char* toString(KernelPrecision precision);  ///< "fp32", "tf32", "fp16", "bf16", "fp8", ...

/// fp32 and tf32: the precisions the mixed-precision rule would move to half.
inline bool isFullPrecision(KernelPrecision p) {
    return p == KernelPrecision::Fp32 || p == KernelPrecision::Tf32;
}
/// fp16, bf16 and 8-bit: already mixed precision.
inline bool isReducedPrecision(KernelPrecision p) {
    return p == KernelPrecision::Fp16 || p == KernelPrecision::Bf16 || p == KernelPrecision::Fp8;
}

/// The verdict on one kernel name.
struct KernelClass {
    MathKind kind = MathKind::None;
    KernelPrecision precision = KernelPrecision::Unknown;  ///< Unknown when kind is None
};

/// Classifies a kernel by its name alone (pure; any string, never throws). Patterns, checked in
/// this order, and where their meaning comes from:
/// - The name searched is the kernel's function (C++ template arguments and parameters cut off),
///   except for CUTLASS wrappers (`cutlass::Kernel<X>`, `cutlass_cudnn_*::Kernel<X>`), whose
///   operation X is the first template argument, and Itanium-mangled names (`_Z...`), searched
///   whole for the kind; their precision is read from their source names (the
///   `<length><identifier>` runs of the Itanium C++ ABI, e.g. `cutlass_80_simt_sgemm_...` inside
///   `_ZN7cutlass6KernelI52cutlass_80_simt_sgemm_...EEvNT_6ParamsE`) by the rules below, then
///   from CUTLASS's element types (`tfloat32_t`, `bfloat16_t`, `half_t`). Functions in `at::native`
///   (PyTorch's own kernels) and `fbgemm` are never matmuls.
/// - Kind: Convolution when the function holds `convolve`, `convolution`, `conv_fwd`,
///   `conv_bwd`, `scudnn` / `hcudnn` (legacy cuDNN), `dgrad`, `wgrad`, `fprop`, `winograd`,
///   `igemm_fwd` / `igemm_bwd` / `igemm_wrw` (MIOpen implicit GEMM); else Matmul when it holds
///   `gemm`, `gemv`, starts with `nvjet_` (cuBLASLt, Hopper and later), `Cijk_` (ROCm Tensile
///   GEMM solutions, rocBLAS / hipBLASLt), `bmm_` or `gemm_` (TensorRT-LLM kernels). Index and
///   offset helpers (`...Offsets...`) and split-K reductions (`ReduceSplitK`) are not math.
/// - Precision, first match wins:
///   - Tensile `Cijk_<A>_<B>_<T>...`: T's leading code per the Tensile precision-support page
///     (rocm.docs.amd.com/projects/Tensile, "Precision support"): `F8`/`B8` fp8, `I8` int8 (Fp8
///     class), `S` fp32 (`SB` = single with beta), `H` fp16, `B` bf16 (`BBS` = bf16 in/out,
///     fp32 compute), `D` fp64; any other code Unknown.
///   - TensorRT-LLM `bmm_<A>_...` / `gemm_<A>_...`: A's type token (`Bfloat16`, `Fp16`, `Fp32`,
///     `E4m3`, `MxE4m3`, `E2m1`, ...).
///   - Explicit type tokens anywhere: `e4m3`, `e5m2`, `e2m1`, `fp8` -> Fp8; `tf32`, `tfloat32`
///     -> Tf32 (`sm80_xmma_*_tf32f32_*`, cuDNN CUTLASS `*_s1688fprop_optimized_tf32_*`, mangled
///     `tfloat32_t`); `bf16`, `bfloat16` -> Bf16; `fp16`, `f16`, `half` -> Fp16;
///     `f32f32` -> Fp32 (xmma names without tf32).
///   - cuBLAS / cuDNN / CUTLASS precision letters: `h884gemm`, `h1688gemm`, `h16816gemm`,
///     `hgemm`, `hcudnn` -> Fp16; `sgemm`, `scudnn` -> Fp32 (SIMT, no tensor cores:
///     `volta_sgemm_128x64_nn`, `ampere_sgemm_*`, `cutlass_80_simt_sgemm_*`,
///     `volta_scudnn_*`); `tensorop_s1688` with no half token -> Tf32 (CUTLASS: fp32 operands
///     on the m16n8k8 tensor-core instruction, which for fp32 is tf32, `cutlass_80_tensorop_
///     s1688gemm_*`); `dgemm` -> Fp64.
///   - The first floating-point C++ template argument: `float` -> Fp32, `double` -> Fp64,
///     `__half` / `half` / `c10::Half` -> Fp16, `__nv_bfloat16` / `c10::BFloat16` -> Bf16
///     (`implicit_convolve_sgemm<float, ...>`, `cudnn::detail::dgrad_engine<float, ...>`,
///     `gemvNSP_kernel<float, ...>`).
///   - Otherwise Unknown (nvjet_*, composable-kernel mangled names, cuBLASLt names without a
///     type): counted as such, never guessed.
/// Attention kernels (flash / fmha) are not counted: they run only in half precision.
KernelClass classifyKernelName(std::string_view name);

/// The precision an operator's input element type names, as PyTorch's profiler writes it in
/// Kineto's cpu_op `Input type` (c10::ScalarType names; TraceData KernelEvents::operandType):
/// "float" -> Fp32 (which cuBLAS may run as tf32 when torch.backends.cuda.matmul.allow_tf32 is
/// on, something the trace does not record), "c10::Half" -> Fp16, "c10::BFloat16" -> Bf16,
/// "c10::Float8_*" (e4m3fn, e5m2, ...) -> Fp8, "double" -> Fp64; anything else ("Scalar",
/// "long int", "") Unknown. Pure, never throws.
KernelPrecision precisionOfOperandType(std::string_view type);

/// Time and count of one kernel name at one precision.
struct KernelNameTime {
    std::string name;
    KernelPrecision precision = KernelPrecision::Unknown;
    int64_t timeNs = 0;  ///< sum of its kernels' durations
    uint64_t kernels = 0;
    /// The precision came from the launching operator's input type, not from the name.
    bool fromOperator = false;
};

/// Matmul and convolution kernel time of one device by precision (the mixed-precision rule's
/// facts). Plain data; see precisionMix for the formulas.
struct PrecisionMix {
    trace::DeviceIndex device{0};
    uint64_t mathKernels = 0;  ///< matmul + convolution kernels
    uint64_t convolutionKernels = 0;
    /// |union of the matmul + convolution kernel intervals|, ns.
    int64_t mathNs = 0;
    /// Per KernelPrecision (index = the enum's value): |union of that class's intervals| and its
    /// kernel count.
    std::array<int64_t, kKernelPrecisionCount> nsByPrecision{};
    std::array<uint64_t, kKernelPrecisionCount> kernelsByPrecision{};
    /// |union of the intervals of every class but Unknown| and its kernel count.
    int64_t classifiedNs = 0;
    uint64_t classifiedKernels = 0;
    /// |union of the fp32 + tf32 intervals| and their count.
    int64_t fullPrecisionNs = 0;
    uint64_t fullPrecisionKernels = 0;
    /// Kernels whose name gives no precision, classified by their operator's input type
    /// (precisionOfOperandType), included in the counts above; and of those, the "float" ones
    /// (fp32, or tf32 when allow_tf32 is on).
    uint64_t operatorClassifiedKernels = 0;
    uint64_t operatorFloatKernels = 0;
    /// The fp32 / tf32 kernel names with the most time, most first (ties: name), at most 5.
    std::vector<KernelNameTime> topFullPrecision;
    /// The Unknown names with the most time, at most 3 (what a reader would need to classify).
    std::vector<KernelNameTime> topUnknown;

    int64_t ns(KernelPrecision p) const { return nsByPrecision[size_t(p)]; }
    uint64_t kernels(KernelPrecision p) const { return kernelsByPrecision[size_t(p)]; }
};

/// The PrecisionMix of `device`: its Compute kernels (KernelCategory::Compute; NCCL, copies and
/// memsets are never matmuls) classified by classifyKernelName; a matmul / convolution whose
/// name gives no precision (cuBLASLt nvjet_*, composable-kernel names) takes the one of the
/// operator that launched it (KernelEvents::operandType, precisionOfOperandType), when known. Times
/// are unions of kernel intervals, like TimeBreakdown::computeNs, so that a class's time divided by
/// compute time is a share of the time the GPU spent computing (a sum of durations would count
/// kernels running at once on several streams twice and could exceed 100 %); the per-name times are
/// sums. Kernels with end < start are skipped. O(n log n) in the device's kernels.
PrecisionMix precisionMix(const trace::TraceData& data, trace::DeviceIndex device);

/// Dense peak tensor-core throughput quoted in the advice, TFLOPS (NVIDIA A100 Tensor Core GPU
/// datasheet and NVIDIA H100 Tensor Core GPU datasheet, SXM parts; the datasheets' tensor
/// figures are quoted "with sparsity", dense is half of them).
struct TensorCoreRates {
    double fp32 = 0, tf32 = 0, half = 0;  ///< half = fp16 and bf16
};
inline constexpr TensorCoreRates kA100Rates{19.5, 156.0, 312.0};
inline constexpr TensorCoreRates kH100SxmRates{67.0, 494.5, 989.5};

}  // namespace vramscope::analysis
