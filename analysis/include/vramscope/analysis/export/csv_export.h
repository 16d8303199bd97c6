#pragma once
// A job model as CSV tables (RFC 4180) for spreadsheets and scripts: memory over time per GPU,
// idle gaps, matched collectives and iterations. What `vramscope-cli export --format csv` and the
// GUI's File > Export Data... write, through the same functions.
//
// Times in every table are ns on the job's time axis (JobModel: 0 = the earliest event of any
// rank after its clock offset; rank trace time + RankInfo::toJobNs), the axis the GUI draws, so
// rows of different ranks and tables compare directly. Bytes are bytes. An empty cell means "not
// recorded" (a level the GPU did not record, an unknown rank), never 0.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/error.h"

namespace vramscope::analysis {

/// The tables a job can be exported as.
enum class CsvTable : unsigned char {
    /// rank, device, time_ns, trace_time_ns, allocated_bytes, reserved_bytes: one row per time
    /// either level of a GPU changes (buildMemoryTimelines, moved to job time), or the --points
    /// reduction. trace_time_ns is the same time in the rank's own clock (the clock of
    /// `flame --at NS`, `export --format speedscope --at NS` and report --json's peak_time_ns).
    Memory,
    /// rank, device, start_ns, end_ns, duration_ns, cause, kernel_before, kernel_after: the idle
    /// gaps of DeviceAnalysis::breakdown (the largest BreakdownOptions::maxGaps per GPU).
    Gaps,
    /// collective, function, communicator, sequence, bytes, rank, device, start_ns, end_ns,
    /// wait_ns, skew_ns, straggler: one row per participant of each matched collective.
    Collectives,
    /// rank, device, index, number, name, source, start_ns, end_ns, duration_ns,
    /// peak_allocated_bytes, peak_reserved_bytes, lowest_allocated_bytes, lowest_reserved_bytes.
    Iterations,
};

/// "memory", "gaps", "collectives", "iterations": the --table names.
const char* toString(CsvTable table);
/// Every table, in the order help texts and dialogs list them.
std::span<const CsvTable> csvTables();
/// The table with this --table name, or nullopt.
std::optional<CsvTable> csvTableNamed(std::string_view name);

/// What to write.
struct CsvOptions {
    CsvTable table = CsvTable::Memory;
    /// Memory table only: at most this many time buckets per GPU (0 = full resolution); see
    /// reduceMemoryRows.
    size_t points = 0;
};

/// What was written, for the caller to tell the user.
struct CsvSummary {
    size_t rows = 0;  ///< data rows (the header row not counted)
    /// Sentences about what the table leaves out (e.g. gaps beyond the largest kept per GPU).
    std::vector<std::string> notes;
};

/// Why `job` cannot give `table` ("no GPU ran kernels, so there are no idle gaps"), or "" when
/// it can. writeCsv refuses such a table with this sentence rather than write an empty file.
std::string csvTableUnavailable(const JobModel& job, CsvTable table);

/// Writes `options.table` of `job` to `out`: a header row (units in the names: time_ns, _bytes)
/// then the rows, CRLF line ends (RFC 4180). Rows by GPU (rank then device, as JobModel::gpus),
/// then time. Errors (ErrorCode::Invalid, message = csvTableUnavailable) when the job cannot
/// give the table; nothing is written then.
trace::Result<CsvSummary> writeCsv(const JobModel& job, const CsvOptions& options,
                                   std::ostream& out);

/// One field as RFC 4180 writes it: as is, or in double quotes (inner quotes doubled) when it
/// holds a comma, a double quote, CR or LF.
std::string csvField(std::string_view text);

/// One row of the memory table: both levels at one time; nullopt = the level recorded nothing at
/// or before `timeNs`.
struct MemoryRow {
    int64_t timeNs = 0;
    std::optional<int64_t> allocatedBytes;
    std::optional<int64_t> reservedBytes;
    bool operator==(const MemoryRow&) const = default;
};

/// Rows at every time either series has a step (union of both, ascending), each with both levels'
/// values then (StepSeries::valueAt; nullopt before a series' first step or for an empty series).
std::vector<MemoryRow> memoryRows(const StepSeries& allocated, const StepSeries& reserved);

/// At most `buckets` time buckets over `rows` (ascending): [first time, last time] cut into equal
/// widths w = ceil((last - first + 1) / buckets) ns (bucket of a row = floor((t - first) / w)).
/// Each bucket with
/// rows gives the row holding its largest allocated bytes and, when another row, the one holding
/// its largest reserved bytes (the first on ties), in time order: at most 2 x buckets rows, each a
/// real point of the series, and no bucket's maximum, hence neither level's peak, is lost.
/// Rows are returned unchanged when there are no more than `buckets` of them or buckets is 0.
std::vector<MemoryRow> reduceMemoryRows(const std::vector<MemoryRow>& rows, size_t buckets);

}  // namespace vramscope::analysis
