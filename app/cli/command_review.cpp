// vramscope-cli review: a multi-page PDF for a review: a summary page (the report's own lines on
// the job, GPUs, peaks and share of capacity, leak verdicts, compute / communication / idle,
// advice and cost), then one titled page per view that has something to show, with the notes.
#include <QString>
#include <QStringList>

#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "device_report.h"
#include "render_support.h"
#include "review_summary.h"
#include "vramscope/analysis/auto_notes.h"
#include "vramscope/analysis/job_title.h"
#include "vramscope/analysis/view_formulas.h"
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

int runReview(CommandContext& ctx) {
    std::vector<OptionSpec> options = {
        {"--output", true, "OUT.pdf", "where to write the PDF", "-o"},
        {"--notes", true, "FILE",
         "notes sidecar (.vscope-notes.json) added to the generated "
         "notes; default: the one beside the inputs, when there is one"},
        {"--size", true, "WxH", "page size in logical pixels, 96 per inch (default 1600x1000)"},
    };
    for (const OptionSpec& o : analysisOptionSpecs())
        options.push_back(o);
    std::string views;
    for (std::string_view v : analysis::exportableViews())
        views += (views.empty() ? "" : ", ") + std::string(v);
    const std::string help = commandHelp(
        ctx.command, "FILE|DIR... -o OUT.pdf",
        "Writes a review of a job as a multi-page PDF (vector: text stays text). Page 1 is a\n"
        "summary: the lines of `vramscope-cli report` on the job, its GPUs, the peaks and their\n"
        "share of capacity, the leak verdicts, compute, communication and idle time, the advice\n"
        "and the cost (with --gpu-hour-price). Then one titled page per view that has\n"
        "something to show (" +
            views +
            "), each with its notes and formulas; the\n"
            "summary names the views left out and why. Notes: those vramscope places for what it\n"
            "found (peak, OOM, staircase, straggler, largest idle gap), then the user's.\n\n"
            "Exit codes: 2 for a bad command line; 3 for an input that cannot be read, a notes "
            "file\n"
            "that cannot be read or was written for other traces, or an output that cannot be\n"
            "written.",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args)
        return done;
    const std::optional<std::string> out = args->value("--output");
    if (!out)
        return usageError(ctx, "-o OUT.pdf is needed", help);
    if (widgets::exportFormatFor(QString::fromStdString(*out)) != widgets::ExportFormat::Pdf)
        return usageError(ctx, "-o " + *out + ": the review is a PDF (the name must end in .pdf)",
                          help);
    QSize pageSize(1600, 1000);
    if (auto size = args->value("--size")) {
        const std::optional<QSize> parsed = parseSize(*size);
        if (!parsed)
            return usageError(
                ctx, "--size wants WxH between 200x150 and 20000x20000, not '" + *size + "'", help);
        pageSize = *parsed;
    }
    if (args->positional.empty())
        return usageError(ctx, "no input given", help);
    analysis::JobAnalysisOptions analysisOptions;
    if (!readAnalysisOptions(ctx, *args, help, analysisOptions))
        return kExitUsage;

    HeadlessApplication app;
    const std::shared_ptr<const analysis::JobModel> job =
        loadJobModel(ctx, args->positional, analysisOptions);
    if (!job)
        return kExitUnreadable;
    // The summary's figures are the report's: the same model, builder and lines `report` uses.
    const JobReport report = buildJobReport(job, analysisOptions);
    std::vector<trace::Note> user;
    if (!readJobNotes(ctx, args->positional, *job, args->value("--notes"), user))
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
        QString::fromStdString(*out), pageSize,
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
    ctx.out << "wrote " << *out << ": " << pdf.pageCount() << " pages (summary, "
            << (shown.empty() ? std::string("no view") : std::to_string(shown.size()) + " views")
            << ")\n";
    return kExitSuccess;
}

}  // namespace vramscope::app
