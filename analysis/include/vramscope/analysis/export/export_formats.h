#pragma once
// The formats a job can be exported to, for other tools: Perfetto's protobuf trace, the Chrome
// trace JSON that chrome://tracing and Perfetto's legacy importer read, CSV tables and speedscope
// flame files. One table shared by `vramscope-cli export` and the GUI's File > Export Data...,
// so both offer the same names, extensions and descriptions.

#include <span>
#include <string_view>

namespace vramscope::analysis {

enum class ExportFormat : unsigned char {
    Perfetto,    ///< Perfetto TracePacket stream (binary protobuf), .pftrace
    ChromeJson,  ///< Chrome trace event JSON ("traceEvents"), .json
    Csv,         ///< one table as comma-separated values (RFC 4180), .csv
    Speedscope,  ///< a flame tree as speedscope's file format (JSON, bytes unit)
};

/// What a format is called and how its files are named.
struct ExportFormatInfo {
    ExportFormat format;
    std::string_view name;         ///< the --format value: "perfetto", "chrome-json", "csv", ...
    std::string_view extension;    ///< file name suffix including the dot, e.g. ".pftrace"
    std::string_view description;  ///< one line for help texts and file dialogs
    bool binary = false;           ///< not text: never written to a terminal
};

/// Every export format, in the order help texts and dialogs list them.
std::span<const ExportFormatInfo> exportFormats();
/// The format with this --format name, or nullptr.
const ExportFormatInfo* exportFormatNamed(std::string_view name);
/// The entry of `format` in exportFormats().
const ExportFormatInfo& exportFormatInfo(ExportFormat format);

}  // namespace vramscope::analysis
