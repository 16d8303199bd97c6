#pragma once
// Where a GPU's busy time goes: kernel time per kernel name and per category, sorted.
//
// busy = |union of all kernel intervals on the device| (kernels, copies and memsets: docs/DESIGN.md
// "Metric definitions", the same busy as TimeBreakdown::busyNs); a kernel's share = its summed
// durations / busy. Concurrent kernels (several streams) make the shares sum above 100 %.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// Time of one kernel name (or one category) on one GPU. Durations in ns.
struct KernelTime {
    std::string name;  ///< the kernel's name as the trace has it; for a category row its name
    trace::KernelCategory category = trace::KernelCategory::Compute;
    size_t count = 0;      ///< launches
    int64_t totalNs = 0;   ///< summed durations (end - start), overlaps counted each time
    int64_t maxNs = 0;     ///< longest launch
    double busyShare = 0;  ///< totalNs / busyNs; 0 when busyNs is 0
};

/// One GPU's kernels: plain values, built by topKernels and handed to reports and views.
struct DeviceKernelTimes {
    trace::DeviceIndex device{0};
    int64_t busyNs = 0;                  ///< |union of its kernel intervals|, ns
    size_t kernels = 0;                  ///< launches counted (kernels, copies, memsets)
    size_t kernelNames = 0;              ///< distinct (name, category) rows before the limit
    std::vector<KernelTime> byName;      ///< largest totalNs first, at most `limit` rows
    std::vector<KernelTime> byCategory;  ///< every category with kernels, largest first
    /// The rows past the limit, summed: their number, launches, durations (ns) and share.
    size_t otherNames = 0;
    size_t otherCount = 0;
    int64_t otherTotalNs = 0;
    double otherBusyShare = 0;
};

/// The kernels of every device of `data` with at least one kernel, in device order; `limit`
/// caps byName (0 = no cap), the rest summed in the other* fields. A row is one (name,
/// category): the same name under two categories gives two rows. Ties in totalNs: name order.
/// Kernels with end < start are skipped (as computeTimeBreakdowns does); zero-length ones count
/// as launches of 0 ns. Time O(n log n) in the kernels, memory O(n) for the busy union.
std::vector<DeviceKernelTimes> topKernels(const trace::TraceData& data, size_t limit = 20);

}  // namespace vramscope::analysis
