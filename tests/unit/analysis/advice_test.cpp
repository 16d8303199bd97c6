#include "vramscope/analysis/advice/advice.h"

#include <gtest/gtest.h>

#include "advice_evidence.h"

#include <algorithm>

#include "vramscope/analysis/collectives/straggler.h"
#include "vramscope/analysis/memory/allocator_churn.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {
namespace {

const Advice* find(const std::vector<Advice>& all, const std::string& rule) {
    for (const Advice& a : all) {
        if (a.rule == rule) {
            return &a;
        }
    }
    return nullptr;
}

using test::evidence;

TEST(Advice, PeakAboveEightyPercentOfCapacity) {
    DeviceFacts f;
    f.memory.capacityBytes = 100ull << 30;
    f.memory.hasAllocated = f.memory.hasReserved = true;
    f.memory.peakAllocatedBytes = 70ll << 30;
    f.memory.peakReservedBytes = 85ll << 30;
    const auto all = adviseOn({f});
    const Advice* a = find(all, "peak-near-capacity");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Warning);
    EXPECT_DOUBLE_EQ(evidence(*a, "peak_fraction"), 0.85);
    EXPECT_NE(a->message.find("85.0 %"), std::string::npos);
    EXPECT_NE(a->message.find("activation checkpointing"), std::string::npos);
    f.memory.peakReservedBytes = 79ll << 30;
    EXPECT_EQ(find(adviseOn({f}), "peak-near-capacity"), nullptr);
    f.hadOom = true;
    ASSERT_NE(find(adviseOn({f}), "peak-near-capacity"), nullptr);
    EXPECT_EQ(find(adviseOn({f}), "peak-near-capacity")->severity, Severity::Critical);
    f.memory.capacityBytes = 0;
    f.memory.hasAllocated = f.memory.hasReserved = true;  // unknown capacity: no rule
    EXPECT_EQ(find(adviseOn({f}), "peak-near-capacity"), nullptr);
}

TEST(Advice, StaircaseNamesTheTopSurvivor) {
    LeakReport leak;
    leak.verdict = LeakVerdict::Staircase;
    leak.growthBytesPerIteration = 500ll << 20;
    leak.iterations.resize(8);
    leak.iterationsToOom = 12.5;
    SurvivorGroup g;
    g.bytes = 3000ull << 20;
    g.count = 6;
    g.userFrame = "step (gpt_train.py:63)";
    leak.survivors.push_back(g);
    leak.survivorBytes = g.bytes;
    DeviceFacts f;
    f.leak = &leak;
    const auto all = adviseOn({f});
    const Advice* a = find(all, "leak");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Critical);
    EXPECT_NE(a->message.find("+500 MiB per iteration"), std::string::npos);
    EXPECT_NE(a->message.find("12.5 iterations"), std::string::npos);
    EXPECT_NE(a->message.find("gpt_train.py:63"), std::string::npos);
    EXPECT_DOUBLE_EQ(evidence(*a, "iterations_to_oom"), 12.5);
    leak.verdict = LeakVerdict::Sawtooth;
    EXPECT_EQ(find(adviseOn({f}), "leak"), nullptr);
}

TEST(Advice, ExposedCommunicationAndHostBoundGaps) {
    TimeBreakdown b;
    b.spanNs = 1'000'000;
    b.communicationNs = 400'000;
    b.overlapNs = 100'000;
    b.exposedCommunicationNs = 300'000;
    b.overlapPct = 25.0;
    b.gapNsByCause[int(GapCause::HostBound)] = 150'000;
    b.gapCountByCause[int(GapCause::HostBound)] = 3;
    b.kernels = 40;
    DeviceFacts f;
    f.rank = trace::RankId{2};
    f.breakdown = &b;
    const auto all = adviseOn({f});
    const Advice* c = find(all, "exposed-communication");
    ASSERT_NE(c, nullptr);
    EXPECT_DOUBLE_EQ(evidence(*c, "exposed_fraction"), 0.3);
    EXPECT_EQ(c->rank, trace::RankId{2});
    EXPECT_NE(c->message.find("gradient accumulation"), std::string::npos);
    const Advice* h = find(all, "host-bound");
    ASSERT_NE(h, nullptr);
    EXPECT_DOUBLE_EQ(evidence(*h, "host_bound_fraction"), 0.15);
    EXPECT_NE(h->message.find("data loading"), std::string::npos);
    b.exposedCommunicationNs = 200'000;  // exactly the threshold: not above it
    b.gapNsByCause[int(GapCause::HostBound)] = 100'000;
    EXPECT_TRUE(adviseOn({f}).empty());
}

TEST(Advice, ExposedCommunicationIsCriticalOnlyWhenTheWaitsAreKnown) {
    // 60 % of the span exposed: above twice the 20 % threshold.
    TimeBreakdown b;
    b.spanNs = 1'000'000;
    b.communicationNs = 600'000;
    b.exposedCommunicationNs = 600'000;
    b.kernels = 40;
    DeviceFacts f;
    f.rank = trace::RankId{0};
    f.breakdown = &b;
    // No collective matched across ranks: part of it may be waiting for an absent rank.
    // The advice list stays alive while `unknown` points into it.
    const auto partial = adviseOn({f});
    const Advice* unknown = find(partial, "exposed-communication");
    ASSERT_NE(unknown, nullptr);
    EXPECT_EQ(unknown->severity, Severity::Warning);
    EXPECT_NE(unknown->message.find("may be waiting for ranks not in this trace"),
              std::string::npos)
        << unknown->message;
    // Waits known for the whole job, none of it waiting: critical.
    CommunicationSplit split;
    split.collectives = 8;
    split.communicationNs = 600'000;
    split.transferNs = 600'000;
    split.exposedTransferNs = 600'000;
    f.communication = &split;
    const auto whole = adviseOn({f});
    ASSERT_NE(find(whole, "exposed-communication"), nullptr);
    EXPECT_EQ(find(whole, "exposed-communication")->severity, Severity::Critical);
    // The same split over a partial job: a warning again.
    split.partial = true;
    EXPECT_EQ(find(adviseOn({f}), "exposed-communication")->severity, Severity::Warning);
}

TEST(Advice, ModelStateAboveOneGpu) {
    DeviceFacts f;
    f.memory.capacityBytes = 80ull << 30;
    f.memory.hasAllocated = f.memory.hasReserved = true;
    f.modelStateBytes = 90ll << 30;
    const auto all = adviseOn({f});
    const Advice* a = find(all, "model-state");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Critical);
    EXPECT_NE(a->message.find("model parallelism"), std::string::npos);
    f.modelStateBytes = 10ll << 30;
    EXPECT_EQ(find(adviseOn({f}), "model-state"), nullptr);
}

TEST(Advice, CriticalFirst) {
    LeakReport leak;
    leak.verdict = LeakVerdict::Staircase;
    DeviceFacts a;
    a.rank = trace::RankId{0};
    a.memory.capacityBytes = 100;
    a.memory.hasAllocated = a.memory.hasReserved = true;
    a.memory.peakReservedBytes = 85;
    DeviceFacts b;
    b.rank = trace::RankId{1};
    b.leak = &leak;
    const auto all = adviseOn({a, b});
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].rule, "leak");
    EXPECT_EQ(all[1].rule, "peak-near-capacity");
}

TEST(Advice, TimeRulesNeedAMillisecondAndTwoKernels) {
    // One 50 us communication kernel: 100 % exposed, but no evidence about a job.
    TimeBreakdown b;
    b.spanNs = 50'000;
    b.communicationNs = 50'000;
    b.exposedCommunicationNs = 50'000;
    b.kernels = 1;
    DeviceFacts f;
    f.breakdown = &b;
    EXPECT_FALSE(enoughTimeEvidence(b));
    EXPECT_EQ(find(adviseOn({f}), "exposed-communication"), nullptr);
    // The same fraction over 2 ms and 4 kernels fires.
    b.spanNs = 2'000'000;
    b.communicationNs = 2'000'000;
    b.exposedCommunicationNs = 2'000'000;
    b.kernels = 4;
    EXPECT_TRUE(enoughTimeEvidence(b));
    EXPECT_NE(find(adviseOn({f}), "exposed-communication"), nullptr);
}

TEST(Advice, OomRuleStatesTheRequestAndTheLiveSet) {
    std::vector<OomFacts> ooms(1);
    ooms[0].timeNs = 5'000'000;
    ooms[0].sinceStartNs = 4'000'000;
    ooms[0].requestedBytes = 1000ull << 20;
    ooms[0].allocatedBytes = 9ll << 30;
    ooms[0].reservedBytes = 10ll << 30;
    ooms[0].topLive = {{"forward (train.py:35)", 3ull << 30, 9}};
    DeviceFacts f;
    f.rank = trace::RankId{-1};
    f.ooms = &ooms;
    const auto all = adviseOn({f});
    const Advice* a = find(all, "oom");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->severity, Severity::Critical);
    EXPECT_DOUBLE_EQ(evidence(*a, "requested_bytes"), double(1000ull << 20));
    EXPECT_DOUBLE_EQ(evidence(*a, "allocated_bytes"), double(9ll << 30));
    EXPECT_DOUBLE_EQ(evidence(*a, "reserved_bytes"), double(10ll << 30));
    EXPECT_NE(a->message.find("rank ? GPU 0"), std::string::npos) << a->message;
    EXPECT_NE(a->message.find("0.977 GiB"), std::string::npos) << a->message;
    EXPECT_NE(a->message.find("forward (train.py:35)"), std::string::npos) << a->message;
    // No OOM, no advice.
    ooms.clear();
    EXPECT_EQ(find(adviseOn({f}), "oom"), nullptr);
}

TEST(Cost, GpusTimesPriceTimesHours) {
    CostInput in;
    in.gpuHourPrice = 2.5;
    in.gpus = 8;
    in.stepTimeNs = 1'800'000'000;  // 1.8 s
    in.steps = 10'000;              // 5 hours
    in.idleNs = 250;
    in.spanNs = 1000;
    const CostEstimate c = estimateCost(in);
    EXPECT_DOUBLE_EQ(c.hours, 5.0);
    EXPECT_DOUBLE_EQ(c.gpuHours, 40.0);
    EXPECT_DOUBLE_EQ(c.totalCost, 8 * 2.5 * 5.0);
    EXPECT_TRUE(c.idleKnown);
    EXPECT_DOUBLE_EQ(c.idleFraction, 0.25);
    EXPECT_DOUBLE_EQ(c.idleCost, 25.0);
}

TEST(Cost, IsGpuHoursTimesPriceAndIdleIsUnknownWithoutKernels) {
    // 8 GPUs for 0.495 h of wall time (1000 steps of 1.782 s) are 3.96 GPU-hours; at 2.5 per
    // GPU-hour, 9.90.
    CostInput in;
    in.gpuHourPrice = 2.5;
    in.gpus = 8;
    in.stepTimeNs = 1'782'000'000;
    in.steps = 1000;
    const CostEstimate c = estimateCost(in);
    EXPECT_NEAR(c.hours, 0.495, 1e-12);
    EXPECT_NEAR(c.gpuHours, 3.96, 1e-12);
    EXPECT_NEAR(c.totalCost, 9.9, 1e-12);
    EXPECT_EQ(formatAmount(c.gpuHours), "3.96");
    EXPECT_EQ(formatAmount(c.totalCost), "9.90");
    // No kernels, no span: the idle part is unknown, not 0.
    EXPECT_FALSE(c.idleKnown);
    EXPECT_TRUE(c.known);
}

TEST(Cost, IsUnknownWithoutAStepTimeOrAGpu) {
    CostInput in;
    in.gpuHourPrice = 2.5;
    in.gpus = 1;
    in.steps = 1;
    // A snapshot without iterations or kernels: no step to price.
    CostEstimate c = estimateCost(in);
    EXPECT_FALSE(c.known);
    EXPECT_NE(c.unknownReason.find("no step time"), std::string::npos) << c.unknownReason;
    in.gpus = 0;
    in.stepTimeNs = 1'000'000;
    c = estimateCost(in);
    EXPECT_FALSE(c.known);
    EXPECT_EQ(c.unknownReason, "no GPU in this trace");
}

TEST(Cost, AmountsKeepThreeSignificantDigitsBelowOne) {
    EXPECT_EQ(formatAmount(0.0001932), "0.000193");  // was "0.00" in the CLI
    EXPECT_EQ(formatAmount(0.042), "0.0420");
    EXPECT_EQ(formatAmount(0.5), "0.500");
    EXPECT_EQ(formatAmount(-0.25), "-0.250");
    EXPECT_EQ(formatAmount(1.0), "1.00");
    EXPECT_EQ(formatAmount(1234.5), "1234.50");
    EXPECT_EQ(formatAmount(0.0), "0.00");
    EXPECT_EQ(formatAmount(1e-13), "0.00");
}

}  // namespace
}  // namespace vramscope::analysis

namespace vramscope::analysis {
namespace {

TEST(Advice, AChecklistRuleThatLacksDataOnAPartialInputSaysItMayBeInTheLostPart) {
    for (const bool partial : {false, true}) {
        DeviceFacts f;
        f.input = 0;
        f.rank = trace::RankId{0};
        f.device = trace::DeviceIndex{0};
        f.partialInput = partial;
        std::vector<AdviceAssessment> out;
        adviseOn({f}, {}, &out);
        ASSERT_FALSE(out.empty());
        for (const AdviceAssessment& a : out) {
            ASSERT_EQ(a.outcome, AssessmentOutcome::NotAssessed) << a.rule;  // no facts at all
            EXPECT_EQ(a.detail.find("the input is partial") != std::string::npos, partial)
                << a.rule << ": " << a.detail;
        }
    }
}

TEST(Advice, AChecklistRuleThatIsClearOnAPartialInputSaysItHoldsForThePartRead) {
    // No segment churned in 4 steady iterations: clear, on what was read.
    AllocatorChurn churn;
    churn.assessable = true;
    churn.steadyIterations = 4;
    DeviceFacts f;
    f.input = 0;
    f.rank = trace::RankId{0};
    f.device = trace::DeviceIndex{0};
    f.churn = &churn;
    for (const bool partial : {false, true}) {
        f.partialInput = partial;
        std::vector<AdviceAssessment> out;
        adviseOn({f}, {}, &out);
        const auto c = std::find_if(out.begin(), out.end(), [](const AdviceAssessment& a) {
            return a.rule == "allocator-churn";
        });
        ASSERT_NE(c, out.end());
        EXPECT_EQ(c->outcome, AssessmentOutcome::Clear) << c->detail;
        EXPECT_EQ(
            c->detail.find("on the part of the input that could be read") != std::string::npos,
            partial)
            << c->detail;
    }
}

}  // namespace
}  // namespace vramscope::analysis
