#include "vramscope/analysis/export/export_formats.h"

#include <array>

namespace vramscope::analysis {

namespace {

constexpr std::array kFormats = {
    ExportFormatInfo{ExportFormat::Perfetto, "perfetto", ".pftrace",
                     "Perfetto trace (protobuf): memory counters, kernels, NVTX, collectives, gaps",
                     true},
    ExportFormatInfo{ExportFormat::ChromeJson, "chrome-json", ".json",
                     "Chrome trace JSON (chrome://tracing, Perfetto's JSON importer)", false},
    ExportFormatInfo{ExportFormat::Csv, "csv", ".csv",
                     "CSV table: memory series, idle gaps, collectives or iterations", false},
    ExportFormatInfo{ExportFormat::Speedscope, "speedscope", ".speedscope.json",
                     "speedscope flame file: the live set at a time, in bytes", false},
};

}  // namespace

std::span<const ExportFormatInfo> exportFormats() {
    return kFormats;
}

const ExportFormatInfo* exportFormatNamed(std::string_view name) {
    for (const ExportFormatInfo& f : kFormats) {
        if (f.name == name) {
            return &f;
        }
    }
    return nullptr;
}

const ExportFormatInfo& exportFormatInfo(ExportFormat format) {
    for (const ExportFormatInfo& f : kFormats) {
        if (f.format == format) {
            return f;
        }
    }
    return kFormats.front();
}

}  // namespace vramscope::analysis
