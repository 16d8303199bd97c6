// What the advice panel and the communication lanes say about the job as a whole: the ranks
// present of the world size, and who arrived last. Synthetic jobs (synthetic_job.h: the straggler
// starts every iteration 2 ms late) and the 2 sampled ranks of a 128-rank job in
// ../shared/realdata (world_size 128 in both files' distributedInfo).
#include <QImage>
#include <QLabel>

#include <gtest/gtest.h>

#include "panels_fixture.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/advice_panel.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope {
namespace {

analysis::SyntheticJobSpec stragglerSpec() {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 4;
    spec.iterations = 8;
    spec.stragglerRank = 2;
    return spec;
}

bool hasStragglerRow(const widgets::AdviceModel& model) {
    for (const analysis::Advice& a : model.advice()) {
        if (a.rule == "straggler") {
            return true;
        }
    }
    return false;
}

TEST(RanksPanels, AdvicePanelNamesTheStragglerOfAWholeJob) {
    auto job = panels_test::makeJob(analysis::generateSyntheticJob(stragglerSpec()));
    ASSERT_NE(job, nullptr);
    widgets::AdvicePanel panel;
    panel.setJob(job);
    const QString facts = panel.jobFactsLabel()->text();
    EXPECT_TRUE(facts.startsWith(QStringLiteral("Job: 4 of 4 ranks present.")))
        << facts.toStdString();
    EXPECT_TRUE(
        facts.contains(QStringLiteral("Straggler: rank 2, last in 8 of 8 collectives; the "
                                      "others wait 2.00 ms each per step")))
        << facts.toStdString();
    EXPECT_TRUE(hasStragglerRow(*panel.model()));
    // The cost box prices the waiting: 3 ranks x 8 iterations x 2 ms, at the panel's price.
    panel.setGpuHourPrice(4.0);
    EXPECT_TRUE(panel.costLabel()->text().contains(QStringLiteral("straggler (rank 2)")))
        << panel.costLabel()->text().toStdString();
}

TEST(RanksPanels, APartialJobSaysSoAndNamesNoStraggler) {
    const std::string dir = realdata::kSampledRanksDir;
    VRAMSCOPE_REQUIRE_INPUT(dir);
    auto job = panels_test::openAsJob({dir});
    ASSERT_NE(job, nullptr);
    widgets::AdvicePanel panel;
    panel.setJob(job);
    const QString facts = panel.jobFactsLabel()->text();
    EXPECT_TRUE(facts.startsWith(QStringLiteral("Job: 2 of 128 ranks present (partial")))
        << facts.toStdString();
    EXPECT_TRUE(facts.contains(QStringLiteral("Last of the ranks present: ")))
        << facts.toStdString();
    EXPECT_FALSE(facts.contains(QStringLiteral("Straggler:")));
    EXPECT_FALSE(hasStragglerRow(*panel.model()));
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::CommLanesView lanes(&zoom);
    lanes.resize(1200, 300);
    lanes.setJob(job);
    QImage image(lanes.size(), QImage::Format_ARGB32);
    lanes.render(&image);  // the legend with the coverage paints
}

}  // namespace
}  // namespace vramscope
