// The Details dock names the role of memory of the selected allocation and why, on a hand-built
// training step whose roles are read off memory_roles.h's decision table by hand.
#include <QApplication>
#include <QTableView>

#include <gtest/gtest.h>

#include "main_window.h"
#include "panels_fixture.h"
#include "vramscope/widgets/details_panel.h"
#include "vramscope/widgets/zoom_state.h"

using namespace vramscope;

namespace {

void alloc(trace::TraceData& d, int64_t t, uint64_t addr, uint64_t size, trace::StackId stack) {
    d.memory.append(trace::MemoryEvent{t, addr, size, trace::MemoryAction::Alloc,
                                       trace::MemoryLevel::Allocated, trace::MemoryKind::Pool,
                                       trace::DeviceIndex{0}, 0, stack, 0});
}
void release(trace::TraceData& d, int64_t t, uint64_t addr, uint64_t size) {
    d.memory.append(trace::MemoryEvent{t, addr, size, trace::MemoryAction::Free,
                                       trace::MemoryLevel::Allocated, trace::MemoryKind::Pool,
                                       trace::DeviceIndex{0}, 0, trace::StackId{0}, 0});
}

/// NVTX forward [100, 200), backward [200, 300), optimizer [300, 400) (trace ns). By the table:
/// weights 1000 B at 50 (held, a gradient's size, state created) -> parameters; act 4000 B at 150,
/// freed at 250 -> activations; grad 1000 B at 220, freed at 350 -> gradients; state 2000 B at
/// 320, never freed -> optimizer state.
trace::TraceData oneStep() {
    trace::TraceData d;
    const trace::FrameId main = d.internFrame({d.intern("main"), d.intern("train.py"), 1});
    const trace::StackId stack = d.internStack({main});
    const auto range = [&](const char* name, int64_t start, int64_t end) {
        trace::RangeEvent r;
        r.startNs = start;
        r.endNs = end;
        r.name = d.intern(name);
        r.threadId = 1;
        d.ranges.append(r);
    };
    range("forward", 100, 200);
    range("backward", 200, 300);
    range("optimizer", 300, 400);
    alloc(d, 50, 0x10, 1000, stack);
    alloc(d, 150, 0x20, 4000, stack);
    alloc(d, 220, 0x40, 1000, stack);
    release(d, 250, 0x20, 4000);
    alloc(d, 320, 0x50, 2000, stack);
    release(d, 350, 0x40, 1000);
    return d;
}

/// The role lines shown once the row holding `address` is selected.
QString roleOfRow(widgets::DetailsPanel* details, uint64_t address) {
    const auto& rows = details->model()->rows();
    for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].address == address) {
            details->table()->selectRow(static_cast<int>(i));
            QApplication::processEvents();
            return details->shownRole();
        }
    }
    return QStringLiteral("(no row at 0x%1)").arg(address, 0, 16);
}

}  // namespace

TEST(RolesWindow, DetailsSayTheRoleOfTheSelectedAllocationAndWhy) {
    std::vector<trace::TraceData> traces;
    traces.push_back(oneStep());
    const int64_t origin = panels_test::earliestTime(traces);
    const auto job = panels_test::makeJob(std::move(traces));
    ASSERT_TRUE(job);
    ASSERT_FALSE(job->memory.empty());
    app::MainWindow window;
    window.setJob(job);
    window.resize(1400, 900);
    window.show();
    QApplication::processEvents();
    // At trace time 230 (backward): weights, act and grad are alive.
    window.zoomState()->setSelectedGpu(job->memory.front().key, 230 - origin);
    widgets::DetailsPanel* details = window.details();
    ASSERT_EQ(details->model()->rowCount(), 3);
    EXPECT_EQ(roleOfRow(details, 0x20),
              QStringLiteral("Role: activations\nWhy: allocated in forward, freed in backward\n"
                             "Phases: allocated in forward, freed in backward"));
    EXPECT_TRUE(roleOfRow(details, 0x40)
                    .startsWith(QStringLiteral(
                        "Role: gradients\nWhy: allocated in backward, freed at or after the "
                        "optimizer step\n")))
        << roleOfRow(details, 0x40).toStdString();
    EXPECT_TRUE(roleOfRow(details, 0x40)
                    .endsWith(QStringLiteral("Phases: allocated in backward, freed in optimizer")));
    EXPECT_TRUE(roleOfRow(details, 0x10).startsWith(QStringLiteral("Role: parameters\n")))
        << roleOfRow(details, 0x10).toStdString();
    EXPECT_TRUE(
        roleOfRow(details, 0x10)
            .endsWith(QStringLiteral("Phases: allocated outside any known phase, never freed")));
    // The live set table's Role column says the same.
    const auto& rows = details->model()->rows();
    for (size_t i = 0; i < rows.size(); ++i) {
        const QString role = details->model()
                                 ->data(details->model()->index(static_cast<int>(i),
                                                                widgets::LiveSetModel::RoleColumn),
                                        Qt::DisplayRole)
                                 .toString();
        const QString expected = rows[i].address == 0x20   ? QStringLiteral("activations")
                                 : rows[i].address == 0x40 ? QStringLiteral("gradients")
                                                           : QStringLiteral("parameters");
        EXPECT_EQ(role, expected) << rows[i].address;
    }
}
