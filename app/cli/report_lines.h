#pragma once
// The text of `vramscope-cli report` as values: each line with the part of the report it belongs
// to and whether the review's summary page shows it. The report's writers make the lines once
// (reportLines, device_report.h); `report` prints them all, `review` picks the summary ones
// (review_summary.h), so the two never say different things and nothing parses our own text.

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace vramscope::app {

/// The parts of the text report, in the order they are printed.
enum class ReportPart {
    Head,         ///< "vramscope report: N inputs, M devices"
    Table,        ///< the peak table, its note and the series' sources (or the no-GPU sentence)
    DataLoss,     ///< "data loss:" and one line per loss
    Analyses,     ///< "analyses (formulas in parentheses):"
    Device,       ///< one GPU's analyses, after its heading
    Job,          ///< the job's coverage and the cross-rank caveats
    Collectives,  ///< collectives across ranks
    Advice,       ///< "advice:" and its entries
    Checklist,    ///< the training checklist
    Cost,         ///< the cost estimate
};

/// What the review's summary page does with a line.
enum class SummaryRole {
    Omit,     ///< left out (the report has it)
    Keep,     ///< shown as printed
    Heading,  ///< a GPU's heading ("rank 0 GPU 1:"): not shown alone, but put before the GPU's
              ///< first kept line
    Entry,    ///< the first line of an advice entry: shown for the first entries only
};

/// One printed line (no newline; indentation included).
struct ReportLine {
    ReportPart part = ReportPart::Head;
    SummaryRole role = SummaryRole::Omit;
    std::string text;
};

/// Collects the report's lines: a writer prints into os() as into any stream, then says with
/// take() which part and role the lines written since the last take() have. Not thread-safe.
class ReportText {
public:
    std::ostream& os() { return m_pending; }

    /// Moves the complete lines written to os() since the last call into lines() as `part` with
    /// `role` (a text without a final newline counts as a last line all the same).
    void take(ReportPart part, SummaryRole role = SummaryRole::Omit) {
        std::string text = m_pending.str();
        m_pending.str({});
        m_pending.clear();
        size_t start = 0;
        while (start < text.size()) {
            size_t end = text.find('\n', start);
            if (end == std::string::npos) {
                end = text.size();
            }
            m_lines.push_back({part, role, text.substr(start, end - start)});
            start = end + 1;
        }
    }

    const std::vector<ReportLine>& lines() const { return m_lines; }

private:
    std::ostringstream m_pending;
    std::vector<ReportLine> m_lines;
};

}  // namespace vramscope::app
