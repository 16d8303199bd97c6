#pragma once
// What fake_cupti_harness.cpp delivers to the agent through the fake CUPTI, shared with the test
// that reads the traces (fake_cupti_test.cpp). Plain numbers and names only: the harness builds
// CUPTI records from them, the test derives what the trace must hold from them by its own rules
// (names demangled by hand, sizes and times by the formulas below).

#include <cstdint>

namespace vramscope::test::fake_plan {

/// The first record's time, ns on the CUPTI clock. The records describe work before delivery.
inline constexpr uint64_t kT0 = 50'000'000'000ull;

// --- kernels (CUpti_ActivityKernel10, kind CONCURRENT_KERNEL) ---
inline constexpr int kKernels = 1000;
inline constexpr const char* kKernelNames[] = {
    "_Z6matmulPfS_S_i",  // demangles to "matmul(float*, float*, float*, int)"
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL",  // NCCL's: category Communication
    "elementwise_add",                          // not mangled: kept as it is
};
inline constexpr int kKernelNameCount = 3;
inline constexpr uint64_t kernelStartNs(int i) {
    return kT0 + static_cast<uint64_t>(i) * 20'000ull;
}
inline constexpr uint64_t kernelEndNs(int i) {
    return kernelStartNs(i) + 5'000ull + static_cast<uint64_t>(i % 7) * 1'000ull;
}
inline constexpr uint64_t kernelQueuedNs(int i) {
    return kernelStartNs(i) - 2'000ull;
}
inline constexpr uint32_t kernelStream(int i) {
    return 13u + static_cast<uint32_t>(i % 3);
}
inline constexpr uint32_t kernelCorrelation(int i) {
    return 1'000u + static_cast<uint32_t>(i);
}

// --- device memory (CUpti_ActivityMemory4, kind MEMORY2): 5 cudaMalloc, then 5 cudaFree ---
inline constexpr int kAllocations = 5;
inline constexpr uint64_t allocationAddress(int k) {
    return 0x7f0000000000ull + static_cast<uint64_t>(k) * 0x10000000ull;
}
inline constexpr uint64_t allocationBytes(int k) {
    return (static_cast<uint64_t>(k) + 1) * (2ull << 20) + 512ull * static_cast<uint64_t>(k);
}
inline constexpr uint64_t allocationNs(int k) {
    return kT0 + 1'000ull + static_cast<uint64_t>(k) * 100'000ull;
}
inline constexpr uint64_t releaseNs(int k) {
    return kT0 + 15'000'000ull + static_cast<uint64_t>(k) * 100'000ull;
}

// --- NVTX (CUpti_ActivityMarker2): "forward" holds "attention"; "backward" after them ---
struct PlannedRange {
    const char* name;
    uint32_t id;
    uint64_t startNs;
    uint64_t endNs;
    uint32_t depth;  ///< ranges open on the thread when it started
};
inline constexpr uint32_t kNvtxThread = 4242;
inline constexpr PlannedRange kRanges[] = {
    {"forward", 1, kT0 + 100, kT0 + 5'000'000, 0},
    {"attention", 2, kT0 + 200'000, kT0 + 900'000, 1},
    {"backward", 3, kT0 + 6'000'000, kT0 + 9'000'000, 0},
};
inline constexpr int kRangeCount = 3;

// --- the out-of-memory scenarios: one cudaMalloc size ---
inline constexpr uint64_t kOomRequestBytes = 3ull << 30;

}  // namespace vramscope::test::fake_plan
