// `vramscope --screenshot`: the headless picture, and the errors when inputs cannot be read.
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "realdata.h"
#include "realdata_paths.h"

namespace {

struct GuiRun {
    int exitCode = -1;
    QString stderrText;
};

GuiRun runGui(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));  // the program picks offscreen itself
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(VRAMSCOPE_GUI_PATH), args);
    EXPECT_TRUE(p.waitForFinished(120'000));
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromLocal8Bit(p.readAllStandardError())};
}

}  // namespace

TEST(Screenshot, WritesAPngOfTheRequestedSizeForTheBundledSample) {
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("sample.png"));
    const GuiRun run = runGui({QStringLiteral("--screenshot"), out, QStringLiteral("--size"),
                               QStringLiteral("1200x800")});
    EXPECT_EQ(run.exitCode, 0) << run.stderrText.toStdString();
    QImage image(out);
    ASSERT_FALSE(image.isNull());
    EXPECT_EQ(image.size(), QSize(1200, 800));
    // A rendered window has many colours; a blank one has one or two.
    std::set<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7) {
        for (int x = 0; x < image.width(); x += 7) {
            colours.insert(image.pixel(x, y));
        }
    }
    EXPECT_GT(colours.size(), 20u);
}

TEST(Screenshot, FailsNamingTheFileThatCannotBeRead) {
    QTemporaryDir dir;
    const QString missing = dir.filePath(QStringLiteral("no-such-trace.vscope"));
    const QString out = dir.filePath(QStringLiteral("x.png"));
    const GuiRun run = runGui({missing, QStringLiteral("--screenshot"), out});
    EXPECT_EQ(run.exitCode, 3);  // unreadable input, as the command line tool says it
    EXPECT_TRUE(run.stderrText.contains(QStringLiteral("no-such-trace.vscope")))
        << run.stderrText.toStdString();
    // The file is named once, not once by the app and again by the error.
    EXPECT_EQ(run.stderrText.count(QStringLiteral("no-such-trace.vscope")), 1)
        << run.stderrText.toStdString();
    EXPECT_FALSE(QFileInfo::exists(out));

    const QString garbage = dir.filePath(QStringLiteral("garbage.vscope"));
    {
        QFile f(garbage);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write("this is not a trace");
    }
    const GuiRun bad = runGui({garbage, QStringLiteral("--screenshot"), out});
    EXPECT_EQ(bad.exitCode, 3);
    EXPECT_TRUE(bad.stderrText.contains(QStringLiteral("garbage.vscope")))
        << bad.stderrText.toStdString();
}

TEST(Screenshot, RendersTheH200LeakSnapshot) {
    const std::string path = vramscope::realdata::kGptLeakSnapshot;
    VRAMSCOPE_REQUIRE_INPUT(path);
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("leak.png"));
    const GuiRun run = runGui({QString::fromStdString(path), QStringLiteral("--screenshot"), out});
    EXPECT_EQ(run.exitCode, 0) << run.stderrText.toStdString();
    const QImage image(out);
    ASSERT_EQ(image.size(), QSize(1600, 1000));  // --help's default size
    // Pixel evidence of the allocated curve: the snapshot's one GPU is drawn in the first GPU
    // hue (plot_style.cpp: 0x1f77b4, hue 205 degrees), filled below the curve; the leak's climb
    // fills a large part of the plot. Blue pixels elsewhere (the GPU's swatch, a selected row)
    // are a few hundred at most.
    int blue = 0;
    for (int y = 0; y < image.height(); y += 2) {
        for (int x = 0; x < image.width(); x += 2) {
            const QColor c = image.pixelColor(x, y);
            blue += c.hsvHue() >= 195 && c.hsvHue() <= 215 && c.hsvSaturation() >= 40 ? 1 : 0;
        }
    }
    EXPECT_GT(blue, 20'000) << "blue pixels (1 in 4 sampled): " << blue;
}

TEST(Screenshot, EachViewIsItsOwnPicture) {
    // With --view the picture is that view alone (view_renderer.h), so two views of the same
    // job give different pictures; an unknown view is a usage error naming it.
    QTemporaryDir dir;
    QImage images[2];
    const char* views[2] = {"timeline", "flame"};
    for (int i = 0; i < 2; ++i) {
        const QString out = dir.filePath(QStringLiteral("%1.png").arg(QLatin1String(views[i])));
        const GuiRun run =
            runGui({QStringLiteral("--screenshot"), out, QStringLiteral("--view"),
                    QLatin1String(views[i]), QStringLiteral("--size"), QStringLiteral("900x600")});
        ASSERT_EQ(run.exitCode, 0) << run.stderrText.toStdString();
        images[i] = QImage(out);
        ASSERT_EQ(images[i].size(), QSize(900, 600));
    }
    // The flame graph's rows differ from the plot's curves over most of the picture.
    int differing = 0;
    for (int y = 0; y < 600; y += 10) {
        for (int x = 0; x < 900; x += 10) {
            differing += images[0].pixel(x, y) != images[1].pixel(x, y) ? 1 : 0;
        }
    }
    EXPECT_GT(differing, 90 * 60 / 10);
    const GuiRun bad =
        runGui({QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("x.png")),
                QStringLiteral("--view"), QStringLiteral("heatmap")});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_TRUE(bad.stderrText.contains(QStringLiteral("heatmap"))) << bad.stderrText.toStdString();
}

TEST(CommandLine, HelpAndVersionNeedNoDisplay) {
    for (const char* option : {"--help", "--version"}) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // A platform that cannot start here: help must not need it.
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("xcb"));
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(VRAMSCOPE_GUI_PATH), {QString::fromLatin1(option)});
        ASSERT_TRUE(p.waitForFinished(60'000));
        EXPECT_EQ(p.exitStatus(), QProcess::NormalExit) << option;
        EXPECT_EQ(p.exitCode(), 0) << option;
        const QString out = QString::fromLocal8Bit(p.readAllStandardOutput());
        if (std::string(option) == "--help") {
            for (const char* view :
                 {"timeline", "flame", "lanes", "gaps", "leak", "advice", "oom"}) {
                EXPECT_TRUE(out.contains(QString::fromLatin1(view))) << view;
            }
            EXPECT_TRUE(out.contains(QStringLiteral("3 unreadable input"))) << out.toStdString();
        } else {
            EXPECT_TRUE(out.startsWith(QStringLiteral("vramscope "))) << out.toStdString();
        }
    }
}
