#pragma once
// What fake_cupti_harness.cpp delivers to the agent through the fake CUPTI, shared with the test
// that reads the traces (fake_cupti_test.cpp). Plain numbers and names only: the harness builds
// CUPTI records from them, the test derives what the trace must hold from them by its own rules
// (names demangled by hand, sizes and times by the formulas below).
//
// Times: CUPTI's clock follows CLOCK_REALTIME, so every record time of a run is the run's base
// (the harness's CLOCK_REALTIME at start minus 60 s, rounded down to a millisecond, logged as
// "harness base_ns=...") plus the offsets below, which keeps records, the agent's own samples and
// CUPTI's clock within one minute of each other, as on a GPU.

#include <cstdint>

namespace vramscope::test::fake_plan {

/// The first record's time, ns after the run's base. The records describe work before delivery.
inline constexpr uint64_t kT0 = 1'000'000'000ull;

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

// --- forced_mid_run: kernels still on the GPU when an allocation fails ---
inline constexpr int kInFlightKernels = 100;

// --- fill_buffers: a thread whose current buffer always holds a kernel in flight ---
/// Batches of kFillPerBatch kernels every kFillPeriodMs: kFillPerBatch - 1 complete, the last one
/// in flight until the next batch (12,000 kernels a second, a busy main
/// thread's rate: docs/DESIGN.md "How CUPTI hands buffers back").
inline constexpr int kFillBatches = 20;
inline constexpr int kFillPerBatch = 601;
inline constexpr int kFillPeriodMs = 50;
/// Kernels delivered at least 200 ms before the last batch (batches 0..15): a buffer that comes
/// back within 0.2 s has them all in the file when the job is killed 500 ms after the last batch.
inline constexpr int kFillKept = (kFillBatches - 4) * kFillPerBatch;

// --- vmm: PyTorch's expandable segments (cuMemCreate + cuMemMap of 20 MiB pages) ---
inline constexpr int kVmmPages = 3;
inline constexpr uint64_t kVmmPageBytes = 20ull << 20;
inline constexpr uint64_t kVmmBase = 0x7e0000000000ull;
inline constexpr uint64_t vmmHandle(int page) {
    return 0x1000u + static_cast<uint64_t>(page);
}
/// Page kVmmUnmapped is unmapped and released again before the job ends.
inline constexpr int kVmmUnmapped = 1;

}  // namespace vramscope::test::fake_plan
