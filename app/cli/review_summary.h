#pragma once
// The review report's summary page: the lines of `vramscope-cli report`'s text that answer a
// reviewer's first questions (job, GPUs, peaks and share of capacity, leak verdicts, compute,
// communication and idle, advice and cost), taken from the report's own text so that the page
// and the report never say different things. No Qt.

#include <string>
#include <vector>

#include "device_report.h"

namespace vramscope::app {

/// What fits one page: devices listed one by one (past this, a line says how many more there
/// are), advice entries (the most severe, as the report orders them), and wrapped lines per
/// entry (the rest is in the report).
inline constexpr size_t kReviewSummaryDevices = 4;
inline constexpr size_t kReviewSummaryAdvice = 5;
inline constexpr size_t kReviewSummaryLinesPerEntry = 3;

/// The summary lines of `report` (its writeTextReport text, filtered), each wrapped at `columns`
/// characters with continuation lines indented under their first, at most
/// kReviewSummaryLinesPerEntry lines each (then "..."). `skipped` lists, one sentence
/// each, the views the review leaves out ("lanes: no kernels were recorded"); they come last.
std::vector<std::string> reviewSummaryLines(const JobReport& report,
                                            const std::vector<std::string>& skipped,
                                            size_t columns = 150);

/// `text`'s lines whose content is kept on the summary (exposed for tests): the device table and
/// its note, the data loss, per device its OUT OF MEMORY, leak verdict and time lines (the first
/// after the device's heading, on one line), the job's coverage and straggler lines, the first
/// advice entries and the cost.
std::vector<std::string> summaryOfReportText(const std::string& text);

/// `line` cut into pieces of at most `columns` characters at spaces; the pieces after the first
/// are indented 4 more than `line` is.
std::vector<std::string> wrapLine(const std::string& line, size_t columns);

}  // namespace vramscope::app
