#include "open_benchmark.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>

#include <cstdio>

#include "main_window.h"
#include "vramscope/widgets/timeline_view.h"

namespace vramscope::app {

namespace {

constexpr const char* kVariable = "VRAMSCOPE_BENCH_OPEN";

QElapsedTimer& openClock() {
    static QElapsedTimer clock;
    return clock;
}

/// A field of /proc/self/status in kB ("VmRSS:\t  45348 kB"), -1 when it is missing.
long statusKb(const QByteArray& status, const char* field) {
    const QByteArray key = QByteArray(field) + ':';
    qsizetype at = status.indexOf(key);
    // A field name at the start of a line only ("VmRSS" is not inside another name, but be sure).
    while (at > 0 && status[at - 1] != '\n') {
        at = status.indexOf(key, at + 1);
    }
    if (at < 0) {
        return -1;
    }
    const qsizetype end = status.indexOf('\n', at);
    const qsizetype from = at + key.size();
    bool ok = false;
    const long kb =
        status.mid(from, end < 0 ? -1 : end - from).trimmed().split(' ').value(0).toLong(&ok);
    return ok ? kb : -1;
}

}  // namespace

const char* openStageName(OpenStage stage) {
    switch (stage) {
        case OpenStage::Started:
            return "start";
        case OpenStage::Overview:
            return "overview";
        case OpenStage::Index:
            return "index";
        case OpenStage::Detail:
            return "detail";
    }
    return "?";
}

QString openStageLine(OpenStage stage, int64_t elapsedMs, const QByteArray& procStatus) {
    return QStringLiteral("bench-open %1 ms=%2 rss_kb=%3 hwm_kb=%4")
        .arg(QLatin1String(openStageName(stage)))
        .arg(elapsedMs)
        .arg(statusKb(procStatus, "VmRSS"))
        .arg(statusKb(procStatus, "VmHWM"));
}

void markOpenStage(MainWindow& window, OpenStage stage, bool last) {
    if (!qEnvironmentVariableIsSet(kVariable)) {
        return;
    }
    if (stage == OpenStage::Started) {
        openClock().start();
        return;
    }
    if (!openClock().isValid()) {
        return;
    }
    window.timeline()->replotNow();  // the picture is drawn before the clock is read
    const int64_t elapsed = openClock().elapsed();
    QFile f(QStringLiteral("/proc/self/status"));
    const QByteArray status = f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    std::fprintf(stderr, "%s\n", openStageLine(stage, elapsed, status).toUtf8().constData());
    std::fflush(stderr);
    if (last && qEnvironmentVariable(kVariable) == QLatin1String("exit")) {
        QTimer::singleShot(0, qApp, &QCoreApplication::quit);
    }
}

}  // namespace vramscope::app
