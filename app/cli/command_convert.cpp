// vramscope-cli convert: import any supported input and write .vscope, one file per rank.
#include <filesystem>
#include <ostream>
#include <set>

#include "cli_command.h"
#include "vramscope/analysis/auto_notes.h"
#include "vramscope/analysis/job_model.h"
#include "vramscope/analysis/summary_timeline.h"
#include "vramscope/trace/notes.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {

namespace {

/// The notes to carry into the written files: those of `--notes FILE` (refused when written for
/// other traces), else the inputs' own sidecar when there is one that belongs to them, else none.
/// nullopt after an error already written to ctx.err.
std::optional<std::vector<trace::Note>> notesToCarry(CommandContext& ctx, const ParsedArgs& args,
                                                     const trace::Job& job) {
    const auto given = args.value("--notes");
    const std::string path = given ? *given : trace::notesSidecarPath(args.positional);
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
    const std::vector<OptionSpec> options = {
        {"--output", true, "OUT", "OUT.vscope or a directory; required", "-o"},
        {"--no-compress", false, "", "write frames without zstd compression"},
        {"--keep-going", false, "",
         "convert the inputs that can be read; unreadable ones are named on stderr"},
        {"--notes", true, "FILE",
         "carry the notes of FILE (a .vscope-notes.json sidecar) into the output; by default "
         "the inputs' own sidecar is carried when there is one"},
    };
    const std::string help = commandHelp(
        ctx.command, "IN... -o OUT",
        "Imports every input (.vscope, PyTorch memory snapshot, Kineto/Chrome trace JSON,\n"
        "Nsight Systems SQLite export, optionally .gz, directories of them, .tar/.tar.gz archives) "
        "as one job and writes one\n"
        ".vscope per rank, with what the importers skipped recorded as data loss.\n\n"
        "Output: when OUT ends in .vscope, OUT-rank<R>.vscope (OUT without its extension);\n"
        "otherwise OUT is a directory (created when missing) holding rank<R>.vscope. A trace "
        "whose\n"
        "rank is unknown is named file<I> after its position I in the job (ranks first, then\n"
        "unknown ones by path); a second trace with the same rank gets -<I> appended. The files\n"
        "written are listed on stdout.\n\n"
        "Notes: a notes sidecar (docs/notes-format.md) is carried into the files when it was\n"
        "written for exactly these inputs (SHA-256); a note of one GPU goes into its rank's\n"
        "file, a note of every GPU into the first file.",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (args->positional.empty()) {
        return usageError(ctx, "no input given", help);
    }
    if (!args->has("--output")) {
        return usageError(ctx, "-o OUT is required", help);
    }
    auto job = loadJob(ctx, args->positional, args->has("--keep-going"));
    if (!job) {
        return kExitUnreadable;
    }
    const std::string out = *args->value("--output");
    if (auto status = prepareOutput(out); !status.ok()) {
        ctx.err << "vramscope-cli convert: " << status.error().describe() << "\n";
        return kExitUnreadable;
    }
    auto notes = notesToCarry(ctx, *args, *job);
    if (!notes) {
        return kExitUnreadable;
    }
    const analysis::JobTimeAxis axis = analysis::jobTimeAxis(*job);
    trace::WriterOptions writerOptions;
    writerOptions.compress = !args->has("--no-compress");
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
