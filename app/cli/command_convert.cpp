// vramscope-cli convert: import any supported input and write .vscope, one file per rank.
#include <filesystem>
#include <ostream>
#include <set>

#include "cli_command.h"
#include "vramscope/analysis/advice/auto_notes.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/model/summary_timeline.h"
#include "vramscope/trace/notes.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {

namespace {

/// The command line of `convert`: IN... -o OUT [--no-compress] [--keep-going] [--notes FILE].
struct ConvertOptions {
    InputOptions inputs;
    std::string output;  ///< OUT.vscope or a directory (outputPathFor)
    bool compress = true;
    std::optional<std::string> notes;  ///< --notes FILE; default the inputs' own sidecar
};

std::optional<ConvertOptions> parseConvertOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    auto inputs = parseInputs(ctx, *args, {});
    if (!inputs) {
        return std::nullopt;
    }
    if (!args->has("--output")) {
        return usageFailure(ctx, "-o OUT is required", help);
    }
    ConvertOptions options;
    options.inputs = std::move(*inputs);
    options.output = *args->value("--output");
    options.compress = !args->has("--no-compress");
    options.notes = args->value("--notes");
    exitCode = kExitSuccess;
    return options;
}

/// The notes to carry into the written files: those of `--notes FILE` (refused when written for
/// other traces), else the inputs' own sidecar when there is one that belongs to them, else none.
/// nullopt after an error already written to ctx.err.
std::optional<std::vector<trace::Note>> notesToCarry(CommandContext& ctx,
                                                     const ConvertOptions& options,
                                                     const trace::Job& job) {
    const std::optional<std::string>& given = options.notes;
    const std::string path = given ? *given : trace::notesSidecarPath(options.inputs.paths);
    std::error_code ec;
    if (path.empty() || (!given && !std::filesystem::exists(path, ec))) {
        return std::vector<trace::Note>{};
    }
    const auto warnOrFail =
        [&](const std::string& message) -> std::optional<std::vector<trace::Note>> {
        ctx.err << "vramscope-cli convert: " << message << "\n";
        if (given) {
            return std::nullopt;
        }
        ctx.err << "vramscope-cli convert: converting without its notes\n";
        return std::vector<trace::Note>{};
    };
    size_t skipped = 0;
    auto doc = trace::readNotesFile(path, &skipped);
    if (!doc) {
        return warnOrFail(doc.error().describe());
    }
    std::vector<std::string> rankPaths;
    for (const trace::RankTrace& r : job.ranks) {
        rankPaths.push_back(r.path);
    }
    auto ids = trace::identifyTraces(rankPaths);
    if (!ids) {
        return warnOrFail(ids.error().describe());
    }
    if (auto belongs = trace::checkNotesBelongTo(*doc, *ids, path); !belongs.ok()) {
        return warnOrFail(belongs.error().describe());
    }
    if (skipped > 0) {
        ctx.err << "vramscope-cli convert: " << path << ": " << skipped
                << " note(s) with a bad field left out\n";
    }
    ctx.err << "vramscope-cli convert: carrying " << doc->notes.size() << " note(s) from " << path
            << "\n";
    return std::move(doc->notes);
}

}  // namespace

int runConvert(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<ConvertOptions> options = parseConvertOptions(ctx, code);
    if (!options) {
        return code;
    }
    auto job = openInputs(ctx, options->inputs);
    if (!job) {
        return kExitUnreadable;
    }
    const std::string& out = options->output;
    if (auto status = prepareOutput(out); !status.ok()) {
        ctx.err << "vramscope-cli convert: " << status.error().describe() << "\n";
        return kExitUnreadable;
    }
    auto notes = notesToCarry(ctx, *options, *job);
    if (!notes) {
        return kExitUnreadable;
    }
    const analysis::JobTimeAxis axis = analysis::jobTimeAxis(*job);
    trace::WriterOptions writerOptions;
    writerOptions.compress = options->compress;
    std::set<std::string> used;
    for (size_t i = 0; i < job->ranks.size(); ++i) {
        const auto& rt = job->ranks[i];
        const trace::RankId rank = rt.trace.data.header.rank;
        std::string label = rank == trace::kUnknownRank ? "file" + std::to_string(i)
                                                        : "rank" + std::to_string(toInt(rank));
        if (!used.insert(label).second) {
            label += "-" + std::to_string(i);
            used.insert(label);
        }
        const std::string path = outputPathFor(out, label);
        // The job is ours: the notes join its annotations rather than a copy of the trace.
        for (trace::Annotation& a :
             analysis::annotationsForRank(*notes, static_cast<int>(i), axis.toJobNs[i])) {
            job->ranks[i].trace.data.annotations.push_back(std::move(a));
        }
        const auto analyses = analysis::analysesForSummary(
            rt.trace.data, "vramscope-cli " VRAMSCOPE_VERSION " convert");
        if (auto status = trace::writeTraceFile(path, rt.trace.data, writerOptions, analyses);
            !status.ok()) {
            ctx.err << "vramscope-cli convert: cannot write " << status.error().describe() << "\n";
            return kExitUnreadable;
        }
        ctx.out << path << "\n";
        ctx.err << "vramscope-cli convert: " << rt.path << " (" << trace::toString(rt.format)
                << ", " << rt.trace.data.eventCount() << " events) -> " << path << "\n";
    }
    return kExitSuccess;
}

}  // namespace vramscope::app
