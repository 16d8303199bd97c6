// vramscope-cli check: pass/fail rules over a job for CI pipelines and alerting.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "vramscope/analysis/check_rules.h"
#include "vramscope/analysis/text_format.h"

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

/// A rule's limit as the help prints it: "0.8", "0.3".
std::string limit(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
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
    const CheckRules defaults = CheckRules::defaults();
    const AdviceOptions evidence;
    const std::string help = commandHelp(
        ctx.command,
        "FILE|DIR... [--max-peak-fraction F] [--fail-on-leak] [--max-exposed-communication F]\n"
        "       [--allow-oom]",
        "Checks rules over every GPU of a job and prints one PASS/FAIL line per rule with the\n"
        "numbers behind it. With no rule given, checks all three with --max-peak-fraction " +
            limit(*defaults.maxPeakShare) + ",\n--fail-on-leak and --max-exposed-communication " +
            limit(*defaults.maxExposedCommunication) +
            ". The rule \"oom\" always runs (unless\n"
            "--allow-oom): it fails when a GPU ran out of memory. Exposed communication =\n"
            "communication kernels' time not overlapped by compute kernels, as a fraction of the "
            "span\n"
            "from the first kernel start to the last kernel end.\n\n"
            "A rule that cannot be checked on a GPU prints SKIP with the reason: no memory data\n"
            "(peak, leak, oom), capacity unknown (peak), too few iterations (leak), no kernels or\n"
            "a span under " +
            formatDuration(double(evidence.minTimeSpanNs)) + " / fewer than " +
            std::to_string(evidence.minTimeKernels) +
            " kernels (exposed communication). Data the reader or the producer lost is listed\n"
            "(DATA LOSS), and "
            "a rule checked on such partial input says so.\n\n"
            "exit codes: 0 every rule that could be checked passed, 1 a rule failed (named on "
            "stdout)\n"
            "or nothing could be checked (\"nothing could be checked\"), 2 usage, 3 unreadable "
            "input",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (args->positional.empty()) {
        return usageError(ctx, "no input given", help);
    }
    const bool any = args->has("--max-peak-fraction") || args->has("--fail-on-leak") ||
                     args->has("--max-exposed-communication");
    CheckRules rules = any ? CheckRules{} : CheckRules::defaults();
    rules.failOnOom = !args->has("--allow-oom");
    rules.failOnLeak = rules.failOnLeak || args->has("--fail-on-leak");
    if (auto v = args->value("--max-peak-fraction")) {
        rules.maxPeakShare = parseFraction(*v);
        if (!rules.maxPeakShare) {
            return usageError(ctx, "--max-peak-fraction needs a number > 0, got '" + *v + "'",
                              help);
        }
    }
    if (auto v = args->value("--max-exposed-communication")) {
        rules.maxExposedCommunication = parseFraction(*v);
        if (!rules.maxExposedCommunication) {
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
    auto partial = [&](const RuleResult& r) {
        return r.input < job->ranks.size() && !job->ranks[r.input].trace.data.dataLoss.empty()
                   ? std::string(" (partial input: data was lost, see DATA LOSS)")
                   : std::string();
    };
    for (const RuleResult& r : evaluateRules(*analysed, rules, analysisOptions)) {
        const bool wholeJob = r.input == SIZE_MAX;
        const std::string where = wholeJob ? std::string() : deviceLabel(r.rank, r.device) + ": ";
        ctx.out << toString(r.outcome) << " " << r.rule << ": " << where << r.detail;
        if (r.outcome == RuleOutcome::Skip) {
            ctx.out << "\n";
            note(skipped, wholeJob ? r.rule + " (" + analysis::kNoGpuMessage + ")"
                                   : r.rule + " (" + r.detail + ")");
            continue;
        }
        ctx.out << partial(r) << "\n";
        note(checked, r.rule);
        if (r.outcome == RuleOutcome::Fail) {
            note(failed, r.rule);
        }
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
