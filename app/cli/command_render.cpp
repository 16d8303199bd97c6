// vramscope-cli render: one view of a job as a picture that stands on its own (PNG, or vector
// SVG / PDF with a title, the trace name, the time range, the legend, the notes and the formulas),
// drawn headless: no display is needed.
#include <QString>

#include <cstdint>
#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "render_support.h"
#include "vramscope/widgets/view_export.h"
#include "vramscope/widgets/view_renderer.h"

namespace vramscope::app {

std::string renderViewNames() {
    return widgets::renderableViews().join(QStringLiteral(", ")).toStdString();
}

namespace {

/// --size, --scale and --width into `options`; false after a usage error.
bool readPictureOptions(CommandContext& ctx, const ParsedArgs& args, const std::string& help,
                        widgets::ExportOptions& options, int& exitCode) {
    if (auto size = args.value("--size")) {
        const std::optional<QSize> parsed = parseSize(*size);
        if (!parsed) {
            exitCode = usageError(
                ctx, "--size wants WxH between 200x150 and 20000x20000, not '" + *size + "'", help);
            return false;
        }
        options.size = *parsed;
    }
    if (auto scale = args.value("--scale")) {
        if (*scale != "1" && *scale != "2") {
            exitCode = usageError(ctx, "--scale is 1 or 2, not '" + *scale + "'", help);
            return false;
        }
        options.scale = *scale == "2" ? 2.0 : 1.0;
    }
    std::optional<int64_t> width;
    if (!integerOption(ctx, args, "--width", help, width)) {
        exitCode = kExitUsage;
        return false;
    }
    if (width) {
        if (*width < 100 || *width > 20000) {
            exitCode = usageError(ctx, "--width wants 100 to 20000 pixels", help);
            return false;
        }
        options.widthPx = int(*width);
    }
    if ((options.scale != 1.0 || options.widthPx > 0) &&
        options.format != widgets::ExportFormat::Png) {
        exitCode = usageError(
            ctx, "--scale and --width are for PNG output (SVG and PDF are vector)", help);
        return false;
    }
    return true;
}

}  // namespace

namespace {

/// The usage error for a --range that parseTimeRange refused.
std::string rangeError(const std::string& range) {
    return "--range wants START:END, times with units and END after START, e.g. 1.2s:3.4s, not '" +
           range + "'";
}

/// Whether `gpu` has the form of --gpu, R:G with two non-negative integers (whether the job has
/// that GPU is judged once it is open).
bool isGpuText(const std::string& gpu) {
    const size_t colon = gpu.find(':');
    if (colon == std::string::npos)
        return false;
    const std::optional<int64_t> rank = parseInteger(std::string_view(gpu).substr(0, colon));
    const std::optional<int64_t> device = parseInteger(std::string_view(gpu).substr(colon + 1));
    return rank && device && *rank >= 0 && *device >= 0;
}

/// The usage error for a --gpu the job has no GPU for, or that is no R:G.
std::string gpuError(const std::string& gpu) {
    return "--gpu wants R:G (rank:device), not '" + gpu + "'";
}

}  // namespace

namespace {

/// The command line of `render`, checked before any input is read. --range and --gpu are read
/// against the job (its duration, its GPUs) after it is opened; --range's form is checked first.
struct RenderOptions {
    InputOptions inputs;
    std::string output;              ///< .png, .svg or .pdf (picture.format follows it)
    std::string view;                ///< one of widgets::renderableViews()
    widgets::ExportOptions picture;  ///< format, --size, --scale, --width
    analysis::JobAnalysisOptions analysis;
    std::optional<std::string> range;  ///< --range A:B as given
    std::optional<std::string> gpu;    ///< --gpu R:G as given
    std::optional<std::string> notes;  ///< --notes FILE
};

std::optional<RenderOptions> parseRenderOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    const std::string views = renderViewNames();
    auto args = parseCommand(ctx, exitCode);
    if (!args)
        return std::nullopt;
    exitCode = kExitUsage;
    RenderOptions options;
    const std::optional<std::string> out = args->value("--output");
    if (!out)
        return usageFailure(ctx, "-o OUT.png|svg|pdf is needed", help);
    options.output = *out;
    widgets::ExportOptions& picture = options.picture;
    if (auto format = widgets::exportFormatFor(QString::fromStdString(*out))) {
        picture.format = *format;
    } else {
        return usageFailure(ctx, "-o " + *out + ": the name must end in .png, .svg or .pdf", help);
    }
    const std::optional<std::string> view = args->value("--view");
    if (!view)
        return usageFailure(ctx, "--view NAME is needed (" + views + ")", help);
    if (!widgets::renderableViews().contains(QString::fromStdString(*view)))
        return usageFailure(ctx, "unknown view '" + *view + "' (one of " + views + ")", help);
    options.view = *view;
    int pictureCode = kExitSuccess;
    if (!readPictureOptions(ctx, *args, help, picture, pictureCode)) {
        exitCode = pictureCode;
        return std::nullopt;
    }
    auto inputs = parseInputs(ctx, *args, {});
    if (!inputs)
        return std::nullopt;
    options.inputs = std::move(*inputs);
    if (!readAnalysisOptions(ctx, *args, help, options.analysis))
        return std::nullopt;
    options.range = args->value("--range");
    // The range's form is checked now; whether it fits the job, once the job is open.
    if (options.range && !parseTimeRange(*options.range, INT64_MAX))
        return usageFailure(ctx, rangeError(*options.range), help);
    options.gpu = args->value("--gpu");
    if (options.gpu && !isGpuText(*options.gpu))
        return usageFailure(ctx, gpuError(*options.gpu), help);
    options.notes = args->value("--notes");
    exitCode = kExitSuccess;
    return options;
}

}  // namespace

int runRender(CommandContext& ctx) {
    const std::string help = ctx.help();
    int done = kExitSuccess;
    const std::optional<RenderOptions> options = parseRenderOptions(ctx, done);
    if (!options)
        return done;
    const std::string& out = options->output;
    const widgets::ExportOptions& picture = options->picture;

    HeadlessApplication app;
    const auto job = loadJobModel(ctx, options->inputs.paths, options->analysis);
    if (!job)
        return kExitUnreadable;
    widgets::ViewRequest request;
    request.view = QString::fromStdString(options->view);
    if (const std::optional<std::string>& range = options->range) {
        request.range = parseTimeRange(*range, job->durationNs);
        if (!request.range)
            return usageError(ctx, rangeError(*range), help);
    }
    if (const std::optional<std::string>& gpu = options->gpu) {
        const std::optional<analysis::GpuKey> key = parseGpu(*gpu, *job);
        if (!key)
            return usageError(ctx, gpuError(*gpu), help);
        request.gpu = *key;
    }
    if (!readJobNotes(ctx, options->inputs.paths, *job, options->notes, request.notes))
        return kExitUnreadable;
    widgets::BuiltView built = widgets::buildView(job, request, picture.size);
    if (!built.view)
        return usageError(ctx, built.error.toStdString(), help);
    const QString error = widgets::exportView(built.view->widget(), built.view->frame(), picture,
                                              QString::fromStdString(out));
    if (!error.isEmpty()) {
        ctx.err << "vramscope-cli render: " << error.toStdString() << "\n";
        return kExitUnreadable;
    }
    ctx.out << "wrote " << out << "\n";
    return kExitSuccess;
}

}  // namespace vramscope::app
