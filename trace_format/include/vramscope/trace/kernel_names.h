#pragma once
// What a GPU kernel's name tells about NCCL / RCCL: whether it is a communication kernel, the
// collective function it runs and the algorithm it was built for. One rule for the importers
// (Kineto, Nsight Systems), the analyses and the capture agent. Header-only and free of any
// library, so the agent can use it without a new runtime dependency.

#include <array>
#include <cstddef>
#include <string_view>

namespace vramscope::trace {

/// True for NCCL / RCCL kernels: the name (mangled or not) contains "nccl" or "rccl" in any
/// case. Covers ncclKernel_<Func>_... (NCCL 2.8-2.18), ncclDevKernel_<Func>... (2.19+),
/// ncclSymkDevKernel_... (symmetric kernels, 2.27+), RCCL's own kernels (which keep NCCL's names
/// or start with "rccl"), and the mangled forms (_Z29ncclDevKernel_...).
constexpr bool isCommunicationKernel(std::string_view name) noexcept {
    // ASCII case folding by OR 0x20: only 'N'/'n', 'C'/'c', ... fold onto these letters.
    for (size_t i = 0; i + 4 <= name.size(); ++i) {
        const char c = static_cast<char>(name[i] | 0x20);
        if ((c == 'n' || c == 'r') && (name[i + 1] | 0x20) == 'c' && (name[i + 2] | 0x20) == 'c' &&
            (name[i + 3] | 0x20) == 'l') {
            return true;
        }
    }
    return false;
}

namespace detail {
constexpr bool isAsciiAlnum(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
}  // namespace detail

/// The NCCL function in an NCCL / RCCL kernel name: the letters and digits after the first of
/// "ncclKernel_", "ncclDevKernel_", "ncclSymkDevKernel_" found anywhere in the name (so mangled
/// names work too). "ncclKernel_AllReduce_RING_LL_Sum_float" -> "AllReduce",
/// "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096>)" -> "SendRecv",
/// "ncclDevKernel_Generic" -> "Generic". Empty when the name has no such prefix.
/// Source: kernel names of NCCL src/collectives/device (2.8-2.18) and src/device/generate.py
/// (2.19+).
constexpr std::string_view collectiveFromKernelName(std::string_view kernelName) noexcept {
    constexpr std::array<std::string_view, 3> kPrefixes{"ncclKernel_", "ncclDevKernel_",
                                                        "ncclSymkDevKernel_"};
    for (std::string_view prefix : kPrefixes) {
        const size_t at = kernelName.find(prefix);
        if (at == std::string_view::npos) {
            continue;
        }
        const size_t start = at + prefix.size();
        size_t end = start;
        while (end < kernelName.size() && detail::isAsciiAlnum(kernelName[end])) {
            ++end;
        }
        if (end > start) {
            return kernelName.substr(start, end - start);
        }
    }
    return {};
}

/// The algorithm an NCCL kernel name tells, "" when it tells none.
/// NOTE(nccl): NCCL builds one specialised kernel per algorithm, always with the LL protocol,
/// and that kernel runs the launch's first operation whatever protocol NCCL chose (2.8-2.18:
/// src/collectives/device/common.h "Only generate inline kernels for LL", enqueue.cc ncclKerns;
/// 2.19+: src/device/generate.py best_kernel). So the protocol in the name is never the one
/// that ran and is not taken. The algorithm is: "ncclKernel_<Func>_<ALGO>_LL_..." (2.8-2.18)
/// names the algorithm of the launch's first operation, except SendRecv_RING_SIMPLE, which is
/// also NCCL's generic kernel; "ncclDevKernel_*" (2.19+) has a TREE kernel and one "RING" kernel
/// that runs every other algorithm (ring, NVLS, CollNet, PAT), so only TREE is told there.
constexpr std::string_view algorithmFromKernelName(std::string_view name) noexcept {
    constexpr std::string_view kOld = "ncclKernel_";
    constexpr std::string_view kNew = "ncclDevKernel_";
    if (const size_t at = name.find(kOld); at != std::string_view::npos) {
        std::string_view rest = name.substr(at + kOld.size());
        const size_t funcEnd = rest.find('_');
        if (funcEnd == std::string_view::npos || rest.substr(0, funcEnd) == "SendRecv") {
            return {};
        }
        rest.remove_prefix(funcEnd + 1);
        // Longest first: COLLNET_DIRECT before COLLNET, NVLS_TREE before NVLS.
        constexpr std::array<std::string_view, 7> kAlgorithms{
            "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "COLLNET", "NVLS", "TREE", "RING"};
        for (std::string_view a : kAlgorithms) {
            if (rest.size() > a.size() && rest.starts_with(a) && rest[a.size()] == '_') {
                return a;
            }
        }
        return {};
    }
    if (const size_t at = name.find(kNew); at != std::string_view::npos) {
        const std::string_view rest = name.substr(at + kNew.size());
        const std::string_view base = rest.substr(0, rest.find('('));
        if (base.find("_TREE_LL") != std::string_view::npos) {
            return "TREE";
        }
    }
    return {};
}

}  // namespace vramscope::trace
