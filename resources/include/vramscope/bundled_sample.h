#pragma once
// The bundled sample job (resources/sample/*.vscope, one file per rank), compiled into the
// binaries. How it was made is in resources/README.md.

#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope {

struct BundledFile {
    std::string_view name;   ///< file name, e.g. "sample-rank0.vscope"
    std::string_view bytes;  ///< the whole .vscope file
};

/// The bundled sample's rank files, in rank order.
const std::vector<BundledFile>& bundledSampleTraces();

/// Prefix of RankTrace::path for the bundled sample's ranks ("bundled:sample-rank0.vscope").
inline constexpr std::string_view kBundledPathPrefix = "bundled:";

/// Reads the bundled sample into a job (rank order, clock offsets 0, rankSource "header").
/// Fails only if the bundled bytes cannot be read (a broken build); the Error names the file.
trace::Result<trace::Job> openBundledSample();

}  // namespace vramscope
