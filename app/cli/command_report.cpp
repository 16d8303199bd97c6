// vramscope-cli report: per-device memory peaks of a job, as a table or JSON.
#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "device_report.h"
#include "job_model_loader.h"

namespace vramscope::app {

namespace {

/// The command line of `report`.
struct ReportOptions {
    InputOptions inputs;  ///< none: the bundled sample job
    analysis::JobAnalysisOptions analysis;
    bool json = false;
};

std::optional<ReportOptions> parseReportOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    ReportOptions options;
    if (!readAnalysisOptions(ctx, *args, help, options.analysis)) {
        return std::nullopt;
    }
    auto inputs = parseInputs(ctx, *args, {0, SIZE_MAX, true});
    if (!inputs) {
        return std::nullopt;
    }
    options.inputs = std::move(*inputs);
    options.json = args->has("--json");
    exitCode = kExitSuccess;
    return options;
}

/// The report as JSON (JobReport::toJson, two-space indent) or text (writeTextReport).
void printReport(const JobReport& report, bool json, std::ostream& os) {
    if (json) {
        os << report.toJson().dump(2) << "\n";
    } else {
        writeTextReport(report, os);
    }
}

}  // namespace

int runReport(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<ReportOptions> options = parseReportOptions(ctx, code);
    if (!options) {
        return code;
    }
    // Open and analyse once (the job model), then present it.
    const std::shared_ptr<const analysis::JobModel> model =
        loadJobModel(ctx, options->inputs, options->analysis);
    if (!model) {
        return kExitUnreadable;
    }
    const JobReport report = buildJobReport(model, options->analysis);
    printReport(report, options->json, ctx.out);
    return kExitSuccess;
}

}  // namespace vramscope::app
