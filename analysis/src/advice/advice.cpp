#include "vramscope/analysis/advice/advice.h"

#include <algorithm>
#include <cstdio>

#include "advice/advice_rules.h"
#include "vramscope/analysis/collectives/straggler.h"
#include "vramscope/analysis/memory/oom_diagnosis.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {

const char* toString(Severity severity) {
    switch (severity) {
        case Severity::Info:
            return "info";
        case Severity::Warning:
            return "warning";
        case Severity::Critical:
            return "critical";
    }
    return "info";
}

const char* toString(AssessmentOutcome outcome) {
    switch (outcome) {
        case AssessmentOutcome::Fired:
            return "fired";
        case AssessmentOutcome::Clear:
            return "clear";
        case AssessmentOutcome::NotAssessed:
            return "not assessed";
    }
    return "not assessed";
}

namespace detail {

Advice makeAdvice(const DeviceFacts& f, const char* rule, Severity severity, std::string message) {
    Advice a;
    a.rule = rule;
    a.severity = severity;
    a.rank = f.rank;
    a.device = f.device;
    a.message = std::move(message);
    return a;
}

void assess(std::vector<AdviceAssessment>& out, const DeviceFacts& f, const char* rule,
            AssessmentOutcome outcome, std::string detail, Severity severity, bool onHost) {
    AdviceAssessment a;
    a.rule = rule;
    a.input = f.input;
    a.rank = f.rank;
    a.device = onHost ? trace::kHostDevice : f.device;
    a.outcome = outcome;
    a.severity = severity;
    a.detail = std::move(detail);
    out.push_back(std::move(a));
}

}  // namespace detail

namespace {

std::string where(const DeviceFacts& f) {
    return deviceLabel(f.rank, f.device);
}

Advice make(const DeviceFacts& f, const char* rule, Severity severity, std::string message) {
    return detail::makeAdvice(f, rule, severity, std::move(message));
}

void oomRule(const DeviceFacts& f, std::vector<Advice>& out) {
    if (f.ooms == nullptr || f.ooms->empty()) {
        return;
    }
    const OomFacts& o = f.ooms->front();
    std::string msg = where(f) + ": ran out of memory" +
                      (f.ooms->size() > 1 ? " " + std::to_string(f.ooms->size()) + " times" : "") +
                      "; the first time " + formatDuration(double(o.sinceStartNs)) +
                      " after the first event, asking for " + formatBytes(double(o.requestedBytes));
    if (o.allocatedBytes >= 0) {
        msg += ", with " + formatBytes(double(o.allocatedBytes)) + " allocated";
    }
    if (o.reservedBytes >= 0) {
        msg += " and " + formatBytes(double(o.reservedBytes)) + " reserved";
    }
    if (f.memory.capacityBytes > 0) {
        msg += " of " + formatBytes(double(f.memory.capacityBytes));
    }
    if (o.freeBytes > 0) {
        msg += " (" + formatBytes(double(o.freeBytes)) + " free on the device)";
    }
    msg += ".";
    const OomDiagnosis why = diagnoseOom(o, f.memory.capacityBytes);
    msg += " Cause: " + why.explanation;
    if (!o.topLive.empty()) {
        msg += " Largest live allocations then:";
        for (size_t i = 0; i < o.topLive.size(); ++i) {
            const LiveGroup& g = o.topLive[i];
            msg += (i ? "; " : " ") + formatBytes(double(g.bytes)) + " in " +
                   std::to_string(g.count) + (g.count == 1 ? " allocation" : " allocations") +
                   " from " + g.label;
        }
        msg += ".";
    }
    msg += why.cause == OomCause::LimitBelowDevice
               ? " Raise or remove that limit, or shrink what is alive at that moment: "
                 "activation checkpointing, a smaller micro-batch, mixed precision."
               : " Free or shrink what is alive at that moment: activation checkpointing, a "
                 "smaller micro-batch, mixed precision.";
    Advice a = make(f, "oom", Severity::Critical, std::move(msg));
    a.evidence = {{"oom_count", double(f.ooms->size()), "events"},
                  {"time_ns", double(o.timeNs), "ns"},
                  {"requested_bytes", double(o.requestedBytes), "bytes"},
                  {"allocated_bytes", double(o.allocatedBytes), "bytes"},
                  {"reserved_bytes", double(o.reservedBytes), "bytes"}};
    // The numbers the cause rests on, where known.
    if (o.freeBytes > 0) {
        a.evidence.push_back({"device_free_bytes", double(o.freeBytes), "bytes"});
    }
    if (f.memory.capacityBytes > 0) {
        a.evidence.push_back({"capacity_bytes", double(f.memory.capacityBytes), "bytes"});
    }
    if (o.largestFreeBlockBytes >= 0) {
        a.evidence.push_back(
            {"largest_free_block_bytes", double(o.largestFreeBlockBytes), "bytes"});
    }
    if (o.reservedBytes >= 0 && o.allocatedBytes >= 0) {
        a.evidence.push_back(
            {"free_reserved_bytes", double(o.reservedBytes - o.allocatedBytes), "bytes"});
    }
    out.push_back(std::move(a));
}

void peakRule(const DeviceFacts& f, const AdviceOptions& o, std::vector<Advice>& out) {
    const std::optional<double> share = f.memory.peakShare();
    if (!share) {
        return;
    }
    const double peak = double(f.memory.peakBytes());
    const double fraction = *share;
    if (fraction <= o.peakFraction && !f.hadOom) {
        return;
    }
    const Severity sev =
        fraction >= o.criticalPeakFraction || f.hadOom ? Severity::Critical : Severity::Warning;
    Advice a = make(f, "peak-near-capacity", sev,
                    where(f) + ": peak " + formatBytes(peak) + " is " + formatPercent(fraction) +
                        " of capacity " + formatBytes(double(f.memory.capacityBytes)) +
                        " (peak = max(peak reserved, peak allocated); fraction = peak / capacity; "
                        "rule of thumb: below " +
                        formatPercent(o.peakFraction) + ")" +
                        (f.hadOom ? "; the job ran out of memory" : "") +
                        ". Try activation checkpointing, mixed precision (bf16/fp16 autocast), or "
                        "a smaller micro-batch with gradient accumulation.");
    a.evidence = {{"peak_bytes", peak, "bytes"},
                  {"capacity_bytes", double(f.memory.capacityBytes), "bytes"},
                  {"peak_fraction", fraction, "fraction"},
                  {"threshold_fraction", o.peakFraction, "fraction"}};
    out.push_back(std::move(a));
}

void leakRule(const DeviceFacts& f, std::vector<Advice>& out) {
    if (f.leak == nullptr || f.leak->verdict != LeakVerdict::Staircase) {
        return;
    }
    const LeakReport& l = *f.leak;
    std::string msg = where(f) + ": memory climbs every iteration (a staircase, a leak): +" +
                      formatBytes(double(l.growthBytesPerIteration)) +
                      " per iteration (Theil-Sen slope of per-iteration baselines over " +
                      std::to_string(l.iterations.size()) + " iterations)";
    if (l.iterationsToOom) {
        msg += "; about " + formatSignificant(*l.iterationsToOom) +
               " iterations until the device is full";
    }
    msg += ".";
    if (!l.survivors.empty()) {
        const SurvivorGroup& g = l.survivors.front();
        msg += " Largest survivor (allocated in an iteration, alive two iterations later): " +
               describeSurvivor(g, l.survivorIterations) + ".";
    }
    msg +=
        " Look for tensors kept across iterations (lists of outputs or losses kept without "
        ".detach()/.item(), caches, hooks).";
    Advice a = make(f, "leak", Severity::Critical, std::move(msg));
    a.evidence = {{"growth_bytes_per_iteration", double(l.growthBytesPerIteration), "bytes"},
                  {"iterations", double(l.iterations.size()), "iterations"},
                  {"survivor_bytes", double(l.survivorBytes), "bytes"}};
    if (l.iterationsToOom) {
        a.evidence.push_back({"iterations_to_oom", *l.iterationsToOom, "iterations"});
    }
    out.push_back(std::move(a));
}

void communicationRules(const DeviceFacts& f, const AdviceOptions& o, std::vector<Advice>& out) {
    if (f.breakdown == nullptr || f.breakdown->spanNs <= 0 ||
        !enoughTimeEvidence(*f.breakdown, o)) {
        return;
    }
    const TimeBreakdown& b = *f.breakdown;
    const CommunicationSplit* split = f.communication;
    const int64_t exposedWait = split != nullptr ? split->exposedWaitNs : 0;
    const int64_t exposedTransfer = b.exposedCommunicationNs - exposedWait;
    const double exposed = double(exposedTransfer) / double(b.spanNs);
    if (exposed > o.exposedCommunicationFraction) {
        std::string seen =
            split != nullptr
                ? "exposed transfer " + formatDuration(double(exposedTransfer)) + " is " +
                      formatPercent(exposed) + " of the span " + formatDuration(double(b.spanNs)) +
                      " (exposed transfer = exposed communication " +
                      formatDuration(double(b.exposedCommunicationNs)) +
                      " - exposed waiting for the last rank " +
                      formatDuration(double(exposedWait)) +
                      (split->partial ? ", waits counted over the ranks present only" : "") +
                      "; exposed = not overlapped by compute, overlap " +
                      formatPercent(b.overlapPct / 100.0) + " of communication)"
                : "exposed communication " + formatDuration(double(exposedTransfer)) + " is " +
                      formatPercent(exposed) + " of the span " + formatDuration(double(b.spanNs)) +
                      " (exposed = communication - overlap with compute; overlap " +
                      formatPercent(b.overlapPct / 100.0) +
                      " of communication; waiting for other ranks unknown: no collective was "
                      "matched across ranks)";
        // Waiting for ranks outside the trace cannot be told from transfer: such a finding is
        // never critical, and says what would settle it.
        const bool waitsUnknown = split == nullptr || split->partial;
        if (waitsUnknown) {
            seen +=
                ". Part of it may be waiting for ranks not in this trace (a straggler); open "
                "every rank's trace to tell waiting from transfer";
        }
        Advice a = make(
            f, "exposed-communication",
            exposed > 2 * o.exposedCommunicationFraction && !waitsUnknown ? Severity::Critical
                                                                          : Severity::Warning,
            where(f) + ": " + seen +
                ". Try gradient accumulation to sync gradients less often, "
                "overlapping communication with backward (DDP/FSDP prefetch), and tuning bucket "
                "sizes.");
        a.evidence = {{"exposed_communication_ns", double(b.exposedCommunicationNs), "ns"},
                      {"exposed_wait_ns", double(exposedWait), "ns"},
                      {"exposed_transfer_ns", double(exposedTransfer), "ns"},
                      {"span_ns", double(b.spanNs), "ns"},
                      {"exposed_fraction", exposed, "fraction"},
                      {"overlap_pct", b.overlapPct, "percent"}};
        out.push_back(std::move(a));
    }
    const int64_t host = b.gapNsByCause[int(GapCause::HostBound)];
    const double hostFraction = double(host) / double(b.spanNs);
    if (hostFraction > o.hostBoundFraction) {
        Advice a = make(f, "host-bound", Severity::Warning,
                        where(f) +
                            ": host-bound gaps (the next kernel launched after the GPU went "
                            "idle) total " +
                            formatDuration(double(host)) + " in " +
                            std::to_string(b.gapCountByCause[int(GapCause::HostBound)]) +
                            " gaps, " + formatPercent(hostFraction) + " of the span " +
                            formatDuration(double(b.spanNs)) +
                            ". Try faster data loading (more workers, pinned memory, prefetch) "
                            "and less launch overhead (CUDA graphs, fused or larger kernels).");
        a.evidence = {{"host_bound_gap_ns", double(host), "ns"},
                      {"span_ns", double(b.spanNs), "ns"},
                      {"host_bound_fraction", hostFraction, "fraction"}};
        out.push_back(std::move(a));
    }
}

void modelStateRule(const DeviceFacts& f, const AdviceOptions& o, std::vector<Advice>& out) {
    if (f.memory.capacityBytes == 0 || f.modelStateBytes < 0) {
        return;
    }
    const double fraction = double(f.modelStateBytes) / double(f.memory.capacityBytes);
    if (fraction <= o.modelStateFraction) {
        return;
    }
    Advice a = make(f, "model-state", fraction > 1.0 ? Severity::Critical : Severity::Warning,
                    where(f) +
                        ": model state (memory alive across all iterations: weights, "
                        "gradients kept, optimizer state) is " +
                        formatBytes(double(f.modelStateBytes)) + ", " + formatPercent(fraction) +
                        " of one GPU's " + formatBytes(double(f.memory.capacityBytes)) +
                        ". Data parallelism alone cannot help: shard it (ZeRO / FSDP) or use "
                        "tensor or pipeline model parallelism.");
    a.evidence = {{"model_state_bytes", double(f.modelStateBytes), "bytes"},
                  {"capacity_bytes", double(f.memory.capacityBytes), "bytes"},
                  {"model_state_fraction", fraction, "fraction"}};
    out.push_back(std::move(a));
}

/// "sharding it over the job's 8 data-parallel ranks saves 7/8 of it (716 MiB)", or the formula
/// when the job has one rank or its size is unknown.
std::string shardingSaving(int64_t bytes, int32_t ranks) {
    if (ranks < 2) {
        return "sharding it over N data-parallel ranks (ZeRO-1 / FSDP) saves (N-1)/N of it";
    }
    const double saved = double(bytes) * double(ranks - 1) / double(ranks);
    return "sharding it over the job's " + std::to_string(ranks) +
           " ranks, if they are data-parallel (ZeRO-1 / FSDP), saves " + std::to_string(ranks - 1) +
           "/" + std::to_string(ranks) + " of it (" + formatBytes(saved) + ")";
}

void rolesRule(const DeviceFacts& f, const AdviceOptions& o, bool nearCapacity,
               std::vector<Advice>& out) {
    if (f.rolesAtPeak == nullptr) {
        return;
    }
    const RolesAt& r = *f.rolesAtPeak;
    const int64_t total = r.bytes.total();
    if (total <= 0) {
        return;
    }
    auto share = [&](int64_t b) { return double(b) / double(total); };
    auto quote = [&](int64_t b) {
        return formatBytes(double(b)) + " (" + formatPercent(share(b)) + ")";
    };
    std::vector<std::string> lines;
    std::vector<Evidence> evidence{{"live_bytes_at_peak", double(total), "bytes"}};
    const int64_t activations = r.bytes[MemoryRole::Activations] - r.keptActivationBytes;
    if (share(activations) >= o.roleShare) {
        std::string s = "activations are " + quote(activations) +
                        ": activation checkpointing can free most of them";
        if (r.keptActivationBytes > 0) {
            s += "; " + formatBytes(double(r.keptActivationBytes)) +
                 " more are forward outputs kept past their iteration, which checkpointing does "
                 "not free";
        }
        lines.push_back(s);
        evidence.push_back({"activation_bytes", double(activations), "bytes"});
    }
    const int64_t state = r.bytes[MemoryRole::OptimizerState];
    if (share(state) >= o.roleShare) {
        lines.push_back("optimizer state " + quote(state) + ": " + shardingSaving(state, f.ranks) +
                        "; an 8-bit or factored optimizer also shrinks it");
        evidence.push_back({"optimizer_state_bytes", double(state), "bytes"});
    }
    const int64_t persistent = r.bytes[MemoryRole::Persistent];
    if (share(persistent) >= o.roleShare) {
        const std::string n = f.ranks >= 2 ? std::to_string(f.ranks) : std::string("N");
        const std::string share = f.ranks >= 2
                                      ? std::to_string(f.ranks - 1) + "/" + std::to_string(f.ranks)
                                      : std::string("(N-1)/N");
        lines.push_back("parameters and optimizer state, not told apart, " + quote(persistent) +
                        ": sharding the optimizer's part over " + n +
                        " data-parallel ranks (ZeRO-1 / FSDP) saves " + share +
                        " of that part; mixed precision or model parallelism shrink the "
                        "parameters");
        evidence.push_back({"persistent_bytes", double(persistent), "bytes"});
    }
    const int64_t weights = r.bytes[MemoryRole::Parameters] + r.bytes[MemoryRole::Gradients];
    if (share(weights) >= o.roleShare) {
        lines.push_back("parameters and gradients " + quote(weights) +
                        ": mixed precision (bf16 weights and gradients) or model parallelism "
                        "(tensor, pipeline, FSDP) shrink them");
        evidence.push_back({"parameter_and_gradient_bytes", double(weights), "bytes"});
    }
    if (lines.empty()) {
        return;
    }
    std::string message = where(f) + ": at the peak, ";
    for (size_t i = 0; i < lines.size(); ++i) {
        message += (i == 0 ? "" : "; ") + lines[i];
    }
    Advice a =
        make(f, "memory-roles", nearCapacity ? Severity::Warning : Severity::Info, message + ".");
    a.evidence = std::move(evidence);
    out.push_back(std::move(a));
}

}  // namespace

bool enoughTimeEvidence(const TimeBreakdown& b, const AdviceOptions& o) {
    return b.spanNs >= o.minTimeSpanNs && uint64_t(b.kernels) >= o.minTimeKernels;
}

std::vector<Advice> adviseOn(const std::vector<DeviceFacts>& devices, const AdviceOptions& options,
                             std::vector<AdviceAssessment>* assessments) {
    std::vector<Advice> out;
    std::vector<AdviceAssessment> assessed;
    for (const DeviceFacts& f : devices) {
        oomRule(f, out);
        peakRule(f, options, out);
        leakRule(f, out);
        communicationRules(f, options, out);
        modelStateRule(f, options, out);
        const bool nearCapacity = std::any_of(out.begin(), out.end(), [&](const Advice& a) {
            return a.rule == "peak-near-capacity" && a.rank == f.rank && a.device == f.device;
        });
        rolesRule(f, options, nearCapacity, out);
        detail::mixedPrecisionRule(f, options, out, assessed);
        detail::allocatorChurnRule(f, options, out, assessed);
        detail::hostMemoryRule(f, options, out, assessed);
        detail::slowDownRule(f, options, out, assessed);
    }
    if (assessments != nullptr) {
        // On a partial input what a rule found missing may be in the lost part, and what it
        // found clear holds for the part that was read only.
        for (AdviceAssessment& a : assessed) {
            const auto f = std::find_if(devices.begin(), devices.end(), [&](const DeviceFacts& d) {
                return d.input == a.input && d.rank == a.rank &&
                       (d.device == a.device || a.device == trace::kHostDevice);
            });
            if (f == devices.end() || !f->partialInput) {
                continue;
            }
            if (a.outcome == AssessmentOutcome::NotAssessed) {
                a.detail +=
                    " (the input is partial: the trace lost events, and what is missing "
                    "may be in the lost part)";
            } else if (a.outcome == AssessmentOutcome::Clear) {
                a.detail +=
                    " (on the part of the input that could be read: the trace lost "
                    "events)";
            }
        }
        *assessments = std::move(assessed);
    }
    sortAdvice(out);
    return out;
}

void sortAdvice(std::vector<Advice>& advice) {
    std::stable_sort(advice.begin(), advice.end(), [](const Advice& a, const Advice& b) {
        if (a.severity != b.severity) {
            return int(a.severity) > int(b.severity);
        }
        return a.rank != b.rank ? a.rank < b.rank : a.device < b.device;
    });
}

CostEstimate estimateCost(const CostInput& input) {
    CostEstimate c;
    c.input = input;
    c.known = input.gpus > 0 && input.stepTimeNs > 0;
    if (input.gpus <= 0) {
        c.unknownReason = "no GPU in this trace";
    } else if (input.stepTimeNs <= 0) {
        c.unknownReason = "no step time: the trace has neither iterations nor kernels";
    }
    c.hours = double(input.stepTimeNs) * double(input.steps) / 3.6e12;
    c.gpuHours = double(input.gpus) * c.hours;
    c.totalCost = c.gpuHours * input.gpuHourPrice;
    c.idleKnown = input.spanNs > 0;
    c.idleFraction = c.idleKnown ? double(input.idleNs) / double(input.spanNs) : 0.0;
    c.idleCost = c.totalCost * c.idleFraction;
    return c;
}

}  // namespace vramscope::analysis
