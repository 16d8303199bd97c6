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
#include "vramscope/widgets/flame_panel.h"

using namespace vramscope;

namespace {

struct Input {
    const char* name;
    const char* path;
};

const Input kInputs[] = {
    {"leak", "vramscope_h200/gpt_h200_leak.snapshot.pickle.gz"},
    {"oom", "vramscope_h200/gpt_h200_oom.snapshot.pickle.gz"},
    {"dlrm", "facebookresearch_param/et_replay/tests/inputs/dlrm_kineto.tar.gz"},
};

QString outDir() {
    const QString dir = qEnvironmentVariable("VRAMSCOPE_SCREENSHOT_DIR", QDir::currentPath());
    QDir().mkpath(dir);
    return dir;
}

}  // namespace

TEST(PanelsScreenshot, EveryViewRendersOnTheRealTraces) {
    for (const Input& input : kInputs) {
        const std::string path = std::string(VRAMSCOPE_REALDATA_DIR) + "/" + input.path;
        VRAMSCOPE_REQUIRE_INPUT(path);
        auto loaded = app::loadJob({path});
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
            const QString file = QStringLiteral("%1/%2_%3.png").arg(outDir(), input.name, view);
            EXPECT_TRUE(image.save(file)) << file.toStdString();
        }
    }
}
