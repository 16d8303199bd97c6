// vramscope-cli replay: serves a recorded trace on a live socket as if its job were running, with
// the same server code as the capture agent (trace/live.h), so that live viewing can be tried
// and tested without a GPU.

#include <chrono>
#include <cmath>
#include <ostream>
#include <thread>

#include "cli_command.h"
#include "live_client.h"
#include "vramscope/trace/live.h"
#include "vramscope/trace/time_span.h"

namespace vramscope::app {
namespace {

/// Where the replay is in each table of the source: the next row to send.
struct Cursor {
    size_t memory = 0, kernels = 0, collectives = 0, ranges = 0, counters = 0, ooms = 0;
};

/// Moves into `batch` the rows of `src` from the cursors whose time is before `cutNs`. Rows go
/// out in the source's order (a row later than the cut holds back the rest of its table), so the
/// stream's rows, and the 1-based range indexes memory events carry, equal the source's.
void takeUntil(const trace::TraceData& src, int64_t cutNs, Cursor& c, trace::TraceData& batch) {
    for (; c.memory < src.memory.size() && src.memory.timestampNs[c.memory] < cutNs; ++c.memory) {
        batch.memory.append(src.memory.at(c.memory));
    }
    for (; c.kernels < src.kernels.size() && src.kernels.startNs[c.kernels] < cutNs; ++c.kernels) {
        batch.kernels.append(src.kernels.at(c.kernels));
    }
    for (; c.collectives < src.collectives.size() && src.collectives.startNs[c.collectives] < cutNs;
         ++c.collectives) {
        batch.collectives.append(src.collectives.at(c.collectives));
    }
    for (; c.ranges < src.ranges.size() && src.ranges.startNs[c.ranges] < cutNs; ++c.ranges) {
        batch.ranges.append(src.ranges.at(c.ranges));
    }
    for (; c.counters < src.counters.size() && src.counters.timestampNs[c.counters] < cutNs;
         ++c.counters) {
        batch.counters.append(src.counters.at(c.counters));
    }
    for (; c.ooms < src.ooms.size() && src.ooms[c.ooms].timestampNs < cutNs; ++c.ooms) {
        batch.ooms.push_back(src.ooms[c.ooms]);
    }
}

/// "2x", "0.5x", "10" -> the factor; "max" -> 0 (no pacing). Nullopt on anything else.
std::optional<double> parseSpeed(const std::string& text) {
    if (text == "max") {
        return 0.0;
    }
    std::string t = text;
    if (!t.empty() && (t.back() == 'x' || t.back() == 'X')) {
        t.pop_back();
    }
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v) || v <= 0 || v > 1e9) {
        return std::nullopt;
    }
    return v;
}

}  // namespace

namespace {

/// The command line of `replay`: FILE and how to pace and serve it.
struct ReplayOptions {
    InputOptions inputs;  ///< exactly one
    double speed = 1.0;   ///< trace time per wall time; 0: as fast as possible (max)
    int64_t lingerNs = 5'000'000'000;
    int64_t stepNs = 50'000'000;  ///< wall time between batches, >= 1 ms
    std::optional<int64_t> waitViewers;
    std::string socket;  ///< --socket PATH; empty: the default path
};

std::optional<ReplayOptions> parseReplayOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    auto inputs = parseInputs(ctx, *args, {1, 1, false, "replay takes one FILE"});
    if (!inputs) {
        return std::nullopt;
    }
    ReplayOptions options;
    options.inputs = std::move(*inputs);
    double& speed = options.speed;
    if (auto v = args->value("--speed")) {
        auto s = parseSpeed(*v);
        if (!s) {
            return usageFailure(
                ctx, "--speed needs a factor such as 1x, 10x, 0.5x or max, got '" + *v + "'", help);
        }
        speed = *s;
    }
    auto durationOption = [&](const char* name, int64_t fallbackNs) -> std::optional<int64_t> {
        auto v = args->value(name);
        if (!v) {
            return fallbackNs;
        }
        auto ns = parseDurationNs(*v);
        if (!ns) {
            usageError(ctx,
                       std::string(name) +
                           " needs a duration (a number with a unit: ns, us, ms or s, e.g. 30s or "
                           "200ms), got '" +
                           *v + "'",
                       help);
        }
        return ns;
    };
    const auto lingerNs = durationOption("--linger", 5'000'000'000);
    const auto stepNs = durationOption("--step", 50'000'000);
    if (!lingerNs || !stepNs) {
        return std::nullopt;
    }
    if (*stepNs < 1'000'000) {
        return usageFailure(ctx, "--step needs at least 1ms (a batch per step)", help);
    }
    options.lingerNs = *lingerNs;
    options.stepNs = *stepNs;
    std::optional<int64_t>& waitViewers = options.waitViewers;
    if (!integerOption(ctx, *args, "--wait-viewers", help, waitViewers)) {
        return std::nullopt;
    }
    if (waitViewers && (*waitViewers < 0 || *waitViewers > 1000)) {
        return usageFailure(ctx, "--wait-viewers needs a number of viewers from 0 to 1000", help);
    }
    options.socket = args->value("--socket").value_or("");
    exitCode = kExitSuccess;
    return options;
}

}  // namespace

int runReplay(CommandContext& ctx) {
    const std::string help = ctx.help();
    int code = kExitSuccess;
    const std::optional<ReplayOptions> options = parseReplayOptions(ctx, code);
    if (!options) {
        return code;
    }
    const std::string& file = options->inputs.paths.front();
    const double speed = options->speed;
    const std::optional<int64_t>& waitViewers = options->waitViewers;
    auto job = openInputs(ctx, options->inputs);
    if (!job) {
        return kExitUnreadable;
    }
    if (job->ranks.size() != 1) {
        return usageError(ctx,
                          file + " holds " + std::to_string(job->ranks.size()) +
                              " ranks; replay serves one: give one rank's file",
                          help);
    }
    const trace::TraceData& src = job->ranks[0].trace.data;
    for (const trace::DataLoss& l : src.dataLoss) {
        ctx.err << "replay: " << file << ": " << trace::describe(l) << "\n";
    }
    if (src.eventCount() == 0) {
        ctx.err << "replay: " << file << " holds no events; serving its header only\n";
    }

    trace::live::ServerOptions serverOptions;
    serverOptions.socketPath = options->socket;
    serverOptions.backlogBytes = 0;  // the whole file is in memory anyway: late viewers get all
    auto server = trace::live::LiveServer::start(serverOptions);
    if (!server.ok()) {
        ctx.err << "vramscope-cli replay: " << server.error().describe() << "\n";
        return kExitUnreadable;
    }
    trace::live::LiveServer& live = *server.value();
    ctx.out << "serving " << live.path() << "\n" << std::flush;
    installInterruptFlag();
    if (waitViewers && *waitViewers > 0) {
        live.waitForViewers(static_cast<uint64_t>(*waitViewers), 60'000);
    }

    // The batch keeps the source's tables whole (they are sent with the first batch) and takes
    // the events a step at a time. Wrapping `live` in a non-owning sink lets the writer frame it.
    struct Forward final : trace::ByteSink {
        trace::live::LiveServer& to;
        explicit Forward(trace::live::LiveServer& s) : to(s) {}
        trace::Status write(std::string_view bytes) override { return to.write(bytes); }
    };
    trace::TraceWriter writer(std::make_unique<Forward>(live));
    trace::TraceData batch;
    batch.header = src.header;
    batch.strings = src.strings;
    batch.frames = src.frames;
    batch.stacks = src.stacks;
    batch.communicators = src.communicators;
    batch.annotations = src.annotations;
    if (trace::Status s = writer.writeHeader(batch.header); !s.ok()) {
        ctx.err << "vramscope-cli replay: " << s.error().describe() << "\n";
        return kExitUnreadable;
    }
    // Start times only: batches are cut by row start (takeUntil), so the last cut that moves
    // a row is the latest start; an end past it has no row left to send.
    const auto [firstNs, lastNs] =
        trace::traceTimeSpan(src, trace::SpanEnds::StartsOnly).value_or(trace::TimeSpan{});
    const int64_t traceStepNs =
        speed > 0 ? std::max<int64_t>(1, std::llround(double(options->stepNs) * speed)) : INT64_MAX;
    const int64_t startWall = steadyNowNs();
    Cursor cursor;
    int64_t cut = firstNs;
    uint64_t batches = 0;
    uint64_t served = 0;
    for (bool last = false; !last && !interrupted();) {
        cut = speed > 0 && cut < lastNs - traceStepNs ? cut + traceStepNs : INT64_MAX;
        last = cut == INT64_MAX;
        takeUntil(src, cut, cursor, batch);
        if (last) {
            batch.dataLoss = src.dataLoss;
        }
        served += batch.eventCount();
        if (trace::Status s = writer.writeEvents(batch); !s.ok()) {
            ctx.err << "vramscope-cli replay: " << s.error().describe() << "\n";
            return kExitUnreadable;
        }
        trace::clearEventTables(batch);
        ++batches;
        if (speed > 0 && !last) {
            const int64_t dueWall = startWall + std::llround(double(cut - firstNs) / speed);
            const int64_t wait = dueWall - steadyNowNs();
            if (wait > 0) {
                std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
            }
        }
    }
    if (trace::Status s = writer.finish(); !s.ok()) {
        ctx.err << "vramscope-cli replay: " << s.error().describe() << "\n";
        return kExitUnreadable;
    }
    const bool drained = live.drain(static_cast<int>(options->lingerNs / 1'000'000));
    const trace::live::ServerStats st = live.stats();
    ctx.err << "replay: " << (interrupted() ? "interrupted after " : "served ") << st.framesWritten
            << " frames (" << formatBytes(int64_t(st.bytesWritten)) << ", " << served << " of "
            << src.eventCount() << " events) in " << batches << " batches over "
            << formatDuration(double(steadyNowNs() - startWall)) << "; " << st.viewersAccepted
            << " viewer(s) attached, " << st.framesDropped << " frame(s) dropped for slow viewers"
            << (st.viewersRefused > 0 ? ", " + std::to_string(st.viewersRefused) + " refused" : "")
            << (drained ? "" : "; a viewer still had data queued at the end") << "\n";
    return kExitSuccess;
}

}  // namespace vramscope::app
