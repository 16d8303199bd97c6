#include "review_summary.h"

#include <algorithm>
#include <sstream>

namespace vramscope::app {

namespace {

bool startsWith(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

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

std::vector<std::string> summaryOfReportText(const std::string& text) {
    // The report's sections (writeTextReport, writeDeviceAnalysisText, writeJobAnalysisText):
    // "vramscope report: ...", the table, "peak at: ..." note, "data loss:", "analyses ...:",
    // "rank R GPU G:" blocks, "job: ...", "collectives across ranks: ...", "advice:",
    // "training checklist ...:", "cost: ...".
    enum class Part { Head, Table, DataLoss, Device, Job, Collectives, Advice, Checklist, Cost };
    Part part = Part::Head;
    std::vector<std::string> kept;
    std::istringstream in(text);
    size_t devices = 0;
    size_t advice = 0;
    bool inTime = false;
    std::string heading;  // the device's "rank R GPU G:", until its first kept line
    const auto keepDeviceLine = [&kept, &heading](const std::string& line) {
        if (heading.empty()) {
            kept.push_back(line);
        } else {
            kept.push_back(heading + " " + line.substr(indentOf(line)));
            heading.clear();
        }
    };
    for (std::string line; std::getline(in, line);) {
        if (startsWith(line, "vramscope report:")) {
            kept.push_back(line);
            part = Part::Table;
            continue;
        }
        if (startsWith(line, "data loss:"))
            part = Part::DataLoss;
        if (startsWith(line, "analyses (")) {
            part = Part::Device;  // the blank line before it is kept with the data loss
            continue;
        }
        if (startsWith(line, "job: "))
            part = Part::Job;
        if (startsWith(line, "collectives across ranks:"))
            part = Part::Collectives;
        if (startsWith(line, "advice:"))
            part = Part::Advice;
        if (startsWith(line, "training checklist"))
            part = Part::Checklist;
        if (startsWith(line, "cost: "))
            part = Part::Cost;
        switch (part) {
            case Part::Head:
                break;
            case Part::Table:
            case Part::DataLoss:
                kept.push_back(line);
                break;
            case Part::Device:
                if (line.empty())
                    break;
                if (!startsWith(line, " ")) {  // "rank R GPU G:", joined to its first line
                    ++devices;
                    inTime = false;
                    heading = line;
                    if (devices == kReviewSummaryDevices + 1)
                        kept.push_back("  ...");  // says how many more, below
                    break;
                }
                if (advice > kReviewSummaryAdvice) {
                    // After the advice, before the cost when there is one.
                    const auto cost =
                        std::find_if(kept.begin(), kept.end(),
                                     [](const std::string& l) { return startsWith(l, "cost: "); });
                    const std::string more = "  ... " +
                                             std::to_string(advice - kReviewSummaryAdvice) +
                                             " more (vramscope-cli report lists them all)";
                    kept.insert(cost == kept.end() ? kept.end() : cost - 1, more);
                }
                if (devices > kReviewSummaryDevices)
                    break;
                if (startsWith(line, "  OUT OF MEMORY") ||
                    startsWith(line, "  memory per iteration:") || startsWith(line, "  time:")) {
                    inTime = startsWith(line, "  time: span");
                    keepDeviceLine(line);
                } else if (inTime && startsWith(line, "    compute ")) {
                    keepDeviceLine(line);  // compute / communication / memory under "time:"
                } else if (!startsWith(line, "    ")) {
                    inTime = false;
                }
                break;
            case Part::Job:
                if (startsWith(line, "job: "))
                    kept.insert(kept.end(), {"", line});
                break;
            case Part::Collectives:
                if (startsWith(line, "collectives across ranks:"))
                    kept.insert(kept.end(), {"", line});
                // The straggler sentence is the section's first indented line.
                if (startsWith(line, "  ") && !kept.empty() &&
                    startsWith(kept.back(), "collectives across ranks:"))
                    kept.push_back(line);
                break;
            case Part::Advice:
                if (startsWith(line, "advice:"))
                    kept.emplace_back();
                if (startsWith(line, "  [") && ++advice > kReviewSummaryAdvice)
                    break;  // the report lists advice most severe first
                if (!line.empty())
                    kept.push_back(line);
                break;
            case Part::Checklist:
                break;
            case Part::Cost:
                if (!line.empty())
                    kept.insert(kept.end(), {"", line});
                break;
        }
    }
    if (advice > kReviewSummaryAdvice) {
        // After the advice, before the cost when there is one.
        const auto cost = std::find_if(
            kept.begin(), kept.end(), [](const std::string& l) { return startsWith(l, "cost: "); });
        const std::string more = "  ... " + std::to_string(advice - kReviewSummaryAdvice) +
                                 " more (vramscope-cli report lists them all)";
        kept.insert(cost == kept.end() ? kept.end() : cost - 1, more);
    }
    if (devices > kReviewSummaryDevices) {
        const auto dots = std::find(kept.begin(), kept.end(), std::string("  ..."));
        if (dots != kept.end())
            *dots = "  ... " + std::to_string(devices - kReviewSummaryDevices) +
                    " more GPUs (vramscope-cli report lists them all)";
    }
    // The table's blank line before the data-loss section is kept; trailing blanks are not.
    while (!kept.empty() && kept.back().empty())
        kept.pop_back();
    return kept;
}

std::vector<std::string> reviewSummaryLines(const JobReport& report,
                                            const std::vector<std::string>& skipped,
                                            size_t columns) {
    std::ostringstream text;
    writeTextReport(report, text);
    std::vector<std::string> lines;
    for (const std::string& line : summaryOfReportText(text.str())) {
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
