#include "vramscope/analysis/collectives/collectives.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "vramscope/trace/kernel_names.h"

namespace vramscope::analysis {

namespace {

struct Seen {
    std::string function;
    trace::DeviceIndex device{0};
    uint64_t comm = 0;
    int64_t seq = -1;
    uint64_t bytes = 0;
    trace::TimestampNs startNs = 0;
    trace::TimestampNs endNs = 0;
};

std::vector<Seen> collectivesOf(const RankInput& in, bool& fromEvents) {
    std::vector<Seen> out;
    const trace::TraceData& d = *in.data;
    const trace::CollectiveEvents& c = d.collectives;
    fromEvents = c.size() > 0;
    if (fromEvents) {
        for (size_t i = 0; i < c.size(); ++i) {
            out.push_back(Seen{std::string(d.string(c.function[i])), c.device[i],
                               c.communicatorHash[i], c.seqNumber[i], c.bytes[i],
                               c.startNs[i] + in.clockOffsetNs, c.endNs[i] + in.clockOffsetNs});
        }
    } else {
        const trace::KernelEvents& k = d.kernels;
        for (size_t i = 0; i < k.size(); ++i) {
            if (k.category[i] == trace::KernelCategory::Communication) {
                out.push_back(Seen{collectiveFunctionFromKernel(d.string(k.name[i])), k.device[i],
                                   0, -1, k.bytes[i], k.startNs[i] + in.clockOffsetNs,
                                   k.endNs[i] + in.clockOffsetNs});
            }
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Seen& a, const Seen& b) { return a.startNs < b.startNs; });
    return out;
}

}  // namespace

std::vector<trace::RankId> collectiveRanks(const std::vector<trace::RankId>& ranks) {
    std::set<trace::RankId> taken;
    for (trace::RankId r : ranks) {
        if (toInt(r) >= 0) {
            taken.insert(r);
        }
    }
    std::vector<trace::RankId> out = ranks;
    int32_t next = 0;  // the smallest number that may still be free
    for (size_t i = 0; i < out.size(); ++i) {
        if (toInt(out[i]) >= 0) {
            continue;
        }
        // Position first: it is what an unranked input was always matched as.
        trace::RankId r{int32_t(i)};
        if (taken.count(r) != 0) {
            while (taken.count(trace::RankId{next}) != 0) {
                ++next;
            }
            r = trace::RankId{next};
        }
        taken.insert(r);
        out[i] = r;
    }
    return out;
}

std::string collectiveFunctionFromKernel(std::string_view name) {
    const std::string_view function = trace::collectiveFromKernelName(name);
    return std::string(function.empty() ? name : function);
}

bool isPointToPoint(std::string_view function) {
    std::string f;
    for (char c : function) {
        f += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return f == "send" || f == "recv" || f == "sendrecv";
}

std::vector<RankInput> rankInputs(const trace::Job& job) {
    std::vector<RankInput> in;
    in.reserve(job.ranks.size());
    for (const trace::RankTrace& rt : job.ranks) {
        in.push_back({&rt.trace.data, rt.trace.data.header.rank, 0});
    }
    return in;
}

CollectiveMatch matchCollectives(const std::vector<RankInput>& ranks) {
    CollectiveMatch result;
    std::vector<std::pair<trace::RankId, std::vector<Seen>>> perRank;
    bool allKeyed = true, anyEvents = false, anyKernels = false;
    for (const RankInput& in : ranks) {
        if (in.data == nullptr) {
            continue;
        }
        bool fromEvents = false;
        std::vector<Seen> seen = collectivesOf(in, fromEvents);
        const size_t before = seen.size();
        std::erase_if(seen, [](const Seen& s) { return isPointToPoint(s.function); });
        result.pointToPoint += before - seen.size();
        if (seen.empty()) {
            continue;
        }
        (fromEvents ? anyEvents : anyKernels) = true;
        for (const Seen& s : seen) {
            allKeyed &= s.comm != 0 && s.seq >= 0;
        }
        perRank.emplace_back(in.rank, std::move(seen));
    }
    result.method = perRank.empty() ? "none" : allKeyed ? "communicator+sequence" : "order";
    result.source = anyEvents && anyKernels ? "collective events and communication kernels"
                    : anyEvents             ? "collective events"
                    : anyKernels            ? "communication kernels"
                                            : "none";
    // key: (communicator, function, sequence or order index)
    std::map<std::tuple<uint64_t, std::string, int64_t>, MatchedCollective> groups;
    for (auto& [rank, seen] : perRank) {
        std::map<std::string, int64_t> order;
        for (const Seen& s : seen) {
            const int64_t seq = allKeyed ? s.seq : order[s.function]++;
            const uint64_t comm = allKeyed ? s.comm : 0;
            MatchedCollective& m = groups[{comm, s.function, seq}];
            if (m.participants.empty()) {
                m.function = s.function;
                m.communicatorHash = comm;
                m.seqNumber = seq;
                m.bytes = s.bytes;
            }
            m.participants.push_back(CollectiveParticipant{rank, s.device, s.startNs, s.endNs, 0});
        }
    }
    // Pairing by order holds only while every rank saw the same sequence of a function. A group
    // in which a rank's kernel ended before the last rank's began cannot be one collective (a rank
    // leaves a collective only once every rank has joined it), so the sequences of that function
    // differ (events dropped, a sampled trace) and none of its pairings is trusted.
    std::set<std::string> misordered;
    if (!allKeyed) {
        for (const auto& [key, m] : groups) {
            trace::TimestampNs lastStart = INT64_MIN;
            for (const CollectiveParticipant& p : m.participants) {
                lastStart = std::max(lastStart, p.startNs);
            }
            if (m.participants.size() >= 2 &&
                std::any_of(m.participants.begin(), m.participants.end(),
                            [lastStart](const auto& p) { return p.endNs < lastStart; })) {
                misordered.insert(m.function);
            }
        }
    }
    std::map<trace::RankId, RankWait> waits;
    for (auto& [key, m] : groups) {
        if (misordered.count(m.function) > 0) {
            ++result.impossibleByOrder;
            continue;
        }
        if (m.participants.size() < 2) {
            ++result.unmatched;
            continue;
        }
        std::sort(m.participants.begin(), m.participants.end(),
                  [](const auto& a, const auto& b) { return a.rank < b.rank; });
        trace::TimestampNs first = INT64_MAX, last = INT64_MIN;
        trace::RankId latest = trace::kUnknownRank;
        for (const CollectiveParticipant& p : m.participants) {
            first = std::min(first, p.startNs);
            if (p.startNs > last) {
                last = p.startNs;
                latest = p.rank;
            }
        }
        m.skewNs = last - first;
        m.stragglerRank = m.skewNs > 0 ? latest : trace::kUnknownRank;
        for (CollectiveParticipant& p : m.participants) {
            p.waitNs = last - p.startNs;
            RankWait& w = waits[p.rank];
            w.rank = p.rank;
            w.collectives += 1;
            w.totalWaitNs += p.waitInKernelNs();
            w.timesStraggler += m.skewNs > 0 && p.rank == m.stragglerRank;
        }
        result.collectives.push_back(std::move(m));
    }
    std::sort(result.collectives.begin(), result.collectives.end(),
              [](const MatchedCollective& a, const MatchedCollective& b) {
                  const auto fa = std::min_element(
                      a.participants.begin(), a.participants.end(),
                      [](const auto& x, const auto& y) { return x.startNs < y.startNs; });
                  const auto fb = std::min_element(
                      b.participants.begin(), b.participants.end(),
                      [](const auto& x, const auto& y) { return x.startNs < y.startNs; });
                  return fa->startNs < fb->startNs;
              });
    for (auto& [rank, w] : waits) {
        result.ranks.push_back(w);
    }
    return result;
}

}  // namespace vramscope::analysis
