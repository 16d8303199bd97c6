#include "vramscope/analysis/collectives/straggler.h"

#include <algorithm>
#include <map>
#include <set>

#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {

JobCoverage jobCoverage(const std::vector<RankInput>& inputs) {
    JobCoverage c;
    std::set<trace::RankId> known;
    std::set<int32_t> worldSizes;
    size_t unknown = 0;
    for (const RankInput& in : inputs) {
        if (in.data == nullptr) {
            continue;
        }
        c.worldSize = std::max(c.worldSize, in.data->header.worldSize);
        if (in.data->header.worldSize > 0) {
            worldSizes.insert(in.data->header.worldSize);
        }
        if (toInt(in.rank) < 0) {
            ++unknown;
        } else if (!known.insert(in.rank).second && c.notOneJob.empty()) {
            c.notOneJob = "two inputs claim " + rankLabel(in.rank);
        }
    }
    if (worldSizes.size() > 1 && c.notOneJob.empty()) {
        c.notOneJob = "the inputs name different world sizes (";
        for (int32_t w : worldSizes) {
            c.notOneJob += (w == *worldSizes.begin() ? "" : ", ") + std::to_string(w);
        }
        c.notOneJob += ")";
    }
    c.ranksPresent = known.size() + unknown;
    return c;
}

std::vector<std::pair<int64_t, int64_t>> waitIntervals(const CollectiveMatch& match,
                                                       trace::DeviceIndex device,
                                                       trace::RankId matchedRank,
                                                       int64_t clockOffsetNs, size_t* collectives) {
    std::vector<std::pair<int64_t, int64_t>> waits;
    for (const MatchedCollective& c : match.collectives) {
        for (const CollectiveParticipant& p : c.participants) {
            if (p.rank != matchedRank || p.device != device) {
                continue;
            }
            if (collectives != nullptr) {
                ++*collectives;
            }
            const int64_t wait = p.waitInKernelNs();
            if (wait > 0) {
                waits.emplace_back(p.startNs - clockOffsetNs, p.startNs - clockOffsetNs + wait);
            }
        }
    }
    return waits;
}

std::optional<CommunicationSplit> splitCommunication(
    const trace::TraceData& data, trace::DeviceIndex device, const TimeBreakdown& breakdown,
    const CollectiveMatch& match, trace::RankId matchedRank, int64_t clockOffsetNs, bool partial) {
    CommunicationSplit s;
    std::vector<std::pair<int64_t, int64_t>> waits =
        waitIntervals(match, device, matchedRank, clockOffsetNs, &s.collectives);
    if (s.collectives == 0) {
        return std::nullopt;
    }
    std::vector<std::pair<int64_t, int64_t>> compute;
    const trace::KernelEvents& k = data.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] == device && k.category[i] == trace::KernelCategory::Compute &&
            k.endNs[i] > k.startNs[i]) {
            compute.emplace_back(k.startNs[i], k.endNs[i]);
        }
    }
    // The waits lie inside communication kernels, so they can exceed neither the communication
    // nor its exposed part; the clips only guard against collective events that are not kernels.
    s.communicationNs = breakdown.communicationNs;
    s.waitNs = std::min(unionLength(waits), s.communicationNs);
    s.transferNs = s.communicationNs - s.waitNs;
    const int64_t computeNs = unionLength(compute);
    std::vector<std::pair<int64_t, int64_t>> both = std::move(waits);
    both.insert(both.end(), compute.begin(), compute.end());
    s.exposedWaitNs = std::clamp<int64_t>(unionLength(std::move(both)) - computeNs, 0,
                                          std::min(s.waitNs, breakdown.exposedCommunicationNs));
    s.exposedTransferNs = std::max<int64_t>(0, breakdown.exposedCommunicationNs - s.exposedWaitNs);
    s.partial = partial;
    return s;
}

namespace {

struct Tally {
    size_t last = 0;
    size_t collectives = 0;
    int64_t waitCausedNs = 0;
    std::set<trace::RankId> waited;
};

}  // namespace

std::optional<StragglerFinding> findStraggler(
    const CollectiveMatch& match,
    const std::vector<std::pair<trace::RankId, int64_t>>& communicationNsByRank, int64_t steps,
    const JobCoverage& coverage, const StragglerOptions& options) {
    std::map<trace::RankId, Tally> tally;
    for (const MatchedCollective& c : match.collectives) {
        for (const CollectiveParticipant& p : c.participants) {
            tally[p.rank].collectives += 1;
        }
        if (c.skewNs <= 0 || toInt(c.stragglerRank) < 0) {
            continue;
        }
        Tally& t = tally[c.stragglerRank];
        t.last += 1;
        for (const CollectiveParticipant& p : c.participants) {
            if (p.rank != c.stragglerRank && p.waitInKernelNs() > 0) {
                t.waitCausedNs += p.waitInKernelNs();
                t.waited.insert(p.rank);
            }
        }
    }
    const auto best =
        std::max_element(tally.begin(), tally.end(), [](const auto& a, const auto& b) {
            return a.second.last < b.second.last;  // ties: the first (lower) rank stays
        });
    if (best == tally.end() || best->second.last == 0) {
        return std::nullopt;
    }
    StragglerFinding f;
    f.rank = best->first;
    f.timesLast = best->second.last;
    f.collectives = best->second.collectives;
    f.otherRanks = best->second.waited.size();
    f.waitCausedNs = best->second.waitCausedNs;
    for (const auto& [rank, ns] : communicationNsByRank) {
        f.othersCommunicationNs += rank != f.rank ? ns : 0;
    }
    f.waitShare = f.othersCommunicationNs > 0
                      ? double(f.waitCausedNs) / double(f.othersCommunicationNs)
                      : 0.0;
    f.steps = std::max<int64_t>(1, steps);
    f.stepsSource = steps > 0 ? "observed iterations" : "one step (the trace)";
    f.waitPerStepPerRankNs =
        f.otherRanks > 0 ? f.waitCausedNs / int64_t(f.otherRanks) / f.steps : 0;
    f.waitGpuHours = double(f.waitCausedNs) / 3.6e12;
    if (coverage.partial()) {
        f.whyNot = "only " + std::to_string(coverage.ranksPresent) + " of " +
                   std::to_string(coverage.worldSize) +
                   " ranks are present: the last of the ranks present need not be the job's "
                   "straggler";
    } else if (f.collectives < options.minCollectives) {
        f.whyNot = "too few matched collectives (" + std::to_string(f.collectives) + ", at least " +
                   std::to_string(options.minCollectives) + " needed)";
    } else if (double(f.timesLast) <= options.lastShare * double(f.collectives)) {
        f.whyNot = "last in " + std::to_string(f.timesLast) + " of " +
                   std::to_string(f.collectives) + " collectives, not a majority";
    } else if (f.waitShare < options.minWaitShare) {
        f.whyNot = "the waiting it causes is " + formatPercent(f.waitShare) +
                   " of the other ranks' communication, under " +
                   formatPercent(options.minWaitShare, 0);
    } else {
        f.meetsEvidence = true;
    }
    return f;
}

std::optional<Advice> stragglerAdvice(const StragglerFinding& f, std::optional<double> gpuHourPrice,
                                      const StragglerOptions& options) {
    if (!f.meetsEvidence) {
        return std::nullopt;
    }
    Advice a;
    a.rule = "straggler";
    a.severity = f.waitShare >= options.criticalWaitShare ? Severity::Critical : Severity::Warning;
    a.rank = f.rank;
    a.device = trace::kHostDevice;
    const std::string hours = formatAmount(f.waitGpuHours);
    std::string msg = rankLabel(f.rank) + " arrives last in " + std::to_string(f.timesLast) +
                      " of " + std::to_string(f.collectives) + " collectives; the other " +
                      std::to_string(f.otherRanks) + " ranks wait for it " +
                      formatDuration(double(f.waitPerStepPerRankNs)) + " each per step (" +
                      formatDuration(double(f.waitCausedNs)) + " in all over " +
                      std::to_string(f.steps) + (f.steps == 1 ? " step" : " steps") + ", " +
                      formatPercent(f.waitShare) +
                      " of their communication time; wait = last arrival - own arrival, within the "
                      "collective's kernel). Waiting costs " +
                      hours + " GPU-hours in this trace (= sum of the waits / 3.6e12 ns per hour)";
    if (gpuHourPrice && *gpuHourPrice > 0) {
        msg += ", " + formatAmount(f.waitGpuHours * *gpuHourPrice) +
               " at the given price per GPU-hour";
    }
    msg += ". Gradient accumulation will not fix this: find why " + rankLabel(f.rank) +
           " is late (a slower GPU or host, more data to load, uneven work per rank, another job "
           "on its node) and balance it.";
    a.message = std::move(msg);
    a.evidence = {{"straggler_rank", double(toInt(f.rank)), ""},
                  {"times_last", double(f.timesLast), "collectives"},
                  {"collectives", double(f.collectives), "collectives"},
                  {"wait_caused_ns", double(f.waitCausedNs), "ns"},
                  {"wait_per_step_per_rank_ns", double(f.waitPerStepPerRankNs), "ns"},
                  {"wait_share_of_communication", f.waitShare, "fraction"},
                  {"steps", double(f.steps), "steps"},
                  {"wait_gpu_hours", f.waitGpuHours, "GPU-hours"}};
    if (gpuHourPrice && *gpuHourPrice > 0) {
        a.evidence.push_back({"wait_cost", f.waitGpuHours * *gpuHourPrice, "price"});
    }
    return a;
}

std::string communicationSplitText(const CommunicationSplit& c) {
    const double comm = double(std::max<int64_t>(1, c.communicationNs));
    return "communication " + formatDuration(double(c.communicationNs)) + " = waiting for the " +
           (c.partial ? "last of the ranks present " : "last rank ") +
           formatDuration(double(c.waitNs)) + " (" + formatPercent(double(c.waitNs) / comm) +
           ") + transfer " + formatDuration(double(c.transferNs)) + " over " +
           std::to_string(c.collectives) +
           " matched collectives (wait = last arrival - own arrival, within the kernel); "
           "exposed: waiting " +
           formatDuration(double(c.exposedWaitNs)) + ", transfer " +
           formatDuration(double(c.exposedTransferNs));
}

std::string stragglerSummary(const std::optional<StragglerFinding>& f, const CollectiveMatch& match,
                             const JobCoverage& coverage) {
    if (match.collectives.empty()) {
        return {};
    }
    if (!f) {
        return "no straggler: every matched collective started on all ranks at once (skew 0)";
    }
    const std::string who =
        rankLabel(f->rank) + ", last in " + std::to_string(f->timesLast) + " of " +
        std::to_string(f->collectives) + " collectives; the others wait " +
        formatDuration(double(f->waitPerStepPerRankNs)) + " each per step for it";
    if (coverage.partial()) {
        return "last of the ranks present: " + who + "; not the job's straggler";
    }
    if (f->meetsEvidence) {
        return "straggler: " + who;
    }
    return "no straggler named: " + f->whyNot + " (" + rankLabel(f->rank) +
           " is the latest most often)";
}

}  // namespace vramscope::analysis
