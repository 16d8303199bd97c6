#pragma once
// Opening any supported input: .vscope, PyTorch memory snapshot (pickle, .gz), Kineto / Chrome
// trace JSON (.json, .json.gz), a directory or several files forming one multi-rank job.

#include <string>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {

enum class InputFormat { Unknown, Vscope, PytorchSnapshot, KinetoJson };
const char* toString(InputFormat format);

/// Guesses the format from the first bytes (after gzip decompression), then the file name.
InputFormat detectFormat(std::string_view firstBytes, std::string_view fileName);

/// Opens one file of any supported format. Errors name the file and, where the format has one,
/// the byte offset. Importers report what they skipped in report.problems and data.dataLoss.
Result<LoadedTrace> openTrace(const std::string& path, const ReadOptions& options = {});

/// One rank of a job: a loaded trace and where it came from.
struct RankTrace {
    std::string path;
    InputFormat format = InputFormat::Unknown;
    LoadedTrace trace;
    /// Added to this rank's timestamps to put it on the job's common time axis (ns). Ranks on one
    /// host clock get 0.
    int64_t clockOffsetNs = 0;
    std::string rankSource;  ///< where the rank came from: "header", "file name", "unknown"
};

/// A training job: one trace per rank, sorted by rank (unknown ranks last, in path order).
struct Job {
    std::vector<RankTrace> ranks;
    std::vector<Error>
        skipped;  ///< inputs that could not be opened at all (the job opens without them)
};

/// Opens files and directories (a directory contributes its supported files, not recursing) as one
/// job. The rank of each file comes from its header / distributedInfo, else from its file name
/// (rank-N, rankN, workerN), else stays unknown. Fails only when no input could be opened.
Result<Job> openJob(const std::vector<std::string>& paths, const ReadOptions& options = {});

/// Rank parsed from a file name ("rank-3", "rank3", "rank_3", "worker3"), or kUnknownRank.
int32_t rankFromFileName(std::string_view fileName);

}  // namespace vramscope::trace
