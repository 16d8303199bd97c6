// Matmul / convolution kernels by precision, from their names (patterns and sources: precision.h).
#include "vramscope/analysis/memory/precision.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "ascii_text.h"
#include "vramscope/analysis/time/time_breakdown.h"
#include "vramscope/trace/kernel_names.h"

namespace vramscope::analysis {

const char* toString(MathKind kind) {
    switch (kind) {
        case MathKind::None:
            return "none";
        case MathKind::Matmul:
            return "matmul";
        case MathKind::Convolution:
            return "convolution";
    }
    return "none";
}

const char* toString(KernelPrecision precision) {
    switch (precision) {
        case KernelPrecision::Fp32:
            return "fp32";
        case KernelPrecision::Tf32:
            return "tf32";
        case KernelPrecision::Fp16:
            return "fp16";
        case KernelPrecision::Bf16:
            return "bf16";
        case KernelPrecision::Fp8:
            return "fp8";
        case KernelPrecision::Fp64:
            return "fp64";
        case KernelPrecision::Unknown:
            return "unknown";
    }
    return "unknown";
}

namespace {

using P = KernelPrecision;

bool has(std::string_view s, std::string_view token) {
    return s.find(token) != std::string_view::npos;
}

/// The demangled name without its return type ("void ", "std::enable_if<...>::type ").
std::string_view withoutReturnType(std::string_view name) {
    if (name.starts_with("void ")) {
        name.remove_prefix(5);
    }
    if (name.starts_with("std::enable_if<")) {
        const size_t type = name.find(">::type ");
        if (type != std::string_view::npos) {
            name.remove_prefix(type + 8);
        }
    }
    return name;
}

/// What the name is matched on (precision.h): the function path, or the operation a CUTLASS
/// `Kernel<X>` wrapper runs. `templateArgs` gets the text of the template argument list.
std::string_view operationOf(std::string_view name, std::string_view& templateArgs) {
    name = withoutReturnType(name);
    const size_t open = name.find_first_of("<(");
    const std::string_view path = name.substr(0, open);
    templateArgs = {};
    if (open != std::string_view::npos && name[open] == '<') {
        const size_t params = name.find('(', open);
        templateArgs =
            name.substr(open + 1, params == std::string_view::npos ? std::string_view::npos
                                                                   : params - open - 1);
    }
    if (path.ends_with("::Kernel") || path.ends_with("::Kernel2")) {
        const size_t end = templateArgs.find_first_of("<>,(");
        return templateArgs.substr(0, end);
    }
    return path;
}

MathKind kindOf(std::string_view f, bool mangled) {
    if ((!mangled && f.starts_with("at::native")) || has(f, "fbgemm") || has(f, "offsets") ||
        has(f, "reducesplitk") || has(f, "splitkreduce") || trace::isCommunicationKernel(f)) {
        return MathKind::None;
    }
    for (const char* t :
         {"convolve", "convolution", "conv_fwd", "conv_bwd", "scudnn", "hcudnn", "dgrad", "wgrad",
          "fprop", "winograd", "igemm_fwd", "igemm_bwd", "igemm_wrw"}) {
        if (has(f, t)) {
            return MathKind::Convolution;
        }
    }
    if (has(f, "gemm") || has(f, "gemv") || f.starts_with("nvjet_") || f.starts_with("cijk_") ||
        f.starts_with("bmm_")) {
        return MathKind::Matmul;
    }
    return MathKind::None;
}

/// Tensile's `Cijk_<A>_<B>_<type>...`: the type code (Tensile "Precision support").
P tensilePrecision(std::string_view op) {
    size_t at = 0;
    for (int skip = 0; skip < 3 && at != std::string_view::npos; ++skip) {
        at = op.find('_', at);
        at = at == std::string_view::npos ? at : at + 1;
    }
    if (at == std::string_view::npos || at >= op.size()) {
        return P::Unknown;
    }
    const std::string_view code = op.substr(at, op.find('_', at) - at);
    if (code.starts_with("F8") || code.starts_with("B8") || code.starts_with("I8") ||
        code.starts_with("4xi8")) {
        return P::Fp8;
    }
    switch (code.empty() ? '\0' : code[0]) {
        case 'S':
            return P::Fp32;
        case 'H':
            return P::Fp16;
        case 'B':
            return P::Bf16;
        case 'D':
            return P::Fp64;
        default:
            return P::Unknown;
    }
}

/// TensorRT-LLM `bmm_<A>_...`: the first operand's type token.
P trtllmPrecision(std::string_view f) {
    const size_t at = f.find('_') + 1;
    const std::string_view a = f.substr(at, f.find('_', at) - at);
    if (a.starts_with("bfloat16")) {
        return P::Bf16;
    }
    if (a.starts_with("fp16")) {
        return P::Fp16;
    }
    if (a.starts_with("fp32")) {
        return P::Fp32;
    }
    if (has(a, "e4m3") || has(a, "e5m2") || has(a, "e2m1")) {
        return P::Fp8;
    }
    return P::Unknown;
}

/// Type tokens and cuBLAS / cuDNN / CUTLASS precision letters in the lower-case operation.
P tokenPrecision(std::string_view f) {
    if (has(f, "e4m3") || has(f, "e5m2") || has(f, "e2m1") || has(f, "fp8")) {
        return P::Fp8;
    }
    if (has(f, "tf32") || has(f, "tfloat32")) {
        return P::Tf32;
    }
    if (has(f, "bf16") || has(f, "bfloat16")) {
        return P::Bf16;
    }
    if (has(f, "fp16") || has(f, "f16") || has(f, "half")) {
        return P::Fp16;
    }
    if (has(f, "f32f32") || has(f, "fp32")) {
        return P::Fp32;
    }
    for (const char* t : {"h884gemm", "h1688gemm", "h16816gemm", "hgemm", "hcudnn"}) {
        if (has(f, t)) {
            return P::Fp16;
        }
    }
    if (has(f, "sgemm") || has(f, "scudnn")) {
        return P::Fp32;
    }
    if (has(f, "tensorop_s1688")) {
        return P::Tf32;
    }
    if (has(f, "dgemm")) {
        return P::Fp64;
    }
    return P::Unknown;
}

/// The first floating-point type among the C++ template arguments.
P templatePrecision(std::string_view args) {
    size_t i = 0;
    while (i < args.size()) {
        const size_t end = args.find_first_of(",<> ", i);
        const std::string_view t = args.substr(i, end == std::string_view::npos ? end : end - i);
        if (t == "float") {
            return P::Fp32;
        }
        if (t == "double") {
            return P::Fp64;
        }
        if (t == "__half" || t == "half" || t == "c10::Half" || t == "cutlass::half_t") {
            return P::Fp16;
        }
        if (t == "__nv_bfloat16" || t == "c10::BFloat16" || t == "cutlass::bfloat16_t") {
            return P::Bf16;
        }
        if (end == std::string_view::npos) {
            break;
        }
        i = end + 1;
    }
    return P::Unknown;
}

}  // namespace

/// The source names inside an Itanium-mangled name: each <length><identifier> run
/// (Itanium C++ ABI, "Mangling": <source-name> ::= <positive length number> <identifier>), e.g.
/// "cutlass_80_simt_sgemm_128x128_8x4_nn_align1" in
/// "_ZN7cutlass6KernelI52cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE".
std::vector<std::string_view> mangledSourceNames(std::string_view name) {
    std::vector<std::string_view> out;
    size_t i = 2;  // after "_Z"
    while (i < name.size()) {
        if (name[i] < '0' || name[i] > '9') {
            ++i;
            continue;
        }
        size_t length = 0;
        size_t j = i;
        while (j < name.size() && name[j] >= '0' && name[j] <= '9' && length < 100000) {
            length = length * 10 + size_t(name[j] - '0');
            ++j;
        }
        if (length == 0 || j + length > name.size()) {
            i = j;
            continue;
        }
        out.push_back(name.substr(j, length));
        i = j + length;
    }
    return out;
}

KernelClass classifyKernelName(std::string_view name) {
    const bool mangled = name.starts_with("_Z");
    std::string_view args;
    const std::string_view op = mangled ? name : operationOf(name, args);
    const std::string f = asciiLower(op);
    KernelClass c;
    c.kind = kindOf(f, mangled);
    if (c.kind == MathKind::None) {
        return c;
    }
    if (mangled) {
        // The source names are read as unmangled names are (a CUTLASS operation such as
        // cutlass_80_simt_sgemm_* named as a template argument); the rest of a mangled name
        // (Itanium type codes, lengths) would match type tokens by accident. Then CUTLASS's
        // element type names.
        for (const std::string_view source : mangledSourceNames(name)) {
            if (const P p = tokenPrecision(asciiLower(source)); p != P::Unknown) {
                c.precision = p;
                return c;
            }
        }
        c.precision = has(f, "tfloat32_t")   ? P::Tf32
                      : has(f, "bfloat16_t") ? P::Bf16
                      : has(f, "half_t")     ? P::Fp16
                                             : P::Unknown;
        return c;
    }
    if (f.starts_with("cijk_")) {
        c.precision = tensilePrecision(op);
        return c;
    }
    if (f.starts_with("bmm_") || f.starts_with("gemm_")) {
        if (const P p = trtllmPrecision(f); p != P::Unknown) {
            c.precision = p;
            return c;
        }
    }
    c.precision = tokenPrecision(f);
    if (c.precision == P::Unknown) {
        c.precision = templatePrecision(args);
    }
    return c;
}

KernelPrecision precisionOfOperandType(std::string_view type) {
    if (type == "float") {
        return P::Fp32;
    }
    if (type == "c10::Half") {
        return P::Fp16;
    }
    if (type == "c10::BFloat16") {
        return P::Bf16;
    }
    if (type.starts_with("c10::Float8_")) {
        return P::Fp8;
    }
    if (type == "double") {
        return P::Fp64;
    }
    return P::Unknown;
}

namespace {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

/// A kernel's class: from its name, else (a matmul / convolution of unknown precision) from its
/// operator's input type; `fromOperator` says which.
KernelClass classOf(const trace::TraceData& data, size_t i, KernelClass byName,
                    bool& fromOperator) {
    fromOperator = false;
    const trace::StringId type =
        data.kernels.operandType.size() > i ? data.kernels.operandType[i] : trace::StringId{0};
    if (byName.kind == MathKind::None || byName.precision != P::Unknown || type == 0) {
        return byName;
    }
    const P p = precisionOfOperandType(data.string(type));
    if (p == P::Unknown) {
        return byName;
    }
    fromOperator = true;
    return {byName.kind, p};
}

/// The `limit` names with the most time, most first, ties by name.
std::vector<KernelNameTime> topNames(std::vector<KernelNameTime> names, size_t limit) {
    std::sort(names.begin(), names.end(), [](const KernelNameTime& a, const KernelNameTime& b) {
        if (a.timeNs != b.timeNs) {
            return a.timeNs > b.timeNs;
        }
        return a.name != b.name
                   ? a.name < b.name
                   : std::tie(a.precision, a.fromOperator) < std::tie(b.precision, b.fromOperator);
    });
    if (names.size() > limit) {
        names.resize(limit);
    }
    return names;
}

}  // namespace

PrecisionMix precisionMix(const trace::TraceData& data, trace::DeviceIndex device) {
    PrecisionMix mix;
    mix.device = device;
    const trace::KernelEvents& k = data.kernels;
    std::unordered_map<trace::StringId, KernelClass> classes;
    // Per (name, precision, from operator): a name may run under fp32 and bf16 operators.
    std::map<std::tuple<trace::StringId, P, bool>, KernelNameTime> byName;
    std::array<Intervals, kKernelPrecisionCount> byPrecision;
    Intervals all, classified, full;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] != device || k.category[i] != trace::KernelCategory::Compute ||
            k.endNs[i] < k.startNs[i]) {
            continue;
        }
        auto it = classes.find(k.name[i]);
        if (it == classes.end()) {
            it = classes.emplace(k.name[i], classifyKernelName(data.string(k.name[i]))).first;
        }
        bool fromOperator = false;
        const KernelClass c = classOf(data, i, it->second, fromOperator);
        if (c.kind == MathKind::None) {
            continue;
        }
        if (fromOperator) {
            ++mix.operatorClassifiedKernels;
            mix.operatorFloatKernels += c.precision == P::Fp32 ? 1 : 0;
        }
        const std::pair<int64_t, int64_t> iv{k.startNs[i], k.endNs[i]};
        ++mix.mathKernels;
        mix.convolutionKernels += c.kind == MathKind::Convolution ? 1 : 0;
        all.push_back(iv);
        byPrecision[size_t(c.precision)].push_back(iv);
        ++mix.kernelsByPrecision[size_t(c.precision)];
        if (c.precision != P::Unknown) {
            classified.push_back(iv);
        }
        if (isFullPrecision(c.precision)) {
            full.push_back(iv);
        }
        KernelNameTime& n = byName[{k.name[i], c.precision, fromOperator}];
        n.precision = c.precision;
        n.fromOperator = fromOperator;
        n.timeNs += iv.second - iv.first;
        ++n.kernels;
    }
    mix.mathNs = unionLength(std::move(all));
    for (size_t p = 0; p < kKernelPrecisionCount; ++p) {
        mix.nsByPrecision[p] = unionLength(std::move(byPrecision[p]));
    }
    mix.classifiedKernels = classified.size();
    mix.classifiedNs = unionLength(std::move(classified));
    mix.fullPrecisionKernels = full.size();
    mix.fullPrecisionNs = unionLength(std::move(full));
    std::vector<KernelNameTime> fullNames, unknownNames;
    for (auto& [key, n] : byName) {
        n.name = std::string(data.string(std::get<0>(key)));
        if (isFullPrecision(n.precision)) {
            fullNames.push_back(n);
        } else if (n.precision == P::Unknown) {
            unknownNames.push_back(n);
        }
    }
    mix.topFullPrecision = topNames(std::move(fullNames), 5);
    mix.topUnknown = topNames(std::move(unknownNames), 3);
    return mix;
}

}  // namespace vramscope::analysis
