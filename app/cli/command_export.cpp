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
#include "vramscope/analysis/chrome_trace_export.h"
#include "vramscope/analysis/csv_export.h"
#include "vramscope/analysis/export_formats.h"
#include "vramscope/analysis/job_model.h"
#include "vramscope/analysis/job_title.h"
#include "vramscope/analysis/perfetto_export.h"
#include "vramscope/analysis/speedscope_export.h"
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
int exportCsv(CommandContext& ctx, const ParsedArgs& args, const std::string& help, trace::Job job,
              const std::string& out) {
    const std::optional<std::string> tableName = args.value("--table");
    std::string tables;
    for (analysis::CsvTable t : analysis::csvTables()) {
        tables += (tables.empty() ? "" : ", ") + std::string(analysis::toString(t));
    }
    if (!tableName) {
        return usageError(ctx, "--format csv needs --table (" + tables + ")", help);
    }
    analysis::CsvOptions options;
    if (auto table = analysis::csvTableNamed(*tableName)) {
        options.table = *table;
    } else {
        return usageError(ctx, "unknown --table '" + *tableName + "' (one of " + tables + ")",
                          help);
    }
    std::optional<int64_t> points;
    if (!integerOption(ctx, args, "--points", help, points)) {
        return kExitUsage;
    }
    if (points && (*points < 1 || options.table != analysis::CsvTable::Memory)) {
        return usageError(ctx, "--points takes a positive N, for --table memory only", help);
    }
    options.points = static_cast<size_t>(points.value_or(0));
    const auto model = buildModel(ctx, std::move(job), args.positional);
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
int exportSpeedscope(CommandContext& ctx, const ParsedArgs& args, const std::string& help,
                     const trace::Job& job, const std::string& out) {
    int exitCode = kExitSuccess;
    const std::optional<FlameRequest> request = parseFlameRequest(ctx, args, help, exitCode);
    if (!request) {
        return exitCode;
    }
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
    std::vector<OptionSpec> options = {
        {"--format", true, "FORMAT", "perfetto, chrome-json, csv or speedscope (required)"},
        {"--output", true, "OUT", "file to write; - or absent: standard output (text formats)",
         "-o"},
        {"--table", true, "TABLE", "csv: memory, gaps, collectives or iterations (required)"},
        {"--points", true, "N", "csv memory: at most N time buckets per GPU (default: all)"},
    };
    const std::vector<OptionSpec> flame = flameSelectionOptions();  // speedscope's
    options.insert(options.end(), flame.begin(), flame.end());
    std::string formats;
    for (const ExportFormatInfo& f : analysis::exportFormats()) {
        std::string name(f.name);
        name.resize(std::max<size_t>(name.size() + 1, 13), ' ');
        formats += "  " + name + std::string(f.description) + "\n";
    }
    const std::string help = commandHelp(
        ctx.command,
        "FILE|DIR... --format FORMAT [-o OUT] [--table T [--points N]]\n"
        "       [--rank R] [--device D] [--at TIME] [--by G] [--level L]",
        "Writes the job in a format other tools read. Formats:\n" + formats +
            "\ncsv writes one --table; times are ns from the job start (the GUI's axis), bytes "
            "are\n"
            "bytes, an empty cell is not recorded. With --points N a GPU's time is cut into N\n"
            "equal buckets; each gives the step with its largest allocated bytes and, when\n"
            "another, the one with its largest reserved bytes, so no peak is lost (at most 2N\n"
            "rows). speedscope writes the flame tree that `flame` shows for --rank, --device,\n"
            "--at, --by and --level (the same rules), in bytes.\n"
            "\nexit codes: 0 success, 2 usage, 3 unreadable input, unwritable output, or a table\n"
            "the input cannot give (no kernels: no gaps; said on stderr)",
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
    for (const FormatOption& o : kFormatOptions) {
        if (args->has(o.name) && o.format != format->format) {
            return usageError(ctx,
                              std::string(o.name) + " is for --format " +
                                  std::string(analysis::exportFormatInfo(o.format).name),
                              help);
        }
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
            return exportCsv(ctx, *args, help, std::move(*job), out);
        case ExportFormat::Speedscope:
            return exportSpeedscope(ctx, *args, help, *job, out);
    }
    return kExitUsage;
}

}  // namespace vramscope::app
