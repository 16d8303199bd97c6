#include "vramscope/analysis/advice/auto_notes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "vramscope/analysis/model/text_format.h"
#include "vramscope/analysis/synthetic_job.h"

// Auto-notes on jobs whose findings are known by construction (SyntheticJobSpec's formulas, a
// hand-made OOM), and notes carried through a trace's annotations.
namespace vramscope::analysis {
namespace {

const trace::Note* findKind(const std::vector<trace::Note>& notes, const std::string& kind,
                            int rankIndex) {
    for (const trace::Note& n : notes) {
        if (n.kind == kind && n.rankIndex == rankIndex) {
            return &n;
        }
    }
    return nullptr;
}

std::shared_ptr<const JobModel> modelOfRanks(std::vector<trace::TraceData> ranks) {
    trace::Job job;
    for (size_t i = 0; i < ranks.size(); ++i) {
        trace::RankTrace rt;
        rt.path = "rank" + std::to_string(i) + ".vscope";
        rt.trace.data = std::move(ranks[i]);
        job.ranks.push_back(std::move(rt));
    }
    auto built = buildJobModel(std::move(job), "synthetic");
    EXPECT_TRUE(built.ok());
    return built.ok() ? built.value() : nullptr;
}

TEST(AutoNotes, PeakStaircaseStragglerAndGapFollowTheSyntheticFormulas) {
    SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 10;
    spec.leakBytesPerIteration = 64ull << 20;
    spec.leakRank = 0;
    spec.stragglerRank = 1;
    spec.stragglerDelayNs = 3'000'000;
    const auto model = modelOfRanks(generateSyntheticJob(spec));
    ASSERT_TRUE(model);
    const std::vector<trace::Note> notes = autoNotes(*model);

    // SyntheticJobSpec: F = (K/2) d, C = K d, D from the bus bandwidth, P = s + C - v + D + h,
    // S_i = 3'000'000 + h + i P; the first event (the weights) is at 1'000'000 = job time 0.
    const int64_t d = spec.computeKernelNs;
    const int64_t K = spec.computeKernelsPerIteration;
    const int64_t F = (K / 2) * d;
    const int64_t C = K * d;
    const int64_t n = spec.ranks;
    const auto D = static_cast<int64_t>(std::ceil(static_cast<double>(spec.allReduceBytes) * 2 *
                                                  (n - 1) / n / spec.busBandwidthBytesPerS * 1e9));
    const int64_t s = spec.stragglerDelayNs;
    const int64_t h = spec.hostGapNs;
    const int64_t P = s + C + D + h;
    const auto S = [&](int64_t i) { return 3'000'000 + h + i * P; };
    const int64_t origin = 1'000'000;
    const int64_t N = spec.iterations;
    const auto L = static_cast<int64_t>(spec.leakBytesPerIteration);

    const trace::Note* peak = findKind(notes, "peak", 0);
    ASSERT_NE(peak, nullptr);
    const int64_t peakBytes =
        static_cast<int64_t>(spec.weightBytes + spec.optimizerBytes +
                             spec.activationsPerIteration * spec.activationBytes) +
        N * L;
    EXPECT_EQ(peak->startNs, S(N - 1) + F - origin);  // rank 0 is on time: S_i(0) = S_i
    EXPECT_EQ(peak->title, "Peak allocated " + formatBytes(static_cast<double>(peakBytes)));
    EXPECT_EQ(peak->device, 0);
    EXPECT_TRUE(peak->generated);

    const trace::Note* stair = findKind(notes, "staircase", 0);
    ASSERT_NE(stair, nullptr);
    EXPECT_NE(stair->title.find(formatBytes(static_cast<double>(L))), std::string::npos)
        << stair->title;
    EXPECT_GE(stair->startNs, S(0) - origin);
    EXPECT_LE(stair->endNs, S(N - 1) + s + C + D - origin);
    EXPECT_GT(stair->endNs, stair->startNs);
    EXPECT_EQ(findKind(notes, "staircase", 1), nullptr);  // rank 1 does not leak

    // Every collective has skew s, rank 1 last; the first of them (iteration 0) is kept: its
    // all-reduce begins at S_0 + s + C on rank 1 and at S_0 + C on rank 0.
    const trace::Note* late = findKind(notes, "straggler", 1);
    ASSERT_NE(late, nullptr);
    EXPECT_EQ(late->startNs, S(0) + C - origin);
    EXPECT_EQ(late->endNs, S(0) + s + C - origin);

    // The longest gap is the straggler's: h + s between its iterations 0 and 1, from E_0.
    const trace::Note* gap = findKind(notes, "idle-gap", 1);
    ASSERT_NE(gap, nullptr);
    EXPECT_EQ(gap->endNs - gap->startNs, h + s);
    EXPECT_EQ(gap->startNs, S(0) + s + C + D - origin);
    EXPECT_EQ(std::count_if(notes.begin(), notes.end(),
                            [](const trace::Note& x) { return x.kind == "idle-gap"; }),
              1);
    EXPECT_TRUE(std::is_sorted(notes.begin(), notes.end(),
                               [](const auto& a, const auto& b) { return a.startNs < b.startNs; }));
    EXPECT_TRUE(findKind(notes, "oom", 0) == nullptr && findKind(notes, "oom", 1) == nullptr);
}

TEST(AutoNotes, NoStragglerOrStaircaseIsPlacedWhenTheJobHasNone) {
    SyntheticJobSpec spec;
    spec.ranks = 2;
    const auto model = modelOfRanks(generateSyntheticJob(spec));
    ASSERT_TRUE(model);
    const std::vector<trace::Note> notes = autoNotes(*model);
    for (const trace::Note& n : notes) {
        EXPECT_NE(n.kind, "straggler");
        EXPECT_NE(n.kind, "staircase");
    }
    EXPECT_NE(findKind(notes, "peak", 0), nullptr);
    EXPECT_NE(findKind(notes, "peak", 1), nullptr);
}

TEST(AutoNotes, AnOomIsANoteAtItsTimeWithTheRequest) {
    trace::TraceData d;
    d.header.rank = trace::RankId{0};
    d.header.devices.push_back({trace::DeviceIndex{0}, "GPU-x", "Test GPU", 1000});
    trace::MemoryEvent e;
    e.timestampNs = 1000;
    e.address = 0xa;
    e.sizeBytes = 300;
    e.action = trace::MemoryAction::Alloc;
    d.memory.append(e);
    trace::OomEvent oom;
    oom.timestampNs = 2500;
    oom.requestedBytes = 900;
    d.ooms.push_back(oom);
    std::vector<trace::TraceData> ranks;
    ranks.push_back(std::move(d));
    const auto model = modelOfRanks(std::move(ranks));
    ASSERT_TRUE(model);
    const auto notes = autoNotes(*model);
    const trace::Note* o = findKind(notes, "oom", 0);
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->startNs, 1500);  // job time 0 is the first event, at 1000
    EXPECT_EQ(o->title, "OOM: " + formatBytes(900) + " refused");
    const trace::Note* peak = findKind(notes, "peak", 0);
    ASSERT_NE(peak, nullptr);
    EXPECT_EQ(peak->startNs, 0);
    EXPECT_NE(peak->text.find("30.0 %"), std::string::npos) << peak->text;  // 300 of 1000 B
}

TEST(AutoNotes, NotesCarriedInAnnotationsComeBackOnJobTime) {
    SyntheticJobSpec spec;
    spec.ranks = 2;
    auto ranks = generateSyntheticJob(spec);
    trace::Note mine;
    mine.id = "n1";
    mine.title = "rank 1 note";
    mine.startNs = 5'000'000;
    mine.endNs = 6'000'000;
    mine.rankIndex = 1;
    mine.device = 1;
    mine.allocationAddress = 0x1000;
    mine.allocationTimeNs = 4'000'000;
    trace::Note all;
    all.id = "n2";
    all.title = "every GPU";
    all.startNs = all.endNs = 7;
    const std::vector<trace::Note> notes = {mine, all};
    // Job time 0 is 1'000'000 trace time on both ranks: toJobNs = -1'000'000.
    for (int r = 0; r < 2; ++r) {
        for (trace::Annotation& a : annotationsForRank(notes, r, -1'000'000)) {
            if (r == 1) {
                EXPECT_EQ(a.startNs, 6'000'000);  // trace time
            }
            ranks[static_cast<size_t>(r)].annotations.push_back(std::move(a));
        }
    }
    EXPECT_EQ(ranks[0].annotations.size(), 1u);  // the every-GPU note, once
    EXPECT_EQ(ranks[1].annotations.size(), 1u);
    const auto model = modelOfRanks(std::move(ranks));
    ASSERT_TRUE(model);
    auto back = notesInTraces(*model);
    ASSERT_EQ(back.size(), 2u);
    std::sort(back.begin(), back.end(), [](auto& a, auto& b) { return a.id < b.id; });
    EXPECT_EQ(back[0], mine);
    EXPECT_EQ(back[1], all);
}

}  // namespace
}  // namespace vramscope::analysis
