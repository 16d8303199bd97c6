// vramscope-cli check: pass/fail rules over a job for CI pipelines and alerting.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "job_model_loader.h"
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

/// What `check` prints after the rule lines, and its exit code: a failed rule fails; a rule the
/// user named that could not be checked fails unless allowUnchecked; a default rule that could not
/// be checked is listed without failing, unless nothing at all could be checked.
int conclude(CommandContext& ctx, const std::vector<RuleResult>& results,
             const std::vector<std::string>& asked, bool allowUnchecked) {
    std::vector<std::string> failed, checked, unchecked, askedUnchecked;  // each entry once
    auto note = [](std::vector<std::string>& v, const std::string& s) {
        if (std::find(v.begin(), v.end(), s) == v.end()) {
            v.push_back(s);
        }
    };
    for (const RuleResult& r : results) {
        if (r.outcome != RuleOutcome::NotChecked) {
            note(checked, r.rule);
            if (r.outcome == RuleOutcome::Fail) {
                note(failed, r.rule);
            }
            continue;
        }
        const bool wholeJob = r.input == SIZE_MAX;
        const std::string what =
            r.rule + (wholeJob ? " (" + r.detail + ")"
                               : " (" + deviceLabel(r.rank, r.device) + ": " + r.detail + ")");
        note(unchecked, what);
        const bool named = std::find(asked.begin(), asked.end(), r.rule) != asked.end() ||
                           (wholeJob && !asked.empty());
        if (named) {
            note(askedUnchecked, what);
        }
    }
    auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (const std::string& x : v) {
            s += (s.empty() ? "" : "; ") + x;
        }
        return s;
    };
    if (!failed.empty()) {
        ctx.out << "failed:";
        for (const std::string& r : failed) {
            ctx.out << " " << r;
        }
        ctx.out << "\n";
        if (!unchecked.empty()) {
            ctx.out << "NOT CHECKED: " << list(unchecked) << "\n";
        }
        return kExitCheckFailed;
    }
    if (!askedUnchecked.empty() && !allowUnchecked) {
        ctx.out << "NOT CHECKED: " << list(askedUnchecked)
                << "\nfailed: a rule asked for could not be checked (--allow-unchecked accepts "
                   "that)\n";
        return kExitCheckFailed;
    }
    if (checked.empty()) {
        ctx.out << "nothing could be checked: " << list(unchecked) << "\n";
        return allowUnchecked ? kExitSuccess : kExitCheckFailed;
    }
    if (unchecked.empty()) {
        ctx.out << "all checks passed\n";
    } else {
        ctx.out << "all checked rules passed; NOT CHECKED: " << list(unchecked) << "\n";
    }
    return kExitSuccess;
}

}  // namespace

std::vector<OptionSpec> checkRuleOptionSpecs() {
    return {
        {"--max-peak-fraction", true, "F",
         "fail when max(peak reserved, peak allocated) / capacity > F on any GPU"},
        {"--fail-on-leak", false, "", "fail when any GPU's memory climbs every iteration"},
        {"--max-exposed-communication", true, "F",
         "fail when exposed transfer (exposed communication less waiting for the last rank) / "
         "span > F on any GPU"},
        {"--advice", true, "RULE[,RULE...]|all",
         "check rules of the training checklist (mixed-precision, allocator-churn, host-memory, "
         "slow-down): fail where one gives a warning or worse"},
        {"--allow-oom", false, "", "do not fail when a GPU ran out of memory"},
    };
}

bool readCheckRules(CommandContext& ctx, const ParsedArgs& args, const std::string& help,
                    CheckRules& rules, std::vector<std::string>& asked) {
    asked.clear();
    for (const char* rule : {"max-peak-fraction", "fail-on-leak", "max-exposed-communication"}) {
        if (args.has(std::string("--") + rule)) {
            asked.emplace_back(rule);
        }
    }
    std::vector<std::string> adviceRules;
    if (auto v = args.value("--advice")) {
        std::string rest = *v;
        for (bool more = true; more;) {
            const size_t comma = rest.find(',');
            const std::string rule = rest.substr(0, comma);
            more = comma != std::string::npos;
            rest = more ? rest.substr(comma + 1) : std::string();
            const bool known =
                std::find_if(std::begin(kChecklistRules), std::end(kChecklistRules),
                             [&](const char* r) { return rule == r; }) != std::end(kChecklistRules);
            if (rule == "all") {
                adviceRules.assign(std::begin(kChecklistRules), std::end(kChecklistRules));
            } else if (known) {
                if (std::find(adviceRules.begin(), adviceRules.end(), rule) == adviceRules.end()) {
                    adviceRules.push_back(rule);
                }
            } else if (rule.empty()) {
                usageError(ctx, "--advice: an empty rule name in '" + *v + "'", help);
                return false;
            } else {
                usageError(ctx,
                           "--advice: unknown rule '" + rule +
                               "' (mixed-precision, allocator-churn, host-memory, "
                               "slow-down, all)",
                           help);
                return false;
            }
        }
        if (adviceRules.empty()) {
            usageError(ctx, "--advice needs a rule name", help);
            return false;
        }
        asked.insert(asked.end(), adviceRules.begin(), adviceRules.end());
    }
    rules = asked.empty() ? CheckRules::defaults() : CheckRules{};
    rules.adviceRules = adviceRules;
    rules.failOnOom = !args.has("--allow-oom");
    rules.failOnLeak = rules.failOnLeak || args.has("--fail-on-leak");
    if (auto v = args.value("--max-peak-fraction")) {
        rules.maxPeakShare = parseFraction(*v);
        if (!rules.maxPeakShare) {
            usageError(ctx, "--max-peak-fraction needs a number > 0, got '" + *v + "'", help);
            return false;
        }
    }
    if (auto v = args.value("--max-exposed-communication")) {
        rules.maxExposedCommunication = parseFraction(*v);
        if (!rules.maxExposedCommunication) {
            usageError(ctx, "--max-exposed-communication needs a number > 0, got '" + *v + "'",
                       help);
            return false;
        }
    }
    return true;
}

int runCheck(CommandContext& ctx) {
    // OptionSpec holds views: the text lives as long as the program.
    std::vector<OptionSpec> options = checkRuleOptionSpecs();
    options.push_back({"--allow-unchecked", false, "",
                       "do not fail when a rule named on the command line could not be checked "
                       "(it still prints NOT CHECKED)"});
    for (const OptionSpec& o : analysisOptionSpecs()) {
        if (o.name == "--iteration-regex" || o.name == "--capacity") {
            options.push_back(o);
        }
    }
    const CheckRules defaults = CheckRules::defaults();
    const AdviceOptions evidence;
    const std::string help = commandHelp(
        ctx.command,
        "FILE|DIR... [--max-peak-fraction F] [--fail-on-leak] [--max-exposed-communication F]\n"
        "       [--advice RULE,...|all] [--allow-oom] [--capacity BYTES|GPU] [--allow-unchecked]",
        "Checks rules over every GPU of a job and prints one PASS/FAIL line per rule with the\n"
        "numbers behind it. With no rule given, checks all three with --max-peak-fraction " +
            limit(*defaults.maxPeakShare) + ",\n--fail-on-leak and --max-exposed-communication " +
            limit(*defaults.maxExposedCommunication) +
            ". The rule \"oom\" always runs (unless\n"
            "--allow-oom): it fails when a GPU ran out of memory, and names the cause. Exposed\n"
            "communication = communication kernels' time not overlapped by compute kernels, as a\n"
            "fraction of the span from the first kernel start to the last kernel end, less the\n"
            "part spent waiting for the last rank of a collective matched across ranks (that\n"
            "is the straggler's; `report` names it).\n"
            "--advice checks rules of the training checklist, as `report` gives them: each FAILs\n"
            "where it gives a warning or worse, PASSes where it finds nothing (or info only),\n"
            "and is NOT CHECKED where the trace lacks what it needs (it says what).\n\n"
            "A rule that cannot be checked on a GPU prints NOT CHECKED with the reason: no memory\n"
            "data (peak, leak, oom), capacity unknown (peak; give --capacity), too few iterations\n"
            "(leak), no kernels or a span under " +
            formatDuration(double(evidence.minTimeSpanNs)) + " / fewer than " +
            std::to_string(evidence.minTimeKernels) +
            " kernels (exposed communication).\n"
            "A rule named on the command line that is NOT CHECKED fails the check (exit 1)\n"
            "unless --allow-unchecked is given. With no rule named, a default rule that is NOT\n"
            "CHECKED is listed and does not fail the check, unless nothing at all could be\n"
            "checked (\"nothing could be checked\", exit 1).\n"
            "Data the reader or the producer lost is listed (DATA LOSS). On such partial input a\n"
            "rule that would pass is NOT CHECKED (the lost part may hold the OOM, a higher peak\n"
            "or the climb), while a rule that fails still fails and says the input was partial.\n\n"
            "exit codes: 0 every rule that had to be checked passed, 1 a rule failed or could\n"
            "not be checked (named on stdout), 2 usage, 3 unreadable input",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    if (args->positional.empty()) {
        return usageError(ctx, "no input given", help);
    }
    std::vector<std::string> asked;  // the rules named on the command line
    CheckRules rules;
    if (!readCheckRules(ctx, *args, help, rules, asked)) {
        return kExitUsage;
    }
    JobAnalysisOptions analysisOptions;
    if (!readAnalysisOptions(ctx, *args, help, analysisOptions)) {
        return kExitUsage;
    }
    const auto model = loadJobModel(ctx, args->positional, analysisOptions);
    if (!model) {
        return kExitUnreadable;
    }
    if (!model->analysisProblem.empty()) {
        return usageError(ctx, model->analysisProblem, help);
    }
    const trace::Job& job = model->job;
    for (size_t i = 0; i < job.ranks.size(); ++i) {
        for (const trace::DataLoss& l : job.ranks[i].trace.data.dataLoss) {
            ctx.out << "DATA LOSS " << job.ranks[i].path << ": " << trace::describe(l) << "\n";
        }
    }
    const std::vector<RuleResult> results = evaluateRules(model->analysis, rules, analysisOptions);
    for (const RuleResult& r : results) {
        const bool wholeJob = r.input == SIZE_MAX;
        ctx.out << toString(r.outcome) << " " << r.rule << ": "
                << (wholeJob ? std::string() : deviceLabel(r.rank, r.device) + ": ") << r.detail
                << "\n";
    }
    return conclude(ctx, results, asked, args->has("--allow-unchecked"));
}

}  // namespace vramscope::app
