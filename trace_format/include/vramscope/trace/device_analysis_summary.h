#pragma once
// The whole-file analyses of one device as a summary frame stores them (trace/summary.h); on its
// own so that the writer's API (trace_file.h) can take them without the rest of the summaries.

#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::trace {

/// What the whole-file analyses found on one device, stored by a tool that ran them on every event
/// (convert, synth, summarize). Strings are the analyses' own names (analysis::toString of
/// IterationSource and LeakVerdict), so the summary needs no analysis code to be read.
struct DeviceAnalysisSummary {
    DeviceIndex device{0};
    std::string iterationSource;
    std::string iterationReason;
    std::vector<TimestampNs> iterationStartNs;
    std::vector<TimestampNs> iterationEndNs;
    std::vector<int64_t> baselineBytes;       ///< per iteration (analysis::IterationMemory)
    std::vector<int64_t> iterationPeakBytes;  ///< per iteration
    std::string leakVerdict;
    double slopeBytesPerIteration = 0.0;
    int64_t growthBytes = 0;
    std::string leakReason;
    std::string analysedBy;  ///< e.g. "vramscope-cli 0.4.0 convert"
};

}  // namespace vramscope::trace
