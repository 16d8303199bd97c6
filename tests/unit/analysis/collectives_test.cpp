#include "vramscope/analysis/collectives.h"

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
    ASSERT_EQ(m.collectives.size(), 3u);
    // First AllReduce: arrivals 100, 130, 10 (400 - 390): rank 1 is last.
    EXPECT_EQ(m.collectives[0].function, "AllReduce");
    EXPECT_EQ(m.collectives[0].participants.size(), 3u);
    EXPECT_EQ(m.collectives[0].stragglerRank, trace::RankId{1});
    EXPECT_EQ(m.collectives[0].skewNs, 120);
    EXPECT_EQ(m.collectives[1].function, "AllGather");
    EXPECT_EQ(m.collectives[1].stragglerRank, trace::RankId{0});
    EXPECT_EQ(m.collectives[2].stragglerRank, trace::RankId{0});
    EXPECT_EQ(m.collectives[2].participants.size(), 2u);
    EXPECT_EQ(m.ranks[0].totalWaitNs, 30 + 0 + 0);
    EXPECT_EQ(m.ranks[1].totalWaitNs, 0 + 10 + 20);
    // Arrived 120 ns before the last rank, but its kernel lasted 50 ns: 50 ns of it waited.
    EXPECT_EQ(m.collectives[0].participants[2].waitNs, 120);
    EXPECT_EQ(m.ranks[2].totalWaitNs, 50);
}

TEST(Collectives, FunctionFromKernelName) {
    EXPECT_EQ(collectiveFunctionFromKernel("ncclKernel_AllReduce_RING_LL_Sum_float"), "AllReduce");
    EXPECT_EQ(
        collectiveFunctionFromKernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096>)"),
        "SendRecv");
    EXPECT_EQ(collectiveFunctionFromKernel("ncclDevKernel_Generic"), "Generic");
    EXPECT_EQ(collectiveFunctionFromKernel("volta_gemm"), "volta_gemm");
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
