// The allocator-churn rule of the training checklist (allocator_churn.h).
#include <cstdio>

#include "advice/advice_rules.h"
#include "vramscope/analysis/memory/allocator_churn.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis::detail {

namespace {

constexpr const char* kAllocatorChurnRule = "allocator-churn";

/// "5 of 6 iterations after the warm-up (83.3 %)".
std::string shareText(const AllocatorChurn& c) {
    return std::to_string(c.churnIterations) + " of " + std::to_string(c.steadyIterations) +
           " iterations after the warm-up (" + formatPercent(c.churnShare()) + ")";
}

std::string perIteration(double total, size_t iterations) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", total / double(iterations));
    return buf;
}

/// "allocs/frees per iteration after the warm-up: 3/3, 3/3, 2/2, ..." (the first 8).
std::string countsText(const AllocatorChurn& c) {
    std::string s = "segment allocations/frees in iterations 2..: ";
    for (size_t i = 1; i < c.iterations.size() && i <= 8; ++i) {
        s += (i > 1 ? ", " : "") + std::to_string(c.iterations[i].segmentAllocs) + "/" +
             std::to_string(c.iterations[i].segmentFrees);
    }
    return s + (c.iterations.size() > 9 ? ", ..." : "");
}

/// Why the rule fired: churn in most steady iterations, or torch.cuda.empty_cache releasing
/// segments inside the loop (a finding of its own: the issue it causes is the same, and the
/// stacks name the call).
std::string firedBecause(const AllocatorChurn& c, const AdviceOptions& o) {
    const bool most = c.churnShare() > o.churnIterationShare;
    std::string s = "segments freed and allocated again inside " + shareText(c) +
                    (most ? " > " : " <= ") + formatPercent(o.churnIterationShare);
    if (c.emptyCacheFrees > 0) {
        s += (most ? "; and " : ", but ") + std::to_string(c.emptyCacheFrees) + " of the " +
             std::to_string(c.segmentFrees) +
             " segment frees after the warm-up come from torch.cuda.empty_cache (in their stack)";
    }
    return s;
}

Advice churnAdvice(const DeviceFacts& f, const AllocatorChurn& c, const AdviceOptions& o) {
    const size_t n = c.steadyIterations;
    std::string msg = deviceLabel(f.rank, f.device) + ": " + firedBecause(c, o) +
                      "; per iteration after the warm-up " +
                      perIteration(double(c.segmentAllocs), n) + " segment allocations (" +
                      formatBytes(double(c.allocBytes) / double(n)) + ") and " +
                      perIteration(double(c.segmentFrees), n) + " segment frees (" +
                      formatBytes(double(c.freeBytes) / double(n)) + "; " + countsText(c) + ")";
    if (c.timeKnown) {
        msg += "; the device sat idle " + formatDuration(double(c.syncIdleNs) / double(n)) +
               " per iteration in gaps holding a segment free (cudaFree synchronises the device)";
    } else {
        msg += "; " + c.timeUnknownReason;
    }
    msg += c.emptyCacheFrees > 0
               ? ". Try: stop calling torch.cuda.empty_cache() inside the training loop (the "
                 "cache it empties is refilled by the next step); set PYTORCH_ALLOC_CONF="
               : ". No torch.cuda.empty_cache frame is in the stacks of these frees (or the "
                 "trace has no stacks): if the loop calls it, stop; set PYTORCH_ALLOC_CONF=";
    msg +=
        "expandable_segments:True (PyTorch docs, CUDA memory management) so segments grow in "
        "place; keep batch shapes steady (pad or bucket variable lengths).";
    Advice a = makeAdvice(f, kAllocatorChurnRule, Severity::Warning, std::move(msg));
    a.evidence = {
        {"churn_iterations", double(c.churnIterations), "iterations"},
        {"steady_iterations", double(n), "iterations"},
        {"churn_share", c.churnShare(), "fraction"},
        {"segment_allocs_per_iteration", double(c.segmentAllocs) / double(n), "count"},
        {"segment_frees_per_iteration", double(c.segmentFrees) / double(n), "count"},
        {"segment_alloc_bytes_per_iteration", double(c.allocBytes) / double(n), "bytes"},
        {"segment_free_bytes_per_iteration", double(c.freeBytes) / double(n), "bytes"},
        {"empty_cache_frees", double(c.emptyCacheFrees), "count"},
    };
    if (c.timeKnown) {
        a.evidence.push_back(
            {"sync_idle_per_iteration_ns", double(c.syncIdleNs) / double(n), "ns"});
    }
    return a;
}

}  // namespace

void allocatorChurnRule(const DeviceFacts& facts, const AdviceOptions& options,
                        std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments) {
    const AllocatorChurn* c = facts.churn;
    if (c == nullptr) {
        assess(assessments, facts, kAllocatorChurnRule, AssessmentOutcome::NotAssessed,
               "allocator churn was not computed for this GPU");
        return;
    }
    if (!c->assessable) {
        assess(assessments, facts, kAllocatorChurnRule, AssessmentOutcome::NotAssessed, c->reason);
        return;
    }
    if (c->steadyIterations < options.churnMinSteadyIterations) {
        assess(assessments, facts, kAllocatorChurnRule, AssessmentOutcome::NotAssessed,
               std::to_string(c->steadyIterations) +
                   " iteration(s) after the warm-up; the rule needs at least " +
                   std::to_string(options.churnMinSteadyIterations));
        return;
    }
    if (c->churnShare() > options.churnIterationShare || c->emptyCacheFrees > 0) {
        advice.push_back(churnAdvice(facts, *c, options));
        assess(assessments, facts, kAllocatorChurnRule, AssessmentOutcome::Fired,
               firedBecause(*c, options), Severity::Warning);
        return;
    }
    assess(assessments, facts, kAllocatorChurnRule, AssessmentOutcome::Clear,
           "segments freed and allocated again inside " + shareText(*c) +
               " <= " + formatPercent(options.churnIterationShare) + " (" +
               std::to_string(c->segmentAllocs) + " segment allocations, " +
               std::to_string(c->segmentFrees) + " frees after the warm-up)");
}

}  // namespace vramscope::analysis::detail
