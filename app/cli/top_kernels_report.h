#pragma once
// Top kernels in vramscope-cli's report: the JSON object top_kernels of a device and its text
// table (analysis/top_kernels.h computes them).

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "vramscope/analysis/time/top_kernels.h"

namespace vramscope::app {

/// {"busy_ns", "launches", "names" (distinct rows before the limit), "kernels": [{"name",
/// "category", "count", "total_ns", "max_ns", "busy_share"}] (largest total first, the rows
/// topKernels kept), "other": {"names", "count", "total_ns", "busy_share"} (the rows past them,
/// summed; names 0 when none), "categories": [{"category", "count", "total_ns", "max_ns",
/// "busy_share"}]}. Durations in ns, busy_share = total_ns / busy_ns (0..1, can sum above 1 with
/// concurrent kernels).
nlohmann::ordered_json topKernelsJson(const analysis::DeviceKernelTimes& t);

/// The first `rows` kernels as a table (kernel, category, launches, total, share of busy, max),
/// the rest as one "other N kernels" line, and the categories on one line, with the formulas.
void writeTopKernelsText(const analysis::DeviceKernelTimes& t, std::ostream& os, size_t rows = 10);

}  // namespace vramscope::app
