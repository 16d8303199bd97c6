// vramscope-cli check: pass/fail rules over a job for CI pipelines and alerting.
#include <algorithm>
#include <cstdlib>
#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"

namespace vramscope::app {

namespace {

using namespace analysis;

/// A positive number (a threshold fraction); nullopt for anything else.
std::optional<double> parseFraction(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(v > 0.0) || v > 1e6) {
        return std::nullopt;
    }
    return v;
}

std::string where(const DeviceAnalysis& d) {
    return rankLabel(d.rank) + " GPU " + std::to_string(d.device);
}

std::string fraction(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

}  // namespace

int runCheck(CommandContext& ctx) {
    std::vector<OptionSpec> options = {
        {"--max-peak-fraction", true, "F",
         "fail when max(peak reserved, peak allocated) / capacity > F on any GPU"},
        {"--fail-on-leak", false, "", "fail when any GPU's memory climbs every iteration"},
        {"--max-exposed-communication", true, "F",
         "fail when exposed communication / span > F on any GPU"},
        {"--allow-oom", false, "", "do not fail when a GPU ran out of memory"},
    };
    for (const OptionSpec& o : analysisOptionSpecs()) {
        if (o.name == "--iteration-regex") {
            options.push_back(o);
        }
    }
    const std::string help = commandHelp(
        ctx.command,
        "FILE|DIR... [--max-peak-fraction F] [--fail-on-leak] [--max-exposed-communication F]\n"
        "       [--allow-oom]",
        "Checks rules over every GPU of a job and prints one PASS/FAIL line per rule with the\n"
        "numbers behind it. With no rule given, checks all three with --max-peak-fraction 0.8,\n"
        "--fail-on-leak and --max-exposed-communication 0.3. The rule \"oom\" always runs (unless\n"
        "--allow-oom): it fails when a GPU ran out of memory. Exposed communication =\n"
        "communication kernels' time not overlapped by compute kernels, as a fraction of the span\n"
        "from the first kernel start to the last kernel end.\n\n"
        "A rule that cannot be checked on a GPU prints SKIP with the reason: no memory data\n"
        "(peak, leak, oom), capacity unknown (peak), too few iterations (leak), no kernels or\n"
        "a span under 1 ms / fewer than 2 kernels (exposed communication). Data the reader or the "
        "producer lost is listed (DATA LOSS), and\n"
        "a rule checked on such partial input says so.\n\n"
        "exit codes: 0 every rule that could be checked passed, 1 a rule failed (named on stdout)\n"
        "or nothing could be checked (\"nothing could be checked\"), 2 usage, 3 unreadable input",
        options);
    auto args = parseArgs(ctx, options, help);
    if (!args) {
        return kExitUsage;
    }
    if (args->help) {
        ctx.out << help;
        return kExitSuccess;
    }
    if (args->positional.empty()) {
        return usageError(ctx, "no input given", help);
    }
    const bool any = args->has("--max-peak-fraction") || args->has("--fail-on-leak") ||
                     args->has("--max-exposed-communication");
    std::optional<double> maxPeak = any ? std::nullopt : std::optional<double>(0.8);
    std::optional<double> maxExposed = any ? std::nullopt : std::optional<double>(0.3);
    const bool failOnLeak = !any || args->has("--fail-on-leak");
    if (auto v = args->value("--max-peak-fraction")) {
        maxPeak = parseFraction(*v);
        if (!maxPeak) {
            return usageError(ctx, "--max-peak-fraction needs a number > 0, got '" + *v + "'",
                              help);
        }
    }
    if (auto v = args->value("--max-exposed-communication")) {
        maxExposed = parseFraction(*v);
        if (!maxExposed) {
            return usageError(
                ctx, "--max-exposed-communication needs a number > 0, got '" + *v + "'", help);
        }
    }
    JobAnalysisOptions analysisOptions;
    if (!readAnalysisOptions(ctx, *args, help, analysisOptions)) {
        return kExitUsage;
    }
    auto job = loadJob(ctx, args->positional);
    if (!job) {
        return kExitUnreadable;
    }
    auto analysed = analyzeJob(rankInputs(*job), analysisOptions);
    if (!analysed.ok()) {
        return usageError(ctx, analysed.error().message, help);
    }
    const bool checkOom = !args->has("--allow-oom");
    std::vector<std::string> failed;
    std::vector<std::string> checked;
    std::vector<std::string> skipped;  // "rule (why)", once each
    auto note = [](std::vector<std::string>& v, const std::string& s) {
        if (std::find(v.begin(), v.end(), s) == v.end()) {
            v.push_back(s);
        }
    };
    for (size_t i = 0; i < job->ranks.size(); ++i) {
        for (const trace::DataLoss& l : job->ranks[i].trace.data.dataLoss) {
            ctx.out << "DATA LOSS " << job->ranks[i].path << ": " << trace::describe(l) << "\n";
        }
    }
    auto partial = [&](const DeviceAnalysis& d) {
        return d.input < job->ranks.size() && !job->ranks[d.input].trace.data.dataLoss.empty()
                   ? std::string(" (partial input: data was lost, see DATA LOSS)")
                   : std::string();
    };
    auto report = [&](const DeviceAnalysis& d, bool ok, const std::string& rule,
                      const std::string& detail) {
        ctx.out << (ok ? "PASS " : "FAIL ") << rule << ": " << detail << partial(d) << "\n";
        note(checked, rule);
        if (!ok) {
            note(failed, rule);
        }
    };
    auto skip = [&](const DeviceAnalysis& d, const std::string& rule, const std::string& why) {
        ctx.out << "SKIP " << rule << ": " << where(d) << ": " << why << "\n";
        note(skipped, rule + " (" + why + ")");
    };
    for (const DeviceAnalysis& d : analysed->devices) {
        if (checkOom) {
            if (!d.ooms.empty()) {
                const OomFacts& o = d.ooms.front();
                report(d, false, "oom",
                       where(d) + ": " + std::to_string(d.ooms.size()) +
                           (d.ooms.size() == 1 ? " out-of-memory event" : " out-of-memory events") +
                           ", the first " + formatNs(o.sinceStartNs) +
                           " after the first event, requesting " + formatBytes(o.requestedBytes));
            } else if (!d.memoryData) {
                skip(d, "oom", "no memory data");
            } else {
                report(d, true, "oom", where(d) + ": no out-of-memory event");
            }
        }
        if (maxPeak) {
            const int64_t peak = std::max(d.peakAllocatedBytes, d.peakReservedBytes);
            if (!d.memoryData) {
                skip(d, "max-peak-fraction", "no memory data");
            } else if (d.capacityBytes == 0) {
                skip(d, "max-peak-fraction",
                     "capacity unknown (peak " + formatBytes(uint64_t(peak)) + ")");
            } else {
                const double f = double(peak) / double(d.capacityBytes);
                report(d, f <= *maxPeak, "max-peak-fraction",
                       where(d) + ": peak " + formatBytes(uint64_t(peak)) + " / capacity " +
                           formatBytes(d.capacityBytes) + " = " + fraction(f) +
                           (f <= *maxPeak ? " <= " : " > ") + fraction(*maxPeak));
            }
        }
        if (failOnLeak) {
            const LeakReport& l = d.leak;
            const size_t needed = size_t(std::max(2, analysisOptions.leak.minIterations));
            if (!d.memoryData) {
                skip(d, "fail-on-leak", "no memory data");
            } else if (l.iterations.size() < needed) {
                skip(d, "fail-on-leak",
                     "too few iterations with memory data (" + std::to_string(l.iterations.size()) +
                         ", at least " + std::to_string(needed) + " needed)");
            } else {
                report(d, l.verdict != LeakVerdict::Staircase, "fail-on-leak",
                       where(d) + ": " + toString(l.verdict) +
                           (l.verdict == LeakVerdict::Staircase
                                ? ", +" + formatBytes(uint64_t(l.growthBytesPerIteration)) +
                                      " per iteration over " + std::to_string(l.iterations.size()) +
                                      " iterations"
                                : " (" + std::to_string(l.iterations.size()) + " iterations, " +
                                      toString(d.iterations.source) + ")"));
            }
        }
        if (maxExposed) {
            if (!d.breakdown) {
                skip(d, "max-exposed-communication", "no kernels");
            } else if (!enoughTimeEvidence(*d.breakdown, analysisOptions.advice)) {
                skip(d, "max-exposed-communication",
                     "too little evidence (span " + formatNs(d.breakdown->spanNs) + ", " +
                         std::to_string(d.breakdown->kernels) +
                         " kernels; at least 1 ms and 2 kernels needed)");
            } else {
                const double f = d.breakdown->exposedCommunicationFraction();
                report(d, f <= *maxExposed, "max-exposed-communication",
                       where(d) + ": exposed communication " +
                           formatNs(d.breakdown->exposedCommunicationNs) + " / span " +
                           formatNs(d.breakdown->spanNs) + " = " + fraction(f) +
                           (f <= *maxExposed ? " <= " : " > ") + fraction(*maxExposed));
            }
        }
    }
    if (analysed->devices.empty()) {
        ctx.out << "SKIP all rules: the input has no GPU (no memory data, no kernels)\n";
        note(skipped, "all rules (no GPU in the input)");
    }
    if (!failed.empty()) {
        ctx.out << "failed:";
        for (const std::string& r : failed) {
            ctx.out << " " << r;
        }
        ctx.out << "\n";
        return kExitCheckFailed;
    }
    std::string notChecked;
    for (const std::string& s : skipped) {
        notChecked += (notChecked.empty() ? "" : "; ") + s;
    }
    if (checked.empty()) {
        ctx.out << "nothing could be checked: " << notChecked << "\n";
        return kExitCheckFailed;
    }
    if (skipped.empty()) {
        ctx.out << "all checks passed\n";
    } else {
        ctx.out << "all checked rules passed; not checked: " << notChecked << "\n";
    }
    return kExitSuccess;
}

}  // namespace vramscope::app
