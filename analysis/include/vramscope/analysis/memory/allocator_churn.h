#pragma once
// Allocator churn: reserved segments handed back to the driver and taken again inside training
// iterations (PyTorch's analogue of frequent garbage collection), per iteration of one device.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/time/iterations.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// The reserved-level events of one iteration. Bytes and counts of events inside
/// [startNs, endNs); time in ns of the trace's clock.
struct IterationChurn {
    size_t index = 0;    ///< position in IterationSet::iterations (0 = the warm-up iteration)
    int64_t number = 0;  ///< Iteration::number
    trace::TimestampNs startNs = 0;
    trace::TimestampNs endNs = 0;
    uint64_t segmentAllocs = 0;  ///< snapshot segment_alloc / segment_map, CUPTI cudaMalloc
    uint64_t segmentFrees = 0;   ///< snapshot segment_free / segment_unmap, CUPTI cudaFree
    uint64_t allocBytes = 0;
    uint64_t freeBytes = 0;
    uint64_t emptyCacheFrees = 0;  ///< segment frees with an isEmptyCacheFrame in their stack
    /// Device idle time around the frees: the summed length of the idle gaps of the iteration
    /// (computeWindowBreakdowns over [startNs, endNs)) that contain the time of at least one of
    /// its segment frees (gap start <= t <= gap end); -1 = unknown (no kernel on the device).
    int64_t syncIdleNs = -1;
    /// Segments were freed and allocated again inside the iteration (frees >= 1 and allocs >= 1).
    bool churns() const { return segmentAllocs > 0 && segmentFrees > 0; }
};

/// What the allocator-churn rule looks at on one device. Plain data, built by allocatorChurn;
/// held by DeviceAnalysis.
struct AllocatorChurn {
    trace::DeviceIndex device{0};
    /// Whether the per-iteration figures below can be built: the device has reserved-level
    /// events with addresses and an iteration structure. When false, `reason` says what is missing.
    bool assessable = false;
    std::string reason;
    /// Every iteration of the set in order; the first is the warm-up (segments are reserved there
    /// legitimately as the caching allocator fills) and is left out of the counts below.
    std::vector<IterationChurn> iterations;
    size_t steadyIterations = 0;  ///< iterations after the first
    size_t churnIterations = 0;   ///< steady iterations that churns()
    /// Sums over the steady iterations.
    uint64_t segmentAllocs = 0;
    uint64_t segmentFrees = 0;
    uint64_t allocBytes = 0;
    uint64_t freeBytes = 0;
    uint64_t emptyCacheFrees = 0;
    /// Whether syncIdleNs is known (the device ran kernels); when not, timeUnknownReason says why
    /// (a PyTorch memory snapshot records no kernels).
    bool timeKnown = false;
    std::string timeUnknownReason;
    int64_t syncIdleNs = 0;  ///< summed over the steady iterations, when timeKnown

    /// churnIterations / steadyIterations, 0 without steady iterations.
    double churnShare() const {
        return steadyIterations > 0 ? double(churnIterations) / double(steadyIterations) : 0.0;
    }
};

/// True when a frame name is PyTorch's cache release: the Python `torch.cuda.empty_cache`
/// (frame name "empty_cache", torch/cuda/memory.py) or the C++
/// `c10::cuda::CUDACachingAllocator::emptyCache` (any frame whose name contains "empty_cache" or
/// "emptyCache", e.g. "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::
/// emptyCache(...)"). Names from PyTorch's c10/cuda/CUDACachingAllocator.cpp and
/// torch/cuda/memory.py.
bool isEmptyCacheFrame(std::string_view name);

/// The churn of `device` over `iterations`. Counted: MemoryLevel::Reserved events of the device
/// (PreExisting memory, reconstructed at the trace's start, is not an event of the job) whose
/// time lies in an iteration [startNs, endNs). Events before the first iteration, between
/// iterations or after the last are in none. Not assessable (reason set) without reserved-level
/// alloc events carrying an address (liveSetEvidence), or with an empty iteration set.
/// With kernels on the device, syncIdleNs per iteration as IterationChurn says; it is a lower
/// bound of the cost (the host time spent in cudaMalloc while kernels still run is not in it).
/// O(events + kernels log kernels + iterations x log kernels).
AllocatorChurn allocatorChurn(const trace::TraceData& data, trace::DeviceIndex device,
                              const IterationSet& iterations);

}  // namespace vramscope::analysis
