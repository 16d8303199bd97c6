#include "device_report.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "analysis_report.h"
#include "cli_command.h"
#include "vramscope/analysis/memory/live_set.h"

namespace vramscope::app {

namespace {

template <class T>
Json orNull(const std::optional<T>& v) {
    return v ? Json(*v) : Json(nullptr);
}

}  // namespace

Json DeviceReport::toJson() const {
    Json j;
    j["rank"] = orNull(rank);
    j["device"] = toInt(device);
    j["name"] = orNull(name);
    j["capacity_bytes"] = orNull(capacityBytes);
    j["peak_allocated_bytes"] = orNull(peakAllocatedBytes);
    j["peak_reserved_bytes"] = orNull(peakReservedBytes);
    j["peak_time_ns"] = orNull(peakTimeNs);
    j["memory_events"] = memoryEvents;
    j["file"] = file;
    j["peak_reserved_time_ns"] = orNull(peakReservedTimeNs);
    j["allocated_source"] = analysis::toString(allocatedSource);
    j["reserved_source"] = analysis::toString(reservedSource);
    j["live_set_known"] = liveSetKnown;
    j["live_set_reason"] = liveSetKnown ? Json(nullptr) : Json(liveSetReason);
    j["capacity_given"] = capacityGiven;
    if (analysis) {
        addDeviceAnalysisJson(*analysis, j);
    }
    return j;
}

Json dataLossJson(const trace::DataLoss& loss) {
    const trace::LossCounterInfo& c = trace::lossCounterInfo(loss.counter);
    Json j;
    j["name"] = std::string(c.name);
    j["kind"] = trace::toString(c.severity);
    j["count"] = loss.count == 0 ? Json(nullptr) : Json(loss.count);
    j["description"] = std::string(c.description);
    j["reason"] = loss.reason;
    return j;
}

Json DataLossEntry::toJson() const {
    Json j;
    j["file"] = file;
    j["rank"] = orNull(rank);
    const Json counter = dataLossJson(loss);  // kept alive: items() only views it
    for (const auto& [key, value] : counter.items()) {
        j[key] = value;
    }
    return j;
}

namespace {

/// kNoGpuMessage, or kNoGpuInReadPartMessage when an input lost events or bytes (a loss above
/// the informational severity).
const char* noGpuMessage(const JobReport& report) {
    for (const auto& l : report.dataLoss) {
        if (trace::lossCounterInfo(l.loss.counter).severity != trace::LossSeverity::Info) {
            return analysis::kNoGpuInReadPartMessage;
        }
    }
    return analysis::kNoGpuMessage;
}

}  // namespace

Json JobReport::toJson() const {
    Json j;
    j["source"] = sources;
    j["gpus"] = gpusRecorded;
    j["message"] = gpusRecorded == 0 ? Json(noGpuMessage(*this)) : Json(nullptr);
    j["devices"] = Json::array();
    for (const auto& d : devices) {
        j["devices"].push_back(d.toJson());
    }
    j["data_loss"] = Json::array();
    for (const auto& l : dataLoss) {
        j["data_loss"].push_back(l.toJson());
    }
    if (analysis) {
        const analysis::JobCoverage& c = analysis->coverage;
        j["ranks_present"] = c.ranksPresent;
        j["world_size"] = c.worldSize > 0 ? Json(c.worldSize) : Json(nullptr);
        j["partial"] = c.partial();
        j["collectives"] = collectivesJson(*analysis);
        j["advice"] = adviceJson(analysis->advice);
        j["assessments"] = assessmentsJson(analysis->assessments);
        j["cost"] = costJson(cost);
    }
    return j;
}

namespace {

std::optional<int32_t> rankOf(const trace::TraceData& data) {
    return data.header.rank == trace::kUnknownRank ? std::nullopt
                                                   : std::optional(toInt(data.header.rank));
}

/// The report's row of one drawn GPU: its figures as the analysis found them (DeviceAnalysis,
/// rank clock), or, when the analysis failed, the series' own summary moved back to the rank's
/// clock.
DeviceReport deviceRow(const analysis::JobModel& model, const analysis::GpuSeries& g,
                       std::shared_ptr<const analysis::DeviceAnalysis> analysed) {
    const auto r = size_t(g.key.rankIndex);
    const trace::RankTrace& rt = model.job.ranks[r];
    DeviceReport d;
    d.file = rt.path;
    d.rank = rankOf(rt.trace.data);
    d.device = g.key.device;
    if (!g.deviceName.empty()) {
        d.name = g.deviceName;
    }
    const analysis::MemorySummary m =
        analysed ? analysed->memory : g.memory.shifted(model.toRank(g.key.rankIndex, 0));
    if (m.capacityBytes > 0) {
        d.capacityBytes = m.capacityBytes;
        d.capacityGiven = analysed && analysed->capacityGiven;
    }
    d.allocatedSource = g.allocatedSource;
    d.reservedSource = g.reservedSource;
    if (m.hasAllocated) {
        d.peakAllocatedBytes = m.peakAllocatedBytes;
    }
    if (m.hasReserved) {
        d.peakReservedBytes = m.peakReservedBytes;
        d.peakReservedTimeNs = m.peakReservedTimeNs;
    }
    if (m.hasData()) {
        d.peakTimeNs = m.detailPeakTimeNs();
    }
    d.memoryEvents = m.memoryEvents;
    const analysis::LiveSetEvidence live =
        analysed ? analysed->liveSet
                 : analysis::liveSetEvidence(rt.trace.data, g.key.device,
                                             analysis::detailLevel(rt.trace.data, g.key.device));
    d.liveSetKnown = live.known;
    d.liveSetReason = live.reason;
    if (const auto span = traceTimeSpan(rt.trace.data)) {
        d.traceStartNs = span->firstNs;
    }
    d.analysis = std::move(analysed);
    return d;
}

}  // namespace

JobReport buildJobReport(std::shared_ptr<const analysis::JobModel> model,
                         const analysis::JobAnalysisOptions& analysisOptions) {
    JobReport report;
    report.model = model;
    const analysis::JobModel& m = *model;
    if (m.analysisProblem.empty()) {
        report.analysis = std::shared_ptr<const analysis::JobAnalysis>(model, &m.analysis);
        // The model always holds the cost inputs (price 0); the report prices only when asked.
        if (analysisOptions.gpuHourPrice) {
            report.cost = m.analysis.cost;
        }
    }
    // The analysis of device `dev` of input `input`, sharing ownership with the model.
    auto analysisOf = [&](size_t input, trace::DeviceIndex dev) {
        std::shared_ptr<const analysis::DeviceAnalysis> found;
        if (report.analysis) {
            for (const auto& a : m.analysis.devices) {
                if (a.input == input && a.device == dev) {
                    found = std::shared_ptr<const analysis::DeviceAnalysis>(model, &a);
                }
            }
        }
        return found;
    };
    for (size_t input = 0; input < m.job.ranks.size(); ++input) {
        const trace::RankTrace& rt = m.job.ranks[input];
        report.sources.push_back(rt.path);
        for (const analysis::GpuSeries& g : m.gpus) {
            if (size_t(g.key.rankIndex) == input) {
                report.devices.push_back(deviceRow(m, g, analysisOf(input, g.key.device)));
            }
        }
        // Devices with kernels but no memory information and no header entry.
        static const std::vector<analysis::DeviceAnalysis> kNone;
        for (const auto& a : report.analysis ? m.analysis.devices : kNone) {
            const bool listed = std::any_of(
                report.devices.begin(), report.devices.end(), [&](const DeviceReport& r) {
                    return r.analysis && r.analysis->input == input && r.device == a.device;
                });
            if (a.input == input && !listed) {
                DeviceReport d;
                d.file = rt.path;
                d.rank = rankOf(rt.trace.data);
                d.device = a.device;
                d.liveSetReason =
                    "it has no memory events, so what is alive at a time is not "
                    "recorded";
                d.analysis = analysisOf(input, a.device);
                report.devices.push_back(std::move(d));
            }
        }
        for (const auto& loss : rt.trace.data.dataLoss) {
            report.dataLoss.push_back(DataLossEntry{rt.path, rankOf(rt.trace.data), loss});
        }
    }
    report.gpusRecorded =
        report.analysis
            ? analysis::gpusRecorded(*report.analysis)
            : size_t(std::count_if(report.devices.begin(), report.devices.end(),
                                   [](const DeviceReport& d) {
                                       return d.peakAllocatedBytes || d.peakReservedBytes;
                                   }));
    return report;
}

namespace {

/// Left-aligned cells padded to their column's widest entry.
void writeTable(const std::vector<std::vector<std::string>>& rows,
                const std::vector<bool>& rightAlign, std::ostream& os) {
    std::vector<size_t> width(rows.front().size(), 0);
    for (const auto& r : rows) {
        for (size_t c = 0; c < r.size(); ++c) {
            width[c] = std::max(width[c], r[c].size());
        }
    }
    for (const auto& r : rows) {
        std::string line;
        for (size_t c = 0; c < r.size(); ++c) {
            const std::string pad(width[c] - r[c].size(), ' ');
            line += rightAlign[c] ? pad + r[c] : r[c] + (c + 1 < r.size() ? pad : "");
            if (c + 1 < r.size()) {
                line += "  ";
            }
        }
        os << line << "\n";
    }
}

std::string bytesCell(const std::optional<int64_t>& v, const std::optional<uint64_t>& capacity) {
    if (!v) {
        return "unknown";
    }
    const auto bytes = static_cast<uint64_t>(std::max<int64_t>(*v, 0));
    std::string s = formatBytes(bytes);
    if (capacity) {
        s += " (" + formatPercent(bytes, *capacity) + ")";
    }
    return s;
}

/// Where each GPU's allocated series came from, and whether its live set is known, for the GPUs
/// with memory events (a GPU without any has nothing to qualify).
void writeSources(const JobReport& report, std::ostream& os) {
    for (const auto& d : report.devices) {
        if (d.memoryEvents == 0) {
            continue;
        }
        const std::string gpu = analysis::deviceLabel(trace::RankId{d.rank.value_or(-1)}, d.device);
        if (d.allocatedSource == analysis::SeriesSource::RebuiltFromBytes) {
            os << gpu << ": allocated memory rebuilt from Bytes (the producer wrote no totals).\n";
        }
        if (!d.liveSetKnown) {
            os << gpu << ": live set unknown: " << d.liveSetReason << ".\n";
        }
    }
}

}  // namespace

ReportText reportText(const JobReport& report) {
    ReportText out;
    std::ostream& os = out.os();
    os << "vramscope report: " << report.sources.size()
       << (report.sources.size() == 1 ? " input, " : " inputs, ") << report.devices.size()
       << (report.devices.size() == 1 ? " device" : " devices") << "\n";
    out.take(ReportPart::Head, SummaryRole::Keep);
    os << "\n";
    if (report.gpusRecorded > 0) {
        std::vector<std::vector<std::string>> rows = {{"rank", "device", "name", "capacity",
                                                       "peak allocated", "peak reserved", "peak at",
                                                       "memory events"}};
        for (const auto& d : report.devices) {
            std::string at = "unknown";
            if (d.peakTimeNs && d.traceStartNs) {
                at = formatDuration(*d.peakTimeNs - *d.traceStartNs);
            }
            rows.push_back({d.rank ? std::to_string(*d.rank) : "?", std::to_string(toInt(d.device)),
                            d.name.value_or("?"),
                            d.capacityBytes ? formatBytes(*d.capacityBytes) +
                                                  (d.capacityGiven ? " (given)" : "")
                                            : "unknown",
                            bytesCell(d.peakAllocatedBytes, d.capacityBytes),
                            bytesCell(d.peakReservedBytes, d.capacityBytes), at,
                            std::to_string(d.memoryEvents)});
        }
        writeTable(rows, {true, true, false, true, false, false, true, true}, os);
        os << "\npeak at: time of the allocated peak (of the reserved one when allocated is\n"
              "unknown), from the rank's first event. Keep peaks below "
           << analysis::formatPercent(analysis::kCapacityWarningShare, 0)
           << " of capacity to leave\n"
              "room for fragmentation and spikes.\n";
        writeSources(report, os);
    } else {
        os << noGpuMessage(report) << ": no GPU memory and no GPU kernels were recorded";
        if (!report.devices.empty()) {
            os << " (the header lists " << report.devices.size()
               << (report.devices.size() == 1 ? " GPU" : " GPUs") << " of the machine)";
        }
        os << ", so there is no memory or time per GPU to report.\n";
    }
    out.take(ReportPart::Table, SummaryRole::Keep);
    os << "\ndata loss:" << (report.dataLoss.empty() ? " none" : "") << "\n";
    for (const auto& l : report.dataLoss) {
        os << "  " << l.file << ": " << trace::describe(l.loss) << "\n";
    }
    if (report.analysis) {
        os << "\n";  // kept with the data loss: the summary's GPUs follow it
    }
    out.take(ReportPart::DataLoss, SummaryRole::Keep);
    if (report.analysis) {
        os << "analyses (formulas in parentheses):\n";
        out.take(ReportPart::Analyses);
        // A job with no GPU has no per-GPU analyses to state (the line above says why).
        for (const auto& d : report.analysis->devices) {
            if (report.gpusRecorded > 0) {
                writeDeviceAnalysisText(d, out);
            }
        }
        writeJobAnalysisText(*report.analysis, report.cost, out);
    }
    return out;
}

void writeTextReport(const JobReport& report, std::ostream& os) {
    const ReportText text = reportText(report);
    for (const ReportLine& line : text.lines()) {
        os << line.text << "\n";
    }
}

}  // namespace vramscope::app
