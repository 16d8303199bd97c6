// The views of the roles of memory on the H200 leak snapshot: the VRAM plot stacked by role and
// the flame view by role, checked against the roles re-summed here from the allocation index.
#include <QComboBox>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "panels_fixture.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "vramscope/analysis/memory/role_layers.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/flame_view.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/timeline_view.h"

using namespace vramscope;
using panels_test::openAsJob;
using panels_test::replayLiveBytes;

namespace {

std::string leakSnapshot() {
    return realdata::kGptLeakSnapshot;
}

/// The value a step-left graph draws at `key`: its last point at or before it (0 before all).
double drawnAt(const QCPGraph* graph, double key) {
    double value = 0;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
        if (it->key > key) {
            break;
        }
        value = it->value;
    }
    return value;
}

/// Bytes per role of the allocations alive at `t` (trace time), summed here over the index's live
/// events with each event's role.
analysis::RoleBytes resummedRoles(const trace::TraceData& data, const analysis::DeviceAnalysis& d,
                                  int64_t t) {
    analysis::RoleBytes bytes;
    for (const uint32_t e : d.index->aliveEventsAt(t)) {
        bytes[d.roles->roleOfEvent(e)] += static_cast<int64_t>(data.memory.sizeBytes[e]);
    }
    return bytes;
}

}  // namespace

TEST(RolesPanels, LeakSnapshotStackedPlotAtThePeakHoldsTheRolesAtThePeak) {
    VRAMSCOPE_REQUIRE_INPUT(leakSnapshot());
    const auto job = openAsJob({leakSnapshot()});
    ASSERT_TRUE(job);
    ASSERT_FALSE(job->memory.empty());
    const analysis::GpuMemoryAnalysis& g = job->memory.front();
    const analysis::DeviceAnalysis& d = *g.device;
    ASSERT_TRUE(d.roles);
    ASSERT_TRUE(d.rolesAtPeak);
    const size_t rank = static_cast<size_t>(g.key.rankIndex);
    const trace::TraceData& data = job->job.ranks[rank].trace.data;
    const int64_t peak = d.rolesAtPeak->timeNs;
    const analysis::RoleBytes expected = resummedRoles(data, d, peak);
    for (size_t r = 0; r < analysis::kMemoryRoleCount; ++r) {
        EXPECT_EQ(d.rolesAtPeak->bytes.bytes[r], expected.bytes[r])
            << analysis::toString(analysis::MemoryRole(r));
    }
    // The roles cover the whole live set: their sum is the raw events' replay at the peak.
    EXPECT_EQ(expected.total(), replayLiveBytes(data, g.key.device, g.level, peak));

    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::TimelineView view(&zoom);
    view.resize(1200, 700);
    view.setJob(job);
    view.setStackByRole(true);
    ASSERT_FALSE(view.plots().empty());
    widgets::MemoryPlot* plot = view.plots().front();
    ASSERT_EQ(plot->gpu(), g.key);
    ASSERT_TRUE(plot->stackedByRole());
    const analysis::RoleLayers& layers = *plot->roleLayers();
    ASSERT_EQ(plot->roleGraphs().size(), layers.roles.size());
    // Layers in the fixed order, each in the legend under its role's label.
    for (size_t k = 0; k < layers.roles.size(); ++k) {
        if (k > 0) {
            const auto at = [](analysis::MemoryRole r) {
                return std::find(analysis::kRoleStackOrder.begin(), analysis::kRoleStackOrder.end(),
                                 r);
            };
            EXPECT_LT(at(layers.roles[k - 1]), at(layers.roles[k]));
        }
        // The legend names the role by its label up to any parenthesis.
        const std::string label = analysis::roleLabel(layers.roles[k]);
        EXPECT_EQ(plot->roleGraphs()[k]->name().toStdString(), label.substr(0, label.find(" (")));
        EXPECT_TRUE(plot->legend->hasItemWithPlottable(plot->roleGraphs()[k]));
    }
    for (size_t r = 0; r < analysis::kMemoryRoleCount; ++r) {
        if (expected.bytes[r] > 0) {
            EXPECT_NE(std::find(layers.roles.begin(), layers.roles.end(), analysis::MemoryRole(r)),
                      layers.roles.end())
                << analysis::toString(analysis::MemoryRole(r));
        }
    }

    // Zoomed in on the peak, the plot draws the exact steps: each band is its role's bytes.
    const int64_t peakJob = peak + job->ranks[rank].toJobNs;
    zoom.setVisibleRange({peakJob - 20'000, peakJob + 20'000});
    plot->resize(1200, 300);
    plot->refresh();
    ASSERT_TRUE(plot->showsExactSteps());
    double below = 0;
    for (size_t k = 0; k < layers.roles.size(); ++k) {
        const double top = drawnAt(plot->roleGraphs()[k], static_cast<double>(peakJob));
        EXPECT_EQ(static_cast<int64_t>(top - below), expected[layers.roles[k]])
            << analysis::roleLabel(layers.roles[k]);
        below = top;
    }
    EXPECT_EQ(static_cast<int64_t>(below), d.rolesAtPeak->bytes.total());

    // Zoomed out, one stroke per column: the layers never cross, and the highest stroke of the
    // top layer is the peak.
    zoom.setVisibleRange({0, job->durationNs});
    plot->refresh();
    ASSERT_FALSE(plot->showsExactSteps());
    const QCPGraph* top = plot->roleGraphs().back();
    double highest = 0;
    for (auto it = top->data()->constBegin(); it != top->data()->constEnd(); ++it) {
        highest = std::max(highest, it->value);
    }
    EXPECT_EQ(static_cast<int64_t>(highest), d.rolesAtPeak->bytes.total());
    for (size_t k = 1; k < layers.roles.size(); ++k) {
        const QCPGraph* lower = plot->roleGraphs()[k - 1];
        const QCPGraph* upper = plot->roleGraphs()[k];
        ASSERT_EQ(lower->dataCount(), upper->dataCount());
        for (int i = 0; i < upper->dataCount(); ++i) {
            ASSERT_GE(upper->data()->at(i)->value, lower->data()->at(i)->value) << k << " " << i;
        }
    }

    // Switching the toggle off goes back to the single allocated fill.
    view.setStackByRole(false);
    EXPECT_FALSE(view.plots().front()->stackedByRole());
    EXPECT_TRUE(view.plots().front()->roleGraphs().empty());
}

TEST(RolesPanels, LeakSnapshotFlameByRoleAtThePeakSplitsTheLiveSetByRole) {
    VRAMSCOPE_REQUIRE_INPUT(leakSnapshot());
    const auto job = openAsJob({leakSnapshot()});
    ASSERT_TRUE(job);
    ASSERT_FALSE(job->memory.empty());
    const analysis::GpuMemoryAnalysis& g = job->memory.front();
    ASSERT_TRUE(g.device->roles);
    widgets::ZoomState zoom;
    zoom.setFullRange({0, job->durationNs});
    widgets::FlamePanel panel(&zoom);
    panel.resize(1000, 500);
    panel.setJob(job);
    // The grouping box offers "By role".
    bool listed = false;
    for (QComboBox* box : panel.findChildren<QComboBox*>()) {
        listed |= box->findText(QStringLiteral("By role")) >= 0;
    }
    EXPECT_TRUE(listed);
    panel.setGrouping(analysis::FlameGrouping::Role);
    panel.setMoment(widgets::FlamePanel::Moment::Peak);
    panel.rebuildNow();
    const analysis::FlameTree& tree = panel.view()->tree();
    EXPECT_EQ(tree.grouping, analysis::FlameGrouping::Role);
    const size_t rank = static_cast<size_t>(g.key.rankIndex);
    const trace::TraceData& data = job->job.ranks[rank].trace.data;
    const int64_t t = panel.shownTimeNs() - job->ranks[rank].toJobNs;
    const analysis::RoleBytes expected = resummedRoles(data, *g.device, t);
    EXPECT_EQ(tree.root().bytes, expected.total());
    size_t rolesWithBytes = 0;
    for (int64_t b : expected.bytes) {
        rolesWithBytes += b > 0 ? 1 : 0;
    }
    EXPECT_EQ(tree.root().children.size(), rolesWithBytes);
    for (const uint32_t c : tree.root().children) {
        const analysis::FlameNode& n = tree.nodes[c];
        bool found = false;
        for (size_t r = 0; r < analysis::kMemoryRoleCount; ++r) {
            if (n.name == analysis::roleLabel(analysis::MemoryRole(r))) {
                found = true;
                EXPECT_EQ(n.bytes, expected.bytes[r]) << n.name;
            }
        }
        EXPECT_TRUE(found) << n.name;
    }
}
