// Notes on the views (offscreen): on the VRAM plots a GPU-pinned note has items only on its
// GPU's plot and labels stay clear of the data labels; on the lanes it covers its GPU's lane only
// with the labels in their own row; on the flame view a note pinned to a frame marks that frame
// and the caption names it.
#include <QApplication>
#include <QStringList>

#include <gtest/gtest.h>

#include <map>

#include "gui/panels_fixture.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/flame_view.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/zoom_state.h"

using namespace vramscope;

namespace {

std::shared_ptr<const analysis::JobModel> twoRankSyntheticJob() {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 2;
    spec.iterations = 6;
    return panels_test::makeJob(analysis::generateSyntheticJob(spec));
}

trace::Note note(const std::string& id, int64_t start, int64_t end, int rank = -1,
                 int device = -1) {
    trace::Note n;
    n.id = id;
    n.title = "note " + id;
    n.startNs = start;
    n.endNs = end;
    n.rankIndex = rank;
    n.device = device;
    return n;
}

/// The note ids on `plot`'s QCustomPlot items (the "noteId" property), with how many items each.
std::map<std::string, int> noteItemsOn(const QCustomPlot& plot) {
    std::map<std::string, int> ids;
    for (int i = 0; i < plot.itemCount(); ++i) {
        const QVariant id = plot.item(i)->property("noteId");
        if (id.isValid()) {
            ++ids[id.toString().toStdString()];
        }
    }
    return ids;
}

}  // namespace

TEST(NotesOnPlots, AGpuPinnedNoteDrawsOnlyOnItsPlot) {
    auto job = twoRankSyntheticJob();
    ASSERT_TRUE(job);
    ASSERT_EQ(job->gpus.size(), 2u);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::TimelineView view(&zoom);
    view.setLayoutMode(widgets::TimelineView::LayoutMode::Stacked);
    view.setJob(job);
    const int64_t d = job->durationNs;
    // n1 on every GPU (a point), n2 a range on rank 1's GPU only.
    const analysis::GpuKey second = job->gpus[1].key;
    view.setNotes({note("n2", d / 4, d / 2, second.rankIndex, toInt(second.device)),
                   note("n1", d / 10, d / 10)});
    ASSERT_EQ(view.plots().size(), 2u);
    const widgets::MemoryPlot* rank0 = view.plots()[0];
    const widgets::MemoryPlot* rank1 = view.plots()[1];
    ASSERT_EQ(rank0->gpu().rankIndex, 0);
    ASSERT_EQ(rank1->gpu().rankIndex, 1);
    // A point: a line and a label; a range: a band and a label.
    EXPECT_EQ(noteItemsOn(*rank0), (std::map<std::string, int>{{"n1", 2}}));
    EXPECT_EQ(noteItemsOn(*rank1), (std::map<std::string, int>{{"n1", 2}, {"n2", 2}}));
    ASSERT_EQ(rank1->noteMarks().size(), 2u);
    // Numbered by start time over all notes: n1 (d/10) is 1, n2 (d/4) is 2, on both plots.
    EXPECT_EQ(rank0->noteMarks()[0].number, 1);
    EXPECT_EQ(rank1->noteMarks()[1].id, "n2");
    EXPECT_EQ(rank1->noteMarks()[1].number, 2);
    ASSERT_NE(rank1->noteMarks()[1].band, nullptr);
    EXPECT_DOUBLE_EQ(rank1->noteMarks()[1].band->topLeft->coords().x(), double(d / 4));
    EXPECT_DOUBLE_EQ(rank1->noteMarks()[1].band->bottomRight->coords().x(), double(d / 2));
    ASSERT_NE(rank0->noteMarks()[0].line, nullptr);
    EXPECT_DOUBLE_EQ(rank0->noteMarks()[0].line->point1->coords().x(), double(d / 10));
    view.setNotes({});
    EXPECT_TRUE(noteItemsOn(*rank1).empty());
}

TEST(NotesOnPlots, LabelsNeverCoverThePeakLabelOrTheLegend) {
    auto job = twoRankSyntheticJob();
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::TimelineView view(&zoom);
    view.setLayoutMode(widgets::TimelineView::LayoutMode::Stacked);
    view.setJob(job);
    const analysis::GpuSeries& g = job->gpus.front();
    const int64_t peak = g.memory.peakAllocatedTimeNs;
    const int64_t d = job->durationNs;
    // Notes where the data labels are: at the peak, at the right edge (under the legend), and
    // three close together.
    view.setNotes({note("n1", peak, peak), note("n2", d - d / 50, d - d / 50),
                   note("n3", peak - d / 100, peak + d / 100), note("n4", d / 3, d / 3),
                   note("n5", d / 3 + 1, d / 3 + 2)});
    view.resize(1200, 700);
    view.show();
    QApplication::processEvents();
    view.replotNow();
    QApplication::processEvents();
    for (const widgets::MemoryPlot* plot : view.plots()) {
        SCOPED_TRACE(plot->gpu().rankIndex);
        const std::vector<QRectF> data = plot->dataLabelRects();
        EXPECT_FALSE(data.empty()) << "the peak label and the legend are laid out";
        std::vector<QRectF> labels;
        for (const widgets::PlotNoteMark& m : plot->noteMarks()) {
            if (!m.label->visible()) {
                continue;
            }
            const QRectF r = widgets::textItemRect(m.label);
            EXPECT_TRUE(QRectF(plot->axisRect()->rect()).contains(r)) << m.id;
            for (const QRectF& d : data) {
                EXPECT_FALSE(r.intersects(d)) << m.id << " covers a data label";
            }
            for (const QRectF& other : labels) {
                EXPECT_FALSE(r.intersects(other)) << m.id << " covers another note's label";
            }
            labels.push_back(r);
        }
        EXPECT_GE(labels.size(), 3u) << "most labels find room";
    }
}

TEST(NotesOnLanes, APinnedNoteCoversItsLaneAndLabelsHaveTheirOwnRow) {
    auto job = twoRankSyntheticJob();
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::CommLanesView lanes(&zoom);
    lanes.setJob(job);
    const int laneTopWithout = lanes.lanes().front().top;
    const int64_t d = job->durationNs;
    const analysis::GpuKey second = lanes.lanes().at(1).key;
    lanes.setNotes({note("n1", d / 5, d / 5),
                    note("n2", d / 2, 3 * d / 4, second.rankIndex, toInt(second.device))});
    lanes.resize(1000, lanes.minimumHeight());
    const std::vector<widgets::CommLanesView::NoteMark> marks = lanes.noteMarks();
    ASSERT_EQ(marks.size(), 2u);
    ASSERT_EQ(lanes.lanes().size(), 2u);
    const widgets::CommLanesView::Lane& lane1 = lanes.lanes()[1];
    ASSERT_EQ(lane1.key.rankIndex, 1);
    EXPECT_GT(lanes.lanes().front().top, laneTopWithout) << "a row for the labels";
    // n1 spans every lane; n2 only rank 1's lane, from d/2 to 3d/4.
    EXPECT_LE(marks[0].band.top(), lanes.lanes().front().top);
    EXPECT_DOUBLE_EQ(marks[1].band.top(), lane1.top);
    const widgets::TimeMapper tm = lanes.mapper();
    EXPECT_NEAR(marks[1].band.left(), tm.xAt(d / 2), 1e-6);
    EXPECT_NEAR(marks[1].band.right(), tm.xAt(3 * d / 4), 1e-6);
    for (const auto& m : marks) {
        ASSERT_FALSE(m.label.isEmpty()) << m.id;
        EXPECT_LE(m.label.bottom(), lanes.lanes().front().top) << "above the lanes";
        EXPECT_TRUE(m.text.startsWith(QString::number(m.number)));
    }
    EXPECT_FALSE(marks[0].label.intersects(marks[1].label));
}

TEST(NotesOnFlame, ANoteOnAFrameMarksItAndTheCaptionSaysSo) {
    auto job = twoRankSyntheticJob();
    ASSERT_TRUE(job);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::FlamePanel panel(&zoom);
    panel.setJob(job);
    panel.setMoment(widgets::FlamePanel::Moment::Peak);
    const analysis::FlameTree& tree = panel.view()->tree();
    ASSERT_GT(tree.nodes.size(), 2u);
    const uint32_t node = tree.nodes[0].children.front();
    // The note a user makes from the frame's context menu.
    trace::Note made;
    QObject::connect(&panel, &widgets::FlamePanel::noteRequested,
                     [&made](const trace::Note& n) { made = n; });
    emit panel.view()->frameNoteRequested(node);
    QStringList path;
    for (const std::string& name : tree.path(node)) {
        path.append(QString::fromStdString(name));
    }
    EXPECT_EQ(made.flameFrame, path.join(QLatin1Char(';')).toStdString());
    EXPECT_EQ(made.startNs, panel.shownTimeNs());
    EXPECT_EQ(made.rankIndex, panel.gpu().rankIndex);

    made.id = "n1";
    made.title = "big frame";
    // An earlier note on another GPU takes number 1; this one is number 2.
    panel.setNotes({made, note("n0", 0, 0, 1, 0)});
    const auto marked = panel.view()->markedNodes();
    ASSERT_EQ(marked.size(), 1u);
    EXPECT_EQ(marked[0], std::make_pair(node, 2));
    EXPECT_TRUE(panel.caption().contains(QStringLiteral("2 \u201cbig frame\u201d")))
        << panel.caption().toStdString();
    panel.setNotes({});
    EXPECT_TRUE(panel.view()->markedNodes().empty());
    EXPECT_FALSE(panel.caption().contains(QStringLiteral("big frame")));
}
