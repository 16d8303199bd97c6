// The export composer (widgets/view_export.h): SVG and PDF keep text as text and plots as paths,
// PNG has the size asked for, and a path that cannot be written is named in the message.

#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include "gui/panels_fixture.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/view_export.h"

using namespace vramscope;
using namespace vramscope::widgets;

namespace {

/// A two-GPU job whose rank 0 leaks 64 MiB per iteration: memory plots with GiB/MiB labels.
std::shared_ptr<const analysis::JobModel> leakJob() {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 6;
    spec.leakBytesPerIteration = 64ull << 20;
    spec.leakRank = 0;
    return panels_test::makeJob(analysis::generateSyntheticJob(spec));
}

ExportFrame testFrame() {
    ExportFrame frame;
    frame.title = QStringLiteral("Memory timeline");
    frame.traceName = QStringLiteral("leaky-job.vscope");
    frame.timeRange = QStringLiteral("0 ms - 120 ms");
    frame.legend = {QStringLiteral("reserved"), QStringLiteral("allocated")};
    trace::Note a;
    a.id = "n1";
    a.title = "Staircase starts here";
    a.text = "Every step keeps 64 MiB.";
    a.startNs = 1'000'000;
    trace::Note b;
    b.id = "n2";
    b.title = "Second iteration";
    b.startNs = 2'000'000;
    b.endNs = 3'000'000;
    b.rankIndex = 0;
    b.device = 0;
    frame.notes = {a, b};
    frame.formulas = {QStringLiteral("allocated = sum of live allocation sizes")};
    frame.version = QStringLiteral("vramscope 9.9.9");
    return frame;
}

/// A timeline view of leakJob() following its own zoom state.
struct TimelineFixture {
    ZoomState zoom;
    TimelineView view{&zoom};
    TimelineFixture() {
        auto job = leakJob();
        zoom.setFullRange({0, job->durationNs});
        view.setJob(job);
    }
};

QString readAll(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

/// The text of every <text> element of an SVG, joined by newlines (tspans included).
QString svgTexts(const QString& svg) {
    QStringList texts;
    static const QRegularExpression element(QStringLiteral("<text[^>]*>(.*?)</text>"),
                                            QRegularExpression::DotMatchesEverythingOption);
    static const QRegularExpression tag(QStringLiteral("<[^>]*>"));
    for (auto it = element.globalMatch(svg); it.hasNext();) {
        QString inner = it.next().captured(1);
        texts << inner.remove(tag).trimmed();
    }
    return texts.join(QLatin1Char('\n'));
}

QString pdfText(const QString& path) {
    QProcess p;
    p.start(QStringLiteral("pdftotext"), {QStringLiteral("-layout"), path, QStringLiteral("-")});
    if (!p.waitForFinished(60000))
        return {};
    return QString::fromUtf8(p.readAllStandardOutput());
}

bool havePdftotext() {
    return !QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty();
}

}  // namespace

TEST(ViewExport, FormatComesFromTheSuffix) {
    EXPECT_EQ(exportFormatFor(QStringLiteral("a/b.PNG")), ExportFormat::Png);
    EXPECT_EQ(exportFormatFor(QStringLiteral("b.svg")), ExportFormat::Svg);
    EXPECT_EQ(exportFormatFor(QStringLiteral("x.y.Pdf")), ExportFormat::Pdf);
    EXPECT_FALSE(exportFormatFor(QStringLiteral("b.jpg")).has_value());
    EXPECT_FALSE(exportFormatFor(QStringLiteral("pdf")).has_value());
}

TEST(ViewExport, SvgKeepsTextAsTextAndPlotsAsPaths) {
    TimelineFixture f;
    QTemporaryDir dir;
    if (qEnvironmentVariableIsSet("EXPORT_TEST_KEEP"))
        dir.setAutoRemove(false);
    const QString path = dir.filePath(QStringLiteral("timeline.svg"));
    ExportOptions options;
    options.format = ExportFormat::Svg;
    options.size = QSize(1200, 800);
    ASSERT_EQ(exportView(f.view, testFrame(), options, path), QString());
    const QString svg = readAll(path);
    const QString texts = svgTexts(svg);
    EXPECT_TRUE(texts.contains(QStringLiteral("Memory timeline")));
    EXPECT_TRUE(texts.contains(QStringLiteral("leaky-job.vscope")));
    EXPECT_TRUE(texts.contains(QStringLiteral("Staircase starts here")));
    EXPECT_TRUE(texts.contains(QStringLiteral("Second iteration")));
    EXPECT_TRUE(texts.contains(QStringLiteral("vramscope 9.9.9")));
    EXPECT_TRUE(texts.contains(QStringLiteral("sum of live allocation sizes")));
    // Axis tick labels of the memory plots (BytesTicker) and the time axis (TimeTicker).
    EXPECT_TRUE(texts.contains(QRegularExpression(QStringLiteral("\\d (MiB|GiB)"))));
    EXPECT_TRUE(texts.contains(QRegularExpression(QStringLiteral("\\d (ms|us|s)\\b"))));
    // The plot is drawn, not pasted: many paths (curves, grid, axes), no bitmap of a plot.
    const qsizetype shapes = svg.count(QStringLiteral("<path")) +
                             svg.count(QStringLiteral("<polyline")) +
                             svg.count(QStringLiteral("<polygon"));
    EXPECT_GT(shapes, 20);
    EXPECT_EQ(svg.count(QStringLiteral("<image")), 0);
}

TEST(ViewExport, PdfKeepsTextAsText) {
    if (!havePdftotext())
        GTEST_SKIP() << "pdftotext (poppler-utils) not installed";
    TimelineFixture f;
    QTemporaryDir dir;
    if (qEnvironmentVariableIsSet("EXPORT_TEST_KEEP"))
        dir.setAutoRemove(false);
    const QString path = dir.filePath(QStringLiteral("timeline.pdf"));
    ExportOptions options;
    options.format = ExportFormat::Pdf;
    options.size = QSize(1200, 800);
    ASSERT_EQ(exportView(f.view, testFrame(), options, path), QString());
    const QString text = pdfText(path);
    EXPECT_TRUE(text.contains(QStringLiteral("Memory timeline"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("leaky-job.vscope")));
    EXPECT_TRUE(text.contains(QStringLiteral("Staircase starts here")));
    EXPECT_TRUE(text.contains(QStringLiteral("vramscope 9.9.9")));
    EXPECT_TRUE(text.contains(QRegularExpression(QStringLiteral("\\d (MiB|GiB)"))));
    EXPECT_TRUE(text.contains(QRegularExpression(QStringLiteral("\\d (ms|us|s)\\b"))));
    // One page of the picture's size: 1200 x 800 px at 96 dpi = 900 x 600 pt.
    const QString pdf = readAll(path);
    static const QRegularExpression page(QStringLiteral("/Type\\s*/Page[^s]"));
    EXPECT_EQ(pdf.count(page), 1);
}

TEST(ViewExport, PngHasTheSizeTimesTheScaleOrTheExactWidth) {
    TimelineFixture f;
    QTemporaryDir dir;
    if (qEnvironmentVariableIsSet("EXPORT_TEST_KEEP"))
        dir.setAutoRemove(false);
    ExportOptions options;
    options.format = ExportFormat::Png;
    options.size = QSize(900, 600);
    const QString one = dir.filePath(QStringLiteral("one.png"));
    ASSERT_EQ(exportView(f.view, testFrame(), options, one), QString());
    EXPECT_EQ(QImage(one).size(), QSize(900, 600));
    options.scale = 2.0;
    const QString two = dir.filePath(QStringLiteral("two.png"));
    ASSERT_EQ(exportView(f.view, testFrame(), options, two), QString());
    EXPECT_EQ(QImage(two).size(), QSize(1800, 1200));
    options.scale = 1.0;
    options.widthPx = 1350;  // 1.5 x 900: height 900 in proportion
    const QString wide = dir.filePath(QStringLiteral("wide.png"));
    ASSERT_EQ(exportView(f.view, testFrame(), options, wide), QString());
    EXPECT_EQ(QImage(wide).size(), QSize(1350, 900));
    EXPECT_EQ(exportImage(f.view, testFrame(), QSize(800, 500), 2.0).size(), QSize(1600, 1000));
}

TEST(ViewExport, AnUnwritablePathIsNamed) {
    TimelineFixture f;
    QTemporaryDir dir;
    if (qEnvironmentVariableIsSet("EXPORT_TEST_KEEP"))
        dir.setAutoRemove(false);
    const QString path = dir.filePath(QStringLiteral("no/such/dir/out.svg"));
    ExportOptions options;
    options.format = ExportFormat::Svg;
    const QString error = exportView(f.view, testFrame(), options, path);
    EXPECT_TRUE(error.contains(path)) << error.toStdString();
    EXPECT_FALSE(QFile::exists(path));
    options.format = ExportFormat::Png;
    options.size = QSize(50, 50);
    EXPECT_TRUE(exportView(f.view, testFrame(), options, dir.filePath(QStringLiteral("a.png")))
                    .contains(QStringLiteral("50x50")));
}

TEST(ViewExport, PdfDocumentWritesOnePagePerCall) {
    TimelineFixture f;
    QTemporaryDir dir;
    if (qEnvironmentVariableIsSet("EXPORT_TEST_KEEP"))
        dir.setAutoRemove(false);
    const QString path = dir.filePath(QStringLiteral("book.pdf"));
    ExportPdfDocument pdf(path, QSize(1000, 700), QStringLiteral("review"));
    ASSERT_EQ(pdf.begin(), QString());
    ExportFrame summary;
    summary.title = QStringLiteral("Summary");
    pdf.paintTextPage(summary, {QStringLiteral("peak 1.00 GiB"), QStringLiteral("idle 3 ms")});
    pdf.paintViewPage(f.view, testFrame());
    pdf.paintViewPage(f.view, testFrame());
    EXPECT_EQ(pdf.pageCount(), 3);
    ASSERT_EQ(pdf.finish(), QString());
    static const QRegularExpression page(QStringLiteral("/Type\\s*/Page[^s]"));
    EXPECT_EQ(readAll(path).count(page), 3);
    if (havePdftotext()) {
        EXPECT_TRUE(pdfText(path).contains(QStringLiteral("peak 1.00 GiB")));
    }
}

TEST(ViewExport, AVeryLongNoteTitleIsCutSoItStaysOnThePage) {
    TimelineFixture f;
    QTemporaryDir dir;
    ExportFrame frame = testFrame();
    frame.notes.front().title = std::string(100'000, 'x');  // one word: it cannot wrap
    const QString path = dir.filePath(QStringLiteral("long.svg"));
    ExportOptions options;
    options.format = ExportFormat::Svg;
    options.size = QSize(1200, 800);
    ASSERT_EQ(exportView(f.view, frame, options, path), QString());
    const QString texts = svgTexts(readAll(path));
    // The list shows at most 120 characters of it, the last an ellipsis.
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("(x+)\u2026")).match(texts);
    ASSERT_TRUE(m.hasMatch());
    EXPECT_LE(m.captured(1).size(), 119);
    EXPECT_FALSE(texts.contains(QString(200, QLatin1Char('x'))));
}
