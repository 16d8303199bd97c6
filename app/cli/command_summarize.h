#pragma once
// vramscope-cli summarize as options, a result and its writing: a job index (.vscope-index) of
// rank files' summaries, or the merge of several indexes.

#include <optional>
#include <string>
#include <vector>

#include "cli_command.h"
#include "vramscope/trace/job_index.h"
#include "vramscope/trace/progress.h"

namespace vramscope::app {

/// The command line of `summarize`: DIR|FILES... -o INDEX [--quiet], or --merge INDEX... -o INDEX.
struct SummarizeOptions {
    std::vector<std::string> inputs;  ///< rank files and directories, or with merge indexes
    std::string output;               ///< the index to write
    bool merge = false;
    bool quiet = false;  ///< no progress lines (problems are still written)
};

/// Parses ctx.args. nullopt with `exitCode` set when the command is done: kExitSuccess after
/// --help, kExitUsage after a usage error (no input, no -o).
std::optional<SummarizeOptions> parseSummarizeOptions(CommandContext& ctx, int& exitCode);

/// The index of the rank files, before it is written.
struct SummarizeResult {
    /// One entry per file (a directory gives its trace files, in name order), each with its
    /// stored summary, or one computed from its events, or its problem; paths relative to the
    /// folder of SummarizeOptions::output; in mergeJobIndexes' order.
    trace::JobIndex index;
    bool problems = false;  ///< a file or directory could not be read (written to ctx.err)
};

/// Summarises every input of `options` (not merge), one file at a time; problems and what a
/// reader lost go to ctx.err. `progress` hears after each file: the share of files done and
/// "I/N FILE: how it was summarised".
SummarizeResult summarizeInputs(CommandContext& ctx, const SummarizeOptions& options,
                                const trace::Progress& progress = {});

}  // namespace vramscope::app
