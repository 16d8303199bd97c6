#include "vramscope/analysis/advice/check_rules.h"

#include <gtest/gtest.h>

#include "test_units.h"

namespace vramscope::analysis {
namespace {

using testdata::kGiB;
using testdata::kMiB;

/// A device with both memory levels, `peak` reserved bytes of `capacity`, `iterations` leak
/// iterations with `verdict`, and no kernels.
DeviceAnalysis device(int64_t peak, uint64_t capacity, size_t iterations = 5,
                      LeakVerdict verdict = LeakVerdict::Sawtooth) {
    DeviceAnalysis d;
    d.input = 1;
    d.rank = trace::RankId{3};
    d.device = trace::DeviceIndex{2};
    d.memory.capacityBytes = capacity;
    d.memory.hasAllocated = true;
    d.memory.hasReserved = true;
    d.memory.peakAllocatedBytes = peak / 2;
    d.memory.peakReservedBytes = peak;
    d.iterations.source = IterationSource::Ranges;
    d.leak.iterations.resize(iterations);
    d.leak.verdict = verdict;
    return d;
}

TimeBreakdown breakdown(int64_t spanNs, size_t kernels, int64_t exposedNs) {
    TimeBreakdown b;
    b.spanNs = spanNs;
    b.kernels = kernels;
    b.exposedCommunicationNs = exposedNs;
    return b;
}

/// The one result of evaluating only `rules` on one device.
RuleResult only(const DeviceAnalysis& d, const CheckRules& rules,
                const JobAnalysisOptions& options = {}) {
    JobAnalysis job;
    job.devices.push_back(d);
    const auto results = evaluateRules(job, rules, options);
    EXPECT_EQ(results.size(), 1u);
    return results.empty() ? RuleResult{} : results.front();
}

CheckRules peakRule(double limit) {
    CheckRules r;
    r.failOnOom = false;
    r.maxPeakShare = limit;
    return r;
}

CheckRules leakRule() {
    CheckRules r;
    r.failOnOom = false;
    r.failOnLeak = true;
    return r;
}

CheckRules exposedRule(double limit) {
    CheckRules r;
    r.failOnOom = false;
    r.maxExposedCommunication = limit;
    return r;
}

TEST(Unit, DefaultsCheckEveryRuleWithTheDocumentedLimitsWhenNoneIsNamed) {
    const CheckRules d = CheckRules::defaults();
    ASSERT_TRUE(d.maxPeakShare.has_value());
    EXPECT_EQ(*d.maxPeakShare, kCapacityWarningShare);
    ASSERT_TRUE(d.maxExposedCommunication.has_value());
    EXPECT_EQ(*d.maxExposedCommunication, 0.3);
    EXPECT_TRUE(d.failOnLeak);
    EXPECT_TRUE(d.failOnOom);
    EXPECT_STREQ(toString(RuleOutcome::Pass), "PASS");
    EXPECT_STREQ(toString(RuleOutcome::Fail), "FAIL");
    EXPECT_STREQ(toString(RuleOutcome::NotChecked), "NOT CHECKED");
}

TEST(Unit, OomRuleFailsPassesOrSkipsWhenTheDeviceHasOomsOrMemoryData) {
    DeviceAnalysis d = device(kGiB, 80 * uint64_t(kGiB));
    CheckRules rules;  // failOnOom only
    RuleResult r = only(d, rules);
    EXPECT_EQ(r.rule, "oom");
    EXPECT_EQ(r.outcome, RuleOutcome::Pass);
    EXPECT_EQ(r.detail, "no out-of-memory event");
    EXPECT_EQ(r.input, 1u);
    EXPECT_EQ(r.rank, trace::RankId{3});
    EXPECT_EQ(r.device, trace::DeviceIndex{2});

    OomFacts o;
    o.sinceStartNs = 1500;
    o.requestedBytes = 1536;
    d.ooms.push_back(o);
    r = only(d, rules);
    EXPECT_EQ(r.outcome, RuleOutcome::Fail);
    EXPECT_EQ(r.detail,
              "1 out-of-memory event, the first 1.50 us after the first event, requesting "
              "1.50 KiB; cause: unknown");
    d.ooms.push_back(OomFacts{});
    EXPECT_EQ(only(d, rules).detail,
              "2 out-of-memory events, the first 1.50 us after the first event, requesting "
              "1.50 KiB; cause: unknown");

    DeviceAnalysis empty;
    r = only(empty, rules);
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail, "no memory data");
}

TEST(Unit, PeakRuleComparesPeakShareWithTheLimitWhenCapacityIsKnown) {
    RuleResult r = only(device(70 * kGiB, 80 * uint64_t(kGiB)), peakRule(0.8));
    EXPECT_EQ(r.rule, "max-peak-fraction");
    EXPECT_EQ(r.outcome, RuleOutcome::Fail);
    EXPECT_EQ(r.detail, "peak reserved 70.0 GiB / capacity 80.0 GiB = 0.875 > 0.800");
    r = only(device(40 * kGiB, 80 * uint64_t(kGiB)), peakRule(0.8));
    EXPECT_EQ(r.outcome, RuleOutcome::Pass);
    EXPECT_EQ(r.detail, "peak reserved 40.0 GiB / capacity 80.0 GiB = 0.500 <= 0.800");
    // A share equal to the limit is within it.
    EXPECT_EQ(only(device(64 * kGiB, 80 * uint64_t(kGiB)), peakRule(0.8)).outcome,
              RuleOutcome::Pass);
}

TEST(Unit, OnPartialInputAPassIsNotCheckedAndAFailStaysAFail) {
    DeviceAnalysis d = device(40 * kGiB, 80 * uint64_t(kGiB));
    d.partialInput = true;
    RuleResult r = only(d, peakRule(0.8));
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail,
              "partial input: the trace lost events, and the rule passed only on what was kept "
              "(peak reserved 40.0 GiB / capacity 80.0 GiB = 0.500 <= 0.800)");
    d = device(70 * kGiB, 80 * uint64_t(kGiB));
    d.partialInput = true;
    r = only(d, peakRule(0.8));
    EXPECT_EQ(r.outcome, RuleOutcome::Fail);
    EXPECT_EQ(
        r.detail,
        "peak reserved 70.0 GiB / capacity 80.0 GiB = 0.875 > 0.800 (partial input: the trace "
        "lost events; what was kept already fails)");
    // A capacity given for a trace that names none says so.
    d = device(40 * kGiB, 80 * uint64_t(kGiB));
    d.capacityGiven = true;
    EXPECT_EQ(only(d, peakRule(0.8)).detail,
              "peak reserved 40.0 GiB / capacity 80.0 GiB (given; the trace names none) = 0.500 <= "
              "0.800");
}

TEST(Unit, PeakRuleSkipsWhenThereIsNoMemoryDataOrNoCapacity) {
    RuleResult r = only(DeviceAnalysis{}, peakRule(0.8));
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail, "no memory data");
    r = only(device(kGiB, 0), peakRule(0.8));
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail, "capacity unknown (peak 1.00 GiB)");
}

TEST(Unit, LeakRuleFailsOnStaircaseAndPassesOtherwiseWhenEnoughIterations) {
    DeviceAnalysis d = device(kGiB, 0, 5, LeakVerdict::Staircase);
    d.leak.growthBytesPerIteration = 100 * kMiB;
    RuleResult r = only(d, leakRule());
    EXPECT_EQ(r.rule, "fail-on-leak");
    EXPECT_EQ(r.outcome, RuleOutcome::Fail);
    EXPECT_EQ(r.detail, "staircase, +100 MiB per iteration over 5 iterations");

    r = only(device(kGiB, 0, 5, LeakVerdict::Sawtooth), leakRule());
    EXPECT_EQ(r.outcome, RuleOutcome::Pass);
    EXPECT_EQ(r.detail, "sawtooth (5 iterations, ranges)");
    r = only(device(kGiB, 0, 4, LeakVerdict::Inconclusive), leakRule());
    EXPECT_EQ(r.outcome, RuleOutcome::Pass);
    EXPECT_EQ(r.detail, "inconclusive (4 iterations, ranges)");
}

TEST(Unit, LeakRuleSkipsWhenThereIsNoMemoryData) {
    DeviceAnalysis d = device(kGiB, 0, 10, LeakVerdict::Staircase);
    d.memory.hasAllocated = false;
    d.memory.hasReserved = false;
    const RuleResult r = only(d, leakRule());
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail, "no memory data");
}

TEST(Unit, LeakRuleSkipsWithTheNeededCountFromLeakOptionsWhenTooFewIterations) {
    const DeviceAnalysis three = device(kGiB, 0, 3, LeakVerdict::Staircase);
    RuleResult r = only(three, leakRule());  // default minIterations 4
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail, "too few iterations with memory data (3, at least 4 needed)");

    JobAnalysisOptions options;
    options.leak.minIterations = 6;
    r = only(device(kGiB, 0, 5), leakRule(), options);
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail, "too few iterations with memory data (5, at least 6 needed)");

    // Never fewer than two, whatever the options say.
    options.leak.minIterations = 1;
    r = only(device(kGiB, 0, 1), leakRule(), options);
    EXPECT_EQ(r.detail, "too few iterations with memory data (1, at least 2 needed)");
    options.leak.minIterations = 2;
    EXPECT_EQ(only(three, leakRule(), options).outcome, RuleOutcome::Fail);
}

TEST(Unit, ExposedRuleComparesTheFractionWhenThereIsEnoughEvidence) {
    DeviceAnalysis d = device(kGiB, 0);
    d.breakdown = breakdown(10'000'000, 100, 2'000'000);
    RuleResult r = only(d, exposedRule(0.3));
    EXPECT_EQ(r.rule, "max-exposed-communication");
    EXPECT_EQ(r.outcome, RuleOutcome::Pass);
    EXPECT_EQ(r.detail,
              "exposed communication 2.00 ms (waiting for other ranks unknown: no collective "
              "matched across ranks) / span 10.0 ms = 0.200 <= 0.300");
    d.breakdown = breakdown(10'000'000, 100, 5'000'000);
    r = only(d, exposedRule(0.3));
    EXPECT_EQ(r.outcome, RuleOutcome::Fail);
    EXPECT_EQ(r.detail,
              "exposed communication 5.00 ms (waiting for other ranks unknown: no collective "
              "matched across ranks) / span 10.0 ms = 0.500 > 0.300");
    // With collectives matched, 3 of those 5 ms waited for the last rank: exposed transfer
    // 5 - 3 = 2 ms, 0.2 of the span, passes.
    CommunicationSplit split;
    split.exposedWaitNs = 3'000'000;
    d.communication = split;
    r = only(d, exposedRule(0.3));
    EXPECT_EQ(r.outcome, RuleOutcome::Pass);
    EXPECT_EQ(r.detail,
              "exposed transfer 2.00 ms (exposed communication 5.00 ms - exposed waiting for the "
              "last rank 3.00 ms) / span 10.0 ms = 0.200 <= 0.300");
}

TEST(Unit, ExposedRuleSkipsWhenThereAreNoKernels) {
    const RuleResult r = only(device(kGiB, 0), exposedRule(0.3));
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail, "no kernels");
}

TEST(Unit, ExposedRuleSkipsWithTheMinimaFromAdviceOptionsWhenEvidenceIsThin) {
    DeviceAnalysis d = device(kGiB, 0);
    d.breakdown = breakdown(500'000, 10, 400'000);  // half a millisecond
    RuleResult r = only(d, exposedRule(0.3));
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail,
              "too little evidence (span 500 us, 10 kernels; at least 1.00 ms and 2 kernels "
              "needed)");

    JobAnalysisOptions options;
    options.advice.minTimeSpanNs = 100'000;
    options.advice.minTimeKernels = 20;
    r = only(d, exposedRule(0.3), options);
    EXPECT_EQ(r.outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r.detail,
              "too little evidence (span 500 us, 10 kernels; at least 100 us and 20 "
              "kernels needed)");

    options.advice.minTimeKernels = 10;  // now both minima are met: 0.8 > 0.3
    EXPECT_EQ(only(d, exposedRule(0.3), options).outcome, RuleOutcome::Fail);
}

TEST(Unit, EvaluateRulesListsDevicesInOrderAndRulesInDocumentedOrder) {
    JobAnalysis job;
    DeviceAnalysis a = device(10 * kGiB, 80 * uint64_t(kGiB));
    a.input = 0;
    a.rank = trace::RankId{0};
    a.device = trace::DeviceIndex{0};
    DeviceAnalysis b = a;
    b.input = 1;
    b.rank = trace::RankId{-1};
    b.device = trace::DeviceIndex{1};
    b.breakdown = breakdown(10'000'000, 100, 0);
    job.devices = {a, b};
    const auto results = evaluateRules(job, CheckRules::defaults());
    ASSERT_EQ(results.size(), 8u);
    const char* order[] = {"oom", "max-peak-fraction", "fail-on-leak", "max-exposed-communication"};
    for (size_t i = 0; i < results.size(); ++i) {
        EXPECT_EQ(results[i].rule, order[i % 4]) << i;
        EXPECT_EQ(results[i].input, i / 4) << i;
        EXPECT_EQ(results[i].device, trace::DeviceIndex{int(i / 4)}) << i;
        EXPECT_EQ(results[i].rank, trace::RankId{i < 4 ? 0 : -1}) << i;
    }
    EXPECT_EQ(results[3].outcome, RuleOutcome::NotChecked);  // a has no kernels
    EXPECT_EQ(results[7].outcome, RuleOutcome::Pass);

    CheckRules none;
    none.failOnOom = false;
    EXPECT_TRUE(evaluateRules(job, none).empty());  // unset rules are not evaluated
}

TEST(Unit, EvaluateRulesGivesOneSkipForTheJobWhenItHasNoDevices) {
    const auto results = evaluateRules(JobAnalysis{}, CheckRules::defaults());
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].rule, "all rules");
    EXPECT_EQ(results[0].outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(results[0].input, SIZE_MAX);
    EXPECT_EQ(results[0].rank, trace::kUnknownRank);
    EXPECT_EQ(results[0].device, trace::kHostDevice);
    EXPECT_FALSE(results[0].detail.empty());
}

}  // namespace
}  // namespace vramscope::analysis

namespace vramscope::analysis {
namespace {

AdviceAssessment assessment(const char* rule, size_t input, int device, AssessmentOutcome outcome,
                            Severity severity, const char* detail) {
    AdviceAssessment a;
    a.rule = rule;
    a.input = input;
    a.rank = trace::RankId{int(input)};
    a.device = trace::DeviceIndex{device};
    a.outcome = outcome;
    a.severity = severity;
    a.detail = detail;
    return a;
}

DeviceAnalysis gpu(size_t input, int device) {
    DeviceAnalysis d;
    d.input = input;
    d.rank = trace::RankId{int(input)};
    d.device = trace::DeviceIndex{device};
    return d;
}

TEST(CheckRules, ChecklistRuleFailsOnWarningPassesOnClearOrInfoAndNeverPassesUnassessed) {
    JobAnalysis job;
    job.devices = {gpu(0, 0), gpu(0, 1), gpu(1, 0)};
    job.assessments = {
        assessment("mixed-precision", 0, 0, AssessmentOutcome::Fired, Severity::Warning, "w"),
        assessment("mixed-precision", 0, 1, AssessmentOutcome::Fired, Severity::Info, "i"),
        assessment("mixed-precision", 1, 0, AssessmentOutcome::NotAssessed, Severity::Info, "m"),
        assessment("slow-down", 0, 0, AssessmentOutcome::Clear, Severity::Info, "c"),
    };
    CheckRules rules;
    rules.failOnOom = false;
    rules.adviceRules = {"mixed-precision"};
    const std::vector<RuleResult> r = evaluateRules(job, rules);
    ASSERT_EQ(r.size(), 3u);  // one per GPU; slow-down was not asked for
    EXPECT_EQ(r[0].outcome, RuleOutcome::Fail);
    EXPECT_EQ(r[0].detail, "w");
    EXPECT_EQ(r[1].outcome, RuleOutcome::Pass);  // info only
    EXPECT_NE(r[1].detail.find("info"), std::string::npos);
    EXPECT_EQ(r[2].outcome, RuleOutcome::NotChecked);
    EXPECT_EQ(r[2].detail, "m");
    for (const RuleResult& x : r) {
        EXPECT_EQ(x.rule, "mixed-precision");
    }
}

TEST(CheckRules, HostAssessmentIsCheckedOncePerRankAndAPartialInputNeverPasses) {
    JobAnalysis job;
    job.devices = {gpu(0, 0), gpu(0, 1)};
    job.devices[1].partialInput = true;
    job.devices[0].partialInput = true;
    job.assessments = {
        assessment("host-memory", 0, -1, AssessmentOutcome::Clear, Severity::Info, "flat"),
    };
    CheckRules rules;
    rules.failOnOom = false;
    rules.adviceRules = {"host-memory"};
    const std::vector<RuleResult> r = evaluateRules(job, rules);
    // The host result once (with the first GPU); GPU 1 has no result of its own.
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].device, trace::kHostDevice);
    EXPECT_EQ(r[0].outcome, RuleOutcome::NotChecked);  // would pass, but the input lost events
    EXPECT_NE(r[0].detail.find("flat"), std::string::npos);
}

}  // namespace
}  // namespace vramscope::analysis
