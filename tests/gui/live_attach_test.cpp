// File > Attach to Running Job, offscreen: `vramscope-cli replay` serves a recorded rank on a live
// socket, the main window attaches and shows it as it arrives. The plot extends, and each model's
// allocated curve ends at the file's own allocated bytes at that time (a running sum over the
// file's events, computed here); following, pan and End; the attach dialog lists the replay.

#include <sys/stat.h>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include "attach_dialog.h"
#include "live_session.h"
#include "main_window.h"
#include "vramscope/trace/live.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/widgets/zoom_state.h"

using namespace vramscope;

namespace {

/// Allocated bytes on `device` after every Allocated-level event at or before trace time `t`:
/// allocs add their size, frees subtract it (the sample frees exactly what it allocated).
int64_t allocatedAt(const trace::TraceData& d, trace::DeviceIndex device, int64_t t) {
    int64_t sum = 0;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.level[i] != trace::MemoryLevel::Allocated || d.memory.device[i] != device ||
            d.memory.timestampNs[i] > t) {
            continue;
        }
        const auto size = static_cast<int64_t>(d.memory.sizeBytes[i]);
        sum += d.memory.action[i] == trace::MemoryAction::Alloc ? size : -size;
    }
    return sum;
}

TEST(LiveAttach, ThePlotExtendsAsTheJobRunsAndEndsOnTheFilesValues) {
    const QString src = QStringLiteral(VRAMSCOPE_SOURCE_DIR) +
                        QStringLiteral("/resources/sample/sample-rank1.vscope");
    auto file = trace::readTraceFile(src.toStdString());
    ASSERT_TRUE(file.ok()) << file.error().describe();
    const trace::TraceData& want = file->data;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (int64_t t : want.memory.timestampNs) {
        first = std::min(first, t);
        last = std::max(last, t);
    }
    QTemporaryDir tmp;
    const QString dir = tmp.path() + QStringLiteral("/sockets");
    ASSERT_EQ(::mkdir(dir.toLocal8Bit().constData(), 0700), 0);
    const QString sock = dir + QStringLiteral("/replay-1.sock");
    // About 3 s of replay, started once the window attached.
    QProcess replay;
    replay.start(
        QStringLiteral(VRAMSCOPE_CLI_PATH),
        {QStringLiteral("replay"), src, QStringLiteral("--socket"), sock, QStringLiteral("--speed"),
         QString::number(double(last - first) / 3e9) + "x", QStringLiteral("--wait-viewers"),
         QStringLiteral("1"), QStringLiteral("--linger"), QStringLiteral("2s")});
    ASSERT_TRUE(replay.waitForStarted(5000));
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(sock), 10000);

    app::MainWindow w;
    w.resize(1400, 900);
    w.show();
    std::vector<std::shared_ptr<const analysis::JobModel>> models;
    QObject::connect(&w, &app::MainWindow::jobChanged,
                     [&](std::shared_ptr<const analysis::JobModel> m) {
                         if (m && m->title.rfind("live: ", 0) == 0) {
                             models.push_back(m);
                         }
                     });
    QString error;
    ASSERT_TRUE(w.attachLive({sock}, &error)) << error.toStdString();
    bool ended = false;
    QObject::connect(w.liveSession(), &app::LiveSession::ended, [&] { ended = true; });
    for (int i = 0; i < 600 && !ended; ++i) {
        QTest::qWait(50);
    }
    ASSERT_TRUE(ended) << "the replay did not end within 30 s";
    if (replay.state() != QProcess::NotRunning) {
        replay.waitForFinished(10000);  // false when it had finished already
    }
    ASSERT_EQ(replay.state(), QProcess::NotRunning);
    EXPECT_EQ(replay.exitCode(), 0) << replay.readAllStandardError().toStdString();

    // The plot extended: several models, each reaching further.
    int grew = 0;
    for (size_t i = 1; i < models.size(); ++i) {
        grew += models[i]->durationNs > models[i - 1]->durationNs ? 1 : 0;
    }
    EXPECT_GE(grew, 3) << models.size() << " models";
    int checked = 0;
    for (const auto& m : models) {
        ASSERT_EQ(m->gpus.size(), 1u);
        const analysis::GpuSeries& g = m->gpus[0];
        const analysis::StepSeries& s = g.allocated.series();
        if (s.empty()) {
            continue;  // a model of the header alone: the GPU is known, no event has come yet
        }
        ++checked;
        // The last value drawn equals the file's at that time (job time + the job's origin).
        EXPECT_EQ(s.bytes.back(), allocatedAt(want, g.key.device, s.timeNs.back() + m->originNs))
            << "model of " << m->durationNs << " ns";
    }
    EXPECT_GE(checked, 3);
    // The last model holds the whole file: its allocated curve ends where the file's does.
    const auto& lastModel = models.back();
    EXPECT_EQ(lastModel->gpus[0].allocated.series().bytes.back(),
              allocatedAt(want, lastModel->gpus[0].key.device, last));
    EXPECT_EQ(lastModel->job.ranks[0].trace.data.memory.size(), want.memory.size());

    // Following: the view ends at the newest data; a pan stops it; End follows again.
    const widgets::TimeRange v = w.zoomState()->visibleRange();
    EXPECT_EQ(v.endNs, lastModel->durationNs);
    EXPECT_TRUE(w.isFollowing());
    w.zoomState()->zoom(0.5);  // the user zooms in
    EXPECT_FALSE(w.isFollowing());
    QTest::keyClick(&w, Qt::Key_End);
    EXPECT_TRUE(w.isFollowing());
    EXPECT_EQ(w.zoomState()->visibleRange().endNs, lastModel->durationNs);

    // What arrived can be saved, and reads back with every event of the file.
    const QString saved = tmp.path() + QStringLiteral("/saved.vscope");
    QString saveError;
    ASSERT_EQ(w.liveSession()->saveReceived(saved, &saveError).size(), 1)
        << saveError.toStdString();
    auto back = trace::readTraceFile(saved.toStdString());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->data.memory.timestampNs, want.memory.timestampNs);
    EXPECT_EQ(back->data.kernels.startNs, want.kernels.startNs);

    const QString shot = QString::fromLocal8Bit(qgetenv("VRAMSCOPE_SCREENSHOT_DIR"));
    if (!shot.isEmpty()) {
        QTest::qWait(300);  // the timeline lays out its plots on the event loop
        w.grab().save(shot + QStringLiteral("/live_attach.png"));
    }
}

TEST(LiveAttach, TheDialogListsARunningReplay) {
    QTemporaryDir tmp;
    const QString dir = tmp.path() + QStringLiteral("/sockets");
    ASSERT_EQ(::mkdir(dir.toLocal8Bit().constData(), 0700), 0);
    qputenv("VRAMSCOPE_LIVE_DIR", dir.toLocal8Bit());
    const QString src = QStringLiteral(VRAMSCOPE_SOURCE_DIR) +
                        QStringLiteral("/resources/sample/sample-rank2.vscope");
    QProcess replay;
    replay.start(QStringLiteral(VRAMSCOPE_CLI_PATH),
                 {QStringLiteral("replay"), src, QStringLiteral("--speed"),
                  QStringLiteral("0.001x"), QStringLiteral("--linger"), QStringLiteral("0s")});
    ASSERT_TRUE(replay.waitForStarted(5000));
    const QString sock = QString::fromStdString(
        trace::live::socketPath(dir.toStdString(), trace::live::hostName(), replay.processId()));
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(sock), 10000);
    app::AttachDialog dialog;
    EXPECT_EQ(dialog.processCount(), 1);
    // The job's row is selected first, and stands for its rank.
    EXPECT_EQ(dialog.selectedSockets(), QStringList{sock});
    replay.kill();
    replay.waitForFinished(5000);
    dialog.refresh();  // the killed replay's socket is stale now: removed, not listed
    EXPECT_EQ(dialog.processCount(), 0);
    EXPECT_FALSE(QFile::exists(sock));
    qunsetenv("VRAMSCOPE_LIVE_DIR");
}

}  // namespace
