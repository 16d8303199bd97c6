#pragma once
// A live attach for the app: receives running jobs' streams (trace::live::Receiver), rebuilds the
// job model from what arrived off the GUI thread, at most every refresh interval and only when
// new data came, and hands each model to the GUI thread.

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <memory>
#include <thread>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/live.h"

namespace vramscope::app {

class LiveSession : public QObject {
    Q_OBJECT
public:
    /// Connects to `sockets` (trace::live::connectSocket, a hello within 2 s each) and starts
    /// receiving and rebuilding every `refreshMs` ms. Null with `error` set (one sentence per
    /// socket that failed) when none could be reached; sockets that failed while others worked
    /// are named in `error` too.
    static std::unique_ptr<LiveSession> attach(const QStringList& sockets, QString* error,
                                               int refreshMs = 500);
    ~LiveSession() override;

    /// Stops receiving (the jobs go on untouched); what arrived stays, and one last model is
    /// built from it.
    void detach();
    bool isDetached() const { return m_detached; }
    /// Every job closed its stream.
    bool hasEnded() const;
    /// "pid 4242 on node3, rank 1 of 8 (12.5 MiB received)", one line per process joined by "; ".
    QString describe() const;
    /// Bytes received so far, over all processes.
    uint64_t receivedBytes() const;
    /// Writes what arrived as .vscope: `path` for one process; for several, PATH-HOST-PID.vscope
    /// per process (PATH without its .vscope). Returns the files written, or an error sentence.
    QStringList saveReceived(const QString& path, QString* error) const;

signals:
    /// A model of everything received so far (GUI thread).
    void updated(std::shared_ptr<const vramscope::analysis::JobModel> model);
    /// Every job closed its stream (sent once, after the model with the last data).
    void ended();

private:
    LiveSession(std::unique_ptr<trace::live::Receiver> receiver, int refreshMs);
    void tick();
    void onBuilt(std::shared_ptr<const analysis::JobModel> model, uint64_t bytes, bool last);

    std::unique_ptr<trace::live::Receiver> m_receiver;
    QTimer m_timer;
    std::thread m_worker;
    bool m_building = false;
    uint64_t m_builtBytes = 0;  ///< whole-frame bytes behind the last model
    bool m_detached = false;
    bool m_endedSent = false;
};

}  // namespace vramscope::app
