#include "live_session.h"

#include <QFile>

#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/job.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {

std::unique_ptr<LiveSession> LiveSession::attach(const QStringList& sockets, QString* error,
                                                 int refreshMs) {
    std::vector<std::string> paths;
    for (const QString& s : sockets) {
        paths.push_back(s.toStdString());
    }
    std::vector<trace::Error> failures;
    auto receiver = trace::live::Receiver::connect(paths, 2000, &failures);
    QStringList problems;
    for (const trace::Error& e : failures) {
        problems << QString::fromStdString(e.describe());
    }
    if (error != nullptr) {
        *error = problems.join(QLatin1Char('\n'));
    }
    if (!receiver.ok()) {
        return nullptr;
    }
    return std::unique_ptr<LiveSession>(new LiveSession(std::move(receiver.value()), refreshMs));
}

LiveSession::LiveSession(std::unique_ptr<trace::live::Receiver> receiver, int refreshMs)
    : m_receiver(std::move(receiver)) {
    m_timer.setInterval(refreshMs);
    connect(&m_timer, &QTimer::timeout, this, &LiveSession::tick);
    m_timer.start();
    QTimer::singleShot(0, this, &LiveSession::tick);  // the backlog shows at once
}

LiveSession::~LiveSession() {
    m_timer.stop();
    if (m_worker.joinable()) {
        m_worker.join();  // its queued result dies with this object (Qt drops it)
    }
    m_receiver->stop();
}

void LiveSession::detach() {
    m_detached = true;
    m_receiver->stop();
    tick();
}

bool LiveSession::hasEnded() const {
    return m_receiver->allEnded();
}

uint64_t LiveSession::receivedBytes() const {
    uint64_t sum = 0;
    for (size_t i = 0; i < m_receiver->sourceCount(); ++i) {
        sum += m_receiver->receivedBytes(i);
    }
    return sum;
}

QString LiveSession::describe() const {
    QStringList parts;
    for (size_t i = 0; i < m_receiver->sourceCount(); ++i) {
        const trace::FileHeader& h = m_receiver->source(i).hello;
        QString s = QStringLiteral("pid %1 on %2").arg(h.pid).arg(QString::fromStdString(h.host));
        if (h.rank != trace::kUnknownRank) {
            s += QStringLiteral(", rank %1").arg(static_cast<int32_t>(h.rank));
            if (h.worldSize > 0) {
                s += QStringLiteral(" of %1").arg(h.worldSize);
            }
        }
        parts << s;
    }
    return QStringLiteral("%1 (%2 received)")
        .arg(parts.join(QStringLiteral("; ")),
             QString::fromStdString(analysis::formatBytes(int64_t(receivedBytes()))));
}

QStringList LiveSession::saveReceived(const QString& path, QString* error) const {
    QStringList written;
    const size_t n = m_receiver->sourceCount();
    QString stem = path;
    if (stem.endsWith(QStringLiteral(".vscope"))) {
        stem.chop(7);
    }
    for (size_t i = 0; i < n; ++i) {
        const trace::FileHeader& h = m_receiver->source(i).hello;
        const QString file = n == 1 ? path
                                    : QStringLiteral("%1-%2-%3.vscope")
                                          .arg(stem, QString::fromStdString(h.host))
                                          .arg(h.pid);
        const std::string bytes = m_receiver->copyWhole(i);
        QFile f(file);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
            f.write(bytes.data(), qint64(bytes.size())) != qint64(bytes.size())) {
            if (error != nullptr) {
                *error = QStringLiteral("%1: cannot write: %2").arg(file, f.errorString());
            }
            return written;
        }
        written << file;
    }
    return written;
}

void LiveSession::tick() {
    if (m_building) {
        return;
    }
    const bool allEnded = m_receiver->allEnded() || m_detached;
    uint64_t whole = 0;
    for (size_t i = 0; i < m_receiver->sourceCount(); ++i) {
        whole += m_receiver->wholeBytes(i);
    }
    if (whole == m_builtBytes && !(allEnded && !m_endedSent)) {
        return;
    }
    if (m_worker.joinable()) {
        m_worker.join();
    }
    // The copies are made here (cheap next to the analyses); the worker owns them.
    std::vector<std::pair<std::string, std::string>> streams;  // path, bytes
    for (size_t i = 0; i < m_receiver->sourceCount(); ++i) {
        streams.emplace_back(m_receiver->source(i).path, m_receiver->copyWhole(i));
    }
    std::string title = "live: " + describe().toStdString();
    m_building = true;
    m_worker = std::thread(
        [this, streams = std::move(streams), title = std::move(title), whole, allEnded]() mutable {
            trace::Job job;
            for (auto& [path, bytes] : streams) {
                auto loaded = trace::readTraceBytes(bytes, path);
                if (!loaded.ok()) {
                    job.skipped.push_back(loaded.error());
                    continue;
                }
                trace::RankTrace r;
                r.path = path;
                r.format = trace::InputFormat::Vscope;
                r.trace = std::move(loaded.value());
                r.rankSource = "header";
                job.ranks.push_back(std::move(r));
            }
            std::sort(job.ranks.begin(), job.ranks.end(), [](const auto& a, const auto& b) {
                return static_cast<uint32_t>(a.trace.data.header.rank) <
                       static_cast<uint32_t>(b.trace.data.header.rank);  // unknown (-1) last
            });
            auto model = analysis::buildJobModel(std::move(job), title);
            std::shared_ptr<const analysis::JobModel> shown =
                model.ok() ? std::move(model.value()) : nullptr;
            QMetaObject::invokeMethod(
                this, [this, shown, whole, allEnded] { onBuilt(shown, whole, allEnded); },
                Qt::QueuedConnection);
        });
}

void LiveSession::onBuilt(std::shared_ptr<const analysis::JobModel> model, uint64_t bytes,
                          bool last) {
    m_building = false;
    m_builtBytes = bytes;
    if (model) {
        emit updated(model);
    }
    if (last && !m_endedSent) {
        m_endedSent = true;
        m_timer.stop();
        emit ended();
    }
}

}  // namespace vramscope::app
