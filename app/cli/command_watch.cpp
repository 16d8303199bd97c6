// vramscope-cli watch: a live line per GPU of running jobs, and `check`'s rules as alerts while
// the job runs.

#include <unistd.h>

#include <iostream>
#include <ostream>
#include <sstream>

#include "analysis_report.h"
#include "cli_command.h"
#include "live_client.h"
#include "vramscope/analysis/advice/check_rules.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/job_analysis.h"

namespace vramscope::app {
namespace {

/// The last value of a step series, 0 when empty.
int64_t lastValue(const analysis::StepSeries& s) {
    return s.bytes.empty() ? 0 : s.bytes.back();
}

/// One line per GPU: memory now and at its peak, iterations, growth and exposed communication.
std::string gpuLine(const analysis::DeviceAnalysis& d, const analysis::MemoryTimeline* t) {
    std::ostringstream s;
    s << analysis::deviceLabel(d.rank, d.device) << ":";
    if (d.memory.hasData() && t != nullptr) {
        if (d.memory.hasAllocated) {
            s << " allocated " << formatBytes(lastValue(t->allocated));
        }
        if (d.memory.hasReserved) {
            s << (d.memory.hasAllocated ? "," : "") << " reserved "
              << formatBytes(lastValue(t->reserved));
        }
        s << ", peak " << formatBytes(d.memory.peakBytes());
        if (auto share = d.memory.peakShare()) {
            s << " (" << formatPercent(uint64_t(d.memory.peakBytes()), d.memory.capacityBytes)
              << " of " << formatBytes(int64_t(d.memory.capacityBytes)) << ")";
        }
    } else {
        s << " no memory data yet";
    }
    const size_t iterations = d.iterations.iterations.size();
    s << ", "
      << (iterations == 0 ? std::string("no iteration yet")
                          : "iteration " + std::to_string(iterations));
    if (d.leak.verdict == analysis::LeakVerdict::Staircase) {
        s << ", " << (d.leak.growthBytesPerIteration >= 0 ? "+" : "")
          << formatBytes(d.leak.growthBytesPerIteration) << " per iteration (staircase";
        if (d.leak.iterationsToOom) {
            s << ", OOM in about " << static_cast<int64_t>(*d.leak.iterationsToOom)
              << " iterations";
        }
        s << ")";
    } else if (d.leak.verdict == analysis::LeakVerdict::Sawtooth) {
        s << ", steady (sawtooth)";
    }
    if (d.breakdown && d.breakdown->spanNs > 0) {
        s << ", exposed communication "
          << formatPercent(uint64_t(d.breakdown->exposedCommunicationNs),
                           uint64_t(d.breakdown->spanNs));
    }
    return s.str();
}

}  // namespace

namespace {

/// The command line of `watch`: targets, the refresh, the rules --alert checks.
struct WatchOptions {
    std::vector<std::string> targets;  ///< pids, socket paths or "all"
    int64_t intervalNs = 1'000'000'000;
    std::optional<int64_t> durationNs;  ///< stop after this long; default until the jobs end
    analysis::CheckRules rules;
    analysis::JobAnalysisOptions analysis;
    bool alert = false;
    bool plain = false;
};

std::optional<WatchOptions> parseWatchOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    WatchOptions options;
    if (args->positional.empty()) {
        return usageFailure(ctx, "no target given (a pid, a socket path, or all)", help);
    }
    options.targets = args->positional;
    for (const char* name : {"--interval", "--duration"}) {
        if (auto v = args->value(name)) {
            auto ns = parseDurationNs(*v);
            if (!ns || *ns == 0) {
                return usageFailure(
                    ctx,
                    std::string(name) +
                        " needs a duration above 0 (a number with a unit: ns, us, ms "
                        "or s, e.g. 30s or 200ms), got '" +
                        *v + "'",
                    help);
            }
            if (std::string_view(name) == "--interval") {
                options.intervalNs = *ns;
            } else {
                options.durationNs = *ns;
            }
        }
    }
    std::vector<std::string> asked;
    if (!readCheckRules(ctx, *args, help, options.rules, asked)) {
        return std::nullopt;
    }
    if (!asked.empty() && !args->has("--alert")) {
        return usageFailure(
            ctx, "rule options (" + asked.front() + ", ...) take effect with --alert", help);
    }
    if (!readAnalysisOptions(ctx, *args, help, options.analysis)) {
        return std::nullopt;
    }
    options.alert = args->has("--alert");
    options.plain = args->has("--plain");
    exitCode = kExitSuccess;
    return options;
}

}  // namespace

int runWatch(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<WatchOptions> options = parseWatchOptions(ctx, code);
    if (!options) {
        return code;
    }
    const int64_t intervalNs = options->intervalNs;
    const int64_t deadline = options->durationNs ? steadyNowNs() + *options->durationNs : INT64_MAX;
    const analysis::CheckRules& rules = options->rules;
    const analysis::JobAnalysisOptions& analysisOptions = options->analysis;
    auto rx = attachTargets(ctx, options->targets);
    if (!rx) {
        return kExitUnreadable;
    }
    const bool inPlace = !options->plain && &ctx.out == &std::cout && ::isatty(1) != 0;
    const bool alert = options->alert;
    const int64_t started = steadyNowNs();
    size_t drawnLines = 0;
    std::optional<analysis::RuleResult> fired;
    auto refresh = [&]() {
        trace::Job job;
        size_t ended = 0;
        for (size_t i = 0; i < rx->sourceCount(); ++i) {
            ended += rx->ended(i) ? 1 : 0;
            auto loaded = trace::readTraceBytes(rx->copyWhole(i), rx->source(i).path);
            if (!loaded.ok()) {
                continue;
            }
            trace::RankTrace r;
            r.path = rx->source(i).path;
            r.format = trace::InputFormat::Vscope;
            r.trace = std::move(loaded.value());
            job.ranks.push_back(std::move(r));
        }
        std::vector<std::vector<analysis::MemoryTimeline>> timelines;
        auto analysed =
            analysis::analyzeJob(analysis::rankInputs(job), analysisOptions, {}, &timelines);
        std::vector<std::string> lines;
        lines.push_back("watch: " + std::to_string(rx->sourceCount()) + " process(es), " +
                        formatDuration(double(steadyNowNs() - started)) +
                        (ended > 0 ? ", " + std::to_string(ended) + " ended" : ""));
        if (!analysed.ok()) {
            lines.push_back("  " + analysed.error().message);
        } else {
            for (const analysis::DeviceAnalysis& d : analysed->devices) {
                const analysis::MemoryTimeline* t = nullptr;
                if (d.input < timelines.size()) {
                    for (const auto& tl : timelines[d.input]) {
                        t = tl.device == d.device ? &tl : t;
                    }
                }
                lines.push_back("  " + gpuLine(d, t));
            }
            if (alert) {
                for (const analysis::RuleResult& r :
                     analysis::evaluateRules(*analysed, rules, analysisOptions)) {
                    if (r.outcome == analysis::RuleOutcome::Fail && !fired) {
                        fired = r;
                    }
                }
            }
        }
        if (inPlace && drawnLines > 0) {
            ctx.out << "\x1b[" << drawnLines << "F";
        }
        for (const std::string& l : lines) {
            ctx.out << (inPlace ? "\x1b[2K" : "") << l << "\n";
        }
        ctx.out << std::flush;
        drawnLines = lines.size();
    };
    int64_t nextRefresh = steadyNowNs() + intervalNs;
    while (!fired && !interrupted() && !rx->allEnded() && steadyNowNs() < deadline) {
        const int64_t now = steadyNowNs();
        if (now >= nextRefresh) {
            refresh();
            nextRefresh = now + intervalNs;
            continue;
        }
        const int64_t until = std::min(deadline, nextRefresh);
        rx->waitForData(static_cast<int>(std::clamp<int64_t>((until - now) / 1'000'000, 0, 200)));
    }
    rx->stop();
    if (!fired) {
        refresh();  // the final state: all that arrived
    }
    if (fired) {
        ctx.out << "ALERT " << fired->rule << ": "
                << analysis::deviceLabel(fired->rank, fired->device) << ": " << fired->detail
                << "\n";
        return kExitCheckFailed;
    }
    return kExitSuccess;
}

}  // namespace vramscope::app
