// vramscope-cli convert: import any supported input and write .vscope, one file per rank.
#include <ostream>
#include <set>

#include "cli_command.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {

int runConvert(CommandContext& ctx) {
    const std::vector<OptionSpec> options = {
        {"--output", true, "OUT", "OUT.vscope or a directory; required", "-o"},
        {"--no-compress", false, "", "write frames without zstd compression"},
        {"--keep-going", false, "",
         "convert the inputs that can be read; unreadable ones are named on stderr"},
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
        "written are listed on stdout.",
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
        if (auto status = trace::writeTraceFile(path, rt.trace.data, writerOptions); !status.ok()) {
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
