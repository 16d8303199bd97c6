// Dropping files on the main window: URLs of local files open as one job (as File > Open does),
// anything else is refused at the drag. The expected peak is the producer's own "Total Allocated"
// of the real trace, read here with nlohmann-json.
#include <QApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QSignalSpy>
#include <QUrl>

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "main_window.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"

using namespace vramscope;

namespace {

/// Sends a drag-enter then, when accepted, a drop of `urls` onto `window`; returns whether the
/// drag was accepted.
bool dragAndDrop(app::MainWindow& window, const QList<QUrl>& urls) {
    QMimeData mime;
    mime.setUrls(urls);
    const QPointF at(window.width() / 2.0, window.height() / 2.0);
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    enter.setAccepted(false);
    QApplication::sendEvent(&window, &enter);
    if (!enter.isAccepted()) {
        return false;
    }
    QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    return true;
}

TEST(MainWindowDrop, OpensADroppedLocalFile) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    int64_t producerPeak = 0;
    const nlohmann::json doc = testdata::loadGzJson(realdata::kBertTrace);
    for (const auto& e : testdata::eventsOf(doc)) {
        if (e.value("name", "") == "[memory]" && e.contains("args") &&
            e["args"].value("Device Type", -1) == 1 && e["args"].contains("Total Allocated")) {
            producerPeak = std::max(producerPeak, e["args"]["Total Allocated"].get<int64_t>());
        }
    }
    ASSERT_GT(producerPeak, 0);
    app::MainWindow window;
    window.resize(1200, 800);
    QSignalSpy shown(&window, &app::MainWindow::jobChanged);
    // A web URL beside the file is left out; the local file opens.
    ASSERT_TRUE(
        dragAndDrop(window, {QUrl("https://example.com/trace.json"),
                             QUrl::fromLocalFile(QString::fromStdString(realdata::kBertTrace))}));
    ASSERT_TRUE(shown.wait(60'000)) << "no job was shown after the drop";
    ASSERT_TRUE(window.job());
    ASSERT_EQ(window.job()->job.ranks.size(), 1u);
    EXPECT_EQ(window.job()->job.ranks.front().path, realdata::kBertTrace);
    ASSERT_EQ(window.job()->gpus.size(), 1u);
    EXPECT_EQ(window.job()->gpus.front().memory.peakAllocatedBytes, producerPeak);
}

TEST(MainWindowDrop, RefusesADragWithoutLocalFiles) {
    app::MainWindow window;
    EXPECT_FALSE(dragAndDrop(window, {QUrl("https://example.com/trace.json")}));
    EXPECT_FALSE(dragAndDrop(window, {}));
    EXPECT_FALSE(window.job());
}

}  // namespace
