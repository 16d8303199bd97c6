#pragma once
// vramscope-cli batch-fit as options, a result and a printer: peak memory fitted against batch
// size over runs of one job, and the largest batch that fits.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli_command.h"
#include "vramscope/analysis/memory/batch_fit.h"

namespace vramscope::app {

/// One FILE:BATCH argument.
struct BatchRun {
    std::string file;
    double batch = 0;  ///< samples per step, > 0
};

/// The command line of `batch-fit`: FILE:BATCH FILE:BATCH... [--capacity BYTES|GPU] [--json].
struct BatchFitOptions {
    std::vector<BatchRun> runs;        ///< at least two
    std::optional<uint64_t> capacity;  ///< --capacity, bytes; default the smallest the traces name
    bool json = false;
};

/// Parses ctx.args. nullopt with `exitCode` set when the command is done: kExitSuccess after
/// --help, kExitUsage after a usage error (written to ctx.err): fewer than two runs, an argument
/// that is not FILE:BATCH with a positive BATCH, a bad --capacity.
std::optional<BatchFitOptions> parseBatchFitOptions(CommandContext& ctx, int& exitCode);

/// Opens and analyses each run (one job per file) and fits its peak, the highest max(peak
/// reserved, peak allocated) over its GPUs, against its batch (analysis::fitBatch), with a
/// warning first for each pair of inputs that are one run (the same file or the same bytes).
/// nullopt with `exitCode` set and the reason written to ctx.err: kExitUnreadable for a run that
/// cannot be read or analysed, kExitCheckFailed for runs whose memory climbs every iteration
/// (a staircase: their peak depends on how long they ran), kExitUsage when no capacity is known
/// or fitBatch refuses the points.
std::optional<analysis::BatchFit> fitBatchRuns(CommandContext& ctx, const BatchFitOptions& options,
                                               int& exitCode);

/// kExitSuccess when a batch fits under 100 % of the capacity, else kExitCheckFailed (no batch
/// fits, or no answer can be derived: a script never reads "fits" from a fit that cannot say).
int batchFitExitCode(const analysis::BatchFit& fit);

/// The points, the fitted line, the capacity, the largest batches under 80 % and 100 % and the
/// warnings as text, or JSON: {"points": [{"file", "batch", "peak_bytes"}],
/// "slope_bytes_per_sample", "intercept_bytes", "r_squared", "capacity_bytes",
/// "largest_batch_under_80_pct", "largest_batch_under_100_pct" (null without an answer),
/// "largest_measured_batch", "smallest_measured_batch", "distinct_batch_sizes",
/// "r_squared_threshold", "warnings"}.
void printBatchFit(const analysis::BatchFit& fit, bool json, std::ostream& os);

}  // namespace vramscope::app
