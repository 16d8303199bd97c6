#include "vramscope/widgets/units.h"

#include <QObject>

#include <algorithm>
#include <cmath>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/model/text_format.h"

namespace vramscope::widgets {

QString formatBytes(double bytes) {
    return QString::fromStdString(analysis::formatBytes(bytes));
}

TimeUnit timeUnitFor(double spanNs) {
    const double span = std::fabs(spanNs);
    if (span < 1e4) {
        return {1.0, "ns"};
    }
    if (span < 1e7) {
        return {1e3, "us"};
    }
    if (span < 1e10) {
        return {1e6, "ms"};
    }
    return {1e9, "s"};
}

QString formatTime(double timeNs, TimeUnit unit, double resolutionNs) {
    // Enough decimals that one resolution step changes the printed number.
    const double stepInUnit = std::max(resolutionNs, 1e-3) / unit.ns;
    int decimals = 0;
    if (stepInUnit < 1.0) {
        decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(stepInUnit) - 1e-9)), 0, 9);
    }
    return QStringLiteral("%1 %2").arg(timeNs / unit.ns, 0, 'f', decimals).arg(unit.suffix);
}

QString formatBandwidth(double gigabytesPerSecond) {
    return QString::fromStdString(analysis::formatSignificant(gigabytesPerSecond)) +
           QStringLiteral(" GB/s");
}

QString formatDuration(double ns) {
    return QString::fromStdString(analysis::formatDuration(ns));
}

QString elideName(const QFontMetrics& metrics, const std::string& name, int pixels) {
    return metrics.elidedText(QString::fromStdString(analysis::compactName(name)), Qt::ElideMiddle,
                              pixels);
}

bool hasNoGpu(const analysis::JobModel& job) {
    return analysis::gpusRecorded(job.analysis) == 0;
}

QString noGpuSentence() {
    QString s = QString::fromUtf8(analysis::kNoGpuMessage);
    s[0] = s[0].toUpper();
    return s + QStringLiteral(": no GPU memory and no GPU kernels were recorded.");
}

bool hasNoAllocationEvents(const analysis::JobModel& job) {
    for (const analysis::GpuSeries& g : job.gpus) {
        if (job.memoryOf(g.key) != nullptr) {
            return false;
        }
    }
    return true;
}

QString allocationEventsSources() {
    return QObject::tr(
        "Allocation events come from a vramscope-run capture, a PyTorch memory "
        "snapshot (torch.cuda.memory._dump_snapshot) or a PyTorch profiler trace "
        "taken with profile_memory=True.");
}

QString noAllocationEventsSentence() {
    return QObject::tr("This trace has no allocation events, so there is no live set to show. ") +
           allocationEventsSources();
}

QString gpuLabel(const analysis::JobModel& job, const analysis::GpuKey& key) {
    const bool known = key.rankIndex >= 0 && size_t(key.rankIndex) < job.ranks.size() &&
                       toInt(job.ranks[size_t(key.rankIndex)].rank) >= 0;
    if (!known) {
        return QStringLiteral("rank ? \u00b7 GPU %1").arg(toInt(key.device));
    }
    return QStringLiteral("rank %1 \u00b7 GPU %2")
        .arg(toInt(job.ranks[size_t(key.rankIndex)].rank))
        .arg(toInt(key.device));
}

}  // namespace vramscope::widgets
