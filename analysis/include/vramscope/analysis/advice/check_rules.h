#pragma once
// Pass / fail rules over a job's analyses, for CI pipelines and alerts: what `vramscope-cli
// check` prints, what the GUI's advice panel lists, and what live alerts will evaluate.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/analysis/model/job_analysis.h"

namespace vramscope::analysis {

/// Which rules to evaluate and their limits. A rule left unset is not evaluated.
struct CheckRules {
    /// Fail when peak / capacity exceeds this on a GPU (peak = MemorySummary::peakBytes(), named
    /// "peak reserved" or "peak allocated" after the series it comes from).
    std::optional<double> maxPeakShare;
    /// Fail when a GPU's memory climbs every iteration (LeakVerdict::Staircase).
    bool failOnLeak = false;
    /// Fail when exposed transfer / span exceeds this on a GPU: exposed communication
    /// (TimeBreakdown) less the exposed waiting for the last rank (CommunicationSplit), as the
    /// exposed-communication advice weighs it.
    std::optional<double> maxExposedCommunication;
    /// Fail when a GPU ran out of memory.
    bool failOnOom = true;
    /// Checklist rules (kChecklistRules, advice.h) to check: each fails where it gave advice of
    /// Warning or Critical severity, passes where it was clear or gave Info only, and is
    /// NotChecked where it could not be assessed (JobAnalysis::assessments).
    std::vector<std::string> adviceRules;

    /// The rules `check` runs when none is named: every rule, peak share kCapacityWarningShare,
    /// exposed communication 0.3, leaks and OOMs.
    static CheckRules defaults();
};

/// NotChecked: the data cannot support a verdict (see evaluateRules); never a silent pass.
enum class RuleOutcome { Pass, Fail, NotChecked };
const char* toString(RuleOutcome outcome);  ///< "PASS", "FAIL", "NOT CHECKED"

/// The result of one rule on one GPU (or on the whole job, with device = -1 and input = SIZE_MAX
/// when the job has no GPU at all).
struct RuleResult {
    /// "oom", "max-peak-fraction", "fail-on-leak", "max-exposed-communication", or a checklist
    /// rule's name ("mixed-precision", ...)
    std::string rule;
    RuleOutcome outcome = RuleOutcome::NotChecked;
    size_t input = SIZE_MAX;                   ///< DeviceAnalysis::input
    trace::RankId rank = trace::kUnknownRank;  ///< -1 = unknown
    trace::DeviceIndex device = trace::kHostDevice;
    /// For Pass / Fail the numbers and the formula behind the outcome ("peak 70.00 GiB / capacity
    /// 80.00 GiB = 0.875 > 0.800"); for NotChecked why the rule could not be checked ("no memory
    /// data", "capacity unknown (peak 1.00 GiB)", ...). The GPU is named by rank and device.
    std::string detail;
};

/// Evaluates `rules` on every device of `job`, in device order, rules in the order oom,
/// max-peak-fraction, fail-on-leak, max-exposed-communication, then CheckRules::adviceRules in
/// their order (a rank's host-memory result follows the rank's first device, with device -1). A
/// rule is NotChecked, with the reason, where the data cannot support a verdict: no memory data
/// (oom, peak, leak), capacity unknown (peak), an OOM at a limit below the device (peak: its share
/// of capacity is not the headroom the job had), fewer iterations with memory data than max(2,
/// options.leak.minIterations) (leak), no kernels or less than AdviceOptions' minimum span and
/// kernel count (exposed communication; see enoughTimeEvidence). On a partial input
/// (DeviceAnalysis::partialInput: the trace lost events) a rule that would pass is NotChecked too,
/// since the lost part may hold the OOM, the higher peak or the climbing iterations; a rule that
/// fails still fails (what was kept already breaks it) and says the input was partial. A job
/// without devices gives one NotChecked with rule "all rules", its detail starting with
/// kNoGpuMessage. The oom rule names the cause (diagnoseOom). Pure; no I/O.
std::vector<RuleResult> evaluateRules(const JobAnalysis& job, const CheckRules& rules,
                                      const JobAnalysisOptions& options = {});

}  // namespace vramscope::analysis
