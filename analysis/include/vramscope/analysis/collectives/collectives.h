#pragma once
// Collectives matched across the ranks of a job: who arrived last (the straggler) and how long
// every other rank waited for it.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/job.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// One rank's part in a matched collective.
struct CollectiveParticipant {
    trace::RankId rank{0};
    trace::DeviceIndex device{0};  ///< the GPU its kernel ran on
    /// Arrival: when its collective (kernel) began, on the clock of RankInput::clockOffsetNs
    /// (the job's clock in JobModel::analysis and in the CLI; ns).
    trace::TimestampNs startNs = 0;
    trace::TimestampNs endNs = 0;  ///< when it ended, same clock
    int64_t waitNs = 0;            ///< last arrival - own arrival (0 for the straggler)

    /// The part of its own kernel spent waiting for the last rank: min(waitNs, end - start), ns.
    int64_t waitInKernelNs() const {
        return std::max<int64_t>(0, std::min(waitNs, endNs - startNs));
    }
};

/// One collective as all ranks saw it.
struct MatchedCollective {
    std::string function;           ///< "AllReduce", "AllGather", ...
    uint64_t communicatorHash = 0;  ///< 0 when matched by order
    int64_t seqNumber = -1;         ///< sequence number, or the order index when matched by order
    uint64_t bytes = 0;             ///< message size on the first participant, 0 = unknown
    std::vector<CollectiveParticipant> participants;  ///< sorted by rank
    /// The rank that arrived last; kUnknownRank when all arrived at once (skewNs == 0): no one
    /// is last then.
    trace::RankId stragglerRank = trace::kUnknownRank;
    int64_t skewNs = 0;  ///< last arrival - first arrival
};

/// Waiting totals of one rank over all matched collectives.
struct RankWait {
    trace::RankId rank{0};
    size_t collectives = 0;
    /// Sum of CollectiveParticipant::waitInKernelNs: the waiting inside its own kernels (what the
    /// communication split counts as waiting), ns.
    int64_t totalWaitNs = 0;
    size_t timesStraggler = 0;  ///< collectives it arrived last in (skew > 0)
};

/// The result of matching. `method`: "communicator+sequence" (the cross-rank key of docs/DESIGN.md
/// "NCCL collectives": communicator hash, function, sequence number), or "order" (the k-th
/// collective of a function on each rank, in start order, when the key is not known on every rank),
/// or "none" when no rank has collectives.
struct CollectiveMatch {
    std::string method;
    std::string source;                          ///< "collective events" or "communication kernels"
    std::vector<MatchedCollective> collectives;  ///< in order of first arrival
    std::vector<RankWait> ranks;                 ///< sorted by rank
    size_t unmatched = 0;                        ///< collectives seen on fewer than two ranks
    /// Groups the "order" method formed for a function whose pairing is shown wrong: in one of
    /// its groups a rank's kernel ended before the last rank's began, which no collective allows
    /// (a rank leaves a collective only once every rank has joined it). The ranks' sequences of
    /// that function differ (events dropped, a sampled trace), so every group of it is left out
    /// rather than reported as waits.
    size_t impossibleByOrder = 0;
    /// Point-to-point operations (isPointToPoint) seen, summed over ranks. They are not matched:
    /// a send waits for its one peer, not for the last rank of a group, so they say nothing
    /// about stragglers.
    size_t pointToPoint = 0;
};

/// A rank's trace for matching, with its rank number and the clock the cross-rank results are
/// put on.
struct RankInput {
    const trace::TraceData* data = nullptr;
    trace::RankId rank{0};
    /// Added to this rank's timestamps (its own clock) for the cross-rank results: collective
    /// times in CollectiveMatch, and the bandwidth join. buildJobModel passes
    /// RankInfo::toJobNs, so they are on the job's clock; 0 leaves them on the ranks' own
    /// (shared) clock. Per-device results are on the rank's own clock either way.
    int64_t clockOffsetNs = 0;
};

/// The inputs of analyzeJob and matchCollectives for a job opened whole (trace::openJob): every
/// rank in the job's order, with its header's rank number and clock offset 0 (results on the
/// ranks' own clock; buildJobModel makes its own, on the job's clock). The inputs point into
/// `job`.
std::vector<RankInput> rankInputs(const trace::Job& job);

/// Whether a collective function (as collectiveFunctionFromKernel or the importers name it) is
/// point-to-point rather than a collective of a group: Send, Recv, SendRecv (any case). NCCL's
/// SendRecv kernel also runs all-to-all; importers that can tell (Kineto: the "nccl:all_to_all"
/// op that launched it) name those AllToAll.
bool isPointToPoint(std::string_view function);

/// Matches collectives across ranks. Per rank the collectives are its CollectiveEvents when it has
/// any, else its Communication kernels with the function parsed from the NCCL/RCCL kernel name
/// (ncclKernel_<Func>_..., ncclDevKernel_<Func>_...; docs/DESIGN.md "NCCL collectives"). Arrival is
/// the start; the straggler is the rank with the latest start (none when all start at once); each
/// rank's wait is last start - own start. Point-to-point operations are counted, not matched. Ranks
/// with no collectives are left out. Time ns, O(n log n).
CollectiveMatch matchCollectives(const std::vector<RankInput>& ranks);

/// The rank each input of a job takes part in collectives as, one entry per entry of `ranks`: a
/// known rank (>= 0) is kept; an unknown one takes its position in `ranks` when no known rank has
/// that number, else the smallest number that no input holds. No two inputs ever share a rank,
/// so an unranked trace is not matched as a second copy of a ranked one. analyzeJob and the
/// views that draw its collectives use this to map a participant back to its input.
std::vector<trace::RankId> collectiveRanks(const std::vector<trace::RankId>& ranks);

/// The collective function in an NCCL/RCCL kernel name: "ncclKernel_AllReduce_RING_LL_Sum_float"
/// -> "AllReduce", "ncclDevKernel_SendRecv(...)" -> "SendRecv" (trace::collectiveFromKernelName,
/// kernel_names.h); the name itself otherwise, so a kernel the trace calls communication but
/// whose name tells no function (an RCCL "rccl..." kernel) is still matched by its name.
std::string collectiveFunctionFromKernel(std::string_view kernelName);

}  // namespace vramscope::analysis
