// vramscope: the desktop app. `vramscope [FILES or DIRS...]` opens them as one job (the bundled
// sample when none is given); `--screenshot out.png` renders the window offscreen and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QImage>
#include <QStandardPaths>
#include <QTimer>

#include <cstdio>
#include <cstring>

#include "job_loader.h"
#include "main_window.h"

namespace {

bool hasArgument(int argc, char** argv, const char* name) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], name) == 0 ||
            (std::strncmp(argv[i], name, std::strlen(name)) == 0 &&
             argv[i][std::strlen(name)] == '=')) {
            return true;
        }
    }
    return false;
}

void printError(const QString& message) {
    std::fprintf(stderr, "vramscope: %s\n", message.toLocal8Bit().constData());
}

/// Loads synchronously, renders the window at `size` and writes the PNG. Returns the exit code.
int renderScreenshot(const QStringList& inputs, const QString& out, QSize size, const QString& view,
                     const QString& theme) {
    std::vector<std::string> paths;
    for (const QString& p : inputs) {
        paths.push_back(p.toStdString());
    }
    auto loaded =
        paths.empty() ? vramscope::app::loadBundledSample() : vramscope::app::loadJob(paths);
    if (!loaded.ok()) {
        printError(QStringLiteral("cannot open %1: %2")
                       .arg(inputs.join(QStringLiteral(", ")),
                            QString::fromStdString(loaded.error().describe())));
        return 1;
    }
    const auto job = loaded.value();
    for (const std::string& problem : job->problems) {
        printError(QStringLiteral("warning: %1").arg(QString::fromStdString(problem)));
    }
    vramscope::app::MainWindow window;
    if (!theme.isEmpty()) {
        window.setTheme(theme);
    }
    window.setJob(job);
    if (!window.showView(view)) {
        printError(QStringLiteral("unknown view \"%1\"; known views: %2")
                       .arg(view, window.viewNames().join(QStringLiteral(", "))));
        return 2;
    }
    const QImage image = window.renderToImage(size);
    if (image.isNull() || !image.save(out, "PNG")) {
        printError(QStringLiteral("cannot write the screenshot to %1").arg(out));
        return 1;
    }
    return job->job.skipped.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const bool screenshot = hasArgument(argc, argv, "--screenshot");
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        !hasArgument(argc, argv, "-platform")) {
        // Headless rendering needs no display.
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("vramscope"));
    QApplication::setApplicationName(QStringLiteral("vramscope"));
    QApplication::setApplicationVersion(QStringLiteral(VRAMSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Shows where GPU memory goes in a training job. Several files, or a directory, open as "
        "one multi-rank job; with none, the bundled sample opens."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("inputs"),
                                 QStringLiteral(".vscope, PyTorch snapshot or Kineto JSON files, "
                                                "or directories of them"),
                                 QStringLiteral("[FILES or DIRS...]"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"),
        QStringLiteral("Render the window offscreen to PATH (PNG) and exit."),
        QStringLiteral("PATH"));
    const QCommandLineOption sizeOption(QStringLiteral("size"),
                                        QStringLiteral("Screenshot size, default 1600x1000."),
                                        QStringLiteral("WxH"), QStringLiteral("1600x1000"));
    const QCommandLineOption viewOption(QStringLiteral("view"),
                                        QStringLiteral("View to show, default timeline."),
                                        QStringLiteral("NAME"), QStringLiteral("timeline"));
    const QCommandLineOption themeOption(
        QStringLiteral("theme"), QStringLiteral("system, light or dark."), QStringLiteral("THEME"));
    parser.addOptions({screenshotOption, sizeOption, viewOption, themeOption});
    parser.process(app);

    const QString theme = parser.value(themeOption);
    if (!theme.isEmpty() && theme != QLatin1String("system") && theme != QLatin1String("light") &&
        theme != QLatin1String("dark")) {
        printError(QStringLiteral("unknown theme \"%1\" (system, light or dark)").arg(theme));
        return 2;
    }
    if (screenshot) {
        // Keep the user's settings (window layout, recent files) out of scripted pictures.
        QStandardPaths::setTestModeEnabled(true);
        const QStringList wh = parser.value(sizeOption).split(QLatin1Char('x'));
        const QSize size = wh.size() == 2 ? QSize(wh[0].toInt(), wh[1].toInt()) : QSize();
        if (size.width() < 200 || size.height() < 150 || size.width() > 10000 ||
            size.height() > 10000) {
            printError(QStringLiteral("--size wants WxH between 200x150 and 10000x10000, got %1")
                           .arg(parser.value(sizeOption)));
            return 2;
        }
        return renderScreenshot(parser.positionalArguments(), parser.value(screenshotOption), size,
                                parser.value(viewOption),
                                theme.isEmpty() ? QStringLiteral("light") : theme);
    }

    vramscope::app::MainWindow window;
    if (!theme.isEmpty()) {
        window.setTheme(theme);
    }
    window.show();
    const QStringList inputs = parser.positionalArguments();
    QTimer::singleShot(0, &window, [&window, inputs, &parser, &viewOption] {
        window.openPaths(inputs);
        window.showView(parser.value(viewOption));
    });
    return QApplication::exec();
}
