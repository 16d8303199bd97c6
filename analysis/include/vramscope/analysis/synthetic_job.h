#pragma once
// A deterministic synthetic training job, for tests, demos and benchmarks.

#include <cstdint>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// Parameters of the synthetic job. Every figure is exact, so tests can derive expected values
/// from these numbers alone (see expectedPeakAllocatedBytes and friends).
struct SyntheticJobSpec {
    int ranks = 2;
    int iterations = 10;
    uint64_t seed = 1;
    uint64_t capacityBytes = 80ull << 30;     ///< per GPU (an 80 GiB part)
    uint64_t weightBytes = 4ull << 30;        ///< allocated once at start, per rank
    uint64_t optimizerBytes = 8ull << 30;     ///< allocated once at start, per rank
    int activationsPerIteration = 24;         ///< activation tensors allocated in forward
    uint64_t activationBytes = 256ull << 20;  ///< size of each activation tensor
    uint64_t leakBytesPerIteration = 0;       ///< kept alive every iteration (on leakRank)
    int leakRank = 0;                         ///< rank that leaks; -1 = all ranks
    uint64_t segmentBytes = 2ull << 30;       ///< reserved granularity (caching allocator)
    int64_t computeKernelNs = 400'000;        ///< duration of one compute kernel
    int computeKernelsPerIteration = 48;
    uint64_t allReduceBytes = 512ull << 20;  ///< gradient all-reduce message per iteration
    double busBandwidthBytesPerS = 100e9;    ///< NCCL bus bandwidth
    int stragglerRank = -1;                  ///< rank that starts each all-reduce late; -1 none
    int64_t stragglerDelayNs = 2'000'000;
    int64_t hostGapNs = 1'000'000;  ///< idle gap between iterations (host-bound)
};

/// Generates one TraceData per rank (header rank/world size set, one device per rank, NVTX
/// "iteration N" ranges, memory events at both levels with stacks, compute and NCCL all-reduce
/// kernels with matching collectives). Same spec, same output, byte for byte.
std::vector<trace::TraceData> generateSyntheticJob(const SyntheticJobSpec& spec);

}  // namespace vramscope::analysis
