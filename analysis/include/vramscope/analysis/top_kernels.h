#pragma once
// Where a GPU's busy time goes: kernel time per kernel name and per category, sorted.
//
// busy = |union of all kernel intervals on the device| (DESIGN.md metric definitions); a kernel's
// share = its summed durations / busy. Concurrent kernels (several streams) make the shares sum
// above 100 %.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// Time of one kernel name (or one category) on one GPU.
struct KernelTime {
    std::string name;  ///< the kernel's name as the trace has it; for a category row its name
    trace::KernelCategory category = trace::KernelCategory::Compute;
    size_t count = 0;      ///< launches
    int64_t totalNs = 0;   ///< summed durations
    int64_t maxNs = 0;     ///< longest launch
    double busyShare = 0;  ///< totalNs / busyNs
};

/// One GPU's kernels.
struct DeviceKernelTimes {
    trace::DeviceIndex device{0};
    int64_t busyNs = 0;                  ///< union of its kernel intervals
    size_t kernelNames = 0;              ///< distinct names before the limit
    std::vector<KernelTime> byName;      ///< largest totalNs first, at most `limit` rows
    std::vector<KernelTime> byCategory;  ///< every category with kernels, largest first
};

/// The kernels of every device of `data`, in device order; `limit` caps byName (0 = no cap).
/// Time O(n log n) in the kernels.
std::vector<DeviceKernelTimes> topKernels(const trace::TraceData& data, size_t limit = 20);

/// "compute", "communication", "memcpy", "memset".
const char* kernelCategoryName(trace::KernelCategory category);

}  // namespace vramscope::analysis
