#pragma once
// The model behind `vramscope-cli report`: one DeviceReport per (rank, device), built from the
// analyses, written as JSON (nlohmann::ordered_json, keys in a fixed order) or as a text table.
//
// To report more (leaks, iterations, time breakdown, advice, cost): add a field to DeviceReport
// (std::optional when it can be unknown), fill it in buildJobReport() (device_report.cpp, marked
// "add analyses here"), write it in DeviceReport::toJson() (null when unknown) and, if it is short,
// as a column or a line in writeTextReport(). Per-job results go in JobReport the same way.

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramscope/analysis/job_analysis.h"
#include "vramscope/analysis/memory_timeline.h"
#include "vramscope/trace/open_trace.h"

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
    /// Time of the allocated peak, or of the reserved peak when allocated is unknown (ns, the
    /// job's time axis: the rank's clock plus RankTrace::clockOffsetNs).
    std::optional<int64_t> peakTimeNs;
    std::optional<int64_t> peakReservedTimeNs;
    uint64_t memoryEvents = 0;            ///< memory events of both levels on this device
    std::optional<int64_t> traceStartNs;  ///< the rank's first event (job axis), for the text form
    analysis::SeriesSource allocatedSource = analysis::SeriesSource::None;
    analysis::SeriesSource reservedSource = analysis::SeriesSource::None;
    /// Whether the allocations alive at a time can be rebuilt (analysis::liveSetEvidence at the
    /// detail level), and why not.
    bool liveSetKnown = false;
    std::string liveSetReason;
    // Add further per-device analyses here (see the file comment).
    /// Iterations, leak, time breakdown, idle gaps and model state (written by
    /// analysis_report.h); null when the job was not analysed. Times inside are in the rank's
    /// clock.
    std::shared_ptr<const analysis::DeviceAnalysis> analysis;
    int64_t clockOffsetNs = 0;  ///< the rank's RankTrace::clockOffsetNs

    /// {"rank", "device", "name", "capacity_bytes", "peak_allocated_bytes",
    /// "peak_reserved_bytes", "peak_time_ns", "memory_events", then "file",
    /// "peak_reserved_time_ns", "allocated_source", "reserved_source", "live_set_known",
    /// "live_set_reason" (null when known), "capacity_given"}; null when unknown.
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
    /// Every analysis of the job: collectives across ranks, advice and cost (and the devices'
    /// analyses the DeviceReports point into); null when not analysed.
    std::shared_ptr<const analysis::JobAnalysis> analysis;

    /// {"source": [...], "gpus": gpusRecorded, "message": analysis::kNoGpuMessage when it is 0
    /// (else null),
    /// "devices": [...], "data_loss": [...]}.
    Json toJson() const;
};

/// Runs the analyses over every rank of `job`. Devices with no memory information at all (no
/// events, no counters) but listed in a header are reported with null peaks.
JobReport buildJobReport(const trace::Job& job,
                         const analysis::JobAnalysisOptions& analysisOptions = {});

/// First and last timestamp of any event in a trace (ns, its own clock); nullopt when it has none.
struct TimeSpan {
    int64_t firstNs = 0;
    int64_t lastNs = 0;
};
std::optional<TimeSpan> traceTimeSpan(const trace::TraceData& data);

/// A readable table: one row per device with binary units and % of capacity, then data loss.
void writeTextReport(const JobReport& report, std::ostream& os);

}  // namespace vramscope::app
