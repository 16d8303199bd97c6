#pragma once
// The host side of the training checklist's "do not forget data-loader memory": one rank's host
// memory over its iterations (does it come back to the same baseline, or climb?) and its pinned
// host memory. Pure functions over one rank's TraceData; the result is plain data.
//
// The "host-memory" advice rule (advice_host_memory.cpp) reads a HostMemoryReport:
//  - Fired (Warning) when trend.verdict is Staircase: with the baselines b_k of n iterations,
//    s = Theil-Sen slope, growth = s x (n - 1), noise = 1.4826 x MAD of the residuals, growth >
//    max(noiseFactor x noise, minTotalGrowthBytes) and rising in >= minRisingFraction of the
//    iterations: the GPU leak's rule and thresholds (LeakOptions: 3.0, 1 MiB, 0.6), so that a
//    host staircase and a GPU staircase mean the same. The advice names the data-loader
//    pitfalls (PyTorch's DataLoader documentation, "multi-process data loading": forked workers
//    copy Python objects on read because reference counts write to their pages; pin_memory).
//  - Clear on a Sawtooth, with the same figures.
//  - NotAssessed without a host counter and without pinned allocations ("the trace records no
//    host memory"), with pinned allocations only (their peak is given, but there is no curve),
//    with fewer than minIterations iterations, or with growth that does not rise consistently.
// Pinned bytes are reported, not judged: a fair share of host RAM for pinned buffers depends on
// the machine's RAM, which no trace records, so there is no principled threshold to fire on.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/analysis/memory/leak.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/time/iterations.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// Which host series a report reads.
enum class HostSeriesSource {
    None,            ///< the trace records no host-memory counter
    ResidentBytes,   ///< CounterKind::HostResidentBytes: the process's resident set (capture)
    AllocatorBytes,  ///< CounterKind::HostAllocatedBytes: the CPU allocator's total (Kineto)
};
/// "none", "resident set", "CPU allocator's total".
const char* toString(HostSeriesSource source);

/// One rank's host memory. Built by analyzeHostMemory; read by the host-memory advice rule and
/// printed through text_format.h.
struct HostMemoryReport {
    HostSeriesSource source = HostSeriesSource::None;
    std::string counterName;  ///< the counter's name in the trace (e.g. "CPU Total Allocated")
    StepSeries series;        ///< the host series, bytes over the rank's clock; empty with None
    int64_t peakBytes = 0;    ///< highest value of `series` (0 when empty)
    trace::TimestampNs peakTimeNs = 0;
    /// The iterations the baselines are taken over (the rank's first GPU's IterationSet).
    IterationSource iterationSource = IterationSource::None;
    std::string iterationReason;  ///< IterationSet::reason when the source is None
    /// Per-iteration lowest (baseline) and highest value of `series` (leak.h iterationMemory).
    std::vector<IterationMemory> iterations;
    /// The trend of the baselines by the GPU leak's rules (leak.h baselineTrend): Staircase =
    /// host memory that grows every iteration beyond noise.
    BaselineTrend trend;
    /// Pinned (page-locked) host memory: memory events of MemoryKind::Pinned (CUPTI pinned
    /// records, nsys Pinned), as a running sum; its peak, bytes.
    uint64_t pinnedAllocations = 0;
    int64_t pinnedPeakBytes = 0;
    trace::TimestampNs pinnedPeakTimeNs = 0;

    /// Whether the trace records any host memory (a host counter or a pinned allocation).
    bool hasData() const { return source != HostSeriesSource::None || pinnedAllocations > 0; }
    /// baseline of the last iteration - baseline of the first (0 with fewer than 2), bytes.
    int64_t baselineChangeBytes() const;
};

/// One rank's host memory from `data`: the host series is the HostResidentBytes counter on
/// kHostDevice when there is one (what the process holds, Python objects and data-loader buffers
/// included), else the HostAllocatedBytes counter (tensors of the CPU allocator only). Baselines
/// per iteration of `iterations` (pass the rank's first GPU's IterationSet, so host and GPU agree
/// on what an iteration is) and their trend by `options` (the GPU leak's thresholds). Pinned
/// bytes from memory events of MemoryKind::Pinned on any device. Never fails: a trace without
/// host memory gives source None and no pinned allocations.
HostMemoryReport analyzeHostMemory(const trace::TraceData& data, const IterationSet& iterations,
                                   const LeakOptions& options = {});

}  // namespace vramscope::analysis
