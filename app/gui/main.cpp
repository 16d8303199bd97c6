// vramscope: the desktop app. `vramscope [FILES or DIRS...]` opens them as one job (the bundled
// sample when none is given); `--screenshot out.png` renders the window offscreen and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QEventLoop>
#include <QIcon>
#include <QImage>
#include <QStandardPaths>
#include <QTimer>

#include <cstdio>
#include <cstring>

#include "job_loader.h"
#include "main_window.h"
#include "notes_controller.h"
#include "summary_controller.h"
#include "summary_open.h"
#include "vramscope/trace/input_bytes.h"
#include "vramscope/trace/job_index.h"
#include "vramscope/widgets/notes_model.h"
#include "vramscope/widgets/view_export.h"
#include "vramscope/widgets/view_renderer.h"

namespace {

/// Exit codes, as the command line tool uses them: 0 ok, 2 usage, 3 unreadable input or
/// unwritable output.
constexpr int kExitUsage = 2;
constexpr int kExitUnreadable = 3;

/// The names --view accepts (widgets::renderableViews(); MainWindow registers the same names,
/// roles aside: there it is View > Stack Allocated Memory by Role).
const char* const kViewNames =
    "timeline, roles, lanes, flame, gaps, leak, advice, segments, flame-role, oom";

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
                     const QString& theme, bool stackByRole) {
    std::vector<std::string> paths;
    for (const QString& p : inputs) {
        paths.push_back(p.toStdString());
    }
    // A job index is pictured as it opens: every rank from its summary, worst first.
    const bool index = paths.size() == 1 && paths[0].ends_with(vramscope::trace::kJobIndexSuffix);
    auto loaded = paths.empty() ? vramscope::app::loadBundledSample()
                  : index       ? vramscope::app::loadIndexOverview(paths[0])
                                : vramscope::app::loadJobModel(paths);
    if (!loaded.ok()) {
        // The error names the file already.
        printError(QStringLiteral("cannot open: %1")
                       .arg(QString::fromStdString(loaded.error().describe())));
        return kExitUnreadable;
    }
    const auto job = loaded.value();
    for (const std::string& problem : job->problems) {
        printError(QStringLiteral("warning: %1").arg(QString::fromStdString(problem)));
    }
    vramscope::app::MainWindow window;
    if (!theme.isEmpty()) {
        window.setTheme(theme);
    }
    auto* summaries = window.findChild<vramscope::app::SummaryController*>();
    if (index && summaries) {
        // Opened as File > Open opens it, so that the banner says what an index shows.
        QEventLoop loop;
        bool shown = false;
        QObject::connect(summaries, &vramscope::app::SummaryController::shownChanged, &loop, [&] {
            shown = true;
            loop.quit();
        });
        QTimer::singleShot(120000, &loop, &QEventLoop::quit);
        if (summaries->open(inputs) && !shown) {
            loop.exec();
        }
    } else {
        window.setJob(job, inputs);  // with its inputs: the notes beside them are drawn too
    }
    auto* notes = window.findChild<vramscope::app::NotesController*>();
    if (notes) {
        notes->waitForSidecar();
    }
    QImage image;
    if (view.isEmpty()) {
        window.stackByRoleAction()->setChecked(stackByRole);
        image = window.renderToImage(size);
    } else {
        // The view alone, framed as File > Export View frames it: each view its own picture.
        vramscope::widgets::ViewRequest request;
        request.view =
            stackByRole && view == QLatin1String("timeline") ? QStringLiteral("roles") : view;
        if (notes) {
            request.notes = notes->model()->notes();
        }
        vramscope::widgets::BuiltView built = vramscope::widgets::buildView(job, request, size);
        if (!built.view) {
            printError(built.error);
            return kExitUsage;
        }
        image = vramscope::widgets::exportImage(built.view->widget(), built.view->frame(), size);
    }
    if (image.isNull() || !image.save(out, "PNG")) {
        printError(QStringLiteral("cannot write the screenshot to %1").arg(out));
        return kExitUnreadable;
    }
    return job->job.skipped.empty() ? 0 : kExitUnreadable;
}

/// The app's options; built before or after the QApplication (help and version need none).
struct CommandLine {
    QCommandLineParser parser;
    QCommandLineOption screenshotOption{
        QStringLiteral("screenshot"),
        QStringLiteral("Render the window offscreen to PATH (PNG) and exit."),
        QStringLiteral("PATH")};
    QCommandLineOption sizeOption{QStringLiteral("size"),
                                  QStringLiteral("Screenshot size, default 1600x1000."),
                                  QStringLiteral("WxH"), QStringLiteral("1600x1000")};
    QCommandLineOption viewOption{
        QStringLiteral("view"),
        QStringLiteral("View to show: %1. Default: timeline, or lanes for a job with kernels "
                       "and no memory data. With --screenshot, the picture is that view alone, "
                       "framed with its title, the trace, the time range and the formulas.")
            .arg(QLatin1String(kViewNames)),
        QStringLiteral("NAME")};
    QCommandLineOption themeOption{
        QStringLiteral("theme"), QStringLiteral("system, light or dark."), QStringLiteral("THEME")};
    QCommandLineOption stackByRoleOption{
        QStringLiteral("stack-by-role"),
        QStringLiteral("Stack the allocated memory by role (View > Stack Allocated Memory by "
                       "Role).")};

    CommandLine() {
        parser.setApplicationDescription(QStringLiteral(
            "Shows where GPU memory goes in a training job. Several files, or a directory, open "
            "as one multi-rank job; with none, the bundled sample opens.\n"
            "Exit codes: 0 success, 2 usage error, 3 unreadable input or unwritable output "
            "(--screenshot).\n"
            "Environment: VRAMSCOPE_MAX_INPUT_GIB=N refuses an input larger than N GiB once "
            "decompressed (default 16)."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(
            QStringLiteral("inputs"),
            QStringLiteral(
                ".vscope, PyTorch snapshot, Kineto JSON or Nsight Systems .sqlite files, "
                "directories or .tar(.gz) archives of them, or - for standard input"),
            QStringLiteral("[FILES or DIRS...]"));
        parser.addOptions(
            {screenshotOption, sizeOption, viewOption, themeOption, stackByRoleOption});
    }
};

}  // namespace

int main(int argc, char** argv) {
    const bool screenshot = hasArgument(argc, argv, "--screenshot");
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        !hasArgument(argc, argv, "-platform")) {
        // Headless rendering needs no display.
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    if (hasArgument(argc, argv, "--help") || hasArgument(argc, argv, "-h") ||
        hasArgument(argc, argv, "--help-all") || hasArgument(argc, argv, "--version") ||
        hasArgument(argc, argv, "-v")) {
        // Help and version need no display: answer them without the GUI platform.
        QCoreApplication core(argc, argv);
        QCoreApplication::setApplicationName(QStringLiteral("vramscope"));
        QCoreApplication::setApplicationVersion(QStringLiteral(VRAMSCOPE_VERSION));
        CommandLine cli;
        cli.parser.process(core);  // prints and exits
        return 0;
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("vramscope"));
    QApplication::setApplicationName(QStringLiteral("vramscope"));
    QApplication::setApplicationVersion(QStringLiteral(VRAMSCOPE_VERSION));
    // The installed desktop entry and icon (packaging/linux) carry the application id; Wayland
    // compositors match windows to the entry by it.
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.vramscope"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("io.github.vramscope")));

    CommandLine cli;
    QCommandLineParser& parser = cli.parser;
    const QCommandLineOption& screenshotOption = cli.screenshotOption;
    const QCommandLineOption& sizeOption = cli.sizeOption;
    const QCommandLineOption& viewOption = cli.viewOption;
    const QCommandLineOption& themeOption = cli.themeOption;
    // parse() rather than process(): Qt's process() exits with 1 on an unknown option, and a
    // usage error is 2 here as in vramscope-cli (docs/man/vramscope.1, EXIT STATUS).
    if (!parser.parse(QApplication::arguments())) {
        printError(parser.errorText());
        return kExitUsage;
    }
    const bool stackByRole = parser.isSet(cli.stackByRoleOption);
    // A limit that is set but no number is a usage error before anything is opened (the loader
    // reads the same setting: job_loader.cpp).
    if (const auto limit = vramscope::trace::maxInputBytesSetting(); !limit) {
        printError(QString::fromStdString(limit.error().describe()));
        return kExitUsage;
    }

    const QString theme = parser.value(themeOption);
    if (!theme.isEmpty() && theme != QLatin1String("system") && theme != QLatin1String("light") &&
        theme != QLatin1String("dark")) {
        printError(QStringLiteral("unknown theme \"%1\" (system, light or dark)").arg(theme));
        return kExitUsage;
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
            return kExitUsage;
        }
        return renderScreenshot(parser.positionalArguments(), parser.value(screenshotOption), size,
                                parser.value(viewOption),
                                theme.isEmpty() ? QStringLiteral("light") : theme, stackByRole);
    }

    vramscope::app::MainWindow window;
    if (!theme.isEmpty()) {
        window.setTheme(theme);
    }
    window.stackByRoleAction()->setChecked(stackByRole);
    window.show();
    const QStringList inputs = parser.positionalArguments();
    QTimer::singleShot(0, &window, [&window, inputs, &parser, &viewOption] {
        window.openPaths(inputs);
        if (parser.isSet(viewOption)) {
            const QString view = parser.value(viewOption);
            if (view == QLatin1String("roles")) {
                window.stackByRoleAction()->setChecked(true);  // the timeline stacked by role
            }
            window.showView(view == QLatin1String("roles") ? QStringLiteral("timeline") : view);
        }
    });
    return QApplication::exec();
}
