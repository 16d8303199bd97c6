#include "collective_hover.h"

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>

#include <algorithm>

#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("CommLanesView", text);
}

/// Participants listed before the rest are summarised in one line: a tooltip stays on screen.
constexpr size_t kMaxParticipantLines = 16;

}  // namespace

std::optional<size_t> collectiveOccurrenceAt(const analysis::CollectiveBandwidthReport& report,
                                             size_t input, trace::DeviceIndex device, int64_t tNs,
                                             int64_t slackNs) {
    const auto& all = report.occurrences;
    const auto first = std::partition_point(
        all.begin(), all.end(),
        [input](const analysis::CollectiveBandwidth& o) { return o.input < input; });
    const auto last = std::partition_point(
        first, all.end(),
        [input](const analysis::CollectiveBandwidth& o) { return o.input == input; });
    // Start time order within the input: those starting after t + slack cannot hold it. A
    // collective may be long, so every earlier one is a candidate; the latest start wins.
    const auto end =
        std::partition_point(first, last, [tNs, slackNs](const analysis::CollectiveBandwidth& o) {
            return o.startNs <= tNs + slackNs;
        });
    for (auto it = end; it != first;) {
        --it;
        if (it->device == device && it->startNs - slackNs <= tNs &&
            tNs < it->startNs + std::max<int64_t>(it->durationNs, 1) + slackNs) {
            return size_t(it - all.begin());
        }
    }
    return std::nullopt;
}

std::optional<size_t> matchedCollectiveOf(const analysis::CollectiveMatch& match,
                                          const analysis::CollectiveBandwidth& o,
                                          int64_t arrivalJobNs) {
    for (size_t i = 0; i < match.collectives.size(); ++i) {
        const analysis::MatchedCollective& c = match.collectives[i];
        if (c.function != o.function) {
            continue;
        }
        for (const analysis::CollectiveParticipant& p : c.participants) {
            if (p.rank == o.rank && p.startNs == arrivalJobNs) {
                return i;
            }
        }
    }
    return std::nullopt;
}

QString timingSourceText(trace::CollectiveTiming timing) {
    switch (timing) {
        case trace::CollectiveTiming::Unknown:
            return {};
        case trace::CollectiveTiming::Kernel:
            return tr("the NCCL kernel's interval (GPU activity record)");
        case trace::CollectiveTiming::KernelChannels:
            return tr("NCCL kernel-channel events (GPU timer)");
        case trace::CollectiveTiming::Proxy:
            return tr("NCCL proxy operations (host)");
        case trace::CollectiveTiming::Host:
            return tr("host times only (enqueue to completion)");
    }
    return {};
}

QString describeCollective(const analysis::CollectiveBandwidth& o,
                           const analysis::MatchedCollective* matched, bool partialJob) {
    QStringList lines;
    QString head =
        QStringLiteral("<b>%1</b>").arg(QString::fromStdString(o.function).toHtmlEscaped());
    if (o.seq >= 0) {
        head += QStringLiteral(" #%1").arg(o.seq);
    }
    if (o.pointToPoint) {
        head += tr(" (point-to-point)");
    }
    lines << head;
    QStringList message;
    if (o.bytes > 0) {
        message << tr("%1 (%2 bytes)")
                       .arg(formatBytes(double(o.bytes)), QLocale().toString(qulonglong(o.bytes)));
    }
    if (o.ranks > 0) {
        message << (o.ranks == 1 ? tr("1 rank") : tr("%1 ranks").arg(o.ranks));
    }
    if (!message.isEmpty()) {
        lines << message.join(QStringLiteral(", "));
    }
    QStringList how;
    if (!o.algorithm.empty() || !o.protocol.empty()) {
        QStringList ap;
        for (const std::string& s : {o.algorithm, o.protocol}) {
            if (!s.empty()) {
                ap << QString::fromStdString(s).toHtmlEscaped();
            }
        }
        how << ap.join(QStringLiteral(" / "));
    }
    if (o.channels > 0) {
        how << (o.channels == 1 ? tr("1 channel") : tr("%1 channels").arg(o.channels));
    }
    if (!how.isEmpty()) {
        lines << how.join(QStringLiteral(", "));
    }
    QString figures = tr("duration %1").arg(formatDuration(double(o.durationNs)));
    if (o.busbwGBps) {
        figures += tr(", busBw %1").arg(formatBandwidth(*o.busbwGBps));
    }
    if (o.algbwGBps) {
        figures += tr(", algBw %1").arg(formatBandwidth(*o.algbwGBps));
    }
    lines << figures;
    const QString timing = timingSourceText(o.timing);
    if (!timing.isEmpty()) {
        lines << tr("timed by %1").arg(timing);
    }
    if (!matched) {
        if (!o.pointToPoint) {
            lines << tr("not matched with the other ranks' collectives");
        }
        return lines.join(QStringLiteral("<br>"));
    }
    int64_t first = INT64_MAX;
    for (const analysis::CollectiveParticipant& p : matched->participants) {
        first = std::min(first, p.startNs);
    }
    const size_t seen = matched->participants.size();
    if (toInt(matched->stragglerRank) < 0) {
        lines << (o.ranks > 0 && size_t(o.ranks) > seen
                      ? tr("on %1 of %2 ranks (the others are missing), all arriving at once")
                            .arg(seen)
                            .arg(o.ranks)
                      : tr("on %1 ranks, all arriving at once").arg(seen));
        return lines.join(QStringLiteral("<br>"));
    }
    lines << (o.ranks > 0 && size_t(o.ranks) > seen
                  ? tr("on %1 of %2 ranks (the others are missing):").arg(seen).arg(o.ranks)
                  : tr("on %1 ranks (arrival after the first; wait for the last):").arg(seen));
    size_t shown = 0;
    for (const analysis::CollectiveParticipant& p : matched->participants) {
        if (shown == kMaxParticipantLines) {
            lines << tr("... and %1 more ranks").arg(seen - shown);
            break;
        }
        ++shown;
        QString line = tr("&nbsp;&nbsp;rank %1: +%2")
                           .arg(toInt(p.rank))
                           .arg(formatDuration(double(p.startNs - first)));
        if (p.rank == matched->stragglerRank) {
            line += QStringLiteral(" <span style=\"color:#d62728\"><b>%1</b></span>")
                        .arg(partialJob ? tr("last present") : tr("last"));
        } else {
            line += tr(", waited %1").arg(formatDuration(double(p.waitNs)));
        }
        if (p.rank == o.rank) {
            line += tr(" (this rank)");
        }
        lines << line;
    }
    return lines.join(QStringLiteral("<br>"));
}

}  // namespace vramscope::widgets
