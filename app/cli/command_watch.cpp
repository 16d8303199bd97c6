// vramscope-cli watch: a live line per GPU of running jobs, and `check`'s rules as alerts while
// the job runs.

#include <unistd.h>

#include <iostream>
#include <ostream>
#include <sstream>

#include "analysis_report.h"
#include "cli_command.h"
#include "live_client.h"
#include "vramscope/analysis/check_rules.h"
#include "vramscope/analysis/job_analysis.h"
#include "vramscope/analysis/memory_timeline.h"

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

int runWatch(CommandContext& ctx) {
    std::vector<OptionSpec> options = {
        {"--interval", true, "DURATION", "time between refreshes (default 1s)"},
        {"--duration", true, "DURATION", "stop after this long; default: until the jobs end or ^C"},
        {"--alert", false, "",
         "exit 1 as soon as a rule of `check` fails while the job runs (peak share, staircase "
         "leak, exposed communication, OOM), printing why"},
        {"--plain", false, "", "print a block per refresh instead of redrawing in place"},
    };
    for (const OptionSpec& o : checkRuleOptionSpecs()) {
        options.push_back(o);  // the rules --alert checks, as `check` takes them
    }
    for (const OptionSpec& o : analysisOptionSpecs()) {
        if (o.name == "--iteration-regex" || o.name == "--capacity") {
            options.push_back(o);
        }
    }
    const std::string help = commandHelp(
        ctx.command, "PID|SOCKET|all... [--interval 1s] [--alert [RULES]] [--duration D] [--plain]",
        "Attaches to running jobs and prints one line per GPU that redraws in place: allocated\n"
        "and reserved memory now, the peak and its share of capacity, the iteration, the growth\n"
        "per iteration when memory climbs every iteration, and the exposed communication. With\n"
        "--alert the rules of `vramscope-cli check` are evaluated at each refresh (those named,\n"
        "as `check` takes them, else check's defaults: peak over the fraction, a staircase leak,\n"
        "exposed communication, an OOM), and the first that FAILs ends the watch with exit 1\n"
        "and its reason. A rule that cannot be checked yet (too few iterations) does not alert.\n"
        "The analyses run on everything received so far, so each refresh takes longer as the\n"
        "job runs.\n\n"
        "exit codes: 0 the jobs ended or the time ran out, 1 an alert fired, 2 usage,\n"
        "3 no job reachable",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (args->positional.empty()) {
        return usageError(ctx, "no target given (a pid, a socket path, or all)", help);
    }
    int64_t intervalNs = 1'000'000'000;
    int64_t deadline = INT64_MAX;
    for (const char* name : {"--interval", "--duration"}) {
        if (auto v = args->value(name)) {
            auto ns = parseDurationNs(*v);
            if (!ns || *ns == 0) {
                return usageError(ctx,
                                  std::string(name) +
                                      " needs a duration above 0 (a number with a unit: ns, us, ms "
                                      "or s, e.g. 30s or 200ms), got '" +
                                      *v + "'",
                                  help);
            }
            (std::string_view(name) == "--interval" ? intervalNs : deadline) =
                std::string_view(name) == "--interval" ? *ns : steadyNowNs() + *ns;
        }
    }
    analysis::CheckRules rules;
    std::vector<std::string> asked;
    if (!readCheckRules(ctx, *args, help, rules, asked)) {
        return kExitUsage;
    }
    if (!asked.empty() && !args->has("--alert")) {
        return usageError(ctx, "rule options (" + asked.front() + ", ...) take effect with --alert",
                          help);
    }
    analysis::JobAnalysisOptions analysisOptions;
    if (!readAnalysisOptions(ctx, *args, help, analysisOptions)) {
        return kExitUsage;
    }
    auto rx = attachTargets(ctx, args->positional);
    if (!rx) {
        return kExitUnreadable;
    }
    const bool inPlace = !args->has("--plain") && &ctx.out == &std::cout && ::isatty(1) != 0;
    const bool alert = args->has("--alert");
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
