// vramscope-cli summarize: a job index (.vscope-index) of rank files, one file at a time, and
// the merge of several such indexes.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "command_summarize.h"
#include "vramscope/analysis/model/summary_timeline.h"
#include "vramscope/trace/job_index.h"
#include "vramscope/trace/summary.h"

namespace vramscope::app {

namespace {

namespace fs = std::filesystem;

/// The inputs: files as given, directories by openJob's rule for their members (not
/// recursing), each directory's in name order. A directory that cannot be listed is a problem.
std::vector<std::string> expandInputs(CommandContext& ctx, const std::vector<std::string>& paths,
                                      bool& problems) {
    std::vector<std::string> files;
    for (const auto& path : paths) {
        std::error_code ec;
        if (!fs::is_directory(path, ec)) {
            files.push_back(path);
            continue;
        }
        std::vector<std::string> members;
        for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
            std::error_code typeError;
            if (it->is_regular_file(typeError) &&
                trace::isJobMemberName(it->path().filename().string())) {
                members.push_back(it->path().string());
            }
        }
        if (ec || members.empty()) {
            ctx.err << "vramscope-cli summarize: " << path << ": "
                    << (ec ? "cannot list the directory: " + ec.message()
                           : std::string("the directory holds no supported trace file"))
                    << "\n";
            problems = true;
        }
        std::sort(members.begin(), members.end());
        files.insert(files.end(), members.begin(), members.end());
    }
    return files;
}

/// The first bytes of `path` (at most `n`), empty when it cannot be read.
std::string fileStart(const std::string& path, size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::string head(n, '\0');
    in.read(head.data(), static_cast<std::streamsize>(n));
    head.resize(in ? n : static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    return head;
}

/// A header without a rank takes the one its file name gives (openJob's rule: rank-3, rank3, ...).
void setRankFromName(trace::JobIndexEntry& e, const std::string& path) {
    if (e.summary.header.rank == trace::kUnknownRank) {
        e.summary.header.rank = trace::rankFromFileName(path);
    }
}

/// One rank file summarised: its stored summary when it has one, else one computed from its
/// events (any supported format), with the whole-file analyses. `how` says which, for progress.
trace::JobIndexEntry summarizeFile(const std::string& path, const std::string& indexDir,
                                   uint64_t maxInputBytes, std::string& how) {
    trace::JobIndexEntry e;
    std::error_code ec;
    const fs::path abs = fs::absolute(path, ec).lexically_normal();
    const fs::path rel = abs.lexically_relative(indexDir);
    e.path = rel.empty() ? abs.string() : rel.string();
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        e.fileBytes = static_cast<uint64_t>(st.st_size);
        e.modifiedUnixNs = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    }
    trace::ReadOptions options;
    options.maxInputBytes = maxInputBytes;
    const std::string head = fileStart(path, 1 << 16);
    if (trace::looksLikeJobIndex(head)) {
        e.problem = path + ": a job index, not a rank file (merge indexes with --merge)";
        how = "refused";
        return e;
    }
    if (trace::looksLikeVscope(head)) {
        auto stored = trace::readTraceSummary(path, options);
        // A damaged summary frame leaves figures of unknown worth: the events decide then. A
        // cut is different: the summaries before it are whole.
        if (stored && stored->found && stored->report.framesSkipped == 0) {
            e.summary = std::move(stored->summary);
            setRankFromName(e, path);
            how = e.summary.final ? "stored summary" : "stored summaries up to the cut";
            if (!stored->report.complete) {
                how += "; " + stored->report.summary();
            }
            return e;
        }
    }
    auto loaded = trace::openTrace(path, options);
    if (!loaded) {
        e.problem = loaded.error().describe();
        setRankFromName(e, path);
        how = "not summarised";
        return e;
    }
    e.summary = trace::summarizeTrace(loaded->data);
    setRankFromName(e, path);
    e.summary.analysis =
        analysis::analysesForSummary(loaded->data, "vramscope-cli " VRAMSCOPE_VERSION " summarize");
    how = "computed from " + std::to_string(loaded->data.eventCount()) + " events";
    if (!loaded->report.complete) {
        how += "; " + loaded->report.summary();
    }
    return e;
}

/// Prints progress at most once a second, and always at the end (done == 1).
class ProgressLines {
public:
    explicit ProgressLines(std::ostream& err) : m_err(err) {}
    bool operator()(double done, std::string_view stage) {
        const auto now = std::chrono::steady_clock::now();
        if (done >= 1.0 || now - m_last >= std::chrono::seconds(1)) {
            m_err << "vramscope-cli summarize: " << stage << "\n";
            m_last = now;
        }
        return true;
    }

private:
    std::ostream& m_err;
    std::chrono::steady_clock::time_point m_last = std::chrono::steady_clock::now();
};

std::string folderOf(const std::string& path) {
    std::error_code ec;
    return fs::absolute(path, ec).lexically_normal().parent_path().string();
}

int writeIndex(CommandContext& ctx, const std::string& out, const trace::JobIndex& index) {
    if (auto s = trace::writeJobIndex(out, index); !s.ok()) {
        ctx.err << "vramscope-cli summarize: cannot write " << s.error().describe() << "\n";
        return kExitUnreadable;
    }
    ctx.out << out << "\n";
    return kExitSuccess;
}

/// The indexes `paths` merged into one for an index at `out`; unreadable ones are written to
/// ctx.err and counted in `problems`. nullopt (and the message) when none could be read:
/// writing an empty index would replace a good one at `out` with nothing.
std::optional<trace::JobIndex> mergeIndexes(CommandContext& ctx,
                                            const std::vector<std::string>& paths,
                                            const std::string& out, bool& problems) {
    std::vector<std::pair<std::string, trace::JobIndex>> inputs;
    for (const auto& path : paths) {
        auto read = trace::readJobIndex(path);
        if (!read) {
            ctx.err << "vramscope-cli summarize: cannot read " << read.error().describe() << "\n";
            problems = true;
            continue;
        }
        for (const auto& p : read->report.problems) {
            ctx.err << "vramscope-cli summarize: " << p.describe() << "\n";
            problems = true;
        }
        inputs.emplace_back(folderOf(path), std::move(read->index));
    }
    if (inputs.empty()) {
        ctx.err << "vramscope-cli summarize: no index could be read; " << out
                << " was not written\n";
        return std::nullopt;
    }
    return trace::mergeJobIndexes(std::move(inputs), folderOf(out));
}

}  // namespace

std::optional<SummarizeOptions> parseSummarizeOptions(CommandContext& ctx, int& exitCode) {
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
        return usageFailure(ctx, "-o INDEX is required", help);
    }
    SummarizeOptions options;
    options.inputs = std::move(inputs->paths);
    options.output = *args->value("--output");
    options.merge = args->has("--merge");
    options.quiet = args->has("--quiet");
    exitCode = kExitSuccess;
    return options;
}

SummarizeResult summarizeInputs(CommandContext& ctx, const SummarizeOptions& options,
                                const trace::Progress& progress) {
    SummarizeResult result;
    const std::vector<std::string> files = expandInputs(ctx, options.inputs, result.problems);
    const std::string indexDir = folderOf(options.output);
    for (size_t i = 0; i < files.size(); ++i) {
        std::string how;
        trace::JobIndexEntry e = summarizeFile(files[i], indexDir, ctx.maxInputBytes, how);
        if (!e.problem.empty()) {
            ctx.err << "vramscope-cli summarize: " << e.problem << "\n";
            result.problems = true;
        } else if (const size_t cut = how.find("; "); cut != std::string::npos) {
            // What the reader lost is a problem to report, not progress: --quiet keeps it.
            ctx.err << "vramscope-cli summarize: warning: " << how.substr(cut + 2) << "\n";
        }
        if (progress) {
            progress(double(i + 1) / double(files.size()), std::to_string(i + 1) + "/" +
                                                               std::to_string(files.size()) + " " +
                                                               files[i] + ": " + how);
        }
        result.index.ranks.push_back(std::move(e));
    }
    // The index's own order (readJobIndex sorts too, so a reader never depends on this).
    result.index = trace::mergeJobIndexes({{indexDir, std::move(result.index)}}, indexDir);
    return result;
}

int runSummarize(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<SummarizeOptions> options = parseSummarizeOptions(ctx, code);
    if (!options) {
        return code;
    }
    const std::string& out = options->output;
    if (options->merge) {
        bool problems = false;
        const std::optional<trace::JobIndex> merged =
            mergeIndexes(ctx, options->inputs, out, problems);
        if (!merged) {
            return kExitUnreadable;
        }
        if (const int written = writeIndex(ctx, out, *merged); written != kExitSuccess) {
            return written;
        }
        const size_t n = options->inputs.size();
        ctx.err << "vramscope-cli summarize: merged " << n << (n == 1 ? " index, " : " indexes, ")
                << merged->ranks.size()
                << (merged->ranks.size() == 1 ? " rank file\n" : " rank files\n");
        return problems ? kExitUnreadable : kExitSuccess;
    }
    trace::Progress progress;
    if (!options->quiet) {
        progress = ProgressLines(ctx.err);
    }
    const SummarizeResult result = summarizeInputs(ctx, *options, progress);
    if (const int written = writeIndex(ctx, out, result.index); written != kExitSuccess) {
        return written;
    }
    return result.problems ? kExitUnreadable : kExitSuccess;
}

}  // namespace vramscope::app
