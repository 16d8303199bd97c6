#pragma once
// What one sweep run does inside its child process: open the input as `vramscope-cli report`
// does (trace::openJob), run the report's analyses and write the report (text and JSON, thrown
// away), and say how it ended through the exit status and one line on a pipe.

#include <string>

namespace vramscope_sweep {

/// Exit statuses of a load child; any other ending (a signal, another status) is a failure.
enum LoadExit : int {
    kExitRefused = 10,      ///< openJob returned an Error whose file names the input
    kExitLoadedLoss = 11,   ///< loaded; a data-loss record or a skipped input says what is missing
    kExitLoadedClean = 12,  ///< loaded with no loss reported
    kExitUnclearRefusal = 13,  ///< an Error that does not name the input
    kExitException = 14,       ///< an exception escaped the reader or the analyses
};

/// Loads `path` and analyses it; writes "DETAIL\n" (the error, or the first loss, at most 300
/// characters) to `reportFd`, then returns one of LoadExit. Runs in a forked child only.
int loadAndAnalyse(const std::string& path, int reportFd);

}  // namespace vramscope_sweep
