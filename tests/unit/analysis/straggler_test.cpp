// The straggler rule and the split of communication into waiting and transfer, on synthetic
// jobs whose figures follow from the generator's formulas (synthetic_job.h: the straggler starts
// every iteration s = stragglerDelayNs late, so every other rank waits s in each all-reduce) and
// on collectives built by hand.
#include <gtest/gtest.h>

#include "advice_evidence.h"
#include "synthetic_job_analysis.h"

#include <cmath>

#include "vramscope/analysis/collectives/straggler.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {

using test::AnalysedSyntheticJob;
using test::analyseSyntheticJob;

const Advice* findAdvice(const JobAnalysis& job, const std::string& rule, int rank) {
    for (const Advice& a : job.advice) {
        if (a.rule == rule && toInt(a.rank) == rank) {
            return &a;
        }
    }
    return nullptr;
}

using test::evidence;

SyntheticJobSpec stragglerSpec() {
    SyntheticJobSpec spec;
    spec.ranks = 4;
    spec.iterations = 8;
    spec.stragglerRank = 2;  // vramscope-cli synth --ranks 4 --iterations 8 --straggler-rank 2
    return spec;
}

TEST(Straggler, NamesTheLateRankOfTheSyntheticJobWithTheWaitItCauses) {
    const SyntheticJobSpec spec = stragglerSpec();
    const int64_t N = spec.iterations, s = spec.stragglerDelayNs;
    const int64_t D = int64_t(
        std::ceil(double(spec.allReduceBytes) * 2 * 3 / 4 / spec.busBandwidthBytesPerS * 1e9));
    JobAnalysisOptions options;
    options.gpuHourPrice = 2.0;
    const AnalysedSyntheticJob a = analyseSyntheticJob(spec, options);
    ASSERT_TRUE(a.job.straggler.has_value());
    const StragglerFinding& f = *a.job.straggler;
    EXPECT_EQ(f.rank, trace::RankId{2});
    EXPECT_EQ(f.timesLast, size_t(N));
    EXPECT_EQ(f.collectives, size_t(N));
    EXPECT_EQ(f.otherRanks, 3u);
    EXPECT_EQ(f.steps, N);
    EXPECT_EQ(f.waitCausedNs, 3 * N * s);
    EXPECT_EQ(f.waitPerStepPerRankNs, s);  // others wait s per iteration
    EXPECT_NEAR(f.waitShare, double(s) / double(s + D), 1e-12);
    EXPECT_TRUE(f.meetsEvidence) << f.whyNot;
    const Advice* adv = findAdvice(a.job, "straggler", 2);
    ASSERT_NE(adv, nullptr);
    EXPECT_NE(adv->message.find("rank 2 arrives last in 8 of 8 collectives"), std::string::npos)
        << adv->message;
    EXPECT_DOUBLE_EQ(evidence(*adv, "wait_gpu_hours"), double(3 * N * s) / 3.6e12);
    EXPECT_DOUBLE_EQ(evidence(*adv, "wait_cost"), double(3 * N * s) / 3.6e12 * 2.0);
    // Communication split: the on-time ranks wait s in each all-reduce (not overlapped: the
    // all-reduce starts when backward ends), the straggler never waits.
    for (const DeviceAnalysis& d : a.job.devices) {
        ASSERT_TRUE(d.communication.has_value());
        const CommunicationSplit& c = *d.communication;
        const int64_t wait = d.rank == trace::RankId{2} ? 0 : N * s;
        EXPECT_EQ(c.collectives, size_t(N));
        EXPECT_EQ(c.waitNs, wait) << toInt(d.rank);
        EXPECT_EQ(c.transferNs, N * D) << toInt(d.rank);
        EXPECT_EQ(c.exposedWaitNs, wait) << toInt(d.rank);
        EXPECT_EQ(c.exposedTransferNs, N * D) << toInt(d.rank);
        // The exposed-communication rule weighs the transfer only.
        if (const Advice* e = findAdvice(a.job, "exposed-communication", toInt(d.rank))) {
            EXPECT_EQ(evidence(*e, "exposed_transfer_ns"), double(N * D));
            EXPECT_EQ(evidence(*e, "exposed_wait_ns"), double(wait));
        }
    }
}

TEST(Straggler, AJobWithoutAStragglerGetsNoStragglerAdvice) {
    SyntheticJobSpec spec = stragglerSpec();
    spec.stragglerRank = -1;
    const AnalysedSyntheticJob a = analyseSyntheticJob(spec);
    ASSERT_EQ(a.job.collectives.collectives.size(), size_t(spec.iterations));
    for (const MatchedCollective& c : a.job.collectives.collectives) {
        EXPECT_EQ(c.skewNs, 0);
        EXPECT_EQ(c.stragglerRank, trace::kUnknownRank);  // skew 0: no one is last
    }
    for (const RankWait& w : a.job.collectives.ranks) {
        EXPECT_EQ(w.timesStraggler, 0u);
    }
    EXPECT_FALSE(a.job.straggler.has_value());
    for (const Advice& adv : a.job.advice) {
        EXPECT_NE(adv.rule, "straggler") << adv.message;
    }
    for (const DeviceAnalysis& d : a.job.devices) {
        ASSERT_TRUE(d.communication.has_value());
        EXPECT_EQ(d.communication->waitNs, 0);
    }
}

/// A matched collective of `n` ranks where `late` starts `skew` ns after the others; each kernel
/// lasts `skew + 1000` ns on the early ranks (they wait `skew` in it).
MatchedCollective collective(int n, int late, int64_t at, int64_t skew) {
    MatchedCollective c;
    c.function = "AllReduce";
    for (int r = 0; r < n; ++r) {
        const int64_t start = at + (r == late ? skew : 0);
        c.participants.push_back(
            {trace::RankId{r}, trace::DeviceIndex{0}, start, at + skew + 1000, at + skew - start});
    }
    c.skewNs = skew;
    c.stragglerRank = skew > 0 ? trace::RankId{late} : trace::kUnknownRank;
    return c;
}

std::vector<std::pair<trace::RankId, int64_t>> communication(int n, int64_t ns) {
    std::vector<std::pair<trace::RankId, int64_t>> out;
    for (int r = 0; r < n; ++r) {
        out.emplace_back(trace::RankId{r}, ns);
    }
    return out;
}

TEST(Straggler, NeedsAMajorityOfLastArrivalsAndAMeaningfulWait) {
    CollectiveMatch m;
    // Rank 1 last in 2 of 4 (not a majority), rank 2 last once, one all at once.
    m.collectives = {collective(3, 1, 0, 5000), collective(3, 1, 10'000, 5000),
                     collective(3, 2, 20'000, 5000), collective(3, 0, 30'000, 0)};
    const JobCoverage whole{3, 3};
    auto f = findStraggler(m, communication(3, 100'000), 1, whole);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->rank, trace::RankId{1});
    EXPECT_EQ(f->timesLast, 2u);
    EXPECT_FALSE(f->meetsEvidence);
    EXPECT_NE(f->whyNot.find("not a majority"), std::string::npos) << f->whyNot;
    EXPECT_FALSE(stragglerAdvice(*f, std::nullopt).has_value());

    // Last in 3 of 4: a majority; the others waited 3 x 2 x 5 us = 30 us of their 200 us.
    m.collectives[2] = collective(3, 1, 20'000, 5000);
    f = findStraggler(m, communication(3, 100'000), 1, whole);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->waitCausedNs, 30'000);
    EXPECT_DOUBLE_EQ(f->waitShare, 30'000.0 / 200'000.0);
    EXPECT_TRUE(f->meetsEvidence) << f->whyNot;
    EXPECT_TRUE(stragglerAdvice(*f, std::nullopt).has_value());
    // ... but not when that is under 10 % of the others' communication.
    f = findStraggler(m, communication(3, 1'000'000), 1, whole);
    EXPECT_FALSE(f->meetsEvidence);
    EXPECT_NE(f->whyNot.find("under 10 %"), std::string::npos) << f->whyNot;
}

TEST(Straggler, SkewZeroNeverNamesAStraggler) {
    CollectiveMatch m;
    m.collectives = {collective(4, 0, 0, 0), collective(4, 0, 10'000, 0),
                     collective(4, 0, 20'000, 0)};
    EXPECT_FALSE(findStraggler(m, communication(4, 1000), 1, JobCoverage{4, 4}).has_value());
}

TEST(Straggler, APartialJobNamesOnlyTheLastOfTheRanksPresent) {
    CollectiveMatch m;
    m.collectives = {collective(2, 1, 0, 5000), collective(2, 1, 10'000, 5000),
                     collective(2, 1, 20'000, 5000)};
    const JobCoverage partial{2, 128};
    EXPECT_TRUE(partial.partial());
    const auto f = findStraggler(m, communication(2, 10'000), 1, partial);
    ASSERT_TRUE(f.has_value());
    EXPECT_FALSE(f->meetsEvidence);
    EXPECT_NE(f->whyNot.find("only 2 of 128 ranks are present"), std::string::npos) << f->whyNot;
    EXPECT_FALSE(stragglerAdvice(*f, std::nullopt).has_value());
    const std::string line = stragglerSummary(f, m, partial);
    EXPECT_EQ(line.rfind("last of the ranks present: rank 1, last in 3 of 3 collectives", 0), 0u)
        << line;
    EXPECT_NE(line.find("not the job's straggler"), std::string::npos);
}

TEST(Straggler, PointToPointOperationsAreCountedNotMatched) {
    EXPECT_TRUE(isPointToPoint("SendRecv"));
    EXPECT_TRUE(isPointToPoint("Send"));
    EXPECT_TRUE(isPointToPoint("recv"));
    EXPECT_FALSE(isPointToPoint("AllToAll"));
    EXPECT_FALSE(isPointToPoint("AllReduce"));
    // Two ranks, each with one SendRecv kernel and one AllReduce kernel.
    std::vector<trace::TraceData> ranks(2);
    for (int r = 0; r < 2; ++r) {
        trace::TraceData& d = ranks[size_t(r)];
        d.header.rank = trace::RankId{r};
        for (const auto& [name, at] : {std::pair{"ncclDevKernel_SendRecv(x)", 0},
                                       std::pair{"ncclDevKernel_AllReduce_Sum_f32(x)", 5000}}) {
            trace::KernelEvent k;
            k.startNs = at + r * 100;
            k.endNs = at + 2000;
            k.name = d.intern(name);
            k.category = trace::KernelCategory::Communication;
            d.kernels.append(k);
        }
    }
    const CollectiveMatch m =
        matchCollectives({{&ranks[0], trace::RankId{0}, 0}, {&ranks[1], trace::RankId{1}, 0}});
    EXPECT_EQ(m.pointToPoint, 2u);
    ASSERT_EQ(m.collectives.size(), 1u);
    EXPECT_EQ(m.collectives[0].function, "AllReduce");
}

}  // namespace
}  // namespace vramscope::analysis
