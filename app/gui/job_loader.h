#pragma once
// Opening a job for the GUI: read the files and build the job model (analysis::buildJobModel) on
// a worker thread, with progress and cancel, and hand the immutable model to the GUI thread.

#include <QObject>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/progress.h"

class QThread;

namespace vramscope::app {

/// Opens `paths` as one job (trace::openJob) and builds its model once (analysis::buildJobModel),
/// on the calling thread; `progress` hears both the reading and the build (trace::Progress).
/// Errors: the first input that cannot be opened, or cancellation (ErrorCode::Cancelled).
trace::Result<std::shared_ptr<const analysis::JobModel>> loadJobModel(
    const std::vector<std::string>& paths, const trace::Progress& progress = {});

/// The bundled sample job (resources/sample, vramscope::openBundledSample) as a model.
trace::Result<std::shared_ptr<const analysis::JobModel>> loadBundledSample(
    const trace::Progress& progress = {});

/// Display name for a set of inputs: analysis::jobTitle (the file or directory name, or
/// "N inputs").
std::string jobTitle(const std::vector<std::string>& paths);

/// Loads a job on a worker thread, reports progress and can be cancelled. Signals arrive on the
/// thread that owns the loader (the GUI thread). One load at a time; start() while running cancels
/// the running one first, and its result is dropped.
class JobLoader : public QObject {
    Q_OBJECT
public:
    explicit JobLoader(QObject* parent = nullptr);
    ~JobLoader() override;

    /// Starts loading `paths` (files and directories; empty = the bundled sample).
    void start(const QStringList& paths);
    /// Asks the running load to stop; `cancelled` follows once it has.
    void cancel();
    bool isRunning() const;
    /// Waits for the worker to end (used at shutdown).
    void wait();

signals:
    /// Progress of the current stage (reading a file, analysing), 0..1000, with a line to show.
    void progress(int permille, const QString& text);
    void finished(std::shared_ptr<const vramscope::analysis::JobModel> job,
                  const QStringList& paths);
    void failed(const QString& message, const QStringList& paths);
    void cancelled(const QStringList& paths);

private:
    QThread* m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

}  // namespace vramscope::app
