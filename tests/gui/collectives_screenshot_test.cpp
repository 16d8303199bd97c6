// Renders the main window with the Collectives dock in front, and the communication lanes with
// the hover of a collective drawn where the pointer is, on the 8-rank DLRM job and on the Kineto
// trace with NCCL message sizes, to PNG files for a person to look at (VRAMSCOPE_SCREENSHOT_DIR,
// default the working directory). Checks only what the pictures are made of: the table has the
// report's rows, and the hover has text.
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QScrollArea>
#include <QToolTip>

#include <gtest/gtest.h>

#include "analysis_views.h"
#include "job_loader.h"
#include "main_window.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "screenshot_test_support.h"
#include "vramscope/widgets/collectives_table.h"
#include "vramscope/widgets/comm_lanes_view.h"

using namespace vramscope;

namespace {

using screenshot_test::screenshotDir;
using screenshot_test::ScreenshotInput;

const ScreenshotInput kCollectiveInputs[] = {
    {"dlrm", realdata::kDlrmJob},
    {"nccl_data", realdata::kNcclTrace},
};

/// Where to point on the lanes: the longest occurrence of the report's first group, else the
/// first matched collective's second participant (job time, rank index, device).
struct Target {
    int64_t startNs = 0;
    int64_t endNs = 0;
    int rankIndex = -1;
    trace::DeviceIndex device{0};
};

std::optional<Target> hoverTarget(const analysis::JobModel& job) {
    const analysis::CollectiveBandwidthReport& bw = job.analysis.bandwidth;
    if (!bw.groups.empty() && bw.groups[0].longest < bw.occurrences.size()) {
        const analysis::CollectiveBandwidth& o = bw.occurrences[bw.groups[0].longest];
        const int64_t toJob = job.ranks[o.input].toJobNs;
        return Target{o.startNs + toJob, o.startNs + toJob + o.durationNs, int(o.input), o.device};
    }
    const std::vector<trace::RankId> ranks = [&] {
        std::vector<trace::RankId> r;
        for (const analysis::RankInfo& info : job.ranks) {
            r.push_back(info.rank);
        }
        return analysis::collectiveRanks(r);
    }();
    for (const analysis::MatchedCollective& c : job.collectives().collectives) {
        if (c.participants.size() < 2) {
            continue;
        }
        const analysis::CollectiveParticipant& p = c.participants[1];
        const auto it = std::find(ranks.begin(), ranks.end(), p.rank);
        if (it != ranks.end()) {
            return Target{p.startNs, p.endNs, int(it - ranks.begin()), p.device};
        }
    }
    return std::nullopt;
}

/// Draws `html` as a tooltip at `pos` (window coordinates) into `image`.
void paintTooltip(QImage& image, QPoint pos, const QString& html) {
    QLabel tip;
    tip.setTextFormat(Qt::RichText);
    tip.setText(html);
    tip.setPalette(QToolTip::palette());
    tip.setAutoFillBackground(true);
    tip.setFrameShape(QFrame::Box);
    tip.setMargin(6);
    tip.setFont(QToolTip::font());
    tip.setWordWrap(false);
    tip.resize(tip.sizeHint());
    QPoint at = pos + QPoint(16, 16);
    at.setX(std::min(at.x(), image.width() - tip.width() - 4));
    at.setY(std::min(at.y(), image.height() - tip.height() - 4));
    QPainter p(&image);
    tip.render(&p, at);
    p.setPen(QPen(Qt::black, 1));
    p.drawLine(pos - QPoint(6, 0), pos + QPoint(6, 0));
    p.drawLine(pos - QPoint(0, 6), pos + QPoint(0, 6));
}

}  // namespace

TEST(CollectivesScreenshot, TableAndLanesHoverRenderOnTheRealTraces) {
    for (const ScreenshotInput& input : kCollectiveInputs) {
        const std::string& path = input.path;
        VRAMSCOPE_REQUIRE_INPUT(path);
        auto loaded = app::loadJobModel({path});
        ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
        const auto job = loaded.value();
        {
            app::MainWindow window;
            window.setJob(job);
            ASSERT_TRUE(window.showView(QStringLiteral("collectives")));
            auto* views = window.findChild<app::AnalysisViews*>();
            ASSERT_NE(views, nullptr);
            EXPECT_EQ(views->collectives()->model()->rowCount(),
                      int(job->analysis.bandwidth.groups.size()));
            const QImage image = window.renderToImage(QSize(1600, 1000));
            ASSERT_FALSE(image.isNull());
            const QString file =
                QStringLiteral("%1/%2_collectives.png").arg(screenshotDir(), input.name);
            EXPECT_TRUE(image.save(file)) << file.toStdString();
        }
        const std::optional<Target> target = hoverTarget(*job);
        if (!target) {
            continue;  // nothing to hover: the collectives picture says why
        }
        app::MainWindow window;
        window.setJob(job);
        ASSERT_TRUE(window.showView(QStringLiteral("lanes")));
        window.renderToImage(QSize(1600, 1000));  // lays the window out at the picture's size
        const int64_t span = std::max<int64_t>(target->endNs - target->startNs, 1000);
        window.zoomState()->setVisibleRange({target->startNs - span / 2, target->endNs + span / 2});
        auto* views = window.findChild<app::AnalysisViews*>();
        widgets::CommLanesView* lanes = views->lanes();
        const auto lane = std::find_if(lanes->lanes().begin(), lanes->lanes().end(),
                                       [&](const widgets::CommLanesView::Lane& l) {
                                           return l.key.rankIndex == target->rankIndex &&
                                                  l.key.device == target->device;
                                       });
        ASSERT_NE(lane, lanes->lanes().end());
        const QPoint at(int(lanes->mapper().xAt((target->startNs + target->endNs) / 2)),
                        lane->top + lanes->rowHeight() + lanes->rowHeight() / 2);
        const QString html = lanes->describeAt(at);
        EXPECT_FALSE(html.isEmpty());
        QImage image = window.renderToImage(QSize(1600, 1000));
        paintTooltip(image, lanes->mapTo(&window, at), html);
        const QString file =
            QStringLiteral("%1/%2_lanes_hover.png").arg(screenshotDir(), input.name);
        EXPECT_TRUE(image.save(file)) << file.toStdString();
    }
}
