#pragma once
// Cross-rank conclusions and the evidence they need: how much of the job the inputs hold, each
// GPU's communication time split into waiting for the last rank and transfer, and the straggler
// rank (who makes the others wait, how often, at what cost). Pure functions over plain data.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/collectives/collectives.h"
#include "vramscope/analysis/time/time_breakdown.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// How many of the job's ranks the inputs hold. A cross-rank claim (straggler, waits, skew) over
/// part of a job speaks only of the ranks present: the real last rank may be one that is absent.
struct JobCoverage {
    size_t ranksPresent = 0;  ///< distinct ranks among the inputs (each unknown rank counts once)
    int32_t worldSize = 0;    ///< the largest world size a header names; 0 = unknown
    /// Why the inputs cannot be one job, empty when they can: two inputs claim the same rank, or
    /// the headers name different world sizes. Collectives are then not matched across them
    /// (their clocks and sequences are unrelated: waits would be nonsense).
    std::string notOneJob;
    /// True when a header names more ranks than the inputs hold.
    bool partial() const { return worldSize > 0 && size_t(worldSize) > ranksPresent; }
};

/// The coverage of `inputs` (null data is skipped), with notOneJob filled.
JobCoverage jobCoverage(const std::vector<RankInput>& inputs);

/// One GPU's communication time by what it was spent on, from the collectives matched across
/// ranks (point-to-point operations are not among them). ns.
struct CommunicationSplit {
    size_t collectives = 0;         ///< matched collectives this GPU took part in
    int64_t communicationNs = 0;    ///< TimeBreakdown::communicationNs
    int64_t waitNs = 0;             ///< |union of [own start, min(last start, own end))|
    int64_t transferNs = 0;         ///< communication - wait
    int64_t exposedWaitNs = 0;      ///< wait not overlapped by compute: |W u C| - |C|
    int64_t exposedTransferNs = 0;  ///< exposed communication - exposed wait, >= 0
    /// Whether the waits count only the ranks present (a partial job): the last rank may be one
    /// that is absent, so wait is a lower bound and transfer an upper bound.
    bool partial = false;
};

/// The intervals [own start, own start + waitInKernelNs) in which `device` of the input matched as
/// `matchedRank` waited for the last rank, in that input's clock (match times less
/// `clockOffsetNs`), in match order; empty waits are left out. `collectives`, when given, is
/// increased by the matched collectives the device took part in.
std::vector<std::pair<int64_t, int64_t>> waitIntervals(const CollectiveMatch& match,
                                                       trace::DeviceIndex device,
                                                       trace::RankId matchedRank,
                                                       int64_t clockOffsetNs,
                                                       size_t* collectives = nullptr);

/// The split of `device` of the input matched as `matchedRank` (collectiveRanks), whose times
/// in `match` carry `clockOffsetNs`. `breakdown` is that device's. W = the wait intervals, C =
/// the union of its compute kernels. nullopt when the device took part in no matched collective.
std::optional<CommunicationSplit> splitCommunication(
    const trace::TraceData& data, trace::DeviceIndex device, const TimeBreakdown& breakdown,
    const CollectiveMatch& match, trace::RankId matchedRank, int64_t clockOffsetNs, bool partial);

/// When a rank is named the straggler. Defaults and why:
/// - minCollectives 3: one or two collectives are an anecdote, not a pattern;
/// - lastShare 0.5 (strictly more): last in a majority of the matched collectives it took part
///   in, so it is the usual latecomer, not one unlucky arrival;
/// - minWaitShare 0.1: the waiting it causes on the other ranks is at least 10 % of their
///   communication time, so naming it changes a decision. Skew 0 never names anyone.
/// criticalWaitShare: above it (0.5, most of the others' communication is waiting) Critical.
struct StragglerOptions {
    size_t minCollectives = 3;
    double lastShare = 0.5;
    double minWaitShare = 0.1;
    double criticalWaitShare = 0.5;
};

/// The rank that arrived last most often and what that cost the others.
struct StragglerFinding {
    trace::RankId rank = trace::kUnknownRank;
    size_t timesLast = 0;               ///< matched collectives it arrived last in (skew > 0)
    size_t collectives = 0;             ///< matched collectives it took part in
    size_t otherRanks = 0;              ///< ranks that waited for it at least once
    int64_t waitCausedNs = 0;           ///< sum over the others of waitInKernelNs where it was last
    int64_t othersCommunicationNs = 0;  ///< sum of the other ranks' communication time
    double waitShare = 0.0;             ///< waitCausedNs / othersCommunicationNs
    int64_t steps = 1;                  ///< iterations seen (the most on one GPU), else 1
    std::string stepsSource;            ///< "observed iterations" or "one step (the trace)"
    /// waitCausedNs / otherRanks / steps: what each other rank waits for it per step.
    int64_t waitPerStepPerRankNs = 0;
    double waitGpuHours = 0.0;   ///< waitCausedNs / 3.6e12 (GPU-hours in the trace)
    bool meetsEvidence = false;  ///< all of StragglerOptions' conditions hold (and not partial)
    std::string whyNot;          ///< the condition that failed, when !meetsEvidence
};

/// The rank last in the most matched collectives (ties: the lower rank), with its evidence;
/// nullopt when no collective had a last rank (skew 0 everywhere, or none matched).
/// `communicationNsByRank` is each matched rank's communication time (summed over its GPUs);
/// `steps` the iterations seen (<= 0: one step, the trace). A partial job never meets the
/// evidence: among 2 of 128 ranks the last one present is not the job's straggler.
std::optional<StragglerFinding> findStraggler(
    const CollectiveMatch& match,
    const std::vector<std::pair<trace::RankId, int64_t>>& communicationNsByRank, int64_t steps,
    const JobCoverage& coverage, const StragglerOptions& options = {});

/// The "straggler" advice (Warning, Critical at criticalWaitShare) for a finding that meets the
/// evidence, else nullopt. Cost as evidence of its own (not the job's cost estimate):
/// wait_gpu_hours = waitCausedNs / 3.6e12; wait_cost = wait_gpu_hours x price when a price above
/// 0 is given (the GUI prices it in its cost box instead).
std::optional<Advice> stragglerAdvice(const StragglerFinding& finding,
                                      std::optional<double> gpuHourPrice,
                                      const StragglerOptions& options = {});

/// "communication 11.300 ms = waiting for the last rank 11.100 ms (98.2 %) + transfer 200.000 us
/// over 8 matched collectives (wait = last arrival - own arrival, within the kernel); exposed:
/// waiting ..., transfer ...", with "last of the ranks present" in a partial job.
std::string communicationSplitText(const CommunicationSplit& split);

/// One line on who arrived last, for the report and the GUI: "straggler: rank 7, last in 5 of 8
/// collectives; ..." when the evidence holds; "last of the ranks present: rank 1, ...;
/// not the job's straggler" for a partial job; "no straggler: <why>" otherwise; "" when no
/// collective was matched.
std::string stragglerSummary(const std::optional<StragglerFinding>& finding,
                             const CollectiveMatch& match, const JobCoverage& coverage);

}  // namespace vramscope::analysis
