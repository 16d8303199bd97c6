#pragma once
// What File > Export Data... writes: a job model in one of the export formats (export_formats.h),
// to a file, through the same analysis writers as `vramscope-cli export`. Plain C++ (no Qt), so
// it runs on a worker thread and tests call it directly.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/analysis/export/csv_export.h"
#include "vramscope/analysis/export/export_formats.h"
#include "vramscope/analysis/memory/flame_tree.h"
#include "vramscope/analysis/model/job_model.h"

namespace vramscope::app {

/// One export as the dialog sets it up.
struct DataExportRequest {
    analysis::ExportFormat format = analysis::ExportFormat::Csv;
    analysis::CsvOptions csv;  ///< csv: the table and --points
    analysis::GpuKey gpu;      ///< speedscope: the GPU whose live set is written
    int64_t jobTimeNs = 0;     ///< speedscope: the time, job time (ns from the job start)
    analysis::FlameGrouping grouping = analysis::FlameGrouping::Stack;  ///< speedscope
};

/// The formats this build can write from the GUI, in exportFormats() order (the others are
/// listed by the dialog as not available).
std::vector<analysis::ExportFormat> dataExportFormats();

/// Writes `request` of `job` to `path`: into "PATH.partial", renamed to `path` once complete, so
/// a failed export never leaves a half-written file under the name asked for. Returns one
/// sentence for the status bar ("Exported 218 rows of the memory table to out.csv"), or the
/// error: a table or live set the job cannot give (ErrorCode::Invalid), a file that cannot be
/// written (ErrorCode::Io, naming it). Any thread; `job` is only read.
trace::Result<std::string> exportData(const analysis::JobModel& job,
                                      const DataExportRequest& request, const std::string& path);

}  // namespace vramscope::app
