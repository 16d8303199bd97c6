// Renders the main window with each analysis view in front, on the real H200 snapshots and the
// 8-rank DLRM job, to PNG files for a person to look at (VRAMSCOPE_SCREENSHOT_DIR, default the
// working directory), and checks what each picture must show: the view's widget is on screen
// with pixels drawn in it, and its content fits the input as shared/realdata's README describes
// it (the snapshots: one H200, memory events with segments, no kernels, a leak that climbs; the
// DLRM job: eight ranks, one GPU each, old ncclKernel_ names, no live set).
#include <QApplication>
#include <QDir>
#include <QImage>
#include <QTabWidget>

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "analysis_views.h"
#include "job_loader.h"
#include "main_window.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "screenshot_test_support.h"
#include "vramscope/widgets/advice_panel.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/flame_view.h"
#include "vramscope/widgets/gap_table_model.h"
#include "vramscope/widgets/leak_panel.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/segment_panel.h"
#include "vramscope/widgets/segment_view.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/top_kernels_table.h"

using namespace vramscope;

namespace {

using screenshot_test::screenshotDir;
using screenshot_test::ScreenshotInput;

const ScreenshotInput kPanelInputs[] = {
    {"leak", realdata::kGptLeakSnapshot},
    {"oom", realdata::kGptOomSnapshot},
    {"dlrm", realdata::kDlrmJob},
};

/// Distinct colours in `rect` of `image`, sampled every 4 pixels: a drawn view has many, an
/// empty widget one or two.
size_t coloursIn(const QImage& image, QRect rect) {
    std::set<QRgb> colours;
    rect = rect.intersected(image.rect());
    for (int y = rect.top(); y <= rect.bottom(); y += 4) {
        for (int x = rect.left(); x <= rect.right(); x += 4) {
            colours.insert(image.pixel(x, y));
        }
    }
    return colours.size();
}

/// The widget that shows `view` (as MainWindow::showView names it).
QWidget* viewWidget(app::MainWindow& window, app::AnalysisViews& views, const std::string& view) {
    if (view == "timeline") {
        return window.findChild<widgets::TimelineView*>();
    }
    if (view == "flame" || view == "flame-role") {
        return views.flame();
    }
    if (view == "lanes") {
        return views.lanes();
    }
    if (view == "gaps") {
        return views.gaps();
    }
    if (view == "leak") {
        return views.leak();
    }
    if (view == "advice") {
        return views.advice();
    }
    if (view == "segments") {
        return views.segments();
    }
    if (view == "top-kernels") {
        return views.topKernels();
    }
    return nullptr;
}

/// What `view` must show for `input` (see the file comment for where each fact comes from).
void expectViewContent(app::MainWindow& window, app::AnalysisViews& views, const std::string& input,
                       const std::string& view) {
    const bool snapshot = input != "dlrm";
    const size_t gpus = snapshot ? 1 : 8;
    if (view == "timeline" || view == "flame-role") {
        auto* timeline = window.findChild<widgets::TimelineView*>();
        ASSERT_NE(timeline, nullptr);
        ASSERT_EQ(timeline->plots().size(), gpus);  // one plot per GPU, up to 8
        for (widgets::MemoryPlot* plot : timeline->plots()) {
            EXPECT_EQ(plot->allocatedGraph()->name(), QStringLiteral("allocated"));
            EXPECT_EQ(plot->reservedGraph()->name(), QStringLiteral("reserved"));
            // Stacked by role where there is allocated memory to stack (not in DLRM's trace).
            EXPECT_EQ(plot->stackedByRole(), view == "flame-role" && snapshot);
        }
        if (snapshot) {
            // The curves: many steps of allocated memory and of reserved segments.
            EXPECT_GT(timeline->plots()[0]->allocatedGraph()->data()->size(), 100);
            EXPECT_GT(timeline->plots()[0]->reservedGraph()->data()->size(), 2);
        }
    }
    if (view == "flame" || view == "flame-role") {
        widgets::FlamePanel* flame = views.flame();
        EXPECT_EQ(flame->grouping() == analysis::FlameGrouping::Role, view == "flame-role");
        if (snapshot) {
            EXPECT_GT(flame->view()->tree().root().bytes, 0) << flame->caption().toStdString();
            EXPECT_GT(flame->view()->tree().nodes.size(), 10u);
            EXPECT_EQ(flame->moment() == widgets::FlamePanel::Moment::Oom,
                      input == "oom" && view == "flame");  // Jump to OOM ran
        } else {
            // Its [memory] events name no address: no live set, and the panel says why.
            EXPECT_EQ(flame->view()->tree().root().bytes, 0);
            EXPECT_FALSE(flame->view()->placeholder().isEmpty());
        }
    } else if (view == "lanes") {
        // One lane per GPU with kernels: none in a memory snapshot, one per rank in DLRM.
        EXPECT_EQ(views.lanes()->lanes().size(), snapshot ? 0u : 8u);
    } else if (view == "gaps") {
        EXPECT_EQ(views.gaps()->model()->rowCount() > 0, !snapshot);
    } else if (view == "leak") {
        const widgets::LeakSummaryModel* leak = views.leak()->summaryModel();
        if (input == "leak") {
            ASSERT_EQ(leak->rowCount(), 1);
            EXPECT_EQ(leak->index(0, widgets::LeakSummaryModel::VerdictColumn)
                          .data(widgets::LeakSummaryModel::RawValueRole)
                          .toInt(),
                      int(analysis::LeakVerdict::Staircase));
        }
    } else if (view == "advice") {
        EXPECT_GT(views.advice()->model()->rowCount(), 0);
        EXPECT_FALSE(views.advice()->checksView()->toPlainText().isEmpty());
    } else if (view == "segments") {
        const widgets::SegmentView* segments = views.segments()->view();
        if (snapshot) {
            EXPECT_GT(segments->count(widgets::SegmentView::ItemKind::Segment), 0u);
            EXPECT_GT(segments->count(widgets::SegmentView::ItemKind::Block), 0u);
        } else {
            EXPECT_FALSE(segments->placeholder().isEmpty());
        }
    } else if (view == "top-kernels") {
        const widgets::TopKernelsModel* kernels = views.topKernels()->model();
        if (snapshot) {
            EXPECT_EQ(kernels->rowCount(), 0);
        } else {
            bool nccl = false;
            for (int row = 0; row < kernels->rowCount(); ++row) {
                nccl = nccl || kernels->index(row, widgets::TopKernelsModel::KernelColumn)
                                   .data()
                                   .toString()
                                   .contains(QStringLiteral("ncclKernel_"));
            }
            EXPECT_TRUE(nccl) << "no ncclKernel_ row among " << kernels->rowCount();
        }
    }
}

}  // namespace

TEST(PanelsScreenshot, EveryViewRendersOnTheRealTraces) {
    for (const ScreenshotInput& input : kPanelInputs) {
        const std::string& path = input.path;
        VRAMSCOPE_REQUIRE_INPUT(path);
        auto loaded = app::loadJobModel({path});
        ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
        for (const char* view : {"timeline", "flame", "flame-role", "lanes", "gaps", "leak",
                                 "advice", "segments", "top-kernels"}) {
            app::MainWindow window;
            auto* views = window.findChild<app::AnalysisViews*>();
            if (!views) {
                views = new app::AnalysisViews(&window);
            }
            window.setJob(loaded.value());
            // The roles' picture: the plot stacked by role above the flame view by role.
            window.stackByRoleAction()->setChecked(std::string(view) == "flame-role");
            ASSERT_TRUE(window.showView(QString::fromUtf8(view))) << view;
            if (std::string(input.name) == "oom" && std::string(view) == "flame") {
                views->jumpToOomAction()->trigger();
            }
            const QImage image = window.renderToImage(QSize(1600, 1000));
            ASSERT_EQ(image.size(), QSize(1600, 1000));
            SCOPED_TRACE(std::string(input.name) + " " + view);
            // The view is in the picture, and something is drawn where it sits.
            QWidget* shown = viewWidget(window, *views, view);
            ASSERT_NE(shown, nullptr);
            ASSERT_TRUE(shown->isVisibleTo(&window));
            const QRect at(shown->mapTo(&window, QPoint(0, 0)), shown->size());
            EXPECT_GT(at.width() * at.height(), 200 * 100);
            EXPECT_GT(coloursIn(image, at), 3u);
            expectViewContent(window, *views, input.name, view);
            const QString file =
                QStringLiteral("%1/%2_%3.png").arg(screenshotDir(), input.name, view);
            EXPECT_TRUE(image.save(file)) << file.toStdString();
        }
    }
}
