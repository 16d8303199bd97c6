#pragma once
// vramscope-run --sweep: runs the command once per value and reports the largest stable one.
// The rules are in common/sweep.h; this file runs the processes, reads the traces and calls
// vramscope-cli batch-fit. Single-threaded.

#include <string>

#include "launch_options.h"

namespace vramscope::capture {

/// Runs the sweep `options.sweep` with the agent at `agentPath`: one run per value into
/// <options.output>/<NAME>-<V>/, stopping at the first run that is not Finished (judgeSweepRun),
/// then prints sweepSummaryText and `vramscope-cli batch-fit` over the finished runs with traces
/// on stdout (progress and the command's own stderr go to stderr). Returns a kSweepExit* code.
int runSweep(const RunOptions& options, const std::string& agentPath);

}  // namespace vramscope::capture
