// vramscope-cli check: pass/fail rules over a job for CI pipelines and alerting.
#include <algorithm>
#include <cstdlib>
#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"

namespace vramscope::app {

namespace {

using namespace analysis;

std::optional<double> parseFraction(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(v >= 0.0) || v > 1e6) {
        return std::nullopt;
    }
    return v;
}

std::string where(const DeviceAnalysis& d) {
    return "rank " + std::to_string(d.rank) + " GPU " + std::to_string(d.device);
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
    };
    for (const OptionSpec& o : analysisOptionSpecs()) {
        if (o.name == "--iteration-regex") {
            options.push_back(o);
        }
    }
    const std::string help = commandHelp(
        ctx.command,
        "FILE|DIR... [--max-peak-fraction F] [--fail-on-leak] [--max-exposed-communication F]",
        "Checks rules over every GPU of a job and prints one PASS/FAIL line per rule with the\n"
        "numbers behind it. With no rule given, checks all three with --max-peak-fraction 0.8,\n"
        "--fail-on-leak and --max-exposed-communication 0.3. A GPU whose capacity is unknown is\n"
        "skipped by the peak rule (and said so); exposed communication = communication kernels'\n"
        "time not overlapped by compute kernels, as a fraction of the span from the first kernel\n"
        "start to the last kernel end.\n\n"
        "exit codes: 0 all rules pass, 1 a rule failed (named on stdout), 2 usage, 3 unreadable "
        "input",
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
            return usageError(ctx, "--max-peak-fraction needs a number, got '" + *v + "'", help);
        }
    }
    if (auto v = args->value("--max-exposed-communication")) {
        maxExposed = parseFraction(*v);
        if (!maxExposed) {
            return usageError(ctx, "--max-exposed-communication needs a number, got '" + *v + "'",
                              help);
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
    std::vector<std::string> failed;
    auto report = [&](bool ok, const std::string& rule, const std::string& detail) {
        ctx.out << (ok ? "PASS " : "FAIL ") << rule << ": " << detail << "\n";
        if (!ok && std::find(failed.begin(), failed.end(), rule) == failed.end()) {
            failed.push_back(rule);
        }
    };
    for (const DeviceAnalysis& d : analysed->devices) {
        if (maxPeak) {
            const int64_t peak = std::max(d.peakAllocatedBytes, d.peakReservedBytes);
            if (d.capacityBytes == 0) {
                ctx.out << "SKIP max-peak-fraction: " << where(d) << ": capacity unknown (peak "
                        << formatBytes(uint64_t(peak)) << ")\n";
            } else {
                const double f = double(peak) / double(d.capacityBytes);
                report(f <= *maxPeak, "max-peak-fraction",
                       where(d) + ": peak " + formatBytes(uint64_t(peak)) + " / capacity " +
                           formatBytes(d.capacityBytes) + " = " + fraction(f) +
                           (f <= *maxPeak ? " <= " : " > ") + fraction(*maxPeak));
            }
        }
        if (failOnLeak) {
            const LeakReport& l = d.leak;
            report(l.verdict != LeakVerdict::Staircase, "fail-on-leak",
                   where(d) + ": " + toString(l.verdict) +
                       (l.verdict == LeakVerdict::Staircase
                            ? ", +" + formatBytes(uint64_t(l.growthBytesPerIteration)) +
                                  " per iteration over " + std::to_string(l.iterations.size()) +
                                  " iterations"
                            : " (" + std::to_string(l.iterations.size()) + " iterations, " +
                                  toString(d.iterations.source) + ")"));
        }
        if (maxExposed && d.breakdown) {
            const double f = d.breakdown->exposedCommunicationFraction();
            report(f <= *maxExposed, "max-exposed-communication",
                   where(d) + ": exposed communication " +
                       formatNs(d.breakdown->exposedCommunicationNs) + " / span " +
                       formatNs(d.breakdown->spanNs) + " = " + fraction(f) +
                       (f <= *maxExposed ? " <= " : " > ") + fraction(*maxExposed));
        }
    }
    if (failed.empty()) {
        ctx.out << "all checks passed\n";
        return kExitSuccess;
    }
    ctx.out << "failed:";
    for (const std::string& r : failed) {
        ctx.out << " " << r;
    }
    ctx.out << "\n";
    return kExitCheckFailed;
}

}  // namespace vramscope::app
