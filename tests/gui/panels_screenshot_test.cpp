// Renders the main window with each analysis view in front, on the real H200 snapshots and the
// 8-rank DLRM job, to PNG files for a person to look at (VRAMSCOPE_SCREENSHOT_DIR, default the
// working directory). Checks only that every view renders a non-empty picture.
#include <QApplication>
#include <QDir>
#include <QImage>
#include <QTabWidget>

#include <gtest/gtest.h>

#include <filesystem>

#include "analysis_views.h"
#include "job_loader.h"
#include "main_window.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "screenshot_test_support.h"
#include "vramscope/widgets/flame_panel.h"

using namespace vramscope;

namespace {

using screenshot_test::screenshotDir;
using screenshot_test::ScreenshotInput;

const ScreenshotInput kPanelInputs[] = {
    {"leak", realdata::kGptLeakSnapshot},
    {"oom", realdata::kGptOomSnapshot},
    {"dlrm", realdata::kDlrmJob},
};

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
            ASSERT_FALSE(image.isNull());
            const QString file =
                QStringLiteral("%1/%2_%3.png").arg(screenshotDir(), input.name, view);
            EXPECT_TRUE(image.save(file)) << file.toStdString();
        }
    }
}
