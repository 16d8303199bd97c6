// The host-memory rule of the training checklist ("do not forget data-loader memory"): host
// memory that climbs every iteration, by the GPU leak's staircase rules (host_memory.h).
#include <string>

#include "advice/advice_rules.h"
#include "vramscope/analysis/memory/host_memory.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis::detail {

namespace {

constexpr const char* kHostMemoryRule = "host-memory";

/// "host memory (CPU allocator's total, counter \"CPU Total Allocated\")": what the series
/// measures and its name in the trace.
std::string seriesLabel(const HostMemoryReport& h) {
    return std::string("host memory (") + toString(h.source) + ", counter \"" + h.counterName +
           "\")";
}

/// "; pinned host memory peak 256.00 MiB over 12 allocations", or "" without pinned allocations.
std::string pinnedText(const HostMemoryReport& h) {
    if (h.pinnedAllocations == 0) {
        return {};
    }
    return "; pinned host memory peak " + formatBytes(double(h.pinnedPeakBytes)) + " over " +
           std::to_string(h.pinnedAllocations) + " pinned allocations";
}

Advice growthAdvice(const DeviceFacts& facts, const HostMemoryReport& h) {
    const double growth = h.trend.slopeBytesPerIteration * double(h.iterations.size() - 1);
    std::string msg = deviceLabel(facts.rank, trace::kHostDevice) + ": " + seriesLabel(h) +
                      " climbs every iteration: " + h.trend.reason + " Peak " +
                      formatBytes(double(h.peakBytes)) + pinnedText(h) + ".";
    msg +=
        " Growth on the host is the data loader's or the loop's: a Dataset holding Python lists "
        "or dicts of samples is copied page by page into every forked DataLoader worker as it "
        "is read (copy-on-read: reference counts touch the pages; keep samples in numpy arrays "
        "or tensors), pin_memory buffers grow with num_workers x prefetch_factor, and tensors "
        "kept on the CPU (losses or outputs appended to a list without .item()) accumulate.";
    Advice a = makeAdvice(facts, kHostMemoryRule, Severity::Warning, std::move(msg));
    a.device = trace::kHostDevice;
    a.evidence = {
        {"host_growth_bytes_per_iteration", double(h.trend.growthBytesPerIteration), "bytes"},
        {"host_total_growth_bytes", growth, "bytes"},
        {"host_noise_bytes", h.trend.noiseBytes, "bytes"},
        {"iterations", double(h.iterations.size()), "iterations"},
        {"host_peak_bytes", double(h.peakBytes), "bytes"},
    };
    if (h.pinnedAllocations > 0) {
        a.evidence.push_back({"pinned_peak_bytes", double(h.pinnedPeakBytes), "bytes"});
    }
    return a;
}

}  // namespace

void hostMemoryRule(const DeviceFacts& facts, const AdviceOptions& options,
                    std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments) {
    (void)options;
    // The host is assessed once per rank, on the device that carries it (the rank's first).
    if (facts.host == nullptr) {
        return;
    }
    const HostMemoryReport& h = *facts.host;
    auto note = [&](AssessmentOutcome outcome, std::string detail,
                    Severity severity = Severity::Info) {
        assess(assessments, facts, kHostMemoryRule, outcome, std::move(detail), severity, true);
    };
    if (!h.hasData()) {
        note(AssessmentOutcome::NotAssessed,
             "the trace records no host memory (capture with vramscope-run, or a PyTorch profile "
             "with profile_memory=True)");
        return;
    }
    if (h.source == HostSeriesSource::None) {
        // Pinned allocations alone: what is pinned, but no curve to judge growth on.
        note(AssessmentOutcome::NotAssessed,
             "no host-memory counter, so no growth to judge; pinned host memory peak " +
                 formatBytes(double(h.pinnedPeakBytes)) + " over " +
                 std::to_string(h.pinnedAllocations) + " pinned allocations");
        return;
    }
    if (h.trend.verdict == LeakVerdict::Staircase) {
        advice.push_back(growthAdvice(facts, h));
        note(AssessmentOutcome::Fired,
             seriesLabel(h) + ": " + h.trend.reason + " Peak " + formatBytes(double(h.peakBytes)) +
                 pinnedText(h) + ".",
             Severity::Warning);
        return;
    }
    if (h.trend.verdict == LeakVerdict::Sawtooth) {
        // Sawtooth: the growth over the run is within the threshold, which a slowly rising
        // baseline can be too; say which.
        const bool rising = h.trend.slopeBytesPerIteration > 0;
        note(AssessmentOutcome::Clear, seriesLabel(h) +
                                           (rising ? " grows less over the run than the threshold: "
                                                   : " returns to its baseline: ") +
                                           h.trend.reason + " Peak " +
                                           formatBytes(double(h.peakBytes)) + pinnedText(h) + ".");
        return;
    }
    // Inconclusive: too few iterations, none at all, or growth that does not rise consistently.
    note(AssessmentOutcome::NotAssessed, seriesLabel(h) + ", peak " +
                                             formatBytes(double(h.peakBytes)) + pinnedText(h) +
                                             ": " + h.trend.reason);
}

}  // namespace vramscope::analysis::detail
