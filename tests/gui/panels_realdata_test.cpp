// The panels on real traces: the H200 leak and OOM snapshots and the 8-rank DLRM Kineto job.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "panels_fixture.h"
#include "realdata.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/flame_view.h"
#include "vramscope/widgets/gap_table_model.h"
#include "vramscope/widgets/leak_panel.h"
#include "vramscope/widgets/units.h"

using namespace vramscope;
using panels_test::openAsJob;
using panels_test::replayLiveBytes;

namespace {

std::string realdata(const std::string& rel) {
    return std::string(VRAMSCOPE_REALDATA_DIR) + "/" + rel;
}

}  // namespace

TEST(PanelsRealData, OomSnapshotFlameAtTheOomEqualsTheReplayedLiveSet) {
    const std::string path = realdata("vramscope_h200/gpt_h200_oom.snapshot.pickle.gz");
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = openAsJob({path});
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::FlamePanel panel(&zoom);
    panel.setJob(job);
    ASSERT_TRUE(panel.showOom());
    const trace::TraceData& data = job->job.ranks[0].trace.data;
    ASSERT_FALSE(data.ooms.empty());
    const trace::OomEvent& oom = data.ooms.front();
    const int64_t toJob = job->ranks[0].toJobNs;
    EXPECT_EQ(panel.shownTimeNs(), oom.timestampNs + toJob);
    EXPECT_EQ(panel.gpu().device, oom.device);
    const int64_t replayed =
        replayLiveBytes(data, oom.device, trace::MemoryLevel::Allocated, oom.timestampNs);
    EXPECT_GT(replayed, 0);
    EXPECT_EQ(panel.view()->tree().root().bytes, replayed);
}

TEST(PanelsRealData, LeakSnapshotFlameFollowsTheCursorAndTheLeakPanelSaysStaircase) {
    const std::string path = realdata("vramscope_h200/gpt_h200_leak.snapshot.pickle.gz");
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = openAsJob({path});
    ASSERT_TRUE(job);
    ASSERT_FALSE(job->memory.empty());
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::FlamePanel panel(&zoom);
    panel.setJob(job);
    const analysis::GpuKey gpu = job->memory.front().key;
    const trace::TraceData& data = job->job.ranks[0].trace.data;
    const int64_t toJob = job->ranks[0].toJobNs;
    for (int k = 1; k <= 4; ++k) {
        const int64_t t = job->durationNs * k / 5;
        zoom.setCursor(t, gpu);
        panel.rebuildNow();
        EXPECT_EQ(panel.view()->tree().root().bytes,
                  replayLiveBytes(data, gpu.device, job->memory.front().level, t - toJob));
    }
    widgets::LeakPanel leak(&zoom);
    leak.setJob(job);
    EXPECT_EQ(leak.summaryModel()
                  ->index(0, widgets::LeakSummaryModel::VerdictColumn)
                  .data(widgets::LeakSummaryModel::RawValueRole)
                  .toInt(),
              int(analysis::LeakVerdict::Staircase));
}

TEST(PanelsRealData, DlrmJobHasOneLanePerRankAndACollectiveAcrossAllEight) {
    const std::string path =
        realdata("facebookresearch_param/et_replay/tests/inputs/dlrm_kineto.tar.gz");
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = openAsJob({path});
    ASSERT_TRUE(job);
    ASSERT_EQ(job->ranks.size(), 8u);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::CommLanesView lanes(&zoom);
    lanes.resize(1200, 600);
    lanes.setJob(job);
    ASSERT_EQ(lanes.lanes().size(), 8u);
    for (size_t i = 0; i < 8; ++i) {
        EXPECT_EQ(job->ranks[size_t(lanes.lanes()[i].key.rankIndex)].rank,
                  trace::RankId{int32_t(i)});
    }
    size_t eightWay = 0;
    for (const analysis::MatchedCollective& c : job->collectives().collectives) {
        eightWay += c.participants.size() == 8 ? 1 : 0;
    }
    EXPECT_GE(eightWay, 1u);
    widgets::GapsPanel gaps(&zoom);
    gaps.setJob(job);
    EXPECT_GT(gaps.model()->rowCount(), 0);
}

// The 2021 Kineto trace's [memory] events carry no Addr (the realdata README; counted in
// tests/unit/cli/claims_realdata_test.cpp): the flame panel says why it is empty.
TEST(PanelsRealData, FlamePanelSaysWhyAnOldKinetoTraceHasNoLiveSet) {
    const std::string path = realdata(
        "pytorch_kineto/tb_plugin/samples/resnet50_num_workers_0/"
        "worker0.1623143089861.pt.trace.json.gz");
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = openAsJob({path});
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::FlamePanel panel(&zoom);
    panel.setJob(job);
    EXPECT_NE(panel.view()->placeholder().indexOf(QStringLiteral("carry no address")), -1)
        << panel.view()->placeholder().toStdString();
    EXPECT_EQ(panel.view()->tree().root().bytes, 0);
}

// The HTA CPU-only trace has no kernel and no CUDA memory event (checked on the raw JSON in
// claims_realdata_test.cpp): the flame and gap panels show the one sentence.
TEST(PanelsRealData, PanelsSayNoGpuInACpuOnlyTrace) {
    const std::string path = realdata(
        "facebookresearch_HolisticTraceAnalysis/tests/data/cpu_only/"
        "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = openAsJob({path});
    ASSERT_TRUE(job);
    EXPECT_TRUE(widgets::hasNoGpu(*job));
    EXPECT_EQ(widgets::noGpuSentence(),
              QStringLiteral("No GPU in this trace: no GPU memory and no GPU kernels were "
                             "recorded."));
    widgets::ZoomState zoom;
    zoom.setFullRange({0, std::max<int64_t>(job->durationNs, 1)});
    widgets::FlamePanel panel(&zoom);
    panel.setJob(job);
    EXPECT_EQ(panel.view()->placeholder(), widgets::noGpuSentence());
}

// Different kernels ending or starting gaps read differently in the gap table (full names stay
// in the tooltip).
TEST(PanelsRealData, GapTableKeepsDifferentKernelNamesApart) {
    const std::string path = realdata(
        "facebookresearch_HolisticTraceAnalysis/tests/data/df_index_resolver/"
        "df_index_resolver.json.gz");
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = openAsJob({path});
    ASSERT_TRUE(job);
    const std::vector<widgets::GapRow> rows = widgets::gapRowsFrom(*job);
    ASSERT_FALSE(rows.empty());
    std::set<QString> full, shown;
    for (const widgets::GapRow& r : rows) {
        full.insert(r.kernelBefore);
        full.insert(r.kernelAfter);
        shown.insert(r.kernelBeforeShort);
        shown.insert(r.kernelAfterShort);
        EXPECT_LE(r.kernelAfterShort.size(), 60);
    }
    EXPECT_EQ(shown.size(), full.size());
}
