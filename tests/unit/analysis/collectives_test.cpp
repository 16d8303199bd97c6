#include "vramscope/analysis/collectives/collectives.h"

#include <gtest/gtest.h>

#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {

using trace::KernelCategory;
using trace::TraceData;

TEST(Collectives, MatchesByCommunicatorAndSequenceAndFindsTheStraggler) {
    SyntheticJobSpec spec;
    spec.ranks = 4;
    spec.iterations = 5;
    spec.stragglerRank = 3;
    spec.stragglerDelayNs = 1'250'000;
    const auto job = generateSyntheticJob(spec);
    std::vector<RankInput> in;
    for (int r = 0; r < 4; ++r) {
        in.push_back({&job[size_t(r)], trace::RankId{r}, 0});
    }
    const CollectiveMatch m = matchCollectives(in);
    EXPECT_EQ(m.method, "communicator+sequence");
    EXPECT_EQ(m.source, "collective events");
    ASSERT_EQ(m.collectives.size(), 5u);
    EXPECT_EQ(m.unmatched, 0u);
    for (size_t i = 0; i < m.collectives.size(); ++i) {
        const MatchedCollective& c = m.collectives[i];
        EXPECT_EQ(c.function, "AllReduce");
        EXPECT_EQ(c.seqNumber, int64_t(i));
        ASSERT_EQ(c.participants.size(), 4u);
        EXPECT_EQ(c.stragglerRank, trace::RankId{3});
        EXPECT_EQ(c.skewNs, spec.stragglerDelayNs);
        EXPECT_EQ(c.participants[0].waitNs, spec.stragglerDelayNs);
        EXPECT_EQ(c.participants[3].waitNs, 0);
        EXPECT_EQ(c.bytes, spec.allReduceBytes);
    }
    ASSERT_EQ(m.ranks.size(), 4u);
    EXPECT_EQ(m.ranks[1].totalWaitNs, 5 * spec.stragglerDelayNs);
    EXPECT_EQ(m.ranks[3].totalWaitNs, 0);
    EXPECT_EQ(m.ranks[3].timesStraggler, 5u);
}

TraceData kernelsOnly(const std::vector<std::pair<std::string, int64_t>>& kernels) {
    TraceData d;
    for (const auto& [name, start] : kernels) {
        trace::KernelEvent k;
        k.startNs = start;
        k.endNs = start + 50;
        k.name = d.intern(name);
        k.category =
            name.rfind("nccl", 0) == 0 ? KernelCategory::Communication : KernelCategory::Compute;
        d.kernels.append(k);
    }
    return d;
}

TEST(Collectives, MatchesCommunicationKernelsByOrderPerFunction) {
    // Kernels last 50 ns. Rank 2's only AllReduce runs 10..60 (400 - 390) on the job axis, ended
    // before rank 1's first AllReduce began (130): by order they would be one collective, which
    // no collective allows (a rank leaves only once every rank has joined), so the ranks'
    // AllReduce sequences differ and both AllReduce groups are left out. What stays, by hand:
    // the AllGather, 300 / 290.
    const TraceData a =
        kernelsOnly({{"ncclKernel_AllReduce_RING_LL_Sum_float", 100},
                     {"gemm", 150},
                     {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage)", 300},
                     {"ncclKernel_AllReduce_RING_LL_Sum_float", 500}});
    const TraceData b =
        kernelsOnly({{"ncclKernel_AllReduce_RING_LL_Sum_float", 130},
                     {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage)", 290},
                     {"ncclKernel_AllReduce_RING_LL_Sum_float", 480}});
    const TraceData c = kernelsOnly({{"ncclKernel_AllReduce_RING_LL_Sum_float", 400}});
    const CollectiveMatch m = matchCollectives(
        {{&a, trace::RankId{0}, 0}, {&b, trace::RankId{1}, 0}, {&c, trace::RankId{2}, -390}});
    EXPECT_EQ(m.method, "order");
    EXPECT_EQ(m.source, "communication kernels");
    EXPECT_EQ(m.impossibleByOrder, 2u);
    EXPECT_EQ(m.unmatched, 0u);
    ASSERT_EQ(m.collectives.size(), 1u);
    EXPECT_EQ(m.collectives[0].function, "AllGather");
    EXPECT_EQ(m.collectives[0].stragglerRank, trace::RankId{0});
    EXPECT_EQ(m.collectives[0].skewNs, 10);
    ASSERT_EQ(m.ranks.size(), 2u);
    EXPECT_EQ(m.ranks[0].totalWaitNs, 0);
    EXPECT_EQ(m.ranks[1].totalWaitNs, 10);
    // Without rank 2 the first AllReduces pair up: arrivals 100 and 130, rank 1 last.
    const CollectiveMatch two =
        matchCollectives({{&a, trace::RankId{0}, 0}, {&b, trace::RankId{1}, 0}});
    EXPECT_EQ(two.impossibleByOrder, 0u);
    ASSERT_EQ(two.collectives.size(), 3u);
    EXPECT_EQ(two.collectives[0].stragglerRank, trace::RankId{1});
    EXPECT_EQ(two.collectives[0].skewNs, 30);
}

TEST(Collectives, KeyedCollectivesCountOnlyTheWaitInsideTheOwnKernel) {
    // Matched by (communicator, function, sequence), a rank whose kernel is shorter than its lead
    // (clocks of two hosts can disagree by that much) waited its whole kernel, not more.
    auto rankWith = [](int64_t start, int64_t end) {
        TraceData d;
        trace::CollectiveEvent e;
        e.startNs = start;
        e.endNs = end;
        e.communicatorHash = 0xabc;
        e.function = d.intern("AllReduce");
        e.seqNumber = 0;
        d.collectives.append(e);
        return d;
    };
    const TraceData early = rankWith(10, 60);  // 120 ns ahead of the last, a 50 ns kernel
    const TraceData late = rankWith(130, 200);
    const CollectiveMatch m =
        matchCollectives({{&early, trace::RankId{0}, 0}, {&late, trace::RankId{1}, 0}});
    EXPECT_EQ(m.method, "communicator+sequence");
    ASSERT_EQ(m.collectives.size(), 1u);
    EXPECT_EQ(m.collectives[0].participants[0].waitNs, 120);
    EXPECT_EQ(m.ranks[0].totalWaitNs, 50);
    EXPECT_EQ(m.impossibleByOrder, 0u);
}

TEST(Collectives, FunctionFromKernelName) {
    EXPECT_EQ(collectiveFunctionFromKernel("ncclKernel_AllReduce_RING_LL_Sum_float"), "AllReduce");
    EXPECT_EQ(
        collectiveFunctionFromKernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096>)"),
        "SendRecv");
    EXPECT_EQ(collectiveFunctionFromKernel("ncclDevKernel_Generic"), "Generic");
    EXPECT_EQ(collectiveFunctionFromKernel("volta_gemm"), "volta_gemm");
    // Mangled, as the capture agent sees it: the function is read the same (kernel_names.h).
    EXPECT_EQ(collectiveFunctionFromKernel("_Z29ncclDevKernel_AllGather_RING_LLv"), "AllGather");
    // An RCCL kernel that names no NCCL function is matched by its own name.
    EXPECT_EQ(collectiveFunctionFromKernel("rcclAllToAllKernel"), "rcclAllToAllKernel");
}

TEST(Collectives, UnknownRanksTakeAFreeNumberNeverOneAKnownRankHolds) {
    using trace::RankId;
    const RankId u = trace::kUnknownRank;
    using Ranks = std::vector<RankId>;
    EXPECT_EQ(collectiveRanks({}), Ranks{});
    // Known ranks stay; an unknown one takes its position while that number is free.
    EXPECT_EQ(collectiveRanks({u, u}), (Ranks{RankId{0}, RankId{1}}));
    EXPECT_EQ(collectiveRanks({RankId{0}, RankId{1}, u}), (Ranks{RankId{0}, RankId{1}, RankId{2}}));
    EXPECT_EQ(collectiveRanks({RankId{5}, u}), (Ranks{RankId{5}, RankId{1}}));
    // Position 2 belongs to the known rank 2: the unknown input gets 0, the smallest free number.
    EXPECT_EQ(collectiveRanks({RankId{1}, RankId{2}, u}), (Ranks{RankId{1}, RankId{2}, RankId{0}}));
    // Positions 0 and 1 are taken by then (0 by a known rank, 1 by the first unknown input).
    EXPECT_EQ(collectiveRanks({u, u, RankId{0}}), (Ranks{RankId{1}, RankId{2}, RankId{0}}));
}

}  // namespace
}  // namespace vramscope::analysis
