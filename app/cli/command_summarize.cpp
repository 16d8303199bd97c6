// vramscope-cli summarize: a job index (.vscope-index) of rank files, one file at a time, and
// the merge of several such indexes.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "cli_command.h"
#include "vramscope/analysis/summary_timeline.h"
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

/// Prints progress at most once a second, and always for the last item.
class Progress {
public:
    Progress(std::ostream& err, size_t total) : m_err(err), m_total(total) {}
    void step(size_t done, const std::string& what) {
        const auto now = std::chrono::steady_clock::now();
        if (done == m_total || now - m_last >= std::chrono::seconds(1)) {
            m_err << "vramscope-cli summarize: " << done << "/" << m_total << " " << what << "\n";
            m_last = now;
        }
    }

private:
    std::ostream& m_err;
    size_t m_total;
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

int runMerge(CommandContext& ctx, const ParsedArgs& args, const std::string& out) {
    std::vector<std::pair<std::string, trace::JobIndex>> inputs;
    bool problems = false;
    for (const auto& path : args.positional) {
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
        // Writing an empty index would replace a good one at `out` with nothing.
        ctx.err << "vramscope-cli summarize: no index could be read; " << out
                << " was not written\n";
        return kExitUnreadable;
    }
    const trace::JobIndex merged = trace::mergeJobIndexes(std::move(inputs), folderOf(out));
    if (const int code = writeIndex(ctx, out, merged); code != kExitSuccess) {
        return code;
    }
    const size_t n = args.positional.size();
    ctx.err << "vramscope-cli summarize: merged " << n << (n == 1 ? " index, " : " indexes, ")
            << merged.ranks.size() << (merged.ranks.size() == 1 ? " rank file\n" : " rank files\n");
    return problems ? kExitUnreadable : kExitSuccess;
}

}  // namespace

int runSummarize(CommandContext& ctx) {
    const std::vector<OptionSpec> options = {
        {"--output", true, "INDEX", "the job index to write (job.vscope-index); required", "-o"},
        {"--merge", false, "",
         "the inputs are job indexes (of per-file runs): merge them into INDEX, the newest entry "
         "of each rank file winning"},
        {"--quiet", false, "", "no progress on stderr (problems are still written)"},
    };
    const std::string help = commandHelp(
        ctx.command, "DIR|FILES... -o INDEX  |  --merge INDEX... -o INDEX",
        "Writes a job index: every rank file's header and summaries (memory envelopes, peaks,\n"
        "kernel time, per-iteration figures) and where the file is, so that the viewer opens a\n"
        "job of thousands of ranks without reading their events. A .vscope with stored summaries\n"
        "is read without decoding its events; any other input (an older .vscope, Kineto JSON, a\n"
        "memory snapshot, an Nsight export) is read in full, one file at a time, and summarised\n"
        "with the whole-file analyses (iterations, leak verdict). A directory contributes its\n"
        "trace files (not recursing). Paths in the index are relative to its folder.\n\n"
        "A file that cannot be read is listed in the index with its problem; the others are\n"
        "summarised, and the exit code is 3. Runs on different files are independent: summarise\n"
        "a large job in parallel (one index per file or per batch) and join the indexes with\n"
        "--merge, e.g.\n"
        "  ls run/*.vscope | xargs -P 8 -I{} vramscope-cli summarize {} -o {}.vscope-index\n"
        "  vramscope-cli summarize --merge run/*.vscope-index -o run/job.vscope-index",
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
        return usageError(ctx, "-o INDEX is required", help);
    }
    const std::string out = *args->value("--output");
    if (args->has("--merge")) {
        return runMerge(ctx, *args, out);
    }
    bool problems = false;
    const std::vector<std::string> files = expandInputs(ctx, args->positional, problems);
    const std::string indexDir = folderOf(out);
    trace::JobIndex index;
    Progress progress(ctx.err, files.size());
    for (size_t i = 0; i < files.size(); ++i) {
        std::string how;
        trace::JobIndexEntry e = summarizeFile(files[i], indexDir, ctx.maxInputBytes, how);
        if (!e.problem.empty()) {
            ctx.err << "vramscope-cli summarize: " << e.problem << "\n";
            problems = true;
        } else if (const size_t cut = how.find("; "); cut != std::string::npos) {
            // What the reader lost is a problem to report, not progress: --quiet keeps it.
            ctx.err << "vramscope-cli summarize: warning: " << how.substr(cut + 2) << "\n";
        }
        if (!args->has("--quiet")) {
            progress.step(i + 1, files[i] + ": " + how);
        }
        index.ranks.push_back(std::move(e));
    }
    // The index's own order (readJobIndex sorts too, so a reader never depends on this).
    index = trace::mergeJobIndexes({{indexDir, std::move(index)}}, indexDir);
    if (const int code = writeIndex(ctx, out, index); code != kExitSuccess) {
        return code;
    }
    return problems ? kExitUnreadable : kExitSuccess;
}

}  // namespace vramscope::app
