// vramscope-cli check: pass/fail rules over a job for CI pipelines and alerting.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "job_model_loader.h"
#include "vramscope/analysis/advice/check_rules.h"
#include "vramscope/analysis/model/text_format.h"

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

namespace {

/// The command line of `check`.
struct CheckOptions {
    InputOptions inputs;
    CheckRules rules;
    std::vector<std::string> asked;  ///< the rules named on the command line
    JobAnalysisOptions analysis;
    bool allowUnchecked = false;
};

std::optional<CheckOptions> parseCheckOptions(CommandContext& ctx, int& exitCode) {
    const std::string help = ctx.help();
    auto args = parseCommand(ctx, exitCode);
    if (!args) {
        return std::nullopt;
    }
    exitCode = kExitUsage;
    auto inputs = parseInputs(ctx, *args, {});
    if (!inputs) {
        return std::nullopt;
    }
    CheckOptions options;
    options.inputs = std::move(*inputs);
    if (!readCheckRules(ctx, *args, help, options.rules, options.asked) ||
        !readAnalysisOptions(ctx, *args, help, options.analysis)) {
        return std::nullopt;
    }
    options.allowUnchecked = args->has("--allow-unchecked");
    exitCode = kExitSuccess;
    return options;
}

/// What `check` found: the data each trace lost ("FILE: what") and each rule's outcome.
struct CheckResult {
    std::vector<std::string> dataLoss;
    std::vector<RuleResult> results;
};

/// Evaluates the rules on the analyses of `model`. nullopt (kExitUsage, the usage error written)
/// when the analyses refused the job (JobModel::analysisProblem, e.g. an invalid iteration regex).
std::optional<CheckResult> checkJob(CommandContext& ctx, const analysis::JobModel& model,
                                    const CheckOptions& options, int& exitCode) {
    if (!model.analysisProblem.empty()) {
        exitCode = usageError(ctx, model.analysisProblem, ctx.help());
        return std::nullopt;
    }
    CheckResult result;
    for (const trace::RankTrace& rt : model.job.ranks) {
        for (const trace::DataLoss& l : rt.trace.data.dataLoss) {
            result.dataLoss.push_back(rt.path + ": " + trace::describe(l));
        }
    }
    result.results = evaluateRules(model.analysis, options.rules, options.analysis);
    return result;
}

/// "DATA LOSS FILE: ..." lines, then "PASS|FAIL|NOT CHECKED RULE: [GPU: ]detail" per rule.
void printCheck(const CheckResult& result, std::ostream& os) {
    for (const std::string& l : result.dataLoss) {
        os << "DATA LOSS " << l << "\n";
    }
    for (const RuleResult& r : result.results) {
        const bool wholeJob = r.input == SIZE_MAX;
        os << toString(r.outcome) << " " << r.rule << ": "
           << (wholeJob ? std::string() : deviceLabel(r.rank, r.device) + ": ") << r.detail << "\n";
    }
}

}  // namespace

int runCheck(CommandContext& ctx) {
    int code = kExitSuccess;
    const std::optional<CheckOptions> options = parseCheckOptions(ctx, code);
    if (!options) {
        return code;
    }
    // Open and analyse once (the job model), then evaluate the rules on it.
    const std::shared_ptr<const analysis::JobModel> model =
        loadJobModel(ctx, options->inputs, options->analysis);
    if (!model) {
        return kExitUnreadable;
    }
    const std::optional<CheckResult> result = checkJob(ctx, *model, *options, code);
    if (!result) {
        return code;
    }
    printCheck(*result, ctx.out);
    return conclude(ctx, result->results, options->asked, options->allowUnchecked);
}

}  // namespace vramscope::app
