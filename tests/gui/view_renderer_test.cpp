// Views built on their own (widgets/view_renderer.h): every name builds the view it names with
// its own zoom state, the range and GPU asked for, the notes that fall inside, and a frame whose
// formulas come from analysis/view_formulas.h; bad requests are refused with a sentence.

#include <QFile>
#include <QImage>
#include <QLabel>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include "gui/panels_fixture.h"
#include "vramscope/analysis/model/view_formulas.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/view_renderer.h"

using namespace vramscope;
using namespace vramscope::widgets;

namespace {

/// Two ranks with kernels, collectives and allocation events (synthetic_job.h): every view has
/// data.
std::shared_ptr<const analysis::JobModel> syntheticJob(uint64_t capacityBytes = 80ull << 30) {
    analysis::SyntheticJobSpec spec;
    spec.capacityBytes = capacityBytes;
    spec.ranks = 2;
    spec.iterations = 6;
    spec.leakBytesPerIteration = 32ull << 20;
    spec.leakRank = 1;
    return panels_test::makeJob(analysis::generateSyntheticJob(spec));
}

trace::Note pointNote(const char* title, int64_t t, int rank = -1, int device = -1) {
    trace::Note n;
    n.id = title;
    n.title = title;
    n.startNs = n.endNs = t;
    n.rankIndex = rank;
    n.device = device;
    return n;
}

}  // namespace

TEST(ViewRenderer, EveryNameBuildsItsViewWithItsTitleAndFormulas) {
    const auto job = syntheticJob();
    ASSERT_TRUE(job);
    for (const QString& name : renderableViews()) {
        ViewRequest request;
        request.view = name;
        BuiltView built = buildView(job, request, QSize(1400, 900));
        if (name == QLatin1String("oom")) {
            // The synthetic job never runs out of memory: the view is refused, not faked.
            EXPECT_FALSE(built.view);
            EXPECT_TRUE(built.error.contains(QStringLiteral("no out-of-memory event")))
                << built.error.toStdString();
            continue;
        }
        ASSERT_TRUE(built.view) << name.toStdString() << ": " << built.error.toStdString();
        const ExportFrame& frame = built.view->frame();
        const std::string base = name == QLatin1String("flame-role") || name == QLatin1String("oom")
                                     ? "flame"
                                     : name.toStdString();
        EXPECT_TRUE(frame.title.startsWith(QString::fromStdString(analysis::viewTitle(base))))
            << frame.title.toStdString();
        EXPECT_EQ(frame.formulas.size(), qsizetype(analysis::viewFormulas(base).size()));
        EXPECT_FALSE(frame.formulas.isEmpty()) << name.toStdString();
        EXPECT_EQ(frame.traceName, QString::fromStdString(job->title));
        EXPECT_TRUE(frame.version.startsWith(QStringLiteral("vramscope ")));
    }
}

TEST(ViewRenderer, TimelineAndRolesDifferOnlyInTheStacking) {
    const auto job = syntheticJob();
    ViewRequest request;
    request.view = QStringLiteral("timeline");
    BuiltView timeline = buildView(job, request, QSize(1400, 900));
    request.view = QStringLiteral("roles");
    BuiltView roles = buildView(job, request, QSize(1400, 900));
    auto* t = qobject_cast<TimelineView*>(&timeline.view->widget());
    auto* r = qobject_cast<TimelineView*>(&roles.view->widget());
    ASSERT_TRUE(t && r);
    EXPECT_FALSE(t->stackByRole());
    EXPECT_TRUE(r->stackByRole());
    request.view = QStringLiteral("flame");
    EXPECT_TRUE(
        qobject_cast<FlamePanel*>(&buildView(job, request, QSize(1400, 900)).view->widget()));
    request.view = QStringLiteral("lanes");
    EXPECT_TRUE(
        qobject_cast<CommLanesView*>(&buildView(job, request, QSize(1400, 900)).view->widget()));
}

TEST(ViewRenderer, RangeGpuAndNotesAreTheOnesAsked) {
    const auto job = syntheticJob();
    const int64_t d = job->durationNs;
    ViewRequest request;
    request.view = QStringLiteral("timeline");
    request.range = TimeRange{d / 4, d / 2};
    request.gpu = job->gpus.back().key;
    request.notes = {pointNote("inside", d / 3), pointNote("before", d / 8),
                     pointNote("other GPU", d / 3, job->gpus.front().key.rankIndex,
                               int(job->gpus.front().key.device)),
                     pointNote("this GPU", d / 3, request.gpu.rankIndex, int(request.gpu.device))};
    BuiltView built = buildView(job, request, QSize(1400, 900));
    ASSERT_TRUE(built.view) << built.error.toStdString();
    EXPECT_EQ(built.view->zoom().visibleRange(), (TimeRange{d / 4, d / 2}));
    auto* t = qobject_cast<TimelineView*>(&built.view->widget());
    ASSERT_TRUE(t);
    ASSERT_EQ(t->shownGpus().size(), 1u);
    EXPECT_EQ(t->shownGpus().front(), request.gpu);
    ASSERT_EQ(built.view->frame().notes.size(), 2u);
    EXPECT_EQ(built.view->frame().notes[0].title, "inside");
    EXPECT_EQ(built.view->frame().notes[1].title, "this GPU");
    EXPECT_EQ(t->notes(), built.view->frame().notes);  // the markers and the list agree
}

TEST(ViewRenderer, BadRequestsAreRefusedWithWhatIsWrong) {
    const auto job = syntheticJob();
    ViewRequest request;
    request.view = QStringLiteral("heatmap");
    BuiltView built = buildView(job, request, QSize(1400, 900));
    EXPECT_FALSE(built.view);
    EXPECT_TRUE(built.error.contains(QStringLiteral("\"heatmap\"")));
    EXPECT_TRUE(built.error.contains(QStringLiteral("timeline")));

    request.view = QStringLiteral("timeline");
    request.gpu = analysis::GpuKey{7, trace::DeviceIndex{3}};
    built = buildView(job, request, QSize(1400, 900));
    EXPECT_FALSE(built.view);
    EXPECT_TRUE(built.error.contains(QStringLiteral("7:3"))) << built.error.toStdString();
    EXPECT_TRUE(built.error.contains(QStringLiteral("0:0")));

    request.gpu = {};
    request.range = TimeRange{job->durationNs + 10, job->durationNs + 20};
    built = buildView(job, request, QSize(1400, 900));
    EXPECT_FALSE(built.view);
    EXPECT_TRUE(built.error.contains(QStringLiteral("outside the job")));
}

TEST(ViewRenderer, LanesExportAsVectorWithTheTraceName) {
    const auto job = syntheticJob();
    ViewRequest request;
    request.view = QStringLiteral("lanes");
    request.traceName = QStringLiteral("two-rank-job");
    BuiltView built = buildView(job, request, QSize(1400, 900));
    ASSERT_TRUE(built.view);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("lanes.svg"));
    ExportOptions options;
    options.format = ExportFormat::Svg;
    options.size = QSize(1400, 900);
    ASSERT_EQ(exportView(built.view->widget(), built.view->frame(), options, path), QString());
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QString svg = QString::fromUtf8(file.readAll());
    EXPECT_TRUE(svg.contains(QStringLiteral(">two-rank-job")));
    EXPECT_TRUE(svg.contains(QStringLiteral("Communication lanes")));
    EXPECT_EQ(svg.count(QStringLiteral("<image")), 0);
}

TEST(ViewRenderer, FlameCaptionTakesTheHeightOfItsTextAtTheExportedWidth) {
    // The panel is built narrow (its default size) and widened for the page: the caption's
    // minimum height must follow, not stay at what a narrow width needed.
    const auto job = syntheticJob();
    ViewRequest request;
    request.view = QStringLiteral("flame");
    BuiltView built = buildView(job, request, QSize(1400, 900));
    ASSERT_TRUE(built.view);
    ASSERT_FALSE(exportImage(built.view->widget(), built.view->frame(), QSize(1400, 900)).isNull());
    QLabel* caption = nullptr;
    for (QLabel* l : built.view->widget().findChildren<QLabel*>()) {
        if (l->text().startsWith(QStringLiteral("Live set of")))
            caption = l;
    }
    ASSERT_TRUE(caption);
    // About 200 characters fit in two lines of a 1300 px wide label.
    ASSERT_GT(caption->width(), 1000);
    EXPECT_LE(caption->height(), 2 * caption->fontMetrics().lineSpacing() + 4) << caption->height();
}

TEST(ViewRenderer, TheTimelineLegendExplainsOnlyTheCapacityLinesThatAreDrawn) {
    for (const uint64_t capacity : {80ull << 30, 0ull}) {
        ViewRequest request;
        request.view = QStringLiteral("timeline");
        BuiltView built = buildView(syntheticJob(capacity), request, QSize(1200, 800));
        ASSERT_TRUE(built.view) << built.error.toStdString();
        const QString legend = built.view->frame().legend.join(QLatin1Char(' '));
        EXPECT_EQ(legend.contains(QStringLiteral("Top line: device capacity")), capacity > 0)
            << legend.toStdString();
        EXPECT_EQ(legend.contains(QStringLiteral("names no device capacity")), capacity == 0)
            << legend.toStdString();
    }
}
