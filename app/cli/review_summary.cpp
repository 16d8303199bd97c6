#include "review_summary.h"

#include <algorithm>
#include <cstdint>

namespace vramscope::app {

namespace {

size_t indentOf(const std::string& s) {
    const size_t n = s.find_first_not_of(' ');
    return n == std::string::npos ? 0 : n;
}

}  // namespace

std::vector<std::string> wrapLine(const std::string& line, size_t columns) {
    std::vector<std::string> out;
    const size_t indent = indentOf(line);
    std::string rest = line;
    std::string lead;  // the indentation of continuation lines
    columns = std::max<size_t>(columns, indent + 24);
    while (lead.size() + rest.size() > columns) {
        const size_t room = columns - lead.size();
        size_t cut = rest.rfind(' ', room);
        if (cut == std::string::npos || cut <= indentOf(rest))
            cut = room;  // one long word
        out.push_back(lead + rest.substr(0, cut));
        rest = rest.substr(cut);
        rest.erase(0, rest.find_first_not_of(' '));
        lead.assign(indent + 4, ' ');
    }
    out.push_back(lead + rest);
    return out;
}

std::vector<std::string> summaryLines(const std::vector<ReportLine>& report) {
    std::vector<std::string> kept;
    size_t devices = 0;
    size_t advice = 0;
    std::string heading;         // the GPU's "rank R GPU G:", until its first kept line
    size_t moreGpus = SIZE_MAX;  // where the line on the GPUs left out goes
    for (const ReportLine& line : report) {
        if (line.role == SummaryRole::Omit) {
            continue;
        }
        if (line.role == SummaryRole::Heading) {
            ++devices;
            heading = devices <= kReviewSummaryDevices ? line.text : std::string();
            if (devices == kReviewSummaryDevices + 1) {
                moreGpus = kept.size();  // says how many more once they are counted
                kept.emplace_back();
            }
            continue;
        }
        if (line.part == ReportPart::Device) {
            if (devices > kReviewSummaryDevices) {
                continue;
            }
            if (heading.empty()) {
                kept.push_back(line.text);
            } else {
                kept.push_back(heading + " " + line.text.substr(indentOf(line.text)));
                heading.clear();
            }
            continue;
        }
        if (line.role == SummaryRole::Entry && ++advice > kReviewSummaryAdvice) {
            continue;  // the report lists advice most severe first
        }
        if (line.part == ReportPart::Cost && advice > kReviewSummaryAdvice) {
            kept.push_back("  ... " + std::to_string(advice - kReviewSummaryAdvice) +
                           " more (vramscope-cli report lists them all)");
            advice = kReviewSummaryAdvice;  // said once
        }
        kept.push_back(line.text);
    }
    if (advice > kReviewSummaryAdvice) {
        kept.push_back("  ... " + std::to_string(advice - kReviewSummaryAdvice) +
                       " more (vramscope-cli report lists them all)");
    }
    if (moreGpus < kept.size()) {
        kept[moreGpus] = "  ... " + std::to_string(devices - kReviewSummaryDevices) +
                         " more GPUs (vramscope-cli report lists them all)";
    }
    // The table's blank line before the data-loss section is kept; trailing blanks are not.
    while (!kept.empty() && kept.back().empty()) {
        kept.pop_back();
    }
    return kept;
}

std::vector<std::string> reviewSummaryLines(const JobReport& report,
                                            const std::vector<std::string>& skipped,
                                            size_t columns) {
    const ReportText text = reportText(report);
    std::vector<std::string> lines;
    for (const std::string& line : summaryLines(text.lines())) {
        std::vector<std::string> pieces = wrapLine(line, columns);
        if (pieces.size() > kReviewSummaryLinesPerEntry) {
            pieces.resize(kReviewSummaryLinesPerEntry);
            pieces.back() += " ...";
        }
        for (std::string& piece : pieces)
            lines.push_back(std::move(piece));
    }
    if (!skipped.empty()) {
        lines.emplace_back();
        lines.push_back("views left out (nothing to show):");
        for (const std::string& s : skipped) {
            for (std::string& piece : wrapLine("  " + s, columns))
                lines.push_back(std::move(piece));
        }
    }
    return lines;
}

}  // namespace vramscope::app
