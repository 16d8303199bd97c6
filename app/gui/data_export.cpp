#include "data_export.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <system_error>

#include "vramscope/analysis/export/chrome_trace_export.h"
#include "vramscope/analysis/export/perfetto_export.h"
#include "vramscope/analysis/export/speedscope_export.h"
#include "vramscope/analysis/memory/flame_service.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/output_file.h"

namespace vramscope::app {

namespace {

using analysis::ExportFormat;
using analysis::JobModel;

/// Writes one format to a stream: the status-bar sentence (without the file) or the error.
using FormatWriter = trace::Result<std::string> (*)(const JobModel&, const DataExportRequest&,
                                                    std::ostream&);

trace::Result<std::string> writeCsvData(const JobModel& job, const DataExportRequest& request,
                                        std::ostream& out) {
    auto written = analysis::writeCsv(job, request.csv, out);
    if (!written.ok()) {
        return written.error();
    }
    std::string text = "Exported " + std::to_string(written->rows) + " rows of the " +
                       analysis::toString(request.csv.table) + " table";
    for (const std::string& note : written->notes) {
        text += "; " + note;
    }
    return text;
}

trace::Result<std::string> writeSpeedscopeData(const JobModel& job,
                                               const DataExportRequest& request,
                                               std::ostream& out) {
    const analysis::GpuMemoryAnalysis* memory = job.memoryOf(request.gpu);
    if (memory == nullptr) {
        return trace::Error::make(trace::ErrorCode::Invalid, job.title,
                                  "this GPU has no allocation events, so there is no live set");
    }
    if (!memory->liveSet.known) {
        return trace::Error::make(trace::ErrorCode::Invalid, job.title,
                                  "no live set for this GPU: " + memory->liveSet.reason);
    }
    const int64_t rankNs = job.toRank(request.gpu.rankIndex, request.jobTimeNs);
    auto tree = job.flames->at(request.gpu.rankIndex, request.gpu.device, rankNs, request.grouping);
    if (!tree) {
        return trace::Error::make(trace::ErrorCode::Invalid, job.title,
                                  "this GPU has no flame tree");
    }
    const analysis::RankInfo& rank = job.ranks[size_t(request.gpu.rankIndex)];
    if (trace::Status s = analysis::writeSpeedscope(*tree, {rank.path, rank.rank}, out); !s) {
        return s.error();
    }
    return "Exported " + analysis::formatBytes(double(tree->root().bytes)) + " alive on " +
           analysis::rankLabel(rank.rank) + " GPU " + std::to_string(toInt(request.gpu.device)) +
           " at " + analysis::formatDuration(double(request.jobTimeNs)) + " as a speedscope flame";
}

/// Perfetto and Chrome JSON: the whole job, as `vramscope-cli export` writes it.
template <trace::Status (*Write)(const JobModel&, std::ostream&)>
trace::Result<std::string> writeWholeJob(const JobModel& job, const DataExportRequest& request,
                                         std::ostream& out) {
    if (trace::Status s = Write(job, out); !s) {
        return s.error();
    }
    return "Exported " + job.title + " as " +
           std::string(analysis::exportFormatInfo(request.format).name);
}

/// The writer of each format the GUI offers.
struct WriterEntry {
    ExportFormat format;
    FormatWriter write;
};
constexpr WriterEntry kWriters[] = {
    {ExportFormat::Perfetto, &writeWholeJob<&analysis::writePerfettoTrace>},
    {ExportFormat::ChromeJson, &writeWholeJob<&analysis::writeChromeTrace>},
    {ExportFormat::Csv, &writeCsvData},
    {ExportFormat::Speedscope, &writeSpeedscopeData},
};

FormatWriter writerOf(ExportFormat format) {
    for (const WriterEntry& w : kWriters) {
        if (w.format == format) {
            return w.write;
        }
    }
    return nullptr;
}

}  // namespace

std::vector<ExportFormat> dataExportFormats() {
    std::vector<ExportFormat> formats;
    for (const analysis::ExportFormatInfo& f : analysis::exportFormats()) {
        if (writerOf(f.format) != nullptr) {
            formats.push_back(f.format);
        }
    }
    return formats;
}

trace::Result<std::string> exportData(const JobModel& job, const DataExportRequest& request,
                                      const std::string& path) {
    const FormatWriter write = writerOf(request.format);
    if (write == nullptr) {
        return trace::Error::make(trace::ErrorCode::Unsupported, path,
                                  std::string(analysis::exportFormatInfo(request.format).name) +
                                      " export is not available in this build");
    }
    std::string sentence;
    const trace::Status written =
        trace::writeOutputFile(path, [&](std::ostream& out) -> trace::Status {
            auto result = write(job, request, out);
            if (!result.ok()) {
                return result.error();
            }
            sentence = std::move(result).value();
            return trace::Status::success();
        });
    if (!written) {
        return written.error();
    }
    return sentence + " to " + std::filesystem::path(path).filename().string();
}

}  // namespace vramscope::app
