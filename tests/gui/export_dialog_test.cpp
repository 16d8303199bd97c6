// File > Export View and Edit > Copy Image in the main window: the dialog offers the current view,
// the docks and the whole window, titles the picture after the view, and writes a PNG of the
// size asked for; Copy Image puts the framed view on the clipboard.
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QImage>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include "export_dialog.h"
#include "job_loader.h"
#include "main_window.h"
#include "vramscope/analysis/model/view_formulas.h"
#include "vramscope/widgets/timeline_view.h"
#include "window_test_support.h"

using namespace vramscope;

namespace {

using window_test::settle;

/// The window on the bundled sample, shown at 1600x1000.
struct ShownSample {
    app::MainWindow window;
    ShownSample() {
        auto loaded = app::loadBundledSample();
        EXPECT_TRUE(loaded.ok());
        if (loaded.ok()) {
            window.setJob(loaded.value());
        }
        window.resize(1600, 1000);
        window.show();
        settle();
    }
};

QSize pageFor(app::MainWindow& window, const app::ExportTarget& t) {
    return app::pageSizeKeeping(*t.widget, app::exportFrameFor(window, t.name, t.widget, t.view));
}

}  // namespace

TEST(ExportDialog, OffersTheCurrentViewFirstAndTheWholeWindowLast) {
    ShownSample s;
    const std::vector<app::ExportTarget> targets = s.window.exportTargets();
    ASSERT_GE(targets.size(), 3u);
    EXPECT_EQ(targets.front().widget, s.window.timeline());
    EXPECT_EQ(targets.front().name, QStringLiteral("Memory timeline"));
    EXPECT_EQ(targets.back().widget, &s.window);
    // The analysis dock in front (the sample's flame view) comes before those behind it.
    int flame = -1;
    int gaps = -1;
    for (size_t i = 0; i < targets.size(); ++i) {
        flame = targets[i].name == QStringLiteral("Allocation flame view") ? int(i) : flame;
        gaps = targets[i].name == QStringLiteral("Idle gaps") ? int(i) : gaps;
    }
    ASSERT_TRUE(flame > 0 && gaps > 0);
    EXPECT_LT(flame, gaps);
    app::ExportDialog dialog(targets,
                             [&](const app::ExportTarget& t) { return pageFor(s.window, t); });
    EXPECT_EQ(dialog.title(), QStringLiteral("Memory timeline"));
    EXPECT_TRUE(dialog.path().endsWith(QStringLiteral("memory-timeline.png")))
        << dialog.path().toStdString();
    dialog.setFormat(widgets::ExportFormat::Pdf);
    EXPECT_TRUE(dialog.path().endsWith(QStringLiteral("memory-timeline.pdf")));
    dialog.setTargetIndex(int(targets.size()) - 1);
    EXPECT_EQ(dialog.title(), QStringLiteral("Whole window"));
}

TEST(ExportDialog, WritesAPngOfTheRequestedWidthAndScale) {
    ShownSample s;
    QTemporaryDir dir;
    const std::vector<app::ExportTarget> targets = s.window.exportTargets();
    app::ExportDialog dialog(targets,
                             [&](const app::ExportTarget& t) { return pageFor(s.window, t); });
    dialog.setPageSize(QSize(1200, 800));
    dialog.setPngWidth(900);
    dialog.setPath(dir.filePath(QStringLiteral("timeline.png")));
    const widgets::ExportOptions options = dialog.options();
    EXPECT_EQ(options.format, widgets::ExportFormat::Png);
    const QString error = widgets::exportView(
        *dialog.target().widget,
        app::exportFrameFor(s.window, dialog.title(), dialog.target().widget, dialog.target().view),
        options, dialog.path());
    ASSERT_TRUE(error.isEmpty()) << error.toStdString();
    const QImage png(dialog.path());
    // 900 px wide, the height in the page's proportion: 800 * 900 / 1200 = 600.
    EXPECT_EQ(png.width(), 900);
    EXPECT_NEAR(png.height(), 600, 1);

    dialog.setPngWidth(0);
    EXPECT_EQ(dialog.options().scale, 1.0);
    dialog.setPath(dir.filePath(QStringLiteral("timeline-1x.png")));
    ASSERT_TRUE(
        widgets::exportView(*dialog.target().widget,
                            app::exportFrameFor(s.window, dialog.title(), dialog.target().widget,
                                                dialog.target().view),
                            dialog.options(), dialog.path())
            .isEmpty());
    EXPECT_EQ(QImage(dialog.path()).size(), QSize(1200, 800));
    // The view went back to its place in the window.
    settle();
    EXPECT_EQ(s.window.timeline()->parentWidget()->size().width(), s.window.timeline()->width());
}

TEST(ExportDialog, CopyImagePutsTheFramedCurrentViewOnTheClipboard) {
    ShownSample s;
    QApplication::clipboard()->clear();
    auto* copy = s.window.findChild<QAction*>(QStringLiteral("CopyImageAction"));
    ASSERT_TRUE(copy);
    EXPECT_EQ(copy->shortcut(), QKeySequence(QStringLiteral("Ctrl+Shift+C")));
    copy->trigger();
    const QImage image = QApplication::clipboard()->image();
    ASSERT_FALSE(image.isNull()) << "the offscreen platform keeps a clipboard in the process";
    // The timeline at its size on screen, plus the frame's header and footer.
    const app::ExportTarget t = s.window.exportTargets().front();
    EXPECT_EQ(image.size(), pageFor(s.window, t) * s.window.devicePixelRatioF());
    EXPECT_GE(image.height(), s.window.timeline()->height());
}

TEST(ExportDialog, TheFrameCarriesTheFormulasOfTheViewShown) {
    ShownSample s;
    const app::ExportTarget t = s.window.exportTargets().front();
    ASSERT_EQ(t.view, QStringLiteral("timeline"));
    const widgets::ExportFrame frame = app::exportFrameFor(s.window, t.name, t.widget, t.view);
    const std::vector<std::string> expected = analysis::viewFormulas("timeline");
    ASSERT_FALSE(expected.empty());
    ASSERT_EQ(frame.formulas.size(), static_cast<qsizetype>(expected.size()));
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(frame.formulas[static_cast<qsizetype>(i)].toStdString(), expected[i]);
    }
    // The whole window: the timeline's and the lanes' formulas, each once.
    const widgets::ExportFrame whole =
        app::exportFrameFor(s.window, QStringLiteral("w"), &s.window);
    EXPECT_GE(whole.formulas.size(), frame.formulas.size());
    QStringList unique = whole.formulas;
    EXPECT_EQ(unique.removeDuplicates(), 0);
}
