#include "job_loader.h"

#include "vramscope/trace/input_bytes.h"

#include <QThread>

#include <filesystem>

#include "vramscope/analysis/model/job_title.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/bundled_sample.h"

namespace vramscope::app {

namespace {

using ModelResult = trace::Result<std::shared_ptr<const analysis::JobModel>>;

/// The model of an opened job, with the build's progress passed on.
ModelResult modelOf(trace::Result<trace::Job> job, std::string title,
                    const trace::Progress& progress) {
    if (!job.ok()) {
        return job.error();
    }
    return analysis::buildJobModel(std::move(job).value(), std::move(title), progress);
}

}  // namespace

ModelResult loadJobModel(const std::vector<std::string>& paths, const trace::Progress& progress) {
    trace::ReadOptions options;
    auto limit = trace::maxInputBytesSetting();  // VRAMSCOPE_MAX_INPUT_GIB
    if (!limit) {
        return limit.error();
    }
    options.maxInputBytes = *limit;
    options.progress = progress;
    return modelOf(trace::openJob(paths, options), jobTitle(paths), progress);
}

ModelResult loadBundledSample(const trace::Progress& progress) {
    return modelOf(openBundledSample(), "bundled sample", progress);
}

std::string jobTitle(const std::vector<std::string>& paths) {
    return analysis::jobTitle(paths);
}

JobLoader::JobLoader(QObject* parent) : QObject(parent) {}

JobLoader::~JobLoader() {
    cancel();
    wait();
}

bool JobLoader::isRunning() const {
    return m_thread && m_thread->isRunning();
}

void JobLoader::cancel() {
    if (m_cancel) {
        m_cancel->store(true);
    }
}

void JobLoader::wait() {
    if (m_thread) {
        m_thread->wait();
    }
}

void JobLoader::start(const QStringList& paths) {
    if (isRunning()) {
        cancel();
        wait();
    }
    auto cancelFlag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = cancelFlag;
    std::vector<std::string> files;
    for (const QString& p : paths) {
        files.push_back(p.toStdString());
    }
    QThread* thread = QThread::create([this, files, paths, cancelFlag] {
        int lastPermille = -1;
        std::string lastText;
        const trace::Progress report = [&](double done, std::string_view stage) {
            const int permille = static_cast<int>(1000.0 * done);
            if (permille != lastPermille || stage != lastText) {
                lastPermille = permille;
                lastText = std::string(stage);
                const QString line = QString::fromStdString(lastText);
                QMetaObject::invokeMethod(
                    this, [this, permille, line] { emit progress(permille, line); },
                    Qt::QueuedConnection);
            }
            return !cancelFlag->load();
        };
        ModelResult result =
            files.empty() ? loadBundledSample(report) : loadJobModel(files, report);
        QMetaObject::invokeMethod(
            this,
            [this, result = std::move(result), paths, cancelFlag]() {
                if (cancelFlag->load() ||
                    (!result.ok() && result.error().code == trace::ErrorCode::Cancelled)) {
                    emit cancelled(paths);
                } else if (!result.ok()) {
                    emit failed(QString::fromStdString(result.error().describe()), paths);
                } else {
                    emit finished(result.value(), paths);
                }
            },
            Qt::QueuedConnection);
    });
    if (m_thread) {
        m_thread->deleteLater();
    }
    m_thread = thread;
    thread->start();
}

}  // namespace vramscope::app
