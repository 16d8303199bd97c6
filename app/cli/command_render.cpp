// vramscope-cli render: one view of a job as a picture that stands on its own (PNG, or vector
// SVG / PDF with a title, the trace name, the time range, the legend, the notes and the formulas),
// drawn headless: no display is needed.
#include <QString>

#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "render_support.h"
#include "vramscope/widgets/view_export.h"
#include "vramscope/widgets/view_renderer.h"

namespace vramscope::app {

namespace {

std::string viewNames() {
    return widgets::renderableViews().join(QStringLiteral(", ")).toStdString();
}

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

int runRender(CommandContext& ctx) {
    std::vector<OptionSpec> options = {
        {"--view", true, "NAME", ""},  // help below: it lists the views
        {"--range", true, "A:B", "job time shown, e.g. 1.2s:3.4s (either side may be empty)"},
        {"--gpu", true, "R:G",
         "one GPU: rank R (as report prints it), device G; not for lanes, gaps, advice"},
        {"--notes", true, "FILE",
         "notes sidecar (.vscope-notes.json); default: the one beside "
         "the inputs, when there is one"},
        {"--size", true, "WxH", "picture size in logical pixels (default 1600x1000)"},
        {"--scale", true, "N", "PNG only: 1 or 2 device pixels per logical pixel"},
        {"--width", true, "PX", "PNG only: exactly PX pixels wide, height in proportion"},
        {"--output", true, "OUT", "where to write: .png, .svg or .pdf", "-o"},
    };
    const std::string views = viewNames();
    const std::string viewHelp = "the view to draw: " + views;
    options[0].help = viewHelp;  // outlives `options`' use: both end with this function
    for (const OptionSpec& o : analysisOptionSpecs())
        options.push_back(o);
    const std::string help = commandHelp(
        ctx.command, "FILE|DIR... --view NAME -o OUT.png|svg|pdf",
        "Draws one view of a job, headless, as a picture that stands on its own: a title, the\n"
        "trace name, the time range, the legend, the notes (numbered), and a footer with the\n"
        "vramscope version and the formulas behind the figures. SVG and PDF are vector: text\n"
        "stays text. No display is needed (Qt's offscreen platform unless QT_QPA_PLATFORM is\n"
        "set).\n\n"
        "roles is the memory timeline stacked by role; flame-role the flame view grouped by\n"
        "role; oom the flame view at the first out-of-memory event. With --range, the flame\n"
        "view shows what grew over the range.\n\n"
        "Exit codes: 2 for a bad command line, an unknown view, a range outside the job or a\n"
        "GPU it lacks; 3 for an input that cannot be read, a notes file that cannot be read or\n"
        "was written for other traces, or an output that cannot be written.",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args)
        return done;
    const std::optional<std::string> out = args->value("--output");
    if (!out)
        return usageError(ctx, "-o OUT.png|svg|pdf is needed", help);
    widgets::ExportOptions picture;
    if (auto format = widgets::exportFormatFor(QString::fromStdString(*out))) {
        picture.format = *format;
    } else {
        return usageError(ctx, "-o " + *out + ": the name must end in .png, .svg or .pdf", help);
    }
    const std::optional<std::string> view = args->value("--view");
    if (!view)
        return usageError(ctx, "--view NAME is needed (" + views + ")", help);
    if (!widgets::renderableViews().contains(QString::fromStdString(*view)))
        return usageError(ctx, "unknown view '" + *view + "' (one of " + views + ")", help);
    if (!readPictureOptions(ctx, *args, help, picture, done))
        return done;
    if (args->positional.empty())
        return usageError(ctx, "no input given", help);
    analysis::JobAnalysisOptions analysisOptions;
    if (!readAnalysisOptions(ctx, *args, help, analysisOptions))
        return kExitUsage;

    HeadlessApplication app;
    const auto job = loadJobModel(ctx, args->positional, analysisOptions);
    if (!job)
        return kExitUnreadable;
    widgets::ViewRequest request;
    request.view = QString::fromStdString(*view);
    if (auto range = args->value("--range")) {
        request.range = parseTimeRange(*range, job->durationNs);
        if (!request.range)
            return usageError(ctx,
                              "--range wants START:END, times with units and END after START, e.g. "
                              "1.2s:3.4s, not '" +
                                  *range + "'",
                              help);
    }
    if (auto gpu = args->value("--gpu")) {
        const std::optional<analysis::GpuKey> key = parseGpu(*gpu, *job);
        if (!key)
            return usageError(ctx, "--gpu wants R:G (rank:device), not '" + *gpu + "'", help);
        request.gpu = *key;
    }
    if (!readJobNotes(ctx, args->positional, *job, args->value("--notes"), request.notes))
        return kExitUnreadable;
    widgets::BuiltView built = widgets::buildView(job, request, picture.size);
    if (!built.view)
        return usageError(ctx, built.error.toStdString(), help);
    const QString error = widgets::exportView(built.view->widget(), built.view->frame(), picture,
                                              QString::fromStdString(*out));
    if (!error.isEmpty()) {
        ctx.err << "vramscope-cli render: " << error.toStdString() << "\n";
        return kExitUnreadable;
    }
    ctx.out << "wrote " << *out << "\n";
    return kExitSuccess;
}

}  // namespace vramscope::app
