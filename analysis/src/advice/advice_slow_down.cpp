// The slow-down rule of the training checklist (slow_down.h).
#include <algorithm>
#include <cmath>

#include "advice/advice_rules.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/analysis/time/slow_down.h"

namespace vramscope::analysis::detail {

namespace {

constexpr const char* kSlowDownRule = "slow-down";
/// MAD x 1.4826 estimates the standard deviation of normally distributed values.
constexpr double kMadToSigma = 1.4826;

int64_t noiseNs(const SlowDownReport& r, const AdviceOptions& o) {
    return int64_t(std::max(o.slowDownMadFactor * kMadToSigma * double(r.earlyMadNs),
                            o.slowDownMinGrowth * double(r.earlyMedianNs)));
}

/// "iterations after the warm-up: median of the first 4 61.0 ms, of the last 4 84.0 ms:
/// +23.0 ms (+37.7 %) > noise 3.05 ms = max(3 x 1.4826 x MAD 0 ns, 5.0 % of 61.0 ms)".
std::string figure(const SlowDownReport& r, const AdviceOptions& o, bool above) {
    const std::string third = std::to_string(r.thirdIterations);
    const int64_t g = r.growthNs();
    return "iterations after the warm-up: median of the first " + third + " " +
           formatDuration(double(r.earlyMedianNs)) + ", of the last " + third + " " +
           formatDuration(double(r.lateMedianNs)) + ": " + (g >= 0 ? "+" : "") +
           formatDuration(double(g)) + " (" + (g >= 0 ? "+" : "") +
           formatPercent(r.growthFraction()) + ") " + (above ? ">" : "<=") + " noise " +
           formatDuration(double(noiseNs(r, o))) + " = max(" +
           std::to_string(int(o.slowDownMadFactor)) + " x 1.4826 x MAD " +
           formatDuration(double(r.earlyMadNs)) + ", " + formatPercent(o.slowDownMinGrowth) +
           " of " + formatDuration(double(r.earlyMedianNs)) + ")";
}

std::string partName(const SlowDownReport& r, IterationPart p) {
    if (p == IterationPart::Wait && toInt(r.lateLastRank) >= 0) {
        return "waiting for rank " + std::to_string(toInt(r.lateLastRank));
    }
    return toString(p);
}

/// What to look at when `part` grew.
const char* lookAt(IterationPart part) {
    switch (part) {
        case IterationPart::Transfer:
            return "check the interconnect before the code (link health and speed, other jobs "
                   "on the network, NCCL settings)";
        case IterationPart::Wait:
            return "that rank arrives later and later: look at its host and GPU (data loading, "
                   "throttling, a noisy neighbour) before the communication";
        case IterationPart::HostBound:
            return "the host launches later and later: data loading (workers, prefetch, a "
                   "growing Python-side list), logging or garbage collection between steps";
        case IterationPart::Compute:
            return "the kernels themselves got slower: clocks and throttling (nvidia-smi -q -d "
                   "PERFORMANCE), or inputs that grow (sequence length, dynamic shapes)";
        case IterationPart::Copies:
            return "memory copies grew: host-device transfers that grow with the run";
        case IterationPart::OtherIdle:
            return "the GPU waits on something the trace does not name: host synchronisation "
                   "(.item(), cudaFree, torch.cuda.synchronize) or CPU work between launches";
    }
    return "";
}

Advice slowDownAdvice(const DeviceFacts& f, const SlowDownReport& r, const AdviceOptions& o) {
    const PartGrowth& top = r.parts.front();
    std::string msg = deviceLabel(f.rank, f.device) + ": iterations grew from " +
                      formatDuration(double(r.earlyMedianNs)) + " to " +
                      formatDuration(double(r.lateMedianNs)) + " (+" +
                      formatPercent(r.growthFraction()) + "; " + figure(r, o, true) + "); ";
    if (top.growthNs() > 0) {
        msg += partName(r, top.part) + " +" + formatDuration(double(top.growthNs())) +
               " of it (median " + formatDuration(double(top.earlyMedianNs)) + " -> " +
               formatDuration(double(top.lateMedianNs)) + ")";
        for (size_t i = 1; i < r.parts.size() && i < 3; ++i) {
            if (r.parts[i].growthNs() > 0) {
                msg += ", " + partName(r, r.parts[i].part) + " +" +
                       formatDuration(double(r.parts[i].growthNs()));
            }
        }
        if (!r.waitKnown) {
            msg +=
                " (waiting for the last rank is unknown: no collective of this GPU was "
                "matched across ranks, so any of it is in communication transfer)";
        }
        msg += std::string(": ") + lookAt(top.part) + ".";
    } else {
        msg += "no single part's median grew: the growth is spread over the parts.";
    }
    Advice a = makeAdvice(f, kSlowDownRule, Severity::Warning, std::move(msg));
    a.evidence = {
        {"steady_iterations", double(r.steadyIterations), "iterations"},
        {"early_median_ns", double(r.earlyMedianNs), "ns"},
        {"late_median_ns", double(r.lateMedianNs), "ns"},
        {"growth_ns", double(r.growthNs()), "ns"},
        {"growth_fraction", r.growthFraction(), "fraction"},
        {"early_mad_ns", double(r.earlyMadNs), "ns"},
        {"noise_ns", double(noiseNs(r, o)), "ns"},
    };
    static constexpr const char* kKeys[kIterationParts] = {
        "compute_growth_ns", "transfer_growth_ns",   "wait_growth_ns",
        "copies_growth_ns",  "host_bound_growth_ns", "other_idle_growth_ns"};
    for (const PartGrowth& p : r.parts) {
        if (p.part != IterationPart::Wait || r.waitKnown) {
            a.evidence.push_back({kKeys[size_t(p.part)], double(p.growthNs()), "ns"});
        }
    }
    return a;
}

}  // namespace

void slowDownRule(const DeviceFacts& facts, const AdviceOptions& options,
                  std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments) {
    const SlowDownReport* r = facts.slowDown;
    if (r == nullptr) {
        assess(assessments, facts, kSlowDownRule, AssessmentOutcome::NotAssessed,
               "iteration durations were not computed for this GPU");
        return;
    }
    if (r->iterations.empty()) {
        assess(assessments, facts, kSlowDownRule, AssessmentOutcome::NotAssessed, r->reason);
        return;
    }
    if (!r->assessable || r->steadyIterations < options.slowDownMinIterations) {
        const size_t n = r->steadyIterations;
        assess(assessments, facts, kSlowDownRule, AssessmentOutcome::NotAssessed,
               std::to_string(n) + (n == 1 ? " iteration" : " iterations") +
                   " after the warm-up; the rule needs at least " +
                   std::to_string(options.slowDownMinIterations) + " (two in each third)");
        return;
    }
    if (r->growthNs() > noiseNs(*r, options)) {
        advice.push_back(slowDownAdvice(facts, *r, options));
        assess(assessments, facts, kSlowDownRule, AssessmentOutcome::Fired,
               figure(*r, options, true), Severity::Warning);
        return;
    }
    assess(assessments, facts, kSlowDownRule, AssessmentOutcome::Clear, figure(*r, options, false));
}

}  // namespace vramscope::analysis::detail
