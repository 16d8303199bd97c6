#pragma once
// Bandwidth of every collective of a job and what limits it: algorithm bandwidth, bus bandwidth
// (the nccl-tests convention), per-function and per-size summaries, and a per-GPU verdict
// (bandwidth-bound, latency-bound on small messages, or waiting on a rank).
//
// Formulas (nccl-tests doc/PERFORMANCE.md; message sizes as NCCL's inspector plugin counts them):
//   algBw = traffic bytes / execution time
//   traffic = message x n for AllGather and ReduceScatter (message = NCCL's per-rank count x type
//             size), message otherwise
//   busBw = algBw x factor: 2(n-1)/n all-reduce; (n-1)/n all-gather, reduce-scatter, all-to-all;
//           1 broadcast, reduce, send, recv.
// GB/s here is 1e9 bytes per second, as nccl-tests and the inspector print it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/collectives/collectives.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// The nccl-tests bus-bandwidth factor of `function` (as collectiveFunctionFromKernel and the
/// importers name it: "AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast",
/// "Reduce", "Send", "Recv", "SendRecv"; case-insensitive) over `nranks` ranks: 2(n-1)/n,
/// (n-1)/n or 1 as in the file comment. nullopt for an unknown function or nranks < 1.
std::optional<double> busBandwidthFactor(std::string_view function, int32_t nranks);

/// The bytes algBw divides by time: messageBytes x nranks for AllGather and ReduceScatter (NCCL's
/// count is per rank there), messageBytes otherwise. nullopt for an unknown function, nranks < 1
/// or messageBytes 0.
std::optional<double> algorithmTrafficBytes(std::string_view function, uint64_t messageBytes,
                                            int32_t nranks);

/// One collective (or point-to-point operation) on one rank, with its bandwidth.
struct CollectiveBandwidth {
    size_t input = 0;                          ///< index of the rank among the job's inputs
    trace::RankId rank = trace::kUnknownRank;  ///< collectiveRanks' rank of that input
    trace::DeviceIndex device{0};
    std::string function;
    int64_t seq = -1;                ///< sequence number, -1 = unknown
    uint64_t communicatorHash = 0;   ///< 0 = unknown
    uint64_t bytes = 0;              ///< message size (count x type size), 0 = unknown
    int32_t ranks = 0;               ///< group size n, 0 = unknown
    trace::TimestampNs startNs = 0;  ///< the input's own clock
    int64_t durationNs = 0;          ///< execution time (end - start)
    /// algBw and busBw in GB/s (1e9 B/s); nullopt when bytes, ranks or a positive duration is
    /// missing.
    std::optional<double> algbwGBps;
    std::optional<double> busbwGBps;
    std::string algorithm;  ///< "RING", "TREE", ...; empty = unknown
    std::string protocol;   ///< "LL", "LL128", "SIMPLE"; empty = unknown
    trace::CollectiveTiming timing = trace::CollectiveTiming::Unknown;
    uint32_t channels = 0;      ///< 0 = unknown
    bool pointToPoint = false;  ///< isPointToPoint(function)
    /// Time inside its interval spent waiting for the last rank (CollectiveParticipant::
    /// waitInKernelNs) when the collective was matched across ranks; -1 = not matched.
    int64_t waitNs = -1;
    /// transfer = duration - wait when matched, else the duration (an upper bound), ns.
    int64_t transferNs() const { return waitNs >= 0 ? durationNs - waitNs : durationNs; }
};

/// Message sizes are summarised in power-of-two buckets: [2^k, 2^(k+1)) bytes.
struct SizeBucketBandwidth {
    uint64_t minBytes = 0;  ///< 2^k
    uint64_t maxBytes = 0;  ///< 2^(k+1) - 1
    size_t count = 0;       ///< occurrences (rank x collective) with a busBw
    double medianBusbwGBps = 0;
    int64_t transferNs = 0;  ///< summed transfer time of its occurrences
};

/// One row of the Collectives table: the occurrences of one function at one message size and
/// group size, over all ranks.
struct CollectiveGroup {
    std::string function;
    uint64_t bytes = 0;
    int32_t ranks = 0;
    size_t count = 0;        ///< distinct collectives (matched ones count once)
    size_t occurrences = 0;  ///< rank x collective rows
    int64_t medianDurationNs = 0;
    int64_t maxDurationNs = 0;
    std::optional<double> minBusbwGBps;
    std::optional<double> medianBusbwGBps;
    /// The rank last most often among its matched collectives; kUnknownRank when none was
    /// matched or no one was ever last.
    trace::RankId stragglerRank = trace::kUnknownRank;
    int64_t waitNs = 0;  ///< summed waiting of all its occurrences
    /// The occurrence with the longest duration (index into CollectiveBandwidthReport::
    /// occurrences): what selecting the row zooms to.
    size_t longest = 0;
};

/// Per function: totals and busBw spread.
struct CollectiveFunctionSummary {
    std::string function;
    size_t count = 0;        ///< occurrences
    uint64_t bytes = 0;      ///< summed message bytes
    int64_t durationNs = 0;  ///< summed durations
    int64_t waitNs = 0;      ///< summed waits of matched occurrences
    std::optional<double> minBusbwGBps, medianBusbwGBps, maxBusbwGBps;
};

/// What limits a GPU's communication.
enum class CommunicationLimit : uint8_t {
    Unknown = 0,  ///< the data does not support a verdict (see CommunicationVerdict::missing)
    BandwidthBound = 1,  ///< most transfer time is in large messages running near the link peak
    LatencyBound = 2,    ///< most transfer time is in small messages, far below the link peak
    WaitingOnRank = 3,   ///< most communication time is waiting, mostly for one rank
    NotLimited = 4,      ///< none of the above holds: transfers run below the peak on large
                         ///< messages (a slower link or contention); said with the figures
};

/// The verdict of one GPU, with its evidence.
struct CommunicationVerdict {
    size_t input = 0;
    trace::RankId rank = trace::kUnknownRank;
    trace::DeviceIndex device{0};
    CommunicationLimit limit = CommunicationLimit::Unknown;
    trace::RankId waitingOn = trace::kUnknownRank;  ///< with WaitingOnRank
    double linkGBps = 0;                            ///< the peak compared against
    std::string linkSource;       ///< "--link-bandwidth", or "default for <GPU model>: ..."
    int64_t communicationNs = 0;  ///< summed durations of its collectives
    int64_t waitNs = 0;
    int64_t transferNs = 0;
    std::string evidence;    ///< one sentence with the figures behind the verdict
    std::string missing;     ///< with Unknown: what would be needed
    size_t collectives = 0;  ///< its occurrences (point-to-point operations left out)
    size_t matched = 0;      ///< of them matched across ranks (with a wait)
    /// Share of transfer time in occurrences with a busBw and a measured timing (0..1).
    double measuredShare = 0;
    /// Shares of the measured transfer time in large / small messages (0..1) and the median
    /// busBw of those messages, GB/s (0 when there are none).
    double largeShare = 0, smallShare = 0;
    double largeMedianBusbwGBps = 0, smallMedianBusbwGBps = 0;
};

/// Options of collectiveBandwidth and the thresholds of its verdicts. Each threshold with its
/// reason (a user acts on a verdict, so every rule asks for a clear majority):
/// - largeMessageBytes 16 MiB: at 450 GB/s moving 16 MiB takes ~37 us, several times the
///   5-10 us a collective costs before it moves data (launch, handshakes), so on a large message
///   the link's bandwidth sets the time; nccl-tests curves on NVLink systems reach most of their
///   busBw plateau from tens of MiB on.
/// - smallMessageBytes 1 MiB: below it the transfer at the peak (~2 us at 450 GB/s) is shorter
///   than that fixed cost, so latency sets the time.
/// - bandwidthShare 0.7: nccl-tests reach 80-90 % of the per-direction NVLink figure as busBw at
///   large sizes; a median of at least 70 % is a link running near what it can give.
/// - latencyShare 0.25: "far below the peak" is under a quarter of it.
/// - majorityShare 0.5 (strictly more): "most" of the time.
/// - minCollectives 3 (as StragglerOptions): one or two collectives are an anecdote.
/// - minMeasuredShare 0.5: the figures must cover more than half of the GPU's transfer time
///   (occurrences with bytes, group size and GPU timing), else the verdict is Unknown.
struct CollectiveBandwidthOptions {
    /// The link peak busBw is compared against, GB/s; unset = defaultLinkBandwidth of the GPU.
    std::optional<double> linkGBps;
    /// The inputs are part of a larger job (JobCoverage::partial): the last rank present may
    /// not be the one the GPU waits for, so WaitingOnRank is not concluded.
    bool partialJob = false;
    uint64_t largeMessageBytes = uint64_t(16) << 20;
    uint64_t smallMessageBytes = uint64_t(1) << 20;
    double bandwidthShare = 0.7;
    double latencyShare = 0.25;
    double majorityShare = 0.5;
    size_t minCollectives = 3;
    double minMeasuredShare = 0.5;
};

/// Everything the report, check and the Collectives view show.
struct CollectiveBandwidthReport {
    std::vector<CollectiveBandwidth> occurrences;      ///< input order, then start time
    std::vector<CollectiveFunctionSummary> functions;  ///< by summed duration, largest first
    std::vector<CollectiveGroup> groups;               ///< by summed duration, largest first
    std::vector<SizeBucketBandwidth> sizeBuckets;      ///< ascending size
    std::vector<CommunicationVerdict> verdicts;        ///< one per GPU with collectives
};

/// A documented default link peak for a GPU model (trace::DeviceInfo::name), GB/s per direction,
/// with the sentence naming its source; nullopt for a model without one (the verdict then asks for
/// --link-bandwidth).
struct LinkBandwidth {
    double gbps = 0;
    std::string source;
};
std::optional<LinkBandwidth> defaultLinkBandwidth(std::string_view gpuName);

/// Builds the report over the job's inputs (RankInput as for matchCollectives) and the match of
/// their collectives (for waits and stragglers; may be empty). Collectives come from each input's
/// CollectiveEvents (importers and the capture agent fill them). Time O(n log n).
CollectiveBandwidthReport collectiveBandwidth(const std::vector<RankInput>& inputs,
                                              const CollectiveMatch& match,
                                              const CollectiveBandwidthOptions& options = {});

/// "bandwidth-bound", "latency-bound (small messages)", "waiting on rank R", "not limited by the
/// link", "unknown".
std::string limitText(const CommunicationVerdict& v);

/// The JSON / text name of a limit: "unknown", "bandwidth_bound", "latency_bound",
/// "waiting_on_rank", "not_limited".
std::string_view limitName(CommunicationLimit limit);

/// The name of a timing source: "unknown", "kernel", "kernel_channels", "proxy", "host".
std::string_view timingSourceName(trace::CollectiveTiming timing);

/// Whether the interval is an execution time the GPU or the network measured (a kernel record,
/// NCCL kernel channels or proxy operations): host times (enqueue to host end) and unknown
/// sources are not, so they give no verdict.
bool isMeasuredTiming(trace::CollectiveTiming timing);

/// One GPU of the job by input index and device (the input of CollectiveBandwidth::input).
struct CollectiveGpu {
    size_t input = 0;
    trace::DeviceIndex device{0};
};

/// Per-function totals over `occurrences` (all, or those of `gpu`), by summed duration, largest
/// first. Medians of an even count are the lower middle value.
std::vector<CollectiveFunctionSummary> functionSummaries(
    const std::vector<CollectiveBandwidth>& occurrences, std::optional<CollectiveGpu> gpu = {});

/// Power-of-two size buckets of the occurrences with a busBw (all, or those of `gpu`),
/// ascending.
std::vector<SizeBucketBandwidth> sizeBuckets(const std::vector<CollectiveBandwidth>& occurrences,
                                             std::optional<CollectiveGpu> gpu = {});

}  // namespace vramscope::analysis
