#pragma once
// Collectives matched across the ranks of a job: who arrived last (the straggler) and how long
// every other rank waited for it.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// One rank's part in a matched collective.
struct CollectiveParticipant {
    trace::RankId rank{0};
    trace::TimestampNs startNs = 0;  ///< arrival: when its collective (kernel) began
    trace::TimestampNs endNs = 0;
    int64_t waitNs = 0;  ///< last arrival - own arrival (0 for the straggler)
};

/// One collective as all ranks saw it.
struct MatchedCollective {
    std::string function;           ///< "AllReduce", "AllGather", ...
    uint64_t communicatorHash = 0;  ///< 0 when matched by order
    int64_t seqNumber = -1;         ///< sequence number, or the order index when matched by order
    uint64_t bytes = 0;             ///< message size on the first participant, 0 = unknown
    std::vector<CollectiveParticipant> participants;  ///< sorted by rank
    trace::RankId stragglerRank{0};                   ///< the rank that arrived last
    int64_t skewNs = 0;                               ///< last arrival - first arrival
};

/// Waiting totals of one rank over all matched collectives.
struct RankWait {
    trace::RankId rank{0};
    size_t collectives = 0;
    int64_t totalWaitNs = 0;
    size_t timesStraggler = 0;
};

/// The result of matching. `method`: "communicator+sequence" (the cross-rank key of DESIGN.md's
/// NCCL facts: communicator hash, function, sequence number), or "order" (the k-th collective of a
/// function on each rank, in start order, when the key is not known on every rank), or "none" when
/// no rank has collectives.
struct CollectiveMatch {
    std::string method;
    std::string source;                          ///< "collective events" or "communication kernels"
    std::vector<MatchedCollective> collectives;  ///< in order of first arrival
    std::vector<RankWait> ranks;                 ///< sorted by rank
    size_t unmatched = 0;                        ///< collectives seen on fewer than two ranks
};

/// A rank's trace for matching, with its rank number and clock offset (ns added to its
/// timestamps to put it on the job's time axis).
struct RankInput {
    const trace::TraceData* data = nullptr;
    trace::RankId rank{0};
    int64_t clockOffsetNs = 0;
};

/// Matches collectives across ranks. Per rank the collectives are its CollectiveEvents when it has
/// any, else its Communication kernels with the function parsed from the NCCL/RCCL kernel name
/// (ncclKernel_<Func>_..., ncclDevKernel_<Func>_...; DESIGN.md NCCL facts). Arrival is the start;
/// the straggler is the rank with the latest start; each rank's wait is last start - own start.
/// Ranks with no collectives are left out. Time ns, O(n log n).
CollectiveMatch matchCollectives(const std::vector<RankInput>& ranks);

/// The rank each input of a job takes part in collectives as, one entry per entry of `ranks`: a
/// known rank (>= 0) is kept; an unknown one takes its position in `ranks` when no known rank has
/// that number, else the smallest number that no input holds. No two inputs ever share a rank,
/// so an unranked trace is not matched as a second copy of a ranked one. analyzeJob and the
/// views that draw its collectives use this to map a participant back to its input.
std::vector<trace::RankId> collectiveRanks(const std::vector<trace::RankId>& ranks);

/// The collective function in an NCCL/RCCL kernel name: "ncclKernel_AllReduce_RING_LL_Sum_float"
/// -> "AllReduce", "ncclDevKernel_SendRecv(...)" -> "SendRecv"; the name itself otherwise.
std::string collectiveFunctionFromKernel(std::string_view kernelName);

}  // namespace vramscope::analysis
