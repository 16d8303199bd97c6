// vramscope-cli export: a job in the formats other tools read (Perfetto, Chrome trace JSON, CSV,
// speedscope), written to a file or standard output.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <system_error>

#include "cli_command.h"
#include "vramscope/analysis/chrome_trace_export.h"
#include "vramscope/analysis/export_formats.h"
#include "vramscope/analysis/job_model.h"
#include "vramscope/analysis/perfetto_export.h"

namespace vramscope::app {

namespace {

using analysis::ExportFormat;
using analysis::ExportFormatInfo;

std::string formatNames() {
    std::string names;
    for (const ExportFormatInfo& f : analysis::exportFormats()) {
        names += (names.empty() ? "" : ", ") + std::string(f.name);
    }
    return names;
}

/// Writes through `write` to `path` ("-" = ctx.out). A file is written beside its final name and
/// renamed into place once complete, so a failed export never leaves a half-written file under
/// the name asked for. Returns kExitSuccess, or kExitUnreadable with the file named on ctx.err.
int writeOutput(CommandContext& ctx, const std::string& path,
                const std::function<bool(std::ostream&, std::string& error)>& write) {
    std::string error;
    if (path == "-") {
        if (!write(ctx.out, error)) {
            ctx.err << "vramscope-cli export: " << error << "\n";
            return kExitUnreadable;
        }
        return kExitSuccess;
    }
    const std::string partial = path + ".partial";
    {
        std::ofstream file(partial, std::ios::binary | std::ios::trunc);
        if (!file) {
            ctx.err << "vramscope-cli export: cannot write " << path << "\n";
            return kExitUnreadable;
        }
        const bool ok = write(file, error);
        file.flush();
        if (!ok || !file) {
            file.close();
            std::remove(partial.c_str());
            ctx.err << "vramscope-cli export: " << (ok ? "cannot write " + path : error) << "\n";
            return kExitUnreadable;
        }
    }
    std::error_code ec;
    std::filesystem::rename(partial, path, ec);
    if (ec) {
        std::remove(partial.c_str());
        ctx.err << "vramscope-cli export: cannot write " << path << ": " << ec.message() << "\n";
        return kExitUnreadable;
    }
    return kExitSuccess;
}

/// Perfetto and Chrome JSON: the job model built as the GUI builds it (buildJobModel), written
/// by the same functions the GUI's export calls.
int exportTrace(CommandContext& ctx, const ExportFormatInfo& format, trace::Job job,
                const std::vector<std::string>& inputs, const std::string& out) {
    const std::string title = inputs.size() == 1
                                  ? std::filesystem::path(inputs.front()).filename().string()
                                  : std::to_string(inputs.size()) + " inputs";
    auto model = analysis::buildJobModel(std::move(job), title);
    if (!model.ok()) {
        ctx.err << "vramscope-cli export: " << model.error().describe() << "\n";
        return kExitUnreadable;
    }
    return writeOutput(ctx, out, [&](std::ostream& os, std::string& error) {
        const trace::Status written = format.format == ExportFormat::Perfetto
                                          ? analysis::writePerfettoTrace(*model.value(), os)
                                          : analysis::writeChromeTrace(*model.value(), os);
        if (!written.ok()) {
            error = written.error().describe();
        }
        return written.ok();
    });
}

}  // namespace

int runExport(CommandContext& ctx) {
    const std::vector<OptionSpec> options = {
        {"--format", true, "FORMAT", "perfetto, chrome-json, csv or speedscope (required)"},
        {"--output", true, "OUT", "file to write; - or absent: standard output (text formats)",
         "-o"},
    };
    std::string formats;
    for (const ExportFormatInfo& f : analysis::exportFormats()) {
        std::string name(f.name);
        name.resize(std::max<size_t>(name.size() + 1, 13), ' ');
        formats += "  " + name + std::string(f.description) + "\n";
    }
    const std::string help =
        commandHelp(ctx.command, "FILE|DIR... --format FORMAT [-o OUT]",
                    "Writes the job in a format other tools read. Formats:\n" + formats +
                        "\nexit codes: 0 success, 2 usage, 3 unreadable input or unwritable output",
                    options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (args->positional.empty()) {
        return usageError(ctx, "export needs at least one input", help);
    }
    const std::optional<std::string> formatName = args->value("--format");
    if (!formatName) {
        return usageError(ctx, "--format is required (" + formatNames() + ")", help);
    }
    const ExportFormatInfo* format = analysis::exportFormatNamed(*formatName);
    if (format == nullptr) {
        return usageError(
            ctx, "unknown --format '" + *formatName + "' (one of " + formatNames() + ")", help);
    }
    const std::string out = args->value("--output").value_or("-");
    if (format->binary && out == "-") {
        return usageError(ctx, std::string(format->name) + " is binary: give -o FILE", help);
    }
    auto job = loadJob(ctx, args->positional);
    if (!job) {
        return kExitUnreadable;
    }
    switch (format->format) {
        case ExportFormat::Perfetto:
        case ExportFormat::ChromeJson:
            return exportTrace(ctx, *format, std::move(*job), args->positional, out);
        case ExportFormat::Csv:
        case ExportFormat::Speedscope:
            break;
    }
    return writeOutput(ctx, out, [&](std::ostream&, std::string& error) {
        error = std::string(format->name) + " export is not available in this build";
        return false;
    });
}

}  // namespace vramscope::app
