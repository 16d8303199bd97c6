// vramscope-cli review: a multi-page PDF for a review: a summary page (the report's own lines on
// the job, GPUs, peaks and share of capacity, leak verdicts, compute / communication / idle,
// advice and cost), then one titled page per view that has something to show, with the notes.
#include <QString>
#include <QStringList>

#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "device_report.h"
#include "job_model_loader.h"
#include "render_support.h"
#include "review_summary.h"
#include "vramscope/analysis/advice/auto_notes.h"
#include "vramscope/analysis/model/job_title.h"
#include "vramscope/analysis/model/view_formulas.h"
#include "vramscope/widgets/view_export.h"
#include "vramscope/widgets/view_renderer.h"

namespace vramscope::app {

namespace {

/// The notes of the review: what the analyses found (auto-notes, ids "auto-N"), then the user's.
std::vector<trace::Note> reviewNotes(const analysis::JobModel& job, std::vector<trace::Note> user) {
    std::vector<trace::Note> notes = analysis::autoNotes(job);
    for (size_t i = 0; i < notes.size(); ++i) {
        if (notes[i].id.empty())
            notes[i].id = "auto-" + std::to_string(i + 1);
    }
    notes.insert(notes.end(), std::make_move_iterator(user.begin()),
                 std::make_move_iterator(user.end()));
    return notes;
}

}  // namespace

namespace {

/// The command line of `review`.
struct ReviewOptions {
    InputOptions inputs;
    std::string output;  ///< a .pdf
    QSize pageSize{1600, 1000};
    analysis::JobAnalysisOptions analysis;
    std::optional<std::string> notes;  ///< --notes FILE
};

std::optional<ReviewOptions> parseReviewOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args)
        return std::nullopt;
    exitCode = kExitUsage;
    ReviewOptions options;
    const std::optional<std::string> out = args->value("--output");
    if (!out)
        return usageFailure(ctx, "-o OUT.pdf is needed", help);
    if (widgets::exportFormatFor(QString::fromStdString(*out)) != widgets::ExportFormat::Pdf)
        return usageFailure(ctx, "-o " + *out + ": the review is a PDF (the name must end in .pdf)",
                            help);
    options.output = *out;
    if (auto size = args->value("--size")) {
        const std::optional<QSize> parsed = parseSize(*size);
        if (!parsed)
            return usageFailure(
                ctx, "--size wants WxH between 200x150 and 20000x20000, not '" + *size + "'", help);
        options.pageSize = *parsed;
    }
    auto inputs = parseInputs(ctx, *args, {});
    if (!inputs)
        return std::nullopt;
    options.inputs = std::move(*inputs);
    if (!readAnalysisOptions(ctx, *args, help, options.analysis))
        return std::nullopt;
    options.notes = args->value("--notes");
    exitCode = kExitSuccess;
    return options;
}

/// What the review presents: the report its summary page prints and the model its views draw.
struct ReviewJob {
    JobReport report;
    std::shared_ptr<const analysis::JobModel> model;
};

/// Opens the inputs and analyses them once (loadJobModel): the one step that loads. nullopt
/// after the error is written.
std::optional<ReviewJob> loadReviewJob(CommandContext& ctx, const ReviewOptions& options) {
    std::shared_ptr<const analysis::JobModel> model =
        loadJobModel(ctx, options.inputs, options.analysis);
    if (!model)
        return std::nullopt;
    // The summary's figures are the report's: the same model, builder and lines `report` uses.
    JobReport report = buildJobReport(model, options.analysis);
    return ReviewJob{std::move(report), std::move(model)};
}

}  // namespace

int runReview(CommandContext& ctx) {
    int done = kExitSuccess;
    const std::optional<ReviewOptions> options = parseReviewOptions(ctx, done);
    if (!options)
        return done;
    const std::string& out = options->output;
    const QSize pageSize = options->pageSize;

    HeadlessApplication app;
    const std::optional<ReviewJob> loaded = loadReviewJob(ctx, *options);
    if (!loaded)
        return kExitUnreadable;
    const JobReport& report = loaded->report;
    const std::shared_ptr<const analysis::JobModel>& job = loaded->model;
    std::vector<trace::Note> user;
    if (!readJobNotes(ctx, options->inputs.paths, *job, options->notes, user))
        return kExitUnreadable;
    const std::vector<trace::Note> notes = reviewNotes(*job, std::move(user));

    std::vector<std::string> shown;
    std::vector<std::string> skipped;
    for (std::string_view v : analysis::exportableViews()) {
        const std::string why = analysis::viewEmptyReason(*job, v);
        (why.empty() ? shown : skipped)
            .push_back(why.empty() ? std::string(v) : std::string(v) + ": " + why);
    }

    widgets::ExportPdfDocument pdf(
        QString::fromStdString(out), pageSize,
        QStringLiteral("vramscope review: %1").arg(QString::fromStdString(job->title)));
    if (QString error = pdf.begin(); !error.isEmpty()) {
        ctx.err << "vramscope-cli review: " << error.toStdString() << "\n";
        return kExitUnreadable;
    }
    widgets::ExportFrame summary;
    summary.title = QStringLiteral("Review: %1").arg(QString::fromStdString(job->title));
    summary.traceName = QString::fromStdString(job->title);
    summary.timeRange = QObject::tr("%1 pages: this summary, then %2")
                            .arg(1 + shown.size())
                            .arg(shown.empty() ? QObject::tr("no view (nothing to show)")
                                               : QString::fromStdString([&] {
                                                     std::string s;
                                                     for (const std::string& v : shown)
                                                         s += (s.empty() ? "" : ", ") + v;
                                                     return s;
                                                 }()));
    summary.version = widgets::exportVersionLine();
    summary.formulas << QStringLiteral(
        "Figures as `vramscope-cli report` prints them, each "
        "with its formula in parentheses.");
    QStringList lines;
    for (const std::string& line : reviewSummaryLines(report, skipped))
        lines << QString::fromStdString(line);
    pdf.paintTextPage(summary, lines);

    for (const std::string& v : shown) {
        widgets::ViewRequest request;
        request.view = QString::fromStdString(v);
        request.notes = notes;
        widgets::BuiltView page = widgets::buildView(job, request, pageSize);
        if (!page.view) {
            ctx.err << "vramscope-cli review: " << v << ": " << page.error.toStdString() << "\n";
            continue;
        }
        pdf.paintViewPage(page.view->widget(), page.view->frame());
    }
    if (QString error = pdf.finish(); !error.isEmpty()) {
        ctx.err << "vramscope-cli review: " << error.toStdString() << "\n";
        return kExitUnreadable;
    }
    ctx.out << "wrote " << out << ": " << pdf.pageCount() << " pages (summary, "
            << (shown.empty() ? std::string("no view") : std::to_string(shown.size()) + " views")
            << ")\n";
    return kExitSuccess;
}

}  // namespace vramscope::app
