// vramscope-cli synth: a deterministic synthetic training job, one .vscope per rank.
#include <algorithm>
#include <filesystem>
#include <ostream>

#include "cli_command.h"
#include "vramscope/analysis/model/summary_timeline.h"
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

namespace {

/// The command line of `synth`: the job to generate and where to write it.
struct SynthOptions {
    analysis::SyntheticJobSpec spec;  ///< checked: validateSyntheticJobSpec and the event limit
    std::string output;               ///< OUT.vscope or a directory (outputPathFor)
    bool compress = true;
};

std::optional<SynthOptions> parseSynthOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    if (!args->positional.empty()) {
        return usageFailure(ctx, "unexpected argument '" + args->positional[0] + "'", help);
    }
    if (!args->has("--ranks")) {
        return usageFailure(ctx, "--ranks is required", help);
    }
    if (!args->has("--iterations") && !args->has("--events")) {
        return usageFailure(ctx, "--iterations (or --events) is required", help);
    }
    if (!args->has("--output")) {
        return usageFailure(ctx, "-o OUT is required", help);
    }
    SynthOptions options;
    analysis::SyntheticJobSpec& spec = options.spec;
    if (!intOption(ctx, *args, "--ranks", 1, 100'000, spec.ranks, help) ||
        !intOption(ctx, *args, "--iterations", 0, 100'000'000, spec.iterations, help) ||
        !intOption(ctx, *args, "--leak-rank", -1, 100'000, spec.leakRank, help) ||
        !intOption(ctx, *args, "--straggler-rank", -1, 100'000, spec.stragglerRank, help) ||
        !intOption(ctx, *args, "--seed", 0, INT64_MAX, spec.seed, help)) {
        return std::nullopt;
    }
    if (auto text = args->value("--leak-bytes-per-iteration")) {
        const auto v = parseByteCount(*text);
        if (!v) {
            return usageFailure(ctx,
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
            return usageFailure(ctx,
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
            return usageFailure(ctx,
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
            return usageFailure(ctx, "--events needs a positive integer, not '" + *text + "'",
                                help);
        }
        spec.iterations = analysis::iterationsForEventCount(spec, static_cast<uint64_t>(*v));
    }
    spec.benchmarkNoise = args->has("--noise");
    spec.trainingPhases = args->has("--training-phases");
    if (!readSlowDown(ctx, *args, help, spec)) {
        return std::nullopt;
    }
    if (const std::string problem = analysis::validateSyntheticJobSpec(spec); !problem.empty()) {
        return usageFailure(ctx, problem, help);
    }
    for (int r = 0; r < spec.ranks; ++r) {
        const uint64_t per = analysis::syntheticEventsPerIteration(spec, r);
        if (per > 0 && uint64_t(spec.iterations) > kMaxEventsPerRank / per) {
            usageError(ctx,
                       "rank " + std::to_string(r) + " would hold about " + std::to_string(per) +
                           " x " + std::to_string(spec.iterations) +
                           " events, more than the limit of " + std::to_string(kMaxEventsPerRank) +
                           " per rank; use fewer iterations",
                       help);
            return std::nullopt;
        }
    }
    options.output = *args->value("--output");
    options.compress = !args->has("--no-compress");
    exitCode = kExitSuccess;
    return options;
}

}  // namespace

int runSynth(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<SynthOptions> options = parseSynthOptions(ctx, code);
    if (!options) {
        return code;
    }
    const analysis::SyntheticJobSpec& spec = options->spec;
    const std::string& out = options->output;
    if (auto status = prepareOutput(out); !status.ok()) {
        ctx.err << "vramscope-cli synth: " << status.error().describe() << "\n";
        return kExitUnreadable;
    }
    trace::WriterOptions writerOptions;
    writerOptions.compress = options->compress;
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
