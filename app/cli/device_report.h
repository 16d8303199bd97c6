#pragma once
// What `vramscope-cli report` presents of the job model: one DeviceReport per (rank, device),
// filled from the model's analyses (DeviceAnalysis, GpuSeries; nothing is computed again here),
// written as JSON (nlohmann::ordered_json, keys in a fixed order) or as a text table.
//
// To report more: compute it in the analysis (DeviceAnalysis / JobAnalysis, analyzeJob), then
// add a field to DeviceReport (std::optional when it can be unknown), fill it in
// buildJobReport() (device_report.cpp), write it in DeviceReport::toJson() (null when unknown)
// and, if it is short, as a column or a line in writeTextReport(). Per-job results go in
// JobReport the same way.
//
// Clocks: per-device times (peaks, OOMs, gaps) are on the rank's own clock (its trace's
// timestamps); cross-rank times (collectives) on the job's clock (ns from the job's earliest
// event), as in the job model.

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report_lines.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/time_span.h"

namespace vramscope::app {

using Json = nlohmann::ordered_json;

/// What the report says about one GPU of one rank. Unknown values are nullopt (JSON null).
struct DeviceReport {
    std::string file;                 ///< where this rank came from
    std::optional<int32_t> rank;      ///< nullopt when unknown
    trace::DeviceIndex device{0};     ///< CUDA ordinal as the producer numbered it
    std::optional<std::string> name;  ///< GPU name from the header
    std::optional<uint64_t> capacityBytes;
    bool capacityGiven = false;  ///< capacityBytes is --capacity's: the trace names none
    std::optional<int64_t> peakAllocatedBytes;
    std::optional<int64_t> peakReservedBytes;
    /// Time of the allocated peak, or of the reserved peak when allocated is unknown
    /// (MemorySummary::detailPeakTimeNs; ns on the rank's own clock).
    std::optional<int64_t> peakTimeNs;
    std::optional<int64_t> peakReservedTimeNs;  ///< the reserved peak, ns on the rank's clock
    uint64_t memoryEvents = 0;                  ///< memory events of both levels on this device
    std::optional<int64_t> traceStartNs;  ///< the rank's first event (rank's clock), for the text
    analysis::SeriesSource allocatedSource = analysis::SeriesSource::None;
    analysis::SeriesSource reservedSource = analysis::SeriesSource::None;
    /// Whether the allocations alive at a time can be rebuilt (analysis::liveSetEvidence at the
    /// detail level), and why not.
    bool liveSetKnown = false;
    std::string liveSetReason;
    // Add further per-device analyses here (see the file comment).
    /// Iterations, leak, time breakdown, idle gaps and model state (written by
    /// analysis_report.h); points into the job model; null when the job was not analysed. Times
    /// inside are on the rank's clock.
    std::shared_ptr<const analysis::DeviceAnalysis> analysis;

    /// {"rank", "device", "name", "capacity_bytes", "peak_allocated_bytes",
    /// "peak_reserved_bytes", "peak_time_ns", "memory_events", then "file",
    /// "peak_reserved_time_ns", "allocated_source", "reserved_source", "live_set_known",
    /// "live_set_reason" (null when known), "capacity_given"}; null when unknown. peak_time_ns and
    /// peak_reserved_time_ns are on the rank's own clock.
    Json toJson() const;
};

/// {"name", "kind", "count", "description", "reason"} of one data-loss counter
/// (trace/data_loss.h); count is null when the producer did not count.
Json dataLossJson(const trace::DataLoss& loss);

/// A loss of data that a reader or the producer reported for one input.
struct DataLossEntry {
    std::string file;
    std::optional<int32_t> rank;
    trace::DataLoss loss;
    /// {"file", "rank", then dataLossJson()'s keys}.
    Json toJson() const;
};

/// The whole report: every device of every rank, the data loss, and the inputs read.
struct JobReport {
    std::vector<std::string> sources;  ///< files read, in rank order
    std::vector<DeviceReport> devices;
    std::vector<DataLossEntry> dataLoss;
    /// GPUs that recorded memory or kernels (analysis::gpusRecorded); devices may also list GPUs
    /// a header names that recorded nothing. 0: the report says analysis::kNoGpuMessage.
    size_t gpusRecorded = 0;
    // Add per-job analyses here (see the file comment).
    /// Every analysis of the job: collectives across ranks (job clock), advice (and the
    /// devices' analyses the DeviceReports point into); points into `model`; null when the
    /// analysis failed (JobModel::analysisProblem).
    std::shared_ptr<const analysis::JobAnalysis> analysis;
    /// The cost estimate, only when a --gpu-hour-price was given (the model holds the inputs
    /// always, priced 0).
    std::optional<analysis::CostEstimate> cost;
    /// The job model everything above was taken from (kept alive by the report).
    std::shared_ptr<const analysis::JobModel> model;

    /// {"source": [...], "gpus": gpusRecorded, "message": analysis::kNoGpuMessage when it is 0
    /// (else null),
    /// "devices": [...], "data_loss": [...]}.
    Json toJson() const;
};

/// The report of an analysed job: one row per GPU of `model` (its GpuSeries, with the figures of
/// its DeviceAnalysis), then the devices with kernels but no memory information. Devices listed
/// in a header without any memory information (no events, no counters) are reported with null
/// peaks. `analysisOptions` are those the model was built with (the cost is shown only with a
/// price). Computes nothing the model holds; `model` must not be null.
JobReport buildJobReport(std::shared_ptr<const analysis::JobModel> model,
                         const analysis::JobAnalysisOptions& analysisOptions = {});

/// First and last event time of a trace: the one rule of trace/time_span.h.
using trace::TimeSpan;
using trace::traceTimeSpan;

/// The text report as lines (report_lines.h): the head, a table with one row per device in
/// binary units and % of capacity, the data loss, then each GPU's analyses and the job's, each
/// line with its part and its role on the review's summary page. Made once; writeTextReport
/// prints it, the review's summary picks from it.
ReportText reportText(const JobReport& report);

/// Prints every line of reportText(report).
void writeTextReport(const JobReport& report, std::ostream& os);

}  // namespace vramscope::app
