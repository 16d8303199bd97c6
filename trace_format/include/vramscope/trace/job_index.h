#pragma once
// A job index (.vscope-index): every rank's header and summary and where its file is, so that a
// viewer opens a job of thousands of ranks without reading their events. Written by
// `vramscope-cli summarize`, one file at a time (so a cluster's own tools run it in parallel) and
// merged by `summarize --merge`. Layout: the .vscope framing (trace.proto), a header frame with
// producer kJobIndexProducer, then frames of JobIndexEntry messages.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {

/// FileHeader::producer of a job index.
inline constexpr std::string_view kJobIndexProducer = "vramscope-summarize";
/// File name suffix of a job index.
inline constexpr std::string_view kJobIndexSuffix = ".vscope-index";

/// One rank's file in a job index.
struct JobIndexEntry {
    std::string path;  ///< the rank's file, relative to the index's folder (or absolute)
    uint64_t fileBytes = 0;
    int64_t modifiedUnixNs = 0;  ///< the file's mtime when summarised
    TraceSummary summary;        ///< header included; empty when `problem` is set
    std::string problem;         ///< why the file could not be summarised, empty when it was
};

struct JobIndex {
    std::vector<JobIndexEntry> ranks;  ///< sorted by (rank, host, pid, path)
};

/// Writes `index` to `path` atomically (temporary file + rename). Errors name the path.
Status writeJobIndex(const std::string& path, const JobIndex& index);
/// Reads a job index; a damaged frame loses its entries and is reported in `report` (as
/// readTraceFile does). Unsupported when the file is a .vscope trace, not an index.
struct JobIndexRead {
    JobIndex index;
    ReadReport report;
};
Result<JobIndexRead> readJobIndex(const std::string& path, const ReadOptions& options = {});
/// True when `bytes` (a file's first bytes, at least the header frame) are a job index.
bool looksLikeJobIndex(std::string_view bytes);

/// Merges several indexes (the outputs of per-file summarize runs) into one; entries for the same
/// path keep the newest (modifiedUnixNs); paths are rebased from each input's folder onto
/// `outputDir`.
JobIndex mergeJobIndexes(std::vector<std::pair<std::string, JobIndex>> indexesByFolder,
                         const std::string& outputDir);

}  // namespace vramscope::trace
