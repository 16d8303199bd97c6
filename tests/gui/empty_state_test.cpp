// The main window before any job is loaded: shown, resized and with every dock and tab brought to
// the front it must paint without data, then take the bundled sample and a kernel-only job.
#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QStatusBar>
#include <QTabWidget>

#include <gtest/gtest.h>

#include "job_loader.h"
#include "main_window.h"
#include "window_test_support.h"

using namespace vramscope;

namespace {

using window_test::settle;

/// Brings every tab of the centre and every dock to the front in turn, at two window sizes.
void visitEveryView(app::MainWindow& window) {
    for (const QSize size : {QSize(1024, 700), QSize(420, 300), QSize(1600, 1000)}) {
        window.resize(size);
        settle();
        for (int i = 0; i < window.centralTabs()->count(); ++i) {
            window.centralTabs()->setCurrentIndex(i);
            settle();
        }
        for (QDockWidget* dock : window.findChildren<QDockWidget*>()) {
            dock->show();
            dock->raise();
            settle();
        }
        window.centralTabs()->setCurrentIndex(0);
        window.grab();  // paints every visible widget
    }
}

/// One rank with two kernels on GPU 0 and no memory events at all.
trace::Job kernelOnlyJob() {
    trace::Job job;
    trace::RankTrace rank;
    rank.path = "kernels.json";
    trace::TraceData& d = rank.trace.data;
    const trace::StringId name = d.intern("gemm");
    d.kernels.append({1000, 5000, trace::DeviceIndex{0}, 7, name});
    d.kernels.append({9000, 12000, trace::DeviceIndex{0}, 7, name});
    job.ranks.push_back(std::move(rank));
    return job;
}

}  // namespace

TEST(EmptyState, WindowShownBeforeAnyJobPaintsEveryViewThenLoads) {
    app::MainWindow window;
    window.show();
    settle();
    visitEveryView(window);
    for (const QString& name : window.viewNames()) {
        EXPECT_TRUE(window.showView(name)) << name.toStdString();
        settle();
        window.grab();
    }
    EXPECT_EQ(window.job(), nullptr);

    auto sample = app::loadBundledSample();
    ASSERT_TRUE(sample.ok());
    window.setJob(sample.value());
    settle();
    visitEveryView(window);
    EXPECT_EQ(window.job(), sample.value());

    auto kernels = analysis::buildJobModel(kernelOnlyJob(), "kernels only").value();
    ASSERT_NE(kernels, nullptr);
    EXPECT_TRUE(kernels->gpus.empty());  // no memory data: no memory plot
    window.setJob(kernels);
    settle();
    // No memory anywhere: the window opens on the communication lanes, not on empty plots.
    EXPECT_EQ(window.centralTabs()->tabText(window.centralTabs()->currentIndex()),
              QStringLiteral("Communication lanes"));
    visitEveryView(window);
    for (const QString& name : window.viewNames()) {
        EXPECT_TRUE(window.showView(name)) << name.toStdString();
        settle();
        window.grab();
    }
    EXPECT_EQ(window.job(), kernels);

    // And back to nothing.
    window.setJob(nullptr);
    settle();
    visitEveryView(window);
}

TEST(EmptyState, AJobWithoutEventsAndWithDataLossSaysSoInTheWindow) {
    trace::Job job;
    trace::RankTrace rank;
    rank.path = "/runs/cut.vscope";
    trace::DeviceInfo gpu;
    gpu.index = trace::DeviceIndex{0};
    gpu.totalMemoryBytes = 80ull << 30;
    rank.trace.data.header.devices.push_back(gpu);
    rank.trace.data.dataLoss.push_back(
        {trace::LossCounter::CuptiRecordsDropped, 12, "the job was killed", 0, 0});
    job.ranks.push_back(std::move(rank));
    auto loaded = analysis::buildJobModel(std::move(job), "cut.vscope").value();
    ASSERT_NE(loaded, nullptr);

    app::MainWindow window;
    window.setJob(loaded);
    window.resize(1200, 800);
    window.show();
    settle();
    const auto* banner = window.findChild<QLabel*>(QStringLiteral("ProblemBanner"));
    ASSERT_NE(banner, nullptr);
    EXPECT_TRUE(banner->isVisible());
    EXPECT_TRUE(banner->text().contains(QStringLiteral("cut.vscope: no events loaded")))
        << banner->text().toStdString();
    // The counter's name and value, and its description from the registry.
    EXPECT_TRUE(banner->text().contains(QStringLiteral("cupti_records_dropped = 12")))
        << banner->text().toStdString();
    EXPECT_TRUE(banner->text().contains(QStringLiteral("no buffer was free")))
        << banner->text().toStdString();
    bool statusSaysSo = false;
    for (const QLabel* label : window.statusBar()->findChildren<QLabel*>()) {
        statusSaysSo = statusSaysSo || label->text() == QStringLiteral("no events loaded");
    }
    EXPECT_TRUE(statusSaysSo);

    // A job with events and nothing lost shows no banner.
    auto sample = app::loadBundledSample();
    ASSERT_TRUE(sample.ok());
    window.setJob(sample.value());
    settle();
    EXPECT_FALSE(banner->isVisible()) << banner->text().toStdString();
}
