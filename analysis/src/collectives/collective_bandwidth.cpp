#include "vramscope/analysis/collectives/collective_bandwidth.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {
namespace {

/// Lower-case copy without '_' or ' ', so "AllReduce", "all_reduce" and "allreduce" compare equal.
std::string foldFunction(std::string_view function) {
    std::string f;
    f.reserve(function.size());
    for (char c : function) {
        if (c != '_' && c != ' ') {
            f += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return f;
}

}  // namespace

std::optional<double> busBandwidthFactor(std::string_view function, int32_t nranks) {
    if (nranks < 1) {
        return std::nullopt;
    }
    const std::string f = foldFunction(function);
    const double n = nranks;
    if (f == "allreduce") {
        return 2.0 * (n - 1) / n;
    }
    if (f == "allgather" || f == "allgatherv" || f == "reducescatter" || f == "alltoall") {
        return (n - 1) / n;
    }
    if (f == "broadcast" || f == "reduce" || f == "send" || f == "recv" || f == "sendrecv") {
        return 1.0;
    }
    return std::nullopt;
}

std::optional<double> algorithmTrafficBytes(std::string_view function, uint64_t messageBytes,
                                            int32_t nranks) {
    if (messageBytes == 0 || !busBandwidthFactor(function, nranks)) {
        return std::nullopt;
    }
    const std::string f = foldFunction(function);
    const bool perRankCount = f == "allgather" || f == "allgatherv" || f == "reducescatter";
    return static_cast<double>(messageBytes) * (perRankCount ? nranks : 1);
}

}  // namespace vramscope::analysis

namespace vramscope::analysis {
namespace {

/// Lower middle value of `v` (reorders it); 0 for an empty vector.
template <class T>
T medianOf(std::vector<T>& v) {
    if (v.empty()) {
        return T{};
    }
    const auto mid = v.begin() + ptrdiff_t((v.size() - 1) / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
}

bool ofGpu(const CollectiveBandwidth& o, const std::optional<CollectiveGpu>& gpu) {
    return !gpu || (o.input == gpu->input && o.device == gpu->device);
}

/// floor(log2(bytes)) for bytes > 0.
int bucketOf(uint64_t bytes) {
    int k = 0;
    while (bytes > 1) {
        bytes >>= 1;
        ++k;
    }
    return k;
}

/// What a matched participant gives an occurrence: its wait and the collective's straggler.
struct Joined {
    int64_t waitNs = -1;
    trace::RankId straggler = trace::kUnknownRank;
    size_t collective = 0;  ///< index into CollectiveMatch::collectives
};

/// The join of occurrences with the match: by (communicator, function, sequence, rank) when
/// the match used the cross-rank key, else by (rank, device, start on the job's axis), which
/// is how matchCollectives recorded each participant.
class MatchJoin {
public:
    explicit MatchJoin(const CollectiveMatch& match)
        : m_keyed(match.method == "communicator+sequence") {
        for (size_t i = 0; i < match.collectives.size(); ++i) {
            const MatchedCollective& m = match.collectives[i];
            for (const CollectiveParticipant& p : m.participants) {
                const Joined j{p.waitInKernelNs(), m.stragglerRank, i};
                if (m_keyed) {
                    m_byKey[{m.communicatorHash, m.function, m.seqNumber, toInt(p.rank)}] = j;
                } else {
                    m_byStart[{toInt(p.rank), toInt(p.device), p.startNs}] = j;
                }
            }
        }
    }

    std::optional<Joined> find(const CollectiveBandwidth& o, int64_t clockOffsetNs) const {
        if (m_keyed) {
            auto it = m_byKey.find({o.communicatorHash, o.function, o.seq, toInt(o.rank)});
            return it != m_byKey.end() ? std::optional(it->second) : std::nullopt;
        }
        auto it = m_byStart.find({toInt(o.rank), toInt(o.device), o.startNs + clockOffsetNs});
        return it != m_byStart.end() ? std::optional(it->second) : std::nullopt;
    }

private:
    bool m_keyed;
    std::map<std::tuple<uint64_t, std::string, int64_t, int32_t>, Joined> m_byKey;
    std::map<std::tuple<int32_t, int32_t, trace::TimestampNs>, Joined> m_byStart;
};

std::string gbps(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GB/s", v);
    return buf;
}

std::string sizeText(uint64_t bytes) {
    if (bytes >= (uint64_t(1) << 20) && bytes % (uint64_t(1) << 20) == 0) {
        return std::to_string(bytes >> 20) + " MiB";
    }
    if (bytes >= 1024 && bytes % 1024 == 0) {
        return std::to_string(bytes >> 10) + " KiB";
    }
    return std::to_string(bytes) + " B";
}

std::string msText(int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", double(ns) / 1e6);
    return buf;
}

/// Occurrence rows of one input, in start order.
void addOccurrences(const RankInput& in, size_t input, const MatchJoin& join,
                    std::vector<CollectiveBandwidth>& out, std::vector<Joined>& joined) {
    const trace::TraceData& d = *in.data;
    const trace::CollectiveEvents& c = d.collectives;
    std::vector<size_t> order(c.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return c.startNs[a] < c.startNs[b]; });
    for (const size_t i : order) {
        CollectiveBandwidth o;
        o.input = input;
        o.rank = in.rank;
        o.device = c.device[i];
        o.function = std::string(d.string(c.function[i]));
        o.seq = c.seqNumber[i];
        o.communicatorHash = c.communicatorHash[i];
        o.bytes = c.bytes[i];
        o.ranks = c.nranks[i];
        o.startNs = c.startNs[i];
        o.durationNs = c.endNs[i] - c.startNs[i];
        o.algorithm = c.algorithm[i] != 0 ? std::string(d.string(c.algorithm[i])) : "";
        o.protocol = c.protocol[i] != 0 ? std::string(d.string(c.protocol[i])) : "";
        o.timing = c.timing[i];
        o.channels = c.channels[i];
        o.pointToPoint = isPointToPoint(o.function);
        if (o.durationNs > 0) {
            const std::optional<double> traffic =
                algorithmTrafficBytes(o.function, o.bytes, o.ranks);
            const std::optional<double> factor = busBandwidthFactor(o.function, o.ranks);
            if (traffic && factor) {
                // bytes per ns = 1e9 bytes per second = GB/s
                o.algbwGBps = *traffic / double(o.durationNs);
                o.busbwGBps = *o.algbwGBps * *factor;
            }
        }
        Joined j;
        if (!o.pointToPoint) {
            if (auto found = join.find(o, in.clockOffsetNs)) {
                j = *found;
                o.waitNs = j.waitNs;
            }
        }
        out.push_back(std::move(o));
        joined.push_back(j);
    }
}

std::vector<CollectiveGroup> groupsOf(const std::vector<CollectiveBandwidth>& occ,
                                      const std::vector<Joined>& joined) {
    struct Acc {
        CollectiveGroup g;
        int64_t totalNs = 0;
        std::vector<int64_t> durations;
        std::vector<double> busbw;
        std::set<size_t> matched;             // distinct matched collectives
        std::map<int32_t, size_t> lastCount;  // straggler rank -> distinct collectives
    };
    std::map<std::tuple<std::string, uint64_t, int32_t>, Acc> acc;
    for (size_t i = 0; i < occ.size(); ++i) {
        const CollectiveBandwidth& o = occ[i];
        Acc& a = acc[{o.function, o.bytes, o.ranks}];
        a.g.function = o.function;
        a.g.bytes = o.bytes;
        a.g.ranks = o.ranks;
        a.g.occurrences += 1;
        if (a.durations.empty() || o.durationNs > occ[a.g.longest].durationNs) {
            a.g.longest = i;
        }
        a.durations.push_back(o.durationNs);
        a.totalNs += o.durationNs;
        if (o.busbwGBps) {
            a.busbw.push_back(*o.busbwGBps);
        }
        if (o.waitNs >= 0) {
            a.g.waitNs += o.waitNs;
            if (a.matched.insert(joined[i].collective).second) {
                a.g.count += 1;
                if (joined[i].straggler != trace::kUnknownRank) {
                    a.lastCount[toInt(joined[i].straggler)] += 1;
                }
            }
        } else {
            a.g.count += 1;
        }
    }
    std::vector<std::pair<int64_t, CollectiveGroup>> rows;
    for (auto& [key, a] : acc) {
        a.g.maxDurationNs = *std::max_element(a.durations.begin(), a.durations.end());
        a.g.medianDurationNs = medianOf(a.durations);
        if (!a.busbw.empty()) {
            a.g.minBusbwGBps = *std::min_element(a.busbw.begin(), a.busbw.end());
            a.g.medianBusbwGBps = medianOf(a.busbw);
        }
        size_t best = 0;
        for (const auto& [rank, n] : a.lastCount) {  // ascending rank: ties keep the lower
            if (n > best) {
                best = n;
                a.g.stragglerRank = trace::RankId{rank};
            }
        }
        rows.emplace_back(a.totalNs, std::move(a.g));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<CollectiveGroup> out;
    for (auto& [total, g] : rows) {
        out.push_back(std::move(g));
    }
    return out;
}

/// "message sizes (3 of 8 collectives), group size (8 of 8)" for what the unmeasured lack.
std::string missingPieces(const std::vector<const CollectiveBandwidth*>& occ) {
    size_t noBytes = 0, noRanks = 0, noTiming = 0;
    for (const CollectiveBandwidth* o : occ) {
        noBytes += o->bytes == 0;
        noRanks += o->ranks <= 0 || !busBandwidthFactor(o->function, o->ranks);
        noTiming += !isMeasuredTiming(o->timing) || o->durationNs <= 0;
    }
    std::string out;
    const std::string of = " of " + std::to_string(occ.size()) + " collectives)";
    auto add = [&](size_t n, const char* what) {
        if (n > 0) {
            out += (out.empty() ? "" : ", ") + std::string(what) + " (missing in " +
                   std::to_string(n) + of;
        }
    };
    add(noBytes, "message size");
    add(noRanks, "group size or a known function");
    add(noTiming, "GPU execution timing");
    return out;
}

/// The verdict of one GPU over its (non point-to-point) occurrences.
CommunicationVerdict verdictOf(const CollectiveGpu& gpu, trace::RankId rank,
                               const std::vector<const CollectiveBandwidth*>& occ,
                               const std::vector<const Joined*>& joined,
                               const trace::TraceData& data,
                               const CollectiveBandwidthOptions& opt) {
    CommunicationVerdict v;
    v.input = gpu.input;
    v.rank = rank;
    v.device = gpu.device;
    v.collectives = occ.size();
    std::map<int32_t, size_t> lastCount;
    size_t waited = 0;  // matched collectives in which this GPU waited for someone
    for (size_t i = 0; i < occ.size(); ++i) {
        const CollectiveBandwidth& o = *occ[i];
        v.communicationNs += o.durationNs;
        v.transferNs += o.transferNs();
        if (o.waitNs >= 0) {
            v.matched += 1;
            v.waitNs += o.waitNs;
            if (o.waitNs > 0 && joined[i]->straggler != trace::kUnknownRank) {
                waited += 1;
                lastCount[toInt(joined[i]->straggler)] += 1;
            }
        }
    }
    // The link peak.
    const trace::DeviceInfo* info = data.device(gpu.device);
    const std::string model = info != nullptr && !info->name.empty() ? info->name : "";
    if (opt.linkGBps && *opt.linkGBps > 0) {
        v.linkGBps = *opt.linkGBps;
        v.linkSource = "--link-bandwidth";
    } else if (auto def = defaultLinkBandwidth(model)) {
        v.linkGBps = def->gbps;
        v.linkSource = def->source;
    }
    // Rule 1, waiting on rank R: waiting is the larger part of this GPU's communication time
    // (wait > majorityShare x communication), over at least minCollectives matched collectives,
    // and one rank arrived last in more than majorityShare of the collectives it waited in. The
    // waits are matchCollectives' (last arrival - own arrival, within its own kernel), the same
    // the communication split and the straggler finding count.
    std::string waitNote;
    if (v.communicationNs > 0 && v.matched >= opt.minCollectives &&
        double(v.waitNs) > opt.majorityShare * double(v.communicationNs)) {
        int32_t top = -1;
        size_t topCount = 0;
        for (const auto& [r, n] : lastCount) {
            if (n > topCount) {
                top = r;
                topCount = n;
            }
        }
        const double waitShare = double(v.waitNs) / double(v.communicationNs);
        if (top >= 0 && double(topCount) > opt.majorityShare * double(waited)) {
            const std::string figures =
                "waiting " + msText(v.waitNs) + " = " + formatPercent(waitShare, 0) +
                " of its communication " + msText(v.communicationNs) + " over " +
                std::to_string(v.matched) + " matched collectives; rank " + std::to_string(top) +
                " arrived last in " + std::to_string(topCount) + " of the " +
                std::to_string(waited) + " it waited in";
            if (!opt.partialJob) {
                v.limit = CommunicationLimit::WaitingOnRank;
                v.waitingOn = trace::RankId{top};
                v.evidence = figures;
                return v;
            }
            waitNote = figures +
                       ", but only part of the job's ranks are present, so the rank "
                       "it waits for may be absent; ";
        }
    }
    // The measured part: occurrences with a busBw and an execution time the GPU or the network
    // measured.
    int64_t measuredNs = 0, largeNs = 0, smallNs = 0;
    std::vector<double> large, small;
    std::vector<const CollectiveBandwidth*> unmeasured;
    for (const CollectiveBandwidth* o : occ) {
        if (!o->busbwGBps || !isMeasuredTiming(o->timing)) {
            unmeasured.push_back(o);
            continue;
        }
        const int64_t t = o->transferNs();
        measuredNs += t;
        if (o->bytes >= opt.largeMessageBytes) {
            largeNs += t;
            large.push_back(*o->busbwGBps);
        } else if (o->bytes < opt.smallMessageBytes) {
            smallNs += t;
            small.push_back(*o->busbwGBps);
        }
    }
    v.measuredShare = v.transferNs > 0 ? double(measuredNs) / double(v.transferNs) : 0.0;
    v.largeShare = measuredNs > 0 ? double(largeNs) / double(measuredNs) : 0.0;
    v.smallShare = measuredNs > 0 ? double(smallNs) / double(measuredNs) : 0.0;
    v.largeMedianBusbwGBps = medianOf(large);
    v.smallMedianBusbwGBps = medianOf(small);
    std::string missing;
    if (v.measuredShare <= opt.minMeasuredShare) {
        missing = "busBw needs each collective's " + missingPieces(unmeasured) +
                  "; the collectives with all of them cover " + formatPercent(v.measuredShare, 0) +
                  " of the transfer time";
    }
    if (v.linkGBps <= 0) {
        missing += std::string(missing.empty() ? "" : "; ") + "a link peak: give " +
                   "--link-bandwidth GB/s (no documented default for " +
                   (model.empty() ? std::string("an unnamed GPU") : "\"" + model + "\"") + ")";
    }
    if (!missing.empty()) {
        v.limit = CommunicationLimit::Unknown;
        v.missing = missing;
        v.evidence = waitNote;
        return v;
    }
    const std::string peak = gbps(v.linkGBps) + " (" + v.linkSource + ")";
    // Rule 2, bandwidth-bound: most of the measured transfer time is in messages of at least
    // largeMessageBytes, and their median busBw is at least bandwidthShare of the link peak.
    if (v.largeShare > opt.majorityShare &&
        v.largeMedianBusbwGBps >= opt.bandwidthShare * v.linkGBps) {
        v.limit = CommunicationLimit::BandwidthBound;
        v.evidence = waitNote + formatPercent(v.largeShare, 0) +
                     " of the transfer time is in messages of " + sizeText(opt.largeMessageBytes) +
                     " or more, whose median busBw " + gbps(v.largeMedianBusbwGBps) + " is " +
                     formatPercent(v.largeMedianBusbwGBps / v.linkGBps, 0) + " of the link peak " +
                     peak;
        return v;
    }
    // Rule 3, latency-bound: most of the measured transfer time is in messages under
    // smallMessageBytes, whose median busBw is under latencyShare of the peak.
    if (v.smallShare > opt.majorityShare &&
        v.smallMedianBusbwGBps < opt.latencyShare * v.linkGBps) {
        v.limit = CommunicationLimit::LatencyBound;
        v.evidence =
            waitNote + formatPercent(v.smallShare, 0) +
            " of the transfer time is in messages under " + sizeText(opt.smallMessageBytes) +
            ", whose median busBw " + gbps(v.smallMedianBusbwGBps) + " is " +
            formatPercent(v.smallMedianBusbwGBps / v.linkGBps, 0) + " of the link peak " + peak +
            "; fewer, larger collectives (bucketing, fusion) would move the same bytes "
            "in less time";
        return v;
    }
    v.limit = CommunicationLimit::NotLimited;
    v.evidence = waitNote + "transfer time: " + formatPercent(v.largeShare, 0) +
                 " in messages of " + sizeText(opt.largeMessageBytes) + " or more (median busBw " +
                 gbps(v.largeMedianBusbwGBps) + "), " + formatPercent(v.smallShare, 0) + " under " +
                 sizeText(opt.smallMessageBytes) + " (median busBw " +
                 gbps(v.smallMedianBusbwGBps) + "), against the link peak " + peak +
                 ": neither a link running near its peak nor small messages explain it";
    return v;
}

}  // namespace

std::string_view limitName(CommunicationLimit limit) {
    switch (limit) {
        case CommunicationLimit::BandwidthBound:
            return "bandwidth_bound";
        case CommunicationLimit::LatencyBound:
            return "latency_bound";
        case CommunicationLimit::WaitingOnRank:
            return "waiting_on_rank";
        case CommunicationLimit::NotLimited:
            return "not_limited";
        case CommunicationLimit::Unknown:
            break;
    }
    return "unknown";
}

std::string limitText(const CommunicationVerdict& v) {
    switch (v.limit) {
        case CommunicationLimit::BandwidthBound:
            return "bandwidth-bound";
        case CommunicationLimit::LatencyBound:
            return "latency-bound (small messages)";
        case CommunicationLimit::WaitingOnRank:
            return "waiting on rank " + std::to_string(toInt(v.waitingOn));
        case CommunicationLimit::NotLimited:
            return "not limited by the link";
        case CommunicationLimit::Unknown:
            break;
    }
    return "unknown";
}

std::string_view timingSourceName(trace::CollectiveTiming timing) {
    switch (timing) {
        case trace::CollectiveTiming::Kernel:
            return "kernel";
        case trace::CollectiveTiming::KernelChannels:
            return "kernel_channels";
        case trace::CollectiveTiming::Proxy:
            return "proxy";
        case trace::CollectiveTiming::Host:
            return "host";
        case trace::CollectiveTiming::Unknown:
            break;
    }
    return "unknown";
}

bool isMeasuredTiming(trace::CollectiveTiming timing) {
    return timing == trace::CollectiveTiming::Kernel ||
           timing == trace::CollectiveTiming::KernelChannels ||
           timing == trace::CollectiveTiming::Proxy;
}

std::optional<LinkBandwidth> defaultLinkBandwidth(std::string_view gpuName) {
    std::string n;
    for (char c : gpuName) {
        n += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    auto has = [&](std::string_view s) { return n.find(s) != std::string::npos; };
    // PCIe cards and the NVL variants (PCIe cards joined by NVLink bridges in pairs) have no
    // NVLink domain among all ranks; Grace-Hopper / Grace-Blackwell superchips are left to
    // --link-bandwidth as their GPU-to-GPU links depend on the system built around them.
    if (n.empty() || has("PCIE") || has(" NVL") || has("GH200") || has("GB200")) {
        return std::nullopt;
    }
    const std::string domain = "; assumes the ranks share one NVLink domain";
    if (has("A100")) {
        return LinkBandwidth{300.0, "default for " + std::string(gpuName) +
                                        ": NVLink 3 (NVIDIA A100 datasheet, 600 GB/s total, "
                                        "300 GB/s per direction)" +
                                        domain};
    }
    if (has("H100") || has("H200")) {
        return LinkBandwidth{450.0, "default for " + std::string(gpuName) +
                                        ": NVLink 4 (NVIDIA H100 / H200 SXM datasheets, "
                                        "900 GB/s total, 450 GB/s per direction)" +
                                        domain};
    }
    if (has("B200")) {
        return LinkBandwidth{900.0, "default for " + std::string(gpuName) +
                                        ": NVLink 5 (NVIDIA B200 datasheet, 1800 GB/s total, "
                                        "900 GB/s per direction)" +
                                        domain};
    }
    return std::nullopt;
}

std::vector<CollectiveFunctionSummary> functionSummaries(
    const std::vector<CollectiveBandwidth>& occurrences, std::optional<CollectiveGpu> gpu) {
    std::map<std::string, std::pair<CollectiveFunctionSummary, std::vector<double>>> acc;
    for (const CollectiveBandwidth& o : occurrences) {
        if (!ofGpu(o, gpu)) {
            continue;
        }
        auto& [s, bw] = acc[o.function];
        s.function = o.function;
        s.count += 1;
        s.bytes += o.bytes;
        s.durationNs += o.durationNs;
        s.waitNs += std::max<int64_t>(0, o.waitNs);
        if (o.busbwGBps) {
            bw.push_back(*o.busbwGBps);
        }
    }
    std::vector<CollectiveFunctionSummary> out;
    for (auto& [name, a] : acc) {
        auto& [s, bw] = a;
        if (!bw.empty()) {
            s.minBusbwGBps = *std::min_element(bw.begin(), bw.end());
            s.maxBusbwGBps = *std::max_element(bw.begin(), bw.end());
            s.medianBusbwGBps = medianOf(bw);
        }
        out.push_back(std::move(s));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.durationNs > b.durationNs; });
    return out;
}

std::vector<SizeBucketBandwidth> sizeBuckets(const std::vector<CollectiveBandwidth>& occurrences,
                                             std::optional<CollectiveGpu> gpu) {
    std::map<int, std::pair<SizeBucketBandwidth, std::vector<double>>> acc;
    for (const CollectiveBandwidth& o : occurrences) {
        if (!ofGpu(o, gpu) || !o.busbwGBps || o.bytes == 0) {
            continue;
        }
        const int k = bucketOf(o.bytes);
        auto& [b, bw] = acc[k];
        b.minBytes = uint64_t(1) << k;
        b.maxBytes = k >= 63 ? UINT64_MAX : (uint64_t(1) << (k + 1)) - 1;
        b.count += 1;
        b.transferNs += o.transferNs();
        bw.push_back(*o.busbwGBps);
    }
    std::vector<SizeBucketBandwidth> out;
    for (auto& [k, a] : acc) {
        a.first.medianBusbwGBps = medianOf(a.second);
        out.push_back(a.first);
    }
    return out;
}

CollectiveBandwidthReport collectiveBandwidth(const std::vector<RankInput>& inputs,
                                              const CollectiveMatch& match,
                                              const CollectiveBandwidthOptions& options) {
    CollectiveBandwidthReport r;
    const MatchJoin join(match);
    std::vector<Joined> joined;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].data != nullptr) {
            addOccurrences(inputs[i], i, join, r.occurrences, joined);
        }
    }
    r.functions = functionSummaries(r.occurrences);
    r.groups = groupsOf(r.occurrences, joined);
    r.sizeBuckets = sizeBuckets(r.occurrences);
    // Per GPU, in input order then device.
    std::map<std::pair<size_t, int32_t>,
             std::pair<std::vector<const CollectiveBandwidth*>, std::vector<const Joined*>>>
        perGpu;
    for (size_t i = 0; i < r.occurrences.size(); ++i) {
        const CollectiveBandwidth& o = r.occurrences[i];
        auto& [occ, js] = perGpu[{o.input, toInt(o.device)}];
        if (!o.pointToPoint) {
            occ.push_back(&o);
            js.push_back(&joined[i]);
        }
    }
    for (const auto& [key, rows] : perGpu) {
        if (rows.first.empty()) {
            continue;
        }
        const CollectiveGpu gpu{key.first, trace::DeviceIndex{key.second}};
        r.verdicts.push_back(verdictOf(gpu, inputs[key.first].rank, rows.first, rows.second,
                                       *inputs[key.first].data, options));
    }
    return r;
}

}  // namespace vramscope::analysis
