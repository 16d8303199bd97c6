// Collective bandwidth on collectives built by hand: the nccl-tests formulas worked out by hand,
// the Collectives-table groups, the size buckets, and each verdict with the figures it rests on
// (the thresholds of CollectiveBandwidthOptions), including an Unknown for each missing piece.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_units.h"
#include "vramscope/analysis/collectives/collective_bandwidth.h"
#include "vramscope/analysis/collectives/collectives.h"

namespace vramscope::analysis {
namespace {

using trace::CollectiveTiming;
using trace::DeviceIndex;
using trace::RankId;

using testdata::kGiB;
using testdata::kMiB;

/// One rank's trace on GPU 0 named `gpu`.
trace::TraceData rankTrace(int rank, const std::string& gpu = "NVIDIA H100 80GB HBM3") {
    trace::TraceData d;
    d.header.rank = RankId{rank};
    trace::DeviceInfo info;
    info.index = DeviceIndex{0};
    info.name = gpu;
    d.header.devices.push_back(info);
    return d;
}

/// A collective on GPU 0 of `d`: [start, start + dur) ns, comm 7, the given seq.
void addCollective(trace::TraceData& d, const std::string& function, uint64_t bytes, int nranks,
                   int64_t startNs, int64_t durNs, int64_t seq = -1,
                   CollectiveTiming timing = CollectiveTiming::Kernel) {
    trace::CollectiveEvent c;
    c.startNs = startNs;
    c.endNs = startNs + durNs;
    c.device = DeviceIndex{0};
    c.communicatorHash = seq >= 0 ? 7 : 0;
    c.rank = d.header.rank;
    c.nranks = nranks;
    c.function = d.intern(function);
    c.seqNumber = seq;
    c.bytes = bytes;
    c.timing = timing;
    d.collectives.append(c);
}

CollectiveBandwidthReport reportOf(const std::vector<const trace::TraceData*>& ranks,
                                   const CollectiveBandwidthOptions& options = {}) {
    std::vector<RankInput> in;
    for (const trace::TraceData* d : ranks) {
        in.push_back({d, d->header.rank, 0});
    }
    const CollectiveMatch match = matchCollectives(in);
    return collectiveBandwidth(in, match, options);
}

/// Duration in ns that gives busBw `gbps` for an AllReduce of `bytes` over 8 ranks:
/// busBw = bytes / dur x 2 x 7 / 8  =>  dur = bytes x 1.75 / gbps (bytes per ns = GB/s).
int64_t allReduce8DurationFor(uint64_t bytes, double gbps) {
    return int64_t(std::llround(double(bytes) * 1.75 / gbps));
}

TEST(CollectiveBandwidth, AllReduceOfOneGiBInTenMsOverEightRanks) {
    trace::TraceData d = rankTrace(0);
    addCollective(d, "AllReduce", kGiB, 8, 1000, 10'000'000);
    const CollectiveBandwidthReport r = reportOf({&d});
    ASSERT_EQ(r.occurrences.size(), 1u);
    // By hand: algBw = 1073741824 B / 0.01 s = 107.3741824 GB/s; busBw = x 2 x 7 / 8 = x 1.75
    // = 187.9048192 GB/s.
    ASSERT_TRUE(r.occurrences[0].algbwGBps);
    EXPECT_NEAR(*r.occurrences[0].algbwGBps, 107.3741824, 1e-9);
    EXPECT_NEAR(*r.occurrences[0].busbwGBps, 187.9048192, 1e-9);
    EXPECT_EQ(r.occurrences[0].durationNs, 10'000'000);
}

TEST(CollectiveBandwidth, AllGatherAndReduceScatterCountTrafficAsMessageTimesRanks) {
    trace::TraceData d = rankTrace(0);
    addCollective(d, "AllGather", 128 * kMiB, 4, 0, 4'000'000);  // per-rank message 128 MiB
    addCollective(d, "ReduceScatter", 128 * kMiB, 4, 5'000'000, 4'000'000);
    addCollective(d, "Broadcast", 100'000'000, 4, 10'000'000, 1'000'000);
    addCollective(d, "AllToAll", 100'000'000, 4, 12'000'000, 1'000'000);
    const CollectiveBandwidthReport r = reportOf({&d});
    ASSERT_EQ(r.occurrences.size(), 4u);
    // traffic 4 x 134217728 = 536870912 B in 4 ms: algBw 134.217728 GB/s, busBw x 3/4.
    for (int i = 0; i < 2; ++i) {
        EXPECT_NEAR(*r.occurrences[size_t(i)].algbwGBps, 134.217728, 1e-9);
        EXPECT_NEAR(*r.occurrences[size_t(i)].busbwGBps, 100.663296, 1e-9);
    }
    // Broadcast: 1e8 B in 1 ms = 100 GB/s, factor 1; AllToAll: traffic = message, factor 3/4.
    EXPECT_NEAR(*r.occurrences[2].busbwGBps, 100.0, 1e-9);
    EXPECT_NEAR(*r.occurrences[3].busbwGBps, 75.0, 1e-9);
    EXPECT_EQ(busBandwidthFactor("all_reduce", 2), 1.0);
    EXPECT_EQ(busBandwidthFactor("Send", 2), 1.0);
    EXPECT_FALSE(busBandwidthFactor("Barrier", 8));
    EXPECT_FALSE(busBandwidthFactor("AllReduce", 0));
}

TEST(CollectiveBandwidth, MissingBytesGroupSizeOrDurationGiveNoBandwidth) {
    trace::TraceData d = rankTrace(0);
    addCollective(d, "AllReduce", 0, 8, 0, 1000);
    addCollective(d, "AllReduce", kMiB, 0, 2000, 1000);
    addCollective(d, "AllReduce", kMiB, 8, 4000, 0);
    const CollectiveBandwidthReport r = reportOf({&d});
    ASSERT_EQ(r.occurrences.size(), 3u);
    for (const CollectiveBandwidth& o : r.occurrences) {
        EXPECT_FALSE(o.algbwGBps);
        EXPECT_FALSE(o.busbwGBps);
    }
}

TEST(CollectiveBandwidth, GroupsCountMatchedCollectivesOnceAndNameTheUsualLastRank) {
    // Two ranks, three 64 MiB all-reduces (comm 7, seq 0..2) and one 1 MiB all-gather (seq 3).
    // Rank 1 starts 2 ms late in seq 0 and 1, rank 0 starts 1 ms late in seq 2; all end at
    // start of the first + 10 ms.
    trace::TraceData r0 = rankTrace(0), r1 = rankTrace(1);
    const int64_t t[3] = {0, 20'000'000, 40'000'000};
    const int64_t late0[3] = {0, 0, 1'000'000}, late1[3] = {2'000'000, 2'000'000, 0};
    for (int i = 0; i < 3; ++i) {
        addCollective(r0, "AllReduce", 64 * kMiB, 2, t[i] + late0[i], 10'000'000 - late0[i], i);
        addCollective(r1, "AllReduce", 64 * kMiB, 2, t[i] + late1[i], 10'000'000 - late1[i], i);
    }
    addCollective(r0, "AllGather", kMiB, 2, 60'000'000, 100'000, 3);
    addCollective(r1, "AllGather", kMiB, 2, 60'000'000, 100'000, 3);
    const CollectiveBandwidthReport r = reportOf({&r0, &r1});
    ASSERT_EQ(r.occurrences.size(), 8u);
    ASSERT_EQ(r.groups.size(), 2u);
    const CollectiveGroup& g = r.groups[0];  // the all-reduces: the larger summed duration
    EXPECT_EQ(g.function, "AllReduce");
    EXPECT_EQ(g.bytes, 64 * kMiB);
    EXPECT_EQ(g.ranks, 2);
    EXPECT_EQ(g.count, 3u);
    EXPECT_EQ(g.occurrences, 6u);
    // Durations: rank 0 {10, 10, 9} ms, rank 1 {8, 8, 10} ms; lower median of 6 = 3rd = 9 ms.
    EXPECT_EQ(g.maxDurationNs, 10'000'000);
    EXPECT_EQ(g.medianDurationNs, 9'000'000);
    // busBw = 64 MiB / dur x 2 x 1 / 2 = 67108864 / dur: min at the longest (10 ms).
    EXPECT_NEAR(*g.minBusbwGBps, 67108864.0 / 10e6, 1e-9);
    // busBw ascending: three at 10 ms, one at 9 ms, two at 8 ms; the lower median is a 10 ms one.
    EXPECT_NEAR(*g.medianBusbwGBps, 67108864.0 / 10e6, 1e-9);
    EXPECT_EQ(g.stragglerRank, RankId{1});  // last in 2 of 3
    // Waits: rank 0 waits 2 + 2 ms, rank 1 waits 1 ms.
    EXPECT_EQ(g.waitNs, 5'000'000);
    EXPECT_EQ(r.occurrences[g.longest].durationNs, 10'000'000);
    EXPECT_EQ(r.groups[1].function, "AllGather");
    EXPECT_EQ(r.groups[1].count, 1u);
    EXPECT_EQ(r.groups[1].stragglerRank, trace::kUnknownRank);  // both arrived at once
    // Per function: 6 all-reduce occurrences, 6 x 64 MiB.
    ASSERT_EQ(r.functions.size(), 2u);
    EXPECT_EQ(r.functions[0].function, "AllReduce");
    EXPECT_EQ(r.functions[0].count, 6u);
    EXPECT_EQ(r.functions[0].bytes, 6 * 64 * kMiB);
    EXPECT_EQ(r.functions[0].waitNs, 5'000'000);
    // Each occurrence's wait: rank 0 in seq 0 waited 2 ms.
    EXPECT_EQ(r.occurrences[0].waitNs, 2'000'000);
    EXPECT_EQ(r.occurrences[0].transferNs(), 8'000'000);
}

TEST(CollectiveBandwidth, SizeBucketsArePowersOfTwoWithTheirMedianBusBw) {
    trace::TraceData d = rankTrace(0);
    // Broadcast (factor 1): busBw = bytes / dur. 1000 B -> [512, 1023]; 1024, 1500, 2047 ->
    // [1024, 2047] with busBw 1, 3, 2 GB/s (median 2); 3000 -> [2048, 4095].
    addCollective(d, "Broadcast", 1000, 2, 0, 1000);
    addCollective(d, "Broadcast", 1024, 2, 10'000, 1024);
    addCollective(d, "Broadcast", 1500, 2, 20'000, 500);
    addCollective(d, "Broadcast", 2047, 2, 30'000, 2047 / 2);
    addCollective(d, "Broadcast", 3000, 2, 40'000, 3000);
    addCollective(d, "Broadcast", 0, 2, 50'000, 3000);  // no size: in no bucket
    const CollectiveBandwidthReport r = reportOf({&d});
    ASSERT_EQ(r.sizeBuckets.size(), 3u);
    EXPECT_EQ(r.sizeBuckets[0].minBytes, 512u);
    EXPECT_EQ(r.sizeBuckets[0].maxBytes, 1023u);
    EXPECT_EQ(r.sizeBuckets[0].count, 1u);
    EXPECT_EQ(r.sizeBuckets[1].minBytes, 1024u);
    EXPECT_EQ(r.sizeBuckets[1].maxBytes, 2047u);
    EXPECT_EQ(r.sizeBuckets[1].count, 3u);
    EXPECT_NEAR(r.sizeBuckets[1].medianBusbwGBps, 2047.0 / 1023.0, 1e-9);
    EXPECT_EQ(r.sizeBuckets[1].transferNs, 1024 + 500 + 1023);
    EXPECT_EQ(r.sizeBuckets[2].minBytes, 2048u);
    EXPECT_EQ(r.sizeBuckets[2].count, 1u);
}

TEST(CollectiveBandwidthVerdict, LargeMessagesNearThePeakAreBandwidthBound) {
    trace::TraceData d = rankTrace(0);  // H100 SXM: 450 GB/s per direction by default
    for (int i = 0; i < 4; ++i) {       // 256 MiB at 400 GB/s busBw (89 % of 450)
        addCollective(d, "AllReduce", 256 * kMiB, 8, i * 10'000'000,
                      allReduce8DurationFor(256 * kMiB, 400));
    }
    addCollective(d, "AllReduce", 64 * 1024, 8, 50'000'000, 100'000);  // a small one, little time
    const CollectiveBandwidthReport r = reportOf({&d});
    ASSERT_EQ(r.verdicts.size(), 1u);
    const CommunicationVerdict& v = r.verdicts[0];
    EXPECT_EQ(v.limit, CommunicationLimit::BandwidthBound) << v.evidence << v.missing;
    EXPECT_EQ(v.linkGBps, 450.0);
    EXPECT_NE(v.linkSource.find("one NVLink domain"), std::string::npos);
    EXPECT_NEAR(v.largeMedianBusbwGBps, 400.0, 0.01);
    EXPECT_GT(v.largeShare, 0.5);
    EXPECT_EQ(limitText(v), "bandwidth-bound");
    // The same at 300 GB/s (67 % of the peak, under 70 %) is not bandwidth-bound.
    trace::TraceData slow = rankTrace(0);
    for (int i = 0; i < 4; ++i) {
        addCollective(slow, "AllReduce", 256 * kMiB, 8, i * 10'000'000,
                      allReduce8DurationFor(256 * kMiB, 300));
    }
    const CollectiveBandwidthReport s = reportOf({&slow});
    ASSERT_EQ(s.verdicts.size(), 1u);
    EXPECT_EQ(s.verdicts[0].limit, CommunicationLimit::NotLimited) << s.verdicts[0].evidence;
    EXPECT_NE(s.verdicts[0].evidence.find("300.0 GB/s"), std::string::npos)
        << s.verdicts[0].evidence;
}

TEST(CollectiveBandwidthVerdict, SmallMessagesFarBelowThePeakAreLatencyBound) {
    trace::TraceData d = rankTrace(0);
    for (int i = 0; i < 50; ++i) {  // 64 KiB at 10 GB/s busBw (2 % of 450)
        addCollective(d, "AllReduce", 64 * 1024, 8, i * 100'000,
                      allReduce8DurationFor(64 * 1024, 10));
    }
    const CollectiveBandwidthReport r = reportOf({&d});
    ASSERT_EQ(r.verdicts.size(), 1u);
    EXPECT_EQ(r.verdicts[0].limit, CommunicationLimit::LatencyBound) << r.verdicts[0].evidence;
    EXPECT_NEAR(r.verdicts[0].smallMedianBusbwGBps, 10.0, 0.01);
    EXPECT_NEAR(r.verdicts[0].smallShare, 1.0, 1e-12);
    // At 200 GB/s (44 % of the peak, not under 25 %) small messages are not "far below".
    trace::TraceData fast = rankTrace(0);
    for (int i = 0; i < 50; ++i) {
        addCollective(fast, "AllReduce", 64 * 1024, 8, i * 100'000,
                      allReduce8DurationFor(64 * 1024, 200));
    }
    EXPECT_EQ(reportOf({&fast}).verdicts[0].limit, CommunicationLimit::NotLimited);
}

TEST(CollectiveBandwidthVerdict, MostlyWaitingForOneRankIsWaitingOnRank) {
    // Rank 1 starts 9 ms late in each of 4 all-reduces; both end at start + 10 ms: rank 0 waits
    // 9 of its 10 ms (90 % > 50 %) and rank 1 is last in 4 of 4.
    trace::TraceData r0 = rankTrace(0), r1 = rankTrace(1);
    for (int i = 0; i < 4; ++i) {
        const int64_t t = i * 20'000'000;
        addCollective(r0, "AllReduce", 256 * kMiB, 2, t, 10'000'000, i);
        addCollective(r1, "AllReduce", 256 * kMiB, 2, t + 9'000'000, 1'000'000, i);
    }
    const CollectiveBandwidthReport r = reportOf({&r0, &r1});
    ASSERT_EQ(r.verdicts.size(), 2u);
    EXPECT_EQ(r.verdicts[0].limit, CommunicationLimit::WaitingOnRank) << r.verdicts[0].evidence;
    EXPECT_EQ(r.verdicts[0].waitingOn, RankId{1});
    EXPECT_EQ(r.verdicts[0].waitNs, 4 * 9'000'000);
    EXPECT_EQ(r.verdicts[0].communicationNs, 4 * 10'000'000);
    EXPECT_EQ(limitText(r.verdicts[0]), "waiting on rank 1");
    EXPECT_NE(r.verdicts[1].limit, CommunicationLimit::WaitingOnRank);  // rank 1 never waits
    // In a partial job the last rank present may not be the one waited for: no WaitingOnRank.
    CollectiveBandwidthOptions partial;
    partial.partialJob = true;
    const CollectiveBandwidthReport p = reportOf({&r0, &r1}, partial);
    EXPECT_NE(p.verdicts[0].limit, CommunicationLimit::WaitingOnRank);
    EXPECT_NE(p.verdicts[0].evidence.find("part of the job"), std::string::npos);
    // Waiting 40 % (4 of 10 ms) is not the larger part: no WaitingOnRank.
    trace::TraceData q0 = rankTrace(0), q1 = rankTrace(1);
    for (int i = 0; i < 4; ++i) {
        const int64_t t = i * 20'000'000;
        addCollective(q0, "AllReduce", 256 * kMiB, 2, t, 10'000'000, i);
        addCollective(q1, "AllReduce", 256 * kMiB, 2, t + 4'000'000, 6'000'000, i);
    }
    EXPECT_NE(reportOf({&q0, &q1}).verdicts[0].limit, CommunicationLimit::WaitingOnRank);
}

/// Four 256 MiB all-reduces at 400 GB/s on an H100, with one thing removed by `spoil`.
CommunicationVerdict verdictWith(void (*spoil)(trace::CollectiveEvent&),
                                 const std::string& gpu = "NVIDIA H100 80GB HBM3",
                                 CollectiveBandwidthOptions options = {}) {
    trace::TraceData d = rankTrace(0, gpu);
    for (int i = 0; i < 4; ++i) {
        addCollective(d, "AllReduce", 256 * kMiB, 8, i * 10'000'000,
                      allReduce8DurationFor(256 * kMiB, 400));
    }
    trace::TraceData spoiled = rankTrace(0, gpu);
    for (size_t i = 0; i < d.collectives.size(); ++i) {
        trace::CollectiveEvent c = d.collectives.at(i);
        c.function = spoiled.intern(d.string(c.function));
        spoil(c);
        spoiled.collectives.append(c);
    }
    const CollectiveBandwidthReport r = reportOf({&spoiled}, options);
    EXPECT_EQ(r.verdicts.size(), 1u);
    return r.verdicts.empty() ? CommunicationVerdict{} : r.verdicts[0];
}

TEST(CollectiveBandwidthVerdict, EachMissingPieceGivesUnknownSayingWhat) {
    const CommunicationVerdict ok = verdictWith([](trace::CollectiveEvent&) {});
    EXPECT_EQ(ok.limit, CommunicationLimit::BandwidthBound);  // the control: nothing missing

    const CommunicationVerdict noBytes =
        verdictWith([](trace::CollectiveEvent& c) { c.bytes = 0; });
    EXPECT_EQ(noBytes.limit, CommunicationLimit::Unknown);
    EXPECT_NE(noBytes.missing.find("message size"), std::string::npos) << noBytes.missing;

    const CommunicationVerdict noGroup =
        verdictWith([](trace::CollectiveEvent& c) { c.nranks = 0; });
    EXPECT_EQ(noGroup.limit, CommunicationLimit::Unknown);
    EXPECT_NE(noGroup.missing.find("group size"), std::string::npos) << noGroup.missing;

    const CommunicationVerdict hostTimes =
        verdictWith([](trace::CollectiveEvent& c) { c.timing = CollectiveTiming::Host; });
    EXPECT_EQ(hostTimes.limit, CommunicationLimit::Unknown);
    EXPECT_NE(hostTimes.missing.find("GPU execution timing"), std::string::npos)
        << hostTimes.missing;

    const CommunicationVerdict noPeak =
        verdictWith([](trace::CollectiveEvent&) {}, "Tesla V100-SXM2-32GB");
    EXPECT_EQ(noPeak.limit, CommunicationLimit::Unknown);
    EXPECT_NE(noPeak.missing.find("--link-bandwidth"), std::string::npos) << noPeak.missing;
    EXPECT_NE(noPeak.missing.find("Tesla V100-SXM2-32GB"), std::string::npos) << noPeak.missing;

    // The peak given on the command line replaces the missing default.
    CollectiveBandwidthOptions given;
    given.linkGBps = 450.0;
    const CommunicationVerdict withPeak =
        verdictWith([](trace::CollectiveEvent&) {}, "Tesla V100-SXM2-32GB", given);
    EXPECT_EQ(withPeak.limit, CommunicationLimit::BandwidthBound) << withPeak.missing;
    EXPECT_EQ(withPeak.linkSource, "--link-bandwidth");
}

TEST(CollectiveBandwidthVerdict, DefaultLinkPeaksFollowTheDatasheets) {
    EXPECT_EQ(defaultLinkBandwidth("NVIDIA A100-SXM4-80GB")->gbps, 300.0);
    EXPECT_EQ(defaultLinkBandwidth("NVIDIA A100-PG509-200")->gbps, 300.0);
    EXPECT_EQ(defaultLinkBandwidth("NVIDIA H100 80GB HBM3")->gbps, 450.0);
    EXPECT_EQ(defaultLinkBandwidth("NVIDIA H200")->gbps, 450.0);
    EXPECT_EQ(defaultLinkBandwidth("NVIDIA B200")->gbps, 900.0);
    EXPECT_FALSE(defaultLinkBandwidth("NVIDIA H100 PCIe"));
    EXPECT_FALSE(defaultLinkBandwidth("NVIDIA A100-PCIE-40GB"));
    EXPECT_FALSE(defaultLinkBandwidth("NVIDIA H100 NVL"));
    EXPECT_FALSE(defaultLinkBandwidth("Tesla V100-SXM2-32GB"));
    EXPECT_FALSE(defaultLinkBandwidth(""));
}

TEST(CollectiveBandwidthVerdict, PointToPointOperationsGiveNoVerdict) {
    trace::TraceData d = rankTrace(0);
    addCollective(d, "SendRecv", 256 * kMiB, 2, 0, 1'000'000);
    const CollectiveBandwidthReport r = reportOf({&d});
    ASSERT_EQ(r.occurrences.size(), 1u);
    EXPECT_TRUE(r.occurrences[0].pointToPoint);
    EXPECT_TRUE(r.verdicts.empty());
}

}  // namespace
}  // namespace vramscope::analysis
