// vramscope-cli synth: a deterministic synthetic training job, one .vscope per rank.
#include <algorithm>
#include <filesystem>
#include <ostream>

#include "cli_command.h"
#include "vramscope/analysis/summary_timeline.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {

namespace {

/// Reads an integer option into `target` within [lo, hi]; false (after a usage message) when bad.
template <class T>
bool intOption(CommandContext& ctx, const ParsedArgs& args, std::string_view name, int64_t lo,
               int64_t hi, T& target, const std::string& help) {
    const auto text = args.value(name);
    if (!text) {
        return true;
    }
    const auto v = parseInteger(*text);
    if (!v || *v < lo || *v > hi) {
        usageError(ctx,
                   std::string(name) + " needs an integer from " + std::to_string(lo) + " to " +
                       std::to_string(hi) + ", not '" + *text + "'",
                   help);
        return false;
    }
    target = static_cast<T>(*v);
    return true;
}

/// synth builds one rank in memory before writing it; a TraceData event costs about 64 bytes
/// (columns of timestamps, sizes, addresses, ids and stacks), so 50 million events per rank keep
/// the peak near 3.2 GB.
constexpr uint64_t kMaxEventsPerRank = 50'000'000;

/// --slow-down PART and --slow-down-step-ns NS into `spec`; false after a usage error.
bool readSlowDown(CommandContext& ctx, const ParsedArgs& args, const std::string& help,
                  analysis::SyntheticJobSpec& spec) {
    const auto part = args.value("--slow-down");
    if (!part) {
        return true;
    }
    static const std::pair<const char*, analysis::SyntheticSlowDown> kParts[] = {
        {"all-reduce", analysis::SyntheticSlowDown::AllReduce},
        {"host-gap", analysis::SyntheticSlowDown::HostGap},
        {"straggler", analysis::SyntheticSlowDown::Straggler}};
    const auto* it = std::find_if(std::begin(kParts), std::end(kParts),
                                  [&](const auto& p) { return *part == p.first; });
    if (it == std::end(kParts)) {
        usageError(ctx, "--slow-down needs all-reduce, host-gap or straggler, not '" + *part + "'",
                   help);
        return false;
    }
    spec.slowDownPart = it->second;
    spec.slowDownStepNs = 1'000'000;
    return intOption(ctx, args, "--slow-down-step-ns", 0, 1'000'000'000'000, spec.slowDownStepNs,
                     help);
}

}  // namespace

int runSynth(CommandContext& ctx) {
    const std::vector<OptionSpec> options = {
        {"--ranks", true, "N", "ranks (processes, one GPU each); required"},
        {"--iterations", true, "K", "training iterations; required unless --events is given"},
        {"--events", true, "N",
         "instead of --iterations: enough iterations for about N events in all (benchmarks)"},
        {"--leak-bytes-per-iteration", true, "B",
         "bytes kept alive every iteration on the leaking rank (e.g. 64MiB); default 0"},
        {"--leak-rank", true, "R", "the rank that leaks, -1 for all; default 0"},
        {"--activation-bytes", true, "B",
         "bytes of each of the 24 activation tensors per iteration (e.g. 512MiB); default 256MiB"},
        {"--straggler-rank", true, "R", "a rank that starts every iteration 2 ms late"},
        {"--training-phases", false, "",
         "add an optimizer step, gradients, inputs and temporaries with known roles of memory"},
        {"--host-growth-bytes-per-iteration", true, "B",
         "record the host's resident memory, growing B bytes every iteration (0: flat)"},
        {"--slow-down", true, "PART",
         "iteration i lasts i x --slow-down-step-ns longer in PART: all-reduce (every rank's "
         "all-reduce), host-gap (the gap after it) or straggler (its delay; needs "
         "--straggler-rank)"},
        {"--slow-down-step-ns", true, "NS",
         "with --slow-down: the growth per iteration; default "
         "1000000 (1 ms)"},
        {"--seed", true, "S", "changes addresses and names only, never times or sizes; default 1"},
        {"--noise", false, "",
         "benchmarks: irregular times and addresses that compress like a real trace (peak bytes "
         "unchanged, times no longer exact)"},
        {"--no-compress", false, "", "write frames without zstd compression"},
        {"--output", true, "OUT", "OUT.vscope or a directory; required", "-o"},
    };
    const std::string help = commandHelp(
        ctx.command, "--ranks N --iterations K [options] -o OUT",
        "Writes a deterministic synthetic data-parallel training job: per rank one GPU with\n"
        "weights and optimizer state, an activation sawtooth per iteration, an optional leak,\n"
        "reserved memory growing in 2 GiB segments, compute kernels, one NCCL all-reduce per\n"
        "iteration timed from a 100 GB/s bus bandwidth, NVTX iteration ranges and an optional\n"
        "straggler. Each iteration runs a forward half of the compute kernels that allocates the\n"
        "activations one by one, a backward half that frees them, then the all-reduce of the\n"
        "gradients; a leaking rank keeps one extra allocation alive per iteration, and a\n"
        "straggler starts each iteration late, so the other ranks wait in the all-reduce.\n"
        "Same options, same bytes.\n\n"
        "Limit: at most 50000000 events per rank (a rank is built in memory, about 64 bytes an\n"
        "event, before it is written); more is a usage error.\n\n"
        "Output: when OUT ends in .vscope, one file per rank named OUT-rank<R>.vscope (OUT "
        "without\n"
        "its extension); otherwise OUT is a directory (created when missing) holding\n"
        "rank<R>.vscope. The files written are listed on stdout.",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (!args->positional.empty()) {
        return usageError(ctx, "unexpected argument '" + args->positional[0] + "'", help);
    }
    if (!args->has("--ranks")) {
        return usageError(ctx, "--ranks is required", help);
    }
    if (!args->has("--iterations") && !args->has("--events")) {
        return usageError(ctx, "--iterations (or --events) is required", help);
    }
    if (!args->has("--output")) {
        return usageError(ctx, "-o OUT is required", help);
    }
    analysis::SyntheticJobSpec spec;
    if (!intOption(ctx, *args, "--ranks", 1, 100'000, spec.ranks, help) ||
        !intOption(ctx, *args, "--iterations", 0, 100'000'000, spec.iterations, help) ||
        !intOption(ctx, *args, "--leak-rank", -1, 100'000, spec.leakRank, help) ||
        !intOption(ctx, *args, "--straggler-rank", -1, 100'000, spec.stragglerRank, help) ||
        !intOption(ctx, *args, "--seed", 0, INT64_MAX, spec.seed, help)) {
        return kExitUsage;
    }
    if (auto text = args->value("--leak-bytes-per-iteration")) {
        const auto v = parseByteCount(*text);
        if (!v) {
            return usageError(ctx,
                              "--leak-bytes-per-iteration needs a byte count such as 1048576 or "
                              "64MiB, not '" +
                                  *text + "'",
                              help);
        }
        spec.leakBytesPerIteration = *v;
    }
    if (auto text = args->value("--host-growth-bytes-per-iteration")) {
        const auto v = parseByteCount(*text);
        if (!v) {
            return usageError(ctx,
                              "--host-growth-bytes-per-iteration needs a byte count such as "
                              "1048576 or 64MiB, not '" +
                                  *text + "'",
                              help);
        }
        spec.hostCounter = true;
        spec.hostGrowthBytesPerIteration = *v;
    }
    if (auto text = args->value("--activation-bytes")) {
        const auto v = parseByteCount(*text);
        if (!v || *v == 0) {
            return usageError(ctx,
                              "--activation-bytes needs a positive byte count such as 268435456 "
                              "or 256MiB, not '" +
                                  *text + "'",
                              help);
        }
        spec.activationBytes = *v;
    }
    if (auto text = args->value("--events")) {
        const auto v = parseInteger(*text);
        if (!v || *v < 1) {
            return usageError(ctx, "--events needs a positive integer, not '" + *text + "'", help);
        }
        spec.iterations = analysis::iterationsForEventCount(spec, static_cast<uint64_t>(*v));
    }
    spec.benchmarkNoise = args->has("--noise");
    spec.trainingPhases = args->has("--training-phases");
    if (!readSlowDown(ctx, *args, help, spec)) {
        return kExitUsage;
    }
    if (const std::string problem = analysis::validateSyntheticJobSpec(spec); !problem.empty()) {
        return usageError(ctx, problem, help);
    }
    for (int r = 0; r < spec.ranks; ++r) {
        const uint64_t per = analysis::syntheticEventsPerIteration(spec, r);
        if (per > 0 && uint64_t(spec.iterations) > kMaxEventsPerRank / per) {
            return usageError(
                ctx,
                "rank " + std::to_string(r) + " would hold about " + std::to_string(per) + " x " +
                    std::to_string(spec.iterations) + " events, more than the limit of " +
                    std::to_string(kMaxEventsPerRank) + " per rank; use fewer iterations",
                help);
        }
    }
    const std::string out = *args->value("--output");
    if (auto status = prepareOutput(out); !status.ok()) {
        ctx.err << "vramscope-cli synth: " << status.error().describe() << "\n";
        return kExitUnreadable;
    }
    trace::WriterOptions writerOptions;
    writerOptions.compress = !args->has("--no-compress");
    uint64_t events = 0;
    uint64_t bytes = 0;
    for (int r = 0; r < spec.ranks; ++r) {
        const trace::TraceData data = analysis::generateSyntheticRank(spec, r);
        const std::string path = outputPathFor(out, "rank" + std::to_string(r));
        const auto analyses =
            analysis::analysesForSummary(data, "vramscope-cli " VRAMSCOPE_VERSION " synth");
        if (auto status = trace::writeTraceFile(path, data, writerOptions, analyses);
            !status.ok()) {
            ctx.err << "vramscope-cli synth: cannot write " << status.error().describe() << "\n";
            return kExitUnreadable;
        }
        events += data.eventCount();
        std::error_code ec;
        bytes += std::filesystem::file_size(path, ec);
        ctx.out << path << "\n";
    }
    ctx.err << "vramscope-cli synth: " << spec.ranks << (spec.ranks == 1 ? " rank, " : " ranks, ")
            << spec.iterations << " iterations, " << events << " events, " << bytes
            << " bytes written\n";
    return kExitSuccess;
}

}  // namespace vramscope::app
