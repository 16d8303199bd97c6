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
#include "flame_selection.h"
#include "job_model_loader.h"
#include "vramscope/analysis/export/chrome_trace_export.h"
#include "vramscope/analysis/export/csv_export.h"
#include "vramscope/analysis/export/export_formats.h"
#include "vramscope/analysis/export/perfetto_export.h"
#include "vramscope/analysis/export/speedscope_export.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/model/job_title.h"
#include "vramscope/trace/output_file.h"

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

/// Writes through `write` to `path` ("-" = ctx.out) with trace::writeOutputFile (a failed export
/// never leaves a half-written file under the name asked for). Returns kExitSuccess, or
/// kExitUnreadable with the error (naming the file) on ctx.err.
int writeOutput(CommandContext& ctx, const std::string& path,
                const std::function<trace::Status(std::ostream&)>& write) {
    const trace::Status written =
        path == "-" ? write(ctx.out) : trace::writeOutputFile(path, write);
    if (!written) {
        ctx.err << "vramscope-cli export: " << written.error().describe() << "\n";
        return kExitUnreadable;
    }
    return kExitSuccess;
}

/// The options that only some formats take, and which.
struct FormatOption {
    std::string_view name;
    ExportFormat format;
};
constexpr FormatOption kFormatOptions[] = {
    {"--table", ExportFormat::Csv},        {"--points", ExportFormat::Csv},
    {"--rank", ExportFormat::Speedscope},  {"--device", ExportFormat::Speedscope},
    {"--at", ExportFormat::Speedscope},    {"--by", ExportFormat::Speedscope},
    {"--level", ExportFormat::Speedscope},
};

/// The job model built as the GUI builds it (buildJobModel), so that both surfaces export
/// through the same functions. Null after writing the error to ctx.err.
std::shared_ptr<const analysis::JobModel> buildModel(CommandContext& ctx, trace::Job job,
                                                     const std::vector<std::string>& inputs) {
    return modelOfJob(ctx, std::move(job), analysis::jobTitle(inputs), {});
}

/// The command line of `export` (named apart from widgets::ExportOptions): FILE|DIR... --format
/// FORMAT [-o OUT] and the format's options.
struct ExportCommandOptions {
    InputOptions inputs;
    const ExportFormatInfo* format = nullptr;
    std::string output = "-";  ///< a file, or "-": standard output (text formats only)
    analysis::CsvOptions csv;  ///< --table, --points (csv)
    FlameRequest flame;        ///< --rank, --device, --at, --by, --level (speedscope)
};

/// --table and --points of --format csv into `csv`; false after a usage error.
bool readCsvOptions(CommandContext& ctx, const ParsedArgs& args, const std::string& help,
                    analysis::CsvOptions& csv) {
    const std::optional<std::string> tableName = args.value("--table");
    std::string tables;
    for (analysis::CsvTable t : analysis::csvTables()) {
        tables += (tables.empty() ? "" : ", ") + std::string(analysis::toString(t));
    }
    if (!tableName) {
        usageError(ctx, "--format csv needs --table (" + tables + ")", help);
        return false;
    }
    if (auto table = analysis::csvTableNamed(*tableName)) {
        csv.table = *table;
    } else {
        usageError(ctx, "unknown --table '" + *tableName + "' (one of " + tables + ")", help);
        return false;
    }
    std::optional<int64_t> points;
    if (!integerOption(ctx, args, "--points", help, points)) {
        return false;
    }
    if (points && (*points < 1 || csv.table != analysis::CsvTable::Memory)) {
        usageError(ctx, "--points takes a positive N, for --table memory only", help);
        return false;
    }
    csv.points = static_cast<size_t>(points.value_or(0));
    return true;
}

std::optional<ExportCommandOptions> parseExportOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    auto inputs = parseInputs(ctx, *args, {1, SIZE_MAX, false, "export needs at least one input"});
    if (!inputs) {
        return std::nullopt;
    }
    ExportCommandOptions options;
    options.inputs = std::move(*inputs);
    const std::optional<std::string> formatName = args->value("--format");
    if (!formatName) {
        return usageFailure(ctx, "--format is required (" + formatNames() + ")", help);
    }
    const ExportFormatInfo* format = analysis::exportFormatNamed(*formatName);
    if (format == nullptr) {
        return usageFailure(
            ctx, "unknown --format '" + *formatName + "' (one of " + formatNames() + ")", help);
    }
    options.format = format;
    options.output = args->value("--output").value_or("-");
    if (format->binary && options.output == "-") {
        return usageFailure(ctx, std::string(format->name) + " is binary: give -o FILE", help);
    }
    for (const FormatOption& o : kFormatOptions) {
        if (args->has(o.name) && o.format != format->format) {
            return usageFailure(ctx,
                                std::string(o.name) + " is for --format " +
                                    std::string(analysis::exportFormatInfo(o.format).name),
                                help);
        }
    }
    if (format->format == ExportFormat::Csv && !readCsvOptions(ctx, *args, help, options.csv)) {
        return std::nullopt;
    }
    if (format->format == ExportFormat::Speedscope) {
        std::optional<FlameRequest> request = parseFlameRequest(ctx, *args, help, exitCode);
        if (!request) {
            return std::nullopt;
        }
        options.flame = std::move(*request);
    }
    exitCode = kExitSuccess;
    return options;
}

/// Perfetto and Chrome JSON: the whole job.
int exportTrace(CommandContext& ctx, const ExportFormatInfo& format, trace::Job job,
                const std::vector<std::string>& inputs, const std::string& out) {
    const auto model = buildModel(ctx, std::move(job), inputs);
    if (!model) {
        return kExitUnreadable;
    }
    return writeOutput(ctx, out, [&](std::ostream& os) {
        return format.format == ExportFormat::Perfetto ? analysis::writePerfettoTrace(*model, os)
                                                       : analysis::writeChromeTrace(*model, os);
    });
}

/// --format csv: one table of the job model, notes on stderr.
int exportCsv(CommandContext& ctx, const ExportCommandOptions& request, trace::Job job) {
    const analysis::CsvOptions& options = request.csv;
    const std::string& out = request.output;
    const auto model = buildModel(ctx, std::move(job), request.inputs.paths);
    if (!model) {
        return kExitUnreadable;
    }
    if (std::string why = analysis::csvTableUnavailable(*model, options.table); !why.empty()) {
        ctx.err << "vramscope-cli export: " << why << "\n";
        return kExitUnreadable;
    }
    analysis::CsvSummary summary;
    const int code = writeOutput(ctx, out, [&](std::ostream& os) -> trace::Status {
        auto written = analysis::writeCsv(*model, options, os);
        if (!written.ok()) {
            return written.error();
        }
        summary = std::move(written).value();
        return trace::Status::success();
    });
    for (const std::string& note : summary.notes) {
        ctx.err << "vramscope-cli export: note: " << note << "\n";
    }
    return code;
}

/// --format speedscope: the flame tree that `flame` would show, chosen by the same rules.
int exportSpeedscope(CommandContext& ctx, const ExportCommandOptions& options,
                     const trace::Job& job) {
    const std::string help = ctx.help();
    const FlameRequest* request = &options.flame;
    const std::string& out = options.output;
    int exitCode = kExitSuccess;
    const std::optional<FlameSelection> selection = selectFlame(ctx, job, *request, help, exitCode);
    if (!selection) {
        return exitCode;
    }
    const std::optional<trace::TimestampNs> at = selection->resolve(ctx, request->atText, help);
    if (!at) {
        return kExitUsage;
    }
    const analysis::FlameTree tree = selection->builder->at(*at, request->grouping);
    const analysis::SpeedscopeSource source{selection->rankTrace->path,
                                            selection->rankTrace->trace.data.header.rank};
    return writeOutput(
        ctx, out, [&](std::ostream& os) { return analysis::writeSpeedscope(tree, source, os); });
}

}  // namespace

int runExport(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<ExportCommandOptions> options = parseExportOptions(ctx, code);
    if (!options) {
        return code;
    }
    auto job = openInputs(ctx, options->inputs);
    if (!job) {
        return kExitUnreadable;
    }
    switch (options->format->format) {
        case ExportFormat::Perfetto:
        case ExportFormat::ChromeJson:
            return exportTrace(ctx, *options->format, std::move(*job), options->inputs.paths,
                               options->output);
        case ExportFormat::Csv:
            return exportCsv(ctx, *options, std::move(*job));
        case ExportFormat::Speedscope:
            return exportSpeedscope(ctx, *options, *job);
    }
    return kExitUsage;
}

}  // namespace vramscope::app
