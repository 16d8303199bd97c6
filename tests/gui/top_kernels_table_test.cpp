// The Top Kernels table (offscreen): rows, numeric sort and the GPU chooser on a hand-built
// two-rank job whose figures are worked out in the comments.
#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>

#include <gtest/gtest.h>

#include "panels_fixture.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "vramscope/widgets/top_kernels_table.h"

using namespace vramscope;
using Model = widgets::TopKernelsModel;

namespace {

void kernel(trace::TraceData& d, const char* name, int64_t s, int64_t e, uint64_t stream,
            trace::KernelCategory c = trace::KernelCategory::Compute) {
    trace::KernelEvent k;
    k.startNs = s;
    k.endNs = e;
    k.stream = stream;
    k.category = c;
    k.name = d.intern(name);
    d.kernels.append(k);
}

/// Rank 0, GPU 0: "big" 2 launches of 500 ns (total 1000), "many" 10 launches of 20 ns (total
/// 200) on stream 2 while "big" runs, "nccl" 1 launch of 300 ns. Launch counts 2 < 10 < ... read
/// in the wrong order as text ("10" < "2"), so a text sort would fail the launches check.
/// busy = |[0, 500) u [1000, 1500) u [2000, 2300)| = 1300 ("many" lies inside "big").
/// Rank 1, GPU 0: one kernel "solo" of 40 ns.
std::shared_ptr<const analysis::JobModel> handBuiltKernelsJob() {
    trace::TraceData r0;
    kernel(r0, "big", 0, 500, 1);
    kernel(r0, "big", 1000, 1500, 1);
    for (int i = 0; i < 10; ++i) {
        kernel(r0, "many", 10 + 40 * i, 30 + 40 * i, 2);
    }
    kernel(r0, "nccl", 2000, 2300, 1, trace::KernelCategory::Communication);
    trace::TraceData r1;
    kernel(r1, "solo", 0, 40, 1);
    std::vector<trace::TraceData> traces;
    traces.push_back(std::move(r0));
    traces.push_back(std::move(r1));
    return panels_test::makeJob(std::move(traces));
}

/// The kernel names of the proxy's rows, top to bottom.
std::vector<std::string> namesInView(const QSortFilterProxyModel& p) {
    std::vector<std::string> out;
    for (int r = 0; r < p.rowCount(); ++r) {
        out.push_back(
            p.index(r, Model::KernelColumn).data(Model::RawValueRole).toString().toStdString());
    }
    return out;
}

}  // namespace

TEST(TopKernelsTable, ListsTheGpusKernelsSortedByTotalTimeWithSharesOfBusy) {
    auto job = handBuiltKernelsJob();
    ASSERT_NE(job, nullptr);
    widgets::TopKernelsPanel panel;
    panel.setJob(job);
    EXPECT_EQ(panel.gpuBox()->count(), 2);
    EXPECT_TRUE(panel.gpuBox()->isEnabled());
    const QSortFilterProxyModel& p = *panel.proxy();
    ASSERT_EQ(p.rowCount(), 3);
    EXPECT_EQ(namesInView(p), (std::vector<std::string>{"big", "nccl", "many"}));
    EXPECT_EQ(p.index(0, Model::TotalColumn).data(Model::RawValueRole).toLongLong(), 1000);
    EXPECT_EQ(p.index(0, Model::MaxColumn).data(Model::RawValueRole).toLongLong(), 500);
    EXPECT_EQ(p.index(0, Model::LaunchesColumn).data(Model::RawValueRole).toULongLong(), 2u);
    EXPECT_DOUBLE_EQ(p.index(0, Model::ShareColumn).data(Model::RawValueRole).toDouble(),
                     1000.0 / 1300.0);
    EXPECT_EQ(p.index(0, Model::ShareColumn).data().toString(), QStringLiteral("76.9 %"));
    EXPECT_EQ(p.index(1, Model::CategoryColumn).data().toString(), QStringLiteral("communication"));
    EXPECT_EQ(p.index(2, Model::ShareColumn).data().toString(), QStringLiteral("15.4 %"));
    EXPECT_TRUE(panel.summary()->text().contains(QStringLiteral("above 100 %")));
    EXPECT_TRUE(panel.summary()->text().contains(QStringLiteral("1.30 us")));
}

TEST(TopKernelsTable, SortsEveryNumericColumnByItsValue) {
    widgets::TopKernelsPanel panel;
    panel.setJob(handBuiltKernelsJob());
    QTableView& t = *panel.table();
    t.sortByColumn(Model::LaunchesColumn, Qt::AscendingOrder);  // 1, 2, 10
    EXPECT_EQ(namesInView(*panel.proxy()), (std::vector<std::string>{"nccl", "big", "many"}));
    t.sortByColumn(Model::LaunchesColumn, Qt::DescendingOrder);
    EXPECT_EQ(namesInView(*panel.proxy()), (std::vector<std::string>{"many", "big", "nccl"}));
    t.sortByColumn(Model::MaxColumn, Qt::AscendingOrder);  // 20, 300, 500
    EXPECT_EQ(namesInView(*panel.proxy()), (std::vector<std::string>{"many", "nccl", "big"}));
    t.sortByColumn(Model::ShareColumn, Qt::AscendingOrder);  // 200, 300, 1000 of 1300
    EXPECT_EQ(namesInView(*panel.proxy()), (std::vector<std::string>{"many", "nccl", "big"}));
    t.sortByColumn(Model::KernelColumn, Qt::AscendingOrder);
    EXPECT_EQ(namesInView(*panel.proxy()), (std::vector<std::string>{"big", "many", "nccl"}));
}

TEST(TopKernelsTable, TheGpuChooserShowsTheOtherRank) {
    auto job = handBuiltKernelsJob();
    widgets::TopKernelsPanel panel;
    panel.setJob(job);
    panel.setGpu(analysis::GpuKey{1, trace::DeviceIndex{0}});
    EXPECT_EQ(panel.gpuBox()->currentIndex(), 1);
    ASSERT_EQ(panel.proxy()->rowCount(), 1);
    EXPECT_EQ(namesInView(*panel.proxy()), (std::vector<std::string>{"solo"}));
    EXPECT_DOUBLE_EQ(
        panel.proxy()->index(0, Model::ShareColumn).data(Model::RawValueRole).toDouble(), 1.0);
}

TEST(TopKernelsTable, AJobWithoutKernelsSaysSo) {
    trace::TraceData d;
    trace::MemoryEvent e;
    e.timestampNs = 1;
    e.sizeBytes = 64;
    e.address = 0x100;
    d.memory.append(e);
    std::vector<trace::TraceData> traces;
    traces.push_back(std::move(d));
    widgets::TopKernelsPanel panel;
    panel.setJob(panels_test::makeJob(std::move(traces)));
    EXPECT_EQ(panel.proxy()->rowCount(), 0);
    EXPECT_FALSE(panel.gpuBox()->isEnabled());
    EXPECT_TRUE(panel.summary()->text().contains(QStringLiteral("no kernel")));
}

TEST(TopKernelsTable, RendersTheDlrmRanksForAPersonToLookAt) {
    const std::string path = realdata::kDlrmJob;
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto job = panels_test::openAsJob({path});
    ASSERT_NE(job, nullptr);
    widgets::TopKernelsPanel panel;
    panel.setJob(job);
    EXPECT_EQ(panel.gpuBox()->count(), 8);     // 8 ranks, one GPU each
    EXPECT_EQ(panel.proxy()->rowCount(), 20);  // the analysis keeps the 20 largest
    panel.resize(1200, 720);
    const QImage image = panel.grab().toImage();
    ASSERT_FALSE(image.isNull());
    const QString dir = qEnvironmentVariable("VRAMSCOPE_SCREENSHOT_DIR");
    if (!dir.isEmpty()) {
        QDir().mkpath(dir);
        EXPECT_TRUE(image.save(dir + QStringLiteral("/top_kernels_dlrm_rank0.png")));
    }
}
