#pragma once
// Opening a job for the GUI: read the files, run the analyses the views draw, and hand the result
// to the GUI thread as an immutable LoadedJob.

#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "vramscope/trace/open_trace.h"
#include "vramscope/widgets/loaded_job.h"

class QThread;

namespace vramscope::app {

/// Builds the GUI's view of `job`: one GpuSeries per device timeline (analysis::
/// buildMemoryTimelines, reduced with analysis::LodSeries), ranges and OOMs, all moved onto job
/// time (ns from the earliest event of any rank, after each rank's clockOffsetNs), and the load
/// problems in words. `cancel`, when set, is polled between ranks; the result is then nullptr.
std::shared_ptr<const widgets::LoadedJob> analyseJob(trace::Job job, std::string title,
                                                     const std::atomic<bool>* cancel = nullptr);

/// Opens `paths` as one job (trace::openJob) and analyses it, on the calling thread.
trace::Result<std::shared_ptr<const widgets::LoadedJob>> loadJob(
    const std::vector<std::string>& paths, const trace::ReadOptions& options = {});

/// The bundled sample job (resources/sample, vramscope::openBundledSample), analysed.
trace::Result<std::shared_ptr<const widgets::LoadedJob>> loadBundledSample();

/// Display name for a set of inputs: the file or directory name, or "N files".
std::string jobTitle(const std::vector<std::string>& paths);

/// Loads a job on a worker thread, reports progress and can be cancelled. Signals arrive on the
/// thread that owns the loader (the GUI thread). One load at a time; start() while running cancels
/// the running one first.
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
    /// Progress of the current file, 0..1000, with a line to show.
    void progress(int permille, const QString& text);
    void finished(std::shared_ptr<const vramscope::widgets::LoadedJob> job,
                  const QStringList& paths);
    void failed(const QString& message, const QStringList& paths);
    void cancelled(const QStringList& paths);

private:
    QThread* m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

}  // namespace vramscope::app
