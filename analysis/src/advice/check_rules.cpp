#include "vramscope/analysis/advice/check_rules.h"

#include <algorithm>
#include <cstdio>

#include "vramscope/analysis/memory/oom_diagnosis.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {

namespace {

std::string threeDecimals(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

/// "<value> <= <limit>" or "<value> > <limit>", and whether the value is within the limit.
std::pair<bool, std::string> compare(double value, double limit) {
    const bool ok = value <= limit;
    return {ok, threeDecimals(value) + (ok ? " <= " : " > ") + threeDecimals(limit)};
}

class Evaluator {
public:
    Evaluator(const CheckRules& rules, const JobAnalysisOptions& options)
        : m_rules(rules), m_options(options) {}

    void device(const DeviceAnalysis& d) {
        m_firstOfInput = m_device == nullptr || m_device->input != d.input;
        m_device = &d;
        if (m_rules.failOnOom) {
            oom();
        }
        if (m_rules.maxPeakShare) {
            peak(*m_rules.maxPeakShare);
        }
        if (m_rules.failOnLeak) {
            leak();
        }
        if (m_rules.maxExposedCommunication) {
            exposed(*m_rules.maxExposedCommunication);
        }
        for (const std::string& rule : m_rules.adviceRules) {
            checklist(rule);
        }
    }

    void setAssessments(const std::vector<AdviceAssessment>* assessments) {
        m_assessments = assessments;
    }

    std::vector<RuleResult> take() { return std::move(m_results); }

private:
    void add(const char* rule, RuleOutcome outcome, std::string detail) {
        if (m_device->partialInput && outcome == RuleOutcome::Pass) {
            outcome = RuleOutcome::NotChecked;
            detail =
                "partial input: the trace lost events, and the rule passed only on what was "
                "kept (" +
                detail + ")";
        } else if (m_device->partialInput && outcome == RuleOutcome::Fail) {
            detail += " (partial input: the trace lost events; what was kept already fails)";
        }
        RuleResult r;
        r.rule = rule;
        r.outcome = outcome;
        r.input = m_device->input;
        r.rank = m_device->rank;
        r.device = m_device->device;
        r.detail = std::move(detail);
        m_results.push_back(std::move(r));
    }

    void oom() {
        const DeviceAnalysis& d = *m_device;
        if (!d.ooms.empty()) {
            const OomFacts& o = d.ooms.front();
            add("oom", RuleOutcome::Fail,
                std::to_string(d.ooms.size()) +
                    (d.ooms.size() == 1 ? " out-of-memory event" : " out-of-memory events") +
                    ", the first " + formatDuration(double(o.sinceStartNs)) +
                    " after the first event, requesting " + formatBytes(double(o.requestedBytes)) +
                    "; cause: " + toString(diagnoseOom(o, d.memory.capacityBytes).cause));
        } else if (!d.memory.hasData()) {
            add("oom", RuleOutcome::NotChecked, "no memory data");
        } else {
            add("oom", RuleOutcome::Pass, "no out-of-memory event");
        }
    }

    void peak(double limit) {
        const MemorySummary& m = m_device->memory;
        const double peak = double(m.peakBytes());
        const std::optional<double> share = m.peakShare();
        if (!m.hasData()) {
            add("max-peak-fraction", RuleOutcome::NotChecked, "no memory data");
        } else if (!share) {
            add("max-peak-fraction", RuleOutcome::NotChecked,
                "capacity unknown (peak " + formatBytes(peak) + ")");
        } else if (const OomFacts* capped = oomBelowDevice()) {
            // The job stopped at a limit below the device: its share of the capacity says
            // nothing about the headroom it had.
            add("max-peak-fraction", RuleOutcome::NotChecked,
                "the GPU ran out of memory at a limit below its capacity (reserved " +
                    formatBytes(double(std::max<int64_t>(0, capped->reservedBytes))) +
                    " + request " + formatBytes(double(capped->requestedBytes)) + " against " +
                    formatBytes(double(m.capacityBytes)) +
                    "), so peak / capacity does not measure its headroom");
        } else {
            const auto [ok, text] = compare(*share, limit);
            // Which peak: max(peak reserved, peak allocated) is the reserved one whenever reserved
            // memory was recorded (reserved >= allocated).
            const bool reserved = m.hasReserved && m.peakReservedBytes >= m.peakAllocatedBytes;
            std::string source;
            if (m_device->capacityGiven) {
                source = " (given; the trace names none)";
            } else if (m_options.capacityBytes > 0) {
                source = " (the trace's; --capacity " +
                         formatBytes(double(m_options.capacityBytes)) +
                         " is only used where the trace names none)";
            }
            add("max-peak-fraction", ok ? RuleOutcome::Pass : RuleOutcome::Fail,
                std::string(reserved ? "peak reserved " : "peak allocated ") + formatBytes(peak) +
                    " / capacity " + formatBytes(double(m.capacityBytes)) + source + " = " + text);
        }
    }

    /// The first OOM of the device whose cause is a limit below the device, or null.
    const OomFacts* oomBelowDevice() const {
        for (const OomFacts& o : m_device->ooms) {
            if (diagnoseOom(o, m_device->memory.capacityBytes).cause ==
                OomCause::LimitBelowDevice) {
                return &o;
            }
        }
        return nullptr;
    }

    void leak() {
        const DeviceAnalysis& d = *m_device;
        const LeakReport& l = d.leak;
        const size_t needed = size_t(std::max(2, m_options.leak.minIterations));
        if (!d.memory.hasData()) {
            add("fail-on-leak", RuleOutcome::NotChecked, "no memory data");
        } else if (l.iterations.size() < needed) {
            add("fail-on-leak", RuleOutcome::NotChecked,
                "too few iterations with memory data (" + std::to_string(l.iterations.size()) +
                    ", at least " + std::to_string(needed) + " needed)");
        } else if (l.verdict == LeakVerdict::Staircase) {
            add("fail-on-leak", RuleOutcome::Fail,
                std::string(toString(l.verdict)) + ", +" +
                    formatBytes(double(l.growthBytesPerIteration)) + " per iteration over " +
                    std::to_string(l.iterations.size()) + " iterations");
        } else {
            add("fail-on-leak", RuleOutcome::Pass,
                std::string(toString(l.verdict)) + " (" + std::to_string(l.iterations.size()) +
                    " iterations, " + toString(d.iterations.source) + ")");
        }
    }

    void exposed(double limit) {
        const DeviceAnalysis& d = *m_device;
        const AdviceOptions& a = m_options.advice;
        if (!d.breakdown) {
            add("max-exposed-communication", RuleOutcome::NotChecked, "no kernels");
        } else if (!enoughTimeEvidence(*d.breakdown, a)) {
            add("max-exposed-communication", RuleOutcome::NotChecked,
                "too little evidence (span " + formatDuration(double(d.breakdown->spanNs)) + ", " +
                    std::to_string(d.breakdown->kernels) + " kernels; at least " +
                    formatDuration(double(a.minTimeSpanNs)) + " and " +
                    std::to_string(a.minTimeKernels) + " kernels needed)");
        } else {
            // Waiting for a late rank is the straggler's, not this GPU's communication: the rule
            // weighs exposed transfer, as the exposed-communication advice does.
            const TimeBreakdown& b = *d.breakdown;
            const int64_t exposedWait = d.communication ? d.communication->exposedWaitNs : 0;
            const int64_t exposedTransfer = b.exposedCommunicationNs - exposedWait;
            const double fraction = b.spanNs > 0 ? double(exposedTransfer) / double(b.spanNs) : 0;
            const auto [ok, text] = compare(fraction, limit);
            std::string what;
            if (d.communication) {
                what =
                    "exposed transfer " + formatDuration(double(exposedTransfer)) +
                    " (exposed communication " + formatDuration(double(b.exposedCommunicationNs)) +
                    " - exposed waiting for the last rank " + formatDuration(double(exposedWait)) +
                    (d.communication->partial ? ", ranks present only" : "") + ")";
            } else {
                what = "exposed communication " + formatDuration(double(exposedTransfer)) +
                       " (waiting for other ranks unknown: no collective matched across ranks)";
            }
            add("max-exposed-communication", ok ? RuleOutcome::Pass : RuleOutcome::Fail,
                what + " / span " + formatDuration(double(b.spanNs)) + " = " + text);
        }
    }

    /// A checklist rule's assessments of this device (and of its rank's host, which is
    /// assessed on the rank's first device): Fired at Warning or worse fails.
    void checklist(const std::string& rule) {
        bool any = false;
        for (const AdviceAssessment& a : *m_assessments) {
            if (a.rule != rule || a.input != m_device->input ||
                (a.device != m_device->device && a.device != trace::kHostDevice)) {
                continue;
            }
            any = true;  // a rank's host is checked once, with its first GPU
            if (a.device == trace::kHostDevice && !m_firstOfInput) {
                continue;
            }
            RuleOutcome outcome = RuleOutcome::NotChecked;
            std::string detail = a.detail;
            if (a.outcome == AssessmentOutcome::Fired) {
                outcome = a.severity == Severity::Info ? RuleOutcome::Pass : RuleOutcome::Fail;
                if (outcome == RuleOutcome::Pass) {
                    detail = "advice of severity info only: " + detail;
                }
            } else if (a.outcome == AssessmentOutcome::Clear) {
                outcome = RuleOutcome::Pass;
            }
            add(rule.c_str(), outcome, std::move(detail));
            if (a.device == trace::kHostDevice) {
                m_results.back().device = trace::kHostDevice;
            }
        }
        if (!any) {
            add(rule.c_str(), RuleOutcome::NotChecked, "the rule made no assessment of this GPU");
        }
    }

    const CheckRules& m_rules;
    const JobAnalysisOptions& m_options;
    const std::vector<AdviceAssessment>* m_assessments = nullptr;
    bool m_firstOfInput = true;
    const DeviceAnalysis* m_device = nullptr;
    std::vector<RuleResult> m_results;
};

}  // namespace

CheckRules CheckRules::defaults() {
    CheckRules r;
    r.maxPeakShare = kCapacityWarningShare;
    r.failOnLeak = true;
    r.maxExposedCommunication = 0.3;
    r.failOnOom = true;
    return r;
}

const char* toString(RuleOutcome outcome) {
    switch (outcome) {
        case RuleOutcome::Pass:
            return "PASS";
        case RuleOutcome::Fail:
            return "FAIL";
        case RuleOutcome::NotChecked:
            return "NOT CHECKED";
    }
    return "NOT CHECKED";
}

std::vector<RuleResult> evaluateRules(const JobAnalysis& job, const CheckRules& rules,
                                      const JobAnalysisOptions& options) {
    Evaluator e(rules, options);
    e.setAssessments(&job.assessments);
    for (const DeviceAnalysis& d : job.devices) {
        e.device(d);
    }
    std::vector<RuleResult> results = e.take();
    if (job.devices.empty()) {
        RuleResult r;
        r.rule = "all rules";
        r.detail = std::string(kNoGpuMessage) + " (no GPU memory data, no GPU kernels)";
        results.push_back(std::move(r));
    }
    return results;
}

}  // namespace vramscope::analysis
