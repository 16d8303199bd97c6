#pragma once
// Slow-down: whether the iterations of one device get slower over the run, and which part of the
// iteration grew (compute, communication transfer, waiting for the last rank, copies, host-bound
// gaps, other idle). Pure function over plain data; the result is held by DeviceAnalysis.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/analysis/collectives/collectives.h"
#include "vramscope/analysis/time/iterations.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// The parts an iteration's time is split into; they add up to its duration.
enum class IterationPart {
    Compute,    ///< |union of compute kernels| in the iteration
    Transfer,   ///< exposed communication less Wait (all of it when Wait is unknown)
    Wait,       ///< exposed waiting for the last rank of a matched collective (0 when unknown)
    Copies,     ///< memcpy / memset time overlapped by no compute or communication kernel
    HostBound,  ///< idle gaps ended by a kernel the host launched after the gap began
    OtherIdle,  ///< the rest: other gaps, gaps ended by a collective, time before the first /
                ///< after the last kernel of the iteration
};
inline constexpr size_t kIterationParts = 6;
/// "compute", "communication transfer", "waiting for the last rank", "copies",
/// "host-bound gaps", "other idle".
const char* toString(IterationPart part);

/// One iteration's period and its parts, ns.
struct IterationTime {
    size_t index = 0;                ///< position in IterationSet::iterations
    int64_t number = 0;              ///< Iteration::number
    trace::TimestampNs startNs = 0;  ///< the rank's own clock
    int64_t durationNs = 0;
    std::array<int64_t, kIterationParts> partNs{};  ///< indexed by IterationPart
};

/// How one part changed from the first third to the last third of the steady iterations.
struct PartGrowth {
    IterationPart part = IterationPart::Compute;
    int64_t earlyMedianNs = 0;
    int64_t lateMedianNs = 0;
    int64_t growthNs() const { return lateMedianNs - earlyMedianNs; }
};

/// The slow-down figures of one device. Plain data, built by slowDown.
struct SlowDownReport {
    trace::DeviceIndex device{0};
    /// Whether the figures below exist: kernels on the device and at least 3 iteration periods
    /// after the warm-up. When false, `reason` says what is missing.
    bool assessable = false;
    std::string reason;
    /// Whether the Wait part is known: a collective of this GPU was matched across ranks.
    bool waitKnown = false;
    /// Every period measured, in order; iterations[0] is the warm-up (left out below).
    std::vector<IterationTime> iterations;
    size_t steadyIterations = 0;  ///< periods after the warm-up
    size_t thirdIterations = 0;   ///< steadyIterations / 3: the size of the early and late thirds
    int64_t earlyMedianNs = 0;    ///< median duration of the first third of the steady periods
    int64_t lateMedianNs = 0;     ///< ... and of the last third
    int64_t earlyMadNs = 0;       ///< median absolute deviation of the first third's durations
    /// Every part's early and late median, largest growth first (ties: IterationPart order).
    std::vector<PartGrowth> parts;
    /// The rank last most often in the matched collectives this GPU took part in during the last
    /// third; kUnknownRank when none had a last rank there.
    trace::RankId lateLastRank = trace::kUnknownRank;

    int64_t growthNs() const { return lateMedianNs - earlyMedianNs; }
    /// growth / early median, 0 when the early median is 0.
    double growthFraction() const {
        return earlyMedianNs > 0 ? double(growthNs()) / double(earlyMedianNs) : 0.0;
    }
};

/// The slow-down of `device` over `iterations`. Periods: iteration k runs from its start to the
/// next iteration's start (so the time between steps, where data loading happens, belongs to
/// the step before it); the last iteration counts with its own [start, end) only when the
/// iterations are back to back (each ends at or after the next one's start, as ProfilerStep
/// ranges are), since otherwise it would lack its trailing gap and read short. The parts of each
/// period come from computeWindowBreakdowns over it; Wait from the device's waitIntervals in
/// `match` (null, or no collective of the device in it: unknown), exposed = |W u C| - |C| within
/// the period, clipped to the period's exposed communication. The first period is the warm-up
/// (allocator, autotuning, compilation) and is left out of the thirds. Not assessable without
/// kernels on the device, without iterations, or with fewer than 3 steady periods.
/// O(kernels log kernels + iterations x (log kernels + kernels per iteration)).
SlowDownReport slowDown(const trace::TraceData& data, trace::DeviceIndex device,
                        const IterationSet& iterations, const CollectiveMatch* match,
                        trace::RankId matchedRank, int64_t clockOffsetNs);

}  // namespace vramscope::analysis
