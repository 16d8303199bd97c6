// MainWindow's live attach: the session's models shown as they arrive, the view following the
// newest data, detach and saving what arrived.

#include <QFileDialog>
#include <QMessageBox>
#include <QStatusBar>

#include "attach_dialog.h"
#include "job_loader.h"
#include "live_session.h"
#include "main_window.h"
#include "summary_controller.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::app {

bool MainWindow::attachLive(const QStringList& sockets, QString* error) {
    QString problems;
    auto session = LiveSession::attach(sockets, &problems);
    if (error != nullptr) {
        *error = problems;
    }
    if (!session) {
        return false;
    }
    m_loader->cancel();
    m_summaries->reset();
    m_live = std::move(session);
    m_following = true;
    connect(m_live.get(), &LiveSession::updated, this, &MainWindow::showLiveModel);
    connect(m_live.get(), &LiveSession::ended, this, [this] { updateBanner(); });
    // A pan or zoom by the user stops following; the window's own moves do not.
    connect(m_zoom, &widgets::ZoomState::visibleRangeChanged, m_live.get(), [this] {
        if (!m_liveRangeGuard && m_following) {
            m_following = false;
            updateBanner();
        }
    });
    m_detachAction->setEnabled(true);
    m_saveReceivedAction->setEnabled(true);
    m_followAction->setEnabled(true);
    updateBanner();
    return true;
}

void MainWindow::detachLive() {
    if (m_live && !m_live->isDetached()) {
        m_live->detach();
        m_detachAction->setEnabled(false);
        updateBanner();
    }
}

void MainWindow::followLive() {
    if (m_live) {
        m_following = true;
        applyFollow();
        updateBanner();
    }
}

void MainWindow::applyFollow() {
    if (!m_job || !m_following) {
        return;
    }
    const int64_t end = m_job->durationNs;
    m_liveRangeGuard = true;
    m_zoom->setVisibleRange({std::max<int64_t>(0, end - m_followSpanNs), end});
    m_liveRangeGuard = false;
}

void MainWindow::showLiveModel(std::shared_ptr<const analysis::JobModel> job) {
    const bool first = !m_job || !m_job->title.starts_with("live: ");
    const widgets::TimeRange kept = m_zoom->visibleRange();
    const analysis::GpuKey gpu = m_zoom->selectedGpu();
    const int64_t at = m_zoom->selectedTimeNs();
    m_liveRangeGuard = true;
    setJob(std::move(job));
    if (!first && !m_following && gpu.isValid()) {
        m_zoom->setSelectedGpu(gpu, at);  // keep what the user looks at across refreshes
    }
    if (!first && !m_following) {
        m_zoom->setVisibleRange(kept);
    }
    m_liveRangeGuard = false;
    applyFollow();
    updateBanner();
}

QString MainWindow::liveBannerLine() const {
    if (!m_live) {
        return {};
    }
    QString line = tr("Live: %1.").arg(m_live->describe());
    if (m_live->hasEnded()) {
        line += tr(" The job ended; what arrived is kept (File > Save Received Data As…).");
    } else if (m_live->isDetached()) {
        line += tr(" Detached; what arrived is kept (File > Save Received Data As…).");
    } else if (m_following) {
        line += tr(" Following the newest %1 s (pan or zoom to stop; End follows again).")
                    .arg(double(m_followSpanNs) / 1e9, 0, 'g', 3);
    } else {
        line += tr(" Not following (End shows the newest %1 s).")
                    .arg(double(m_followSpanNs) / 1e9, 0, 'g', 3);
    }
    return line;
}

void MainWindow::chooseAndAttach() {
    AttachDialog dialog(this);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    const QStringList sockets = dialog.selectedSockets();
    if (sockets.isEmpty()) {
        return;
    }
    QString error;
    if (!attachLive(sockets, &error)) {
        QMessageBox::warning(this, tr("Attach to Running Job"),
                             tr("Could not attach:\n%1").arg(error));
    } else if (!error.isEmpty()) {
        QMessageBox::information(this, tr("Attach to Running Job"),
                                 tr("Attached, but not to every process:\n%1").arg(error));
    }
}

void MainWindow::saveReceived() {
    if (!m_live) {
        return;
    }
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save received data"), QStringLiteral("live.vscope"), tr("Traces (*.vscope)"));
    if (path.isEmpty()) {
        return;
    }
    QString error;
    const QStringList written = m_live->saveReceived(path, &error);
    if (!error.isEmpty()) {
        QMessageBox::warning(this, tr("Save received data"), error);
    } else {
        statusBar()->showMessage(tr("Saved %1").arg(written.join(QStringLiteral(", "))), 5000);
    }
}

}  // namespace vramscope::app
