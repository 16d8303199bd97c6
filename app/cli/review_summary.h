#pragma once
// The review report's summary page: the lines of `vramscope-cli report`'s text that answer a
// reviewer's first questions (job, GPUs, peaks and share of capacity, leak verdicts, compute,
// communication and idle, advice and cost), picked from the same ReportLine values the report
// prints (report_lines.h), so that the page and the report never say different things. No Qt.

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

/// The summary lines of `report` (summaryLines of its reportText), each wrapped at `columns`
/// characters with continuation lines indented under their first, at most
/// kReviewSummaryLinesPerEntry lines each (then "..."). `skipped` lists, one sentence
/// each, the views the review leaves out ("lanes: no kernels were recorded"); they come last.
std::vector<std::string> reviewSummaryLines(const JobReport& report,
                                            const std::vector<std::string>& skipped,
                                            size_t columns = 150);

/// The lines of the report (reportText) that the summary shows, in order: those of
/// SummaryRole::Keep (the head, the device table and its note, the data loss, per GPU its OUT OF
/// MEMORY, leak verdict, time and compute lines, the first after the GPU's heading joined to it
/// on one line; the job's coverage, the collectives' count and straggler lines, the advice and
/// the cost) and the first kReviewSummaryAdvice advice entries; GPUs past
/// kReviewSummaryDevices and further advice are counted on one line each. Exposed for tests.
std::vector<std::string> summaryLines(const std::vector<ReportLine>& report);

/// `line` cut into pieces of at most `columns` characters at spaces; the pieces after the first
/// are indented 4 more than `line` is.
std::vector<std::string> wrapLine(const std::string& line, size_t columns);

}  // namespace vramscope::app
