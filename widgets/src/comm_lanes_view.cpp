#include "vramscope/widgets/comm_lanes_view.h"

#include <QMetaMethod>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <optional>

#include "collective_hover.h"
#include "vramscope/analysis/collectives/straggler.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/time_interaction.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

const QColor kClassColor[analysis::kLaneClassCount] = {
    QColor(76, 120, 168),  // compute: blue
    QColor(245, 133, 24),  // communication: orange
    QColor(84, 162, 75),   // memory: green
};
const QColor kStraggler(214, 39, 40);
const QColor kIdle(150, 150, 150);

/// 1, 2 or 5 times a power of ten, at least `raw`.
double scaleTickStep(double raw) {
    const double p = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-9))));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * p >= raw) {
            return m * p;
        }
    }
    return 10.0 * p;
}

QBrush idleBrush() {
    QBrush b(QColor(150, 150, 150, 110), Qt::BDiagPattern);
    return b;
}

}  // namespace

CommLanesView::CommLanesView(ZoomState* zoom, QWidget* parent) : QWidget(parent), m_zoom(zoom) {
    m_interaction = new TimeInteraction(
        m_zoom, this,
        {[this] { return mapper(); },
         [this](QPointF pos) { return laneAt(pos.y()); },
         {},
         [this](QPointF pos, int64_t t) {
             if (!isSignalConnected(
                     QMetaMethod::fromSignal(&CommLanesView::contextMenuRequested))) {
                 return false;
             }
             emit contextMenuRequested(mapToGlobal(pos.toPoint()), t, laneAt(pos.y()));
             return true;
         }});
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    connect(m_zoom, &ZoomState::visibleRangeChanged, this, qOverload<>(&QWidget::update));
    connect(m_zoom, &ZoomState::cursorChanged, this, qOverload<>(&QWidget::update));
    connect(m_zoom, &ZoomState::selectionChanged, this, qOverload<>(&QWidget::update));
}

void CommLanesView::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    relayout();
    update();
}

void CommLanesView::setMargins(int left, int right) {
    m_plotLeft = left;
    m_right = right;
    relayout();
    update();
}

void CommLanesView::relayout() {
    m_lanes.clear();
    m_rankRows.clear();
    m_collectiveRanks.clear();
    if (!m_job) {
        m_contentHeight = 0;
        return;
    }
    const analysis::JobModel& job = *m_job;
    for (const analysis::RankInfo& r : job.ranks) {
        m_collectiveRanks.push_back(r.rank);
    }
    // The same numbers analyzeJob matched the collectives with (unknown ranks get a free one).
    m_collectiveRanks = analysis::collectiveRanks(m_collectiveRanks);
    // Narrower rows when there are many GPUs, so that a whole job still fits on screen.
    const size_t n = m_job->kernels.size();
    m_rowHeight = n <= 4 ? 9 : (n <= 16 ? 7 : (n <= 32 ? 5 : 3));
    m_notesRowHeight = m_notes.empty() ? 0 : fontMetrics().height() + 6;
    int y = lanesTop();
    int labelWidth = fontMetrics().horizontalAdvance(tr("iterations"));
    int lastRank = -1;
    for (const analysis::GpuKernelAnalysis& k : m_job->kernels) {
        if (k.key.rankIndex != lastRank) {
            lastRank = k.key.rankIndex;
            RankRow row;
            row.rankIndex = k.key.rankIndex;
            for (const analysis::RangeSpan& r : job.ranks[size_t(k.key.rankIndex)].ranges) {
                if (r.kind == trace::RangeKind::Iteration) {
                    row.iterations.push_back(&r);
                }
            }
            std::sort(row.iterations.begin(), row.iterations.end(),
                      [](const analysis::RangeSpan* a, const analysis::RangeSpan* b) {
                          return a->startNs < b->startNs;
                      });
            if (!row.iterations.empty()) {
                row.top = y;
                y += kIterationHeight;
                m_rankRows.push_back(std::move(row));
            }
        }
        m_lanes.push_back(Lane{k.key, &k, gpuLabel(job, k.key), y});
        labelWidth = std::max(labelWidth, fontMetrics().horizontalAdvance(m_lanes.back().label));
        y += 3 * m_rowHeight + kLaneGap;
    }
    // The plots' margin when the labels fit in it, wider otherwise.
    m_left = std::max(m_plotLeft, labelWidth + 14);
    m_contentHeight = y + 4;
    setMinimumHeight(m_contentHeight);
    updateGeometry();
}

QSize CommLanesView::sizeHint() const {
    return {800, std::max(m_contentHeight, 120)};
}

QSize CommLanesView::minimumSizeHint() const {
    return {300, std::max(m_contentHeight, 80)};
}

TimeMapper CommLanesView::mapper() const {
    return {m_zoom->visibleRange(), double(m_left), double(width() - m_right)};
}

analysis::GpuKey CommLanesView::laneAt(double y) const {
    for (const Lane& lane : m_lanes) {
        if (y >= lane.top && y < lane.top + 3 * m_rowHeight) {
            return lane.key;
        }
    }
    return {};
}

int CommLanesView::laneOfRank(trace::RankId rank) const {
    for (size_t i = 0; i < m_lanes.size(); ++i) {
        if (m_collectiveRanks[size_t(m_lanes[i].key.rankIndex)] == rank) {
            return int(i);
        }
    }
    return -1;
}

std::vector<size_t> CommLanesView::visibleCollectives() const {
    std::vector<size_t> out;
    if (!m_job) {
        return out;
    }
    const TimeRange v = m_zoom->visibleRange();
    const auto& all = m_job->collectives().collectives;
    for (size_t i = 0; i < all.size(); ++i) {
        int64_t first = INT64_MAX;
        int64_t last = INT64_MIN;
        for (const analysis::CollectiveParticipant& p : all[i].participants) {
            first = std::min(first, p.startNs);
            last = std::max(last, p.endNs);
        }
        if (first < v.endNs && last >= v.startNs) {
            out.push_back(i);
        }
    }
    return out;
}

void CommLanesView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!m_job || m_lanes.empty()) {
        p.setPen(palette().placeholderText().color());
        p.drawText(rect(), Qt::AlignCenter, tr("No kernels in this job: nothing to show."));
        return;
    }
    paintLegend(p);
    const TimeRange v = m_zoom->visibleRange();
    const TimeMapper tm = mapper();
    const int plotRight = width() - m_right;
    p.setClipRect(QRect(m_left, 0, plotRight - m_left, height()));
    for (const RankRow& row : m_rankRows) {
        for (const analysis::RangeSpan* s : row.iterations) {
            if (s->endNs < v.startNs || s->startNs > v.endNs) {
                continue;
            }
            const double x0 = tm.xAt(s->startNs);
            const double x1 = std::max(tm.xAt(s->endNs), x0 + 1);
            const QRectF r(x0, row.top + 1, x1 - x0, kIterationHeight - 3);
            p.fillRect(r, palette().alternateBase());
            p.setPen(palette().mid().color());
            p.drawRect(r);
            if (r.width() > 30) {
                p.setPen(palette().text().color());
                p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                           elideName(p.fontMetrics(), s->name, int(r.width()) - 5));
            }
        }
    }
    for (const Lane& lane : m_lanes) {
        paintLane(p, lane);
    }
    paintCollectives(p);
    paintNotes(p);
    if (m_zoom->hasSelection()) {
        const TimeRange s = m_zoom->selection();
        QColor c = palette().highlight().color();
        c.setAlpha(50);
        p.fillRect(QRectF(tm.xAt(s.startNs), kLegendHeight + kAxisHeight,
                          tm.xAt(s.endNs) - tm.xAt(s.startNs),
                          m_contentHeight - kLegendHeight - kAxisHeight),
                   c);
    }
    if (m_zoom->hasCursor()) {
        p.setPen(QPen(palette().text().color(), 1, Qt::DashLine));
        const double x = tm.xAt(m_zoom->cursorNs());
        p.drawLine(QPointF(x, kLegendHeight + kAxisHeight), QPointF(x, m_contentHeight));
    }
    p.setClipping(false);
    // Lane labels in the left margin.
    p.setPen(palette().text().color());
    for (const RankRow& row : m_rankRows) {
        p.drawText(QRect(4, row.top, m_left - 8, kIterationHeight),
                   Qt::AlignVCenter | Qt::AlignRight, tr("iterations"));
    }
    for (const Lane& lane : m_lanes) {
        p.drawText(QRect(4, lane.top, m_left - 8, 3 * m_rowHeight),
                   Qt::AlignVCenter | Qt::AlignRight, lane.label);
    }
    paintAxis(p);
}

void CommLanesView::paintLane(QPainter& p, const Lane& lane) const {
    const TimeRange v = m_zoom->visibleRange();
    const int r = lane.key.rankIndex;
    const analysis::KernelLaneIndex& index = lane.kernels->lanes;
    const TimeMapper tm = mapper();
    const int64_t nsPerPx = std::max<int64_t>(1, int64_t(tm.nsPerPixel()));
    const double laneH = 3 * m_rowHeight;
    // Idle: between the first and the last kernel, wherever no kernel runs.
    const double s0 = std::max(tm.xAt(m_job->toJob(r, index.firstStartNs())), double(m_left));
    const double s1 =
        std::min(tm.xAt(m_job->toJob(r, index.lastEndNs())), double(width() - m_right));
    if (s1 > s0) {
        p.fillRect(QRectF(s0, lane.top, s1 - s0, laneH), idleBrush());
    }
    const analysis::LaneBlocks blocks =
        index.blocks(m_job->toRank(r, v.startNs), m_job->toRank(r, v.endNs), nsPerPx);
    auto rectOf = [&](const analysis::LaneBlock& b, double top, double h) {
        const double x0 = std::max(tm.xAt(m_job->toJob(r, b.startNs)), double(m_left) - 1);
        const double x1 = std::max(tm.xAt(m_job->toJob(r, b.endNs)), x0 + 1.0);
        return QRectF(x0, top, std::min(x1, double(width())) - x0, h);
    };
    for (const analysis::LaneBlock& b : blocks.busy) {
        p.fillRect(rectOf(b, lane.top, laneH), palette().base());
    }
    for (size_t c = 0; c < analysis::kLaneClassCount; ++c) {
        for (const analysis::LaneBlock& b : blocks.byClass[c]) {
            p.fillRect(rectOf(b, lane.top + double(c) * m_rowHeight + 0.5, m_rowHeight - 1.0),
                       kClassColor[c]);
        }
    }
    p.setPen(palette().mid().color());
    p.drawLine(QPointF(m_left, lane.top + laneH + 1),
               QPointF(width() - m_right, lane.top + laneH + 1));
}

void CommLanesView::paintCollectives(QPainter& p) const {
    const std::vector<size_t> visible = visibleCollectives();
    const auto& all = m_job->collectives().collectives;
    const TimeMapper tm = mapper();
    // Linking lines only while they can be told apart; straggler marks always.
    const bool lines = double(visible.size()) <= tm.widthPx() / 6.0;
    p.setRenderHint(QPainter::Antialiasing, true);
    for (size_t i : visible) {
        const analysis::MatchedCollective& c = all[i];
        std::vector<std::pair<int, QPointF>> points;  // lane, arrival point
        for (const analysis::CollectiveParticipant& part : c.participants) {
            const int lane = laneOfRank(part.rank);
            if (lane < 0) {
                continue;
            }
            const Lane& l = m_lanes[size_t(lane)];
            const double y = l.top + 1.5 * m_rowHeight;
            if (part.waitNs > 0) {
                const double x0 = tm.xAt(part.startNs);
                const double x1 = std::max(tm.xAt(part.startNs + part.waitNs), x0 + 1);
                p.fillRect(QRectF(x0, l.top + m_rowHeight, x1 - x0, m_rowHeight),
                           QBrush(kStraggler.lighter(130), Qt::Dense5Pattern));
            }
            points.emplace_back(lane, QPointF(tm.xAt(part.startNs), y));
        }
        std::sort(points.begin(), points.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        if (lines && points.size() > 1) {
            QColor lc = palette().text().color();
            lc.setAlpha(140);
            p.setPen(QPen(lc, 1));
            for (size_t k = 1; k < points.size(); ++k) {
                p.drawLine(points[k - 1].second, points[k].second);
            }
        }
        for (const analysis::CollectiveParticipant& part : c.participants) {
            const int lane = laneOfRank(part.rank);
            if (lane < 0) {
                continue;
            }
            const QPointF pt(tm.xAt(part.startNs), m_lanes[size_t(lane)].top + 1.5 * m_rowHeight);
            const bool straggler = part.rank == c.stragglerRank;
            if (straggler) {
                p.setPen(QPen(Qt::white, 1));
                p.setBrush(kStraggler);
                p.drawEllipse(pt, 4.5, 4.5);
            } else if (lines) {
                p.setPen(Qt::NoPen);
                p.setBrush(palette().text().color());
                p.drawEllipse(pt, 2.0, 2.0);
            }
        }
    }
    p.setBrush(Qt::NoBrush);
    p.setRenderHint(QPainter::Antialiasing, false);
}

void CommLanesView::paintAxis(QPainter& p) const {
    const TimeRange v = m_zoom->visibleRange();
    // At the top, under the legend, so that it stays in view when the lanes scroll.
    const int y = kLegendHeight + kAxisHeight - 3;
    const int plotRight = width() - m_right;
    const TimeMapper tm = mapper();
    p.setPen(palette().text().color());
    p.drawLine(m_left, y, plotRight, y);
    const double step = scaleTickStep(double(v.durationNs()) / std::max(1.0, tm.widthPx() / 110.0));
    const TimeUnit unit = timeUnitFor(double(v.durationNs()));
    const QFontMetrics fm = p.fontMetrics();
    for (double t = std::ceil(double(v.startNs) / step) * step; t <= double(v.endNs); t += step) {
        const double x = tm.xAt(int64_t(t));
        p.drawLine(QPointF(x, y), QPointF(x, y - 4));
        const QString label = formatTime(t, unit, step);
        const int lw = fm.horizontalAdvance(label);
        // Centred on the tick, but kept inside the plot so that it never meets the axis title.
        const double left =
            std::clamp(x - lw / 2.0 - 1, double(m_left), double(plotRight - lw - 2));
        p.drawText(QRectF(left, y - 4 - fm.height(), lw + 2, fm.height()), Qt::AlignCenter, label);
    }
    p.drawText(QRect(4, y - 4 - fm.height(), m_left - 8, fm.height()),
               Qt::AlignRight | Qt::AlignVCenter, tr("job time"));
}

void CommLanesView::paintLegend(QPainter& p) const {
    // From the widget's left edge (the lane labels' margin is empty at this height), in words
    // that fit: the full labels when the row has room, shorter ones when not, and items that
    // still do not fit are left out whole rather than cut ("straggler arri...").
    int x = 4;
    const int y = 4;
    const int right = width() - 4;
    const QFontMetrics fm = p.fontMetrics();
    // First the job-level fact that qualifies every arrival drawn here: how many ranks are open.
    const analysis::JobCoverage& coverage = m_job->analysis.coverage;
    const bool partial = coverage.partial();
    const QString ranks =
        QString::fromStdString(analysis::coverageText(coverage.ranksPresent, coverage.worldSize)) +
        (partial ? tr(" (partial job):") : QStringLiteral(":"));
    QFont bold = p.font();
    bold.setBold(partial);
    p.save();
    p.setFont(bold);
    p.setPen(partial ? QColor(160, 90, 0) : palette().text().color());
    p.drawText(QPoint(x, y + 2 + fm.ascent() - 1), ranks);
    x += QFontMetrics(bold).horizontalAdvance(ranks) + 12;
    p.restore();
    struct Item {
        QBrush brush;
        QString text;
        QString shortText;
    };
    std::vector<Item> items = {{kClassColor[0], tr("compute"), tr("compute")},
                               {kClassColor[1], tr("communication"), tr("comm.")},
                               {kClassColor[2], tr("memcpy/memset"), tr("memcpy")},
                               {idleBrush(), tr("idle"), tr("idle")}};
    if (!m_job->collectives().collectives.empty()) {
        items.push_back(
            {QBrush(kStraggler.lighter(130), Qt::Dense5Pattern),
             partial ? tr("waiting for the last present") : tr("waiting for the last rank"),
             tr("waiting")});
        items.push_back({kStraggler, partial ? tr("last present arrives") : tr("last rank arrives"),
                         tr("last arrives")});
    }
    auto widthOf = [&](const QString& text) { return 18 + fm.horizontalAdvance(text) + 16; };
    int full = 0;
    for (const Item& it : items) {
        full += widthOf(it.text);
    }
    const bool useShort = x + full - 16 > right;
    for (const Item& it : items) {
        const QString& text = useShort ? it.shortText : it.text;
        if (x + widthOf(text) - 16 > right) {
            break;
        }
        p.fillRect(QRect(x, y + 2, 14, 10), it.brush);
        p.setPen(palette().mid().color());
        p.drawRect(QRect(x, y + 2, 14, 10));
        p.setPen(palette().text().color());
        p.drawText(QPoint(x + 18, y + 2 + fm.ascent() - 1), text);
        x += widthOf(text);
    }
    Q_UNUSED(kIdle);
}

QString CommLanesView::describeAt(QPoint pos) const {
    if (!m_job || pos.x() < m_left || pos.x() > width() - m_right) {
        return {};
    }
    const TimeMapper tm = mapper();
    const int64_t t = tm.timeAt(pos.x());
    const analysis::JobModel& job = *m_job;
    for (const RankRow& row : m_rankRows) {
        if (pos.y() >= row.top && pos.y() < row.top + kIterationHeight) {
            for (const analysis::RangeSpan* s : row.iterations) {
                if (s->startNs <= t && t < s->endNs) {
                    return tr("<b>%1</b><br>%2")
                        .arg(QString::fromStdString(s->name).toHtmlEscaped(),
                             formatDuration(double(s->endNs - s->startNs)));
                }
            }
            return {};
        }
    }
    const double pxNs = tm.nsPerPixel();
    for (const Lane& lane : m_lanes) {
        if (pos.y() < lane.top || pos.y() >= lane.top + 3 * m_rowHeight) {
            continue;
        }
        const int row = std::clamp((pos.y() - lane.top) / m_rowHeight, 0, 2);
        QString text;
        const int ri = lane.key.rankIndex;
        const trace::RankId rank = m_collectiveRanks[size_t(lane.key.rankIndex)];
        // The collective under the pointer on the communication row (within 2 px, so that a
        // short one stays reachable when zoomed out), in full; its arrival line is then left out.
        std::optional<size_t> detailed;
        if (analysis::LaneClass(row) == analysis::LaneClass::Communication) {
            const analysis::CollectiveBandwidthReport& bw = job.analysis.bandwidth;
            if (const auto o =
                    collectiveOccurrenceAt(bw, size_t(lane.key.rankIndex), lane.key.device,
                                           job.toRank(ri, t), int64_t(2 * pxNs))) {
                const analysis::CollectiveBandwidth& occ = bw.occurrences[*o];
                detailed = matchedCollectiveOf(job.collectives(), occ, job.toJob(ri, occ.startNs));
                text += describeCollective(
                            occ, detailed ? &job.collectives().collectives[*detailed] : nullptr,
                            job.analysis.coverage.partial()) +
                        QStringLiteral("<br>");
            }
        }
        // Collective arrivals near the pointer (within 4 px).
        for (size_t i : visibleCollectives()) {
            if (detailed && *detailed == i) {
                continue;
            }
            const analysis::MatchedCollective& c = m_job->collectives().collectives[i];
            for (const analysis::CollectiveParticipant& part : c.participants) {
                if (part.rank == rank && std::fabs(double(part.startNs - t)) <= 4 * pxNs) {
                    const QString last =
                        toInt(c.stragglerRank) < 0
                            ? tr("all ranks at once")
                            : (job.analysis.coverage.partial() ? tr("last present: rank %1")
                                                               : tr("last: rank %1"))
                                  .arg(toInt(c.stragglerRank));
                    text += tr("<b>%1 #%2</b>: %3, skew %4; this rank waited %5<br>")
                                .arg(QString::fromStdString(c.function))
                                .arg(c.seqNumber)
                                .arg(last, formatDuration(double(c.skewNs)),
                                     formatDuration(double(part.waitNs)));
                }
            }
        }
        const int64_t k = lane.kernels->lanes.kernelAt(job.toRank(ri, t), analysis::LaneClass(row));
        const trace::TraceData& data = job.job.ranks[size_t(lane.key.rankIndex)].trace.data;
        if (k >= 0) {
            const trace::KernelEvent e = data.kernels.at(size_t(k));
            text += tr("%1 (%2)<br>%3, started at %4")
                        .arg(QString::fromUtf8(data.string(e.name).data(),
                                               qsizetype(data.string(e.name).size()))
                                 .toHtmlEscaped(),
                             QString::fromUtf8(analysis::toString(analysis::LaneClass(row))),
                             formatDuration(double(e.endNs - e.startNs)),
                             formatDuration(double(job.toJob(ri, e.startNs))));
        }
        if (analysis::LaneClass(row) == analysis::LaneClass::Communication) {
            for (const analysis::DeviceAnalysis& d : job.analysis.devices) {
                if (int(d.input) == lane.key.rankIndex && d.device == lane.key.device &&
                    d.communication) {
                    text +=
                        (text.isEmpty() ? QString() : QStringLiteral("<br>")) +
                        QString::fromStdString(analysis::communicationSplitText(*d.communication))
                            .toHtmlEscaped();
                }
            }
        }
        if (k < 0 && text.isEmpty()) {
            text = tr("%1: no %2 kernel here")
                       .arg(lane.label,
                            QString::fromUtf8(analysis::toString(analysis::LaneClass(row))));
        }
        return text;
    }
    return {};
}

void CommLanesView::mouseMoveEvent(QMouseEvent* event) {
    // Navigation and the cursor are TimeInteraction's; here only the tooltip, not while dragging.
    if (m_interaction->isDragging()) {
        return;
    }
    const QString tip = describeAt(event->position().toPoint());
    if (tip.isEmpty()) {
        QToolTip::hideText();
    } else {
        QToolTip::showText(event->globalPosition().toPoint(), tip, this);
    }
}

void CommLanesView::setNotes(std::vector<trace::Note> notes) {
    m_notes = std::move(notes);
    relayout();
    update();
}

int CommLanesView::lanesTop() const {
    return kLegendHeight + kAxisHeight + m_notesRowHeight;
}

std::vector<CommLanesView::NoteMark> CommLanesView::noteMarks() const {
    std::vector<NoteMark> marks;
    if (!m_job || m_lanes.empty()) {
        return marks;
    }
    const TimeRange v = m_zoom->visibleRange();
    const TimeMapper tm = mapper();
    const QFontMetrics fm = fontMetrics();
    const double rowTop = kLegendHeight + kAxisHeight + 1;
    const double plotRight = width() - m_right;
    double lastRight = -1e9;  // labels of the row never overlap: each starts after the last
    for (const NumberedNote& n : numberNotes(m_notes)) {
        if (!noteMeets(n.note, v.startNs, v.endNs)) {
            continue;
        }
        double top = lanesTop();
        double bottom = m_contentHeight - 4;
        if (n.note.pinnedToGpu()) {
            const auto lane = std::find_if(m_lanes.begin(), m_lanes.end(), [&n](const Lane& l) {
                return noteShownOn(n.note, l.key);
            });
            if (lane == m_lanes.end()) {
                continue;  // a GPU without kernels has no lane here
            }
            top = lane->top;
            bottom = lane->top + 3 * m_rowHeight;
        }
        const double x0 = std::max(tm.xAt(n.note.startNs), double(m_left));
        const double x1 = std::min(tm.xAt(std::max(n.note.endNs, n.note.startNs)), plotRight);
        NoteMark mark{
            n.note.id, n.number, QRectF(x0, top, std::max(1.0, x1 - x0), bottom - top), {}, {}};
        for (const QString& text :
             {fm.elidedText(noteLabel(n), Qt::ElideRight, 220), QString::number(n.number)}) {
            const double w = fm.horizontalAdvance(text) + 8;
            const double left = std::min(x0 + 2, plotRight - w);
            if (left >= lastRight + 2 && left >= m_left) {
                mark.label = QRectF(left, rowTop, w, m_notesRowHeight - 2);
                mark.text = text;
                lastRight = mark.label.right();
                break;
            }
        }
        marks.push_back(std::move(mark));
    }
    return marks;
}

void CommLanesView::paintNotes(QPainter& p) const {
    for (const NoteMark& mark : noteMarks()) {
        const trace::Note* note = nullptr;
        for (const trace::Note& n : m_notes) {
            if (n.id == mark.id) {
                note = &n;
            }
        }
        const QColor color =
            note ? noteColor(*note) : QColor(QString::fromLatin1(kDefaultNoteColor));
        if (mark.band.width() > 1.5) {
            QColor fill = color;
            fill.setAlpha(45);
            p.fillRect(mark.band, fill);
        }
        p.setPen(QPen(color, 1.5));
        p.drawLine(QPointF(mark.band.left(), mark.band.top()),
                   QPointF(mark.band.left(), mark.band.bottom()));
        if (mark.band.width() > 1.5) {
            p.drawLine(QPointF(mark.band.right(), mark.band.top()),
                       QPointF(mark.band.right(), mark.band.bottom()));
        }
        if (!mark.label.isEmpty()) {
            QColor back = color;
            back.setAlpha(225);
            p.fillRect(mark.label, back);
            p.setPen(QPen(color.darker(140), 1));
            p.drawRect(mark.label);
            p.setPen(color.lightness() < 120 ? Qt::white : Qt::black);
            p.drawText(mark.label.adjusted(4, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                       mark.text);
            // A thin stem from the label down to the lanes it marks.
            p.setPen(QPen(color, 1, Qt::DotLine));
            p.drawLine(QPointF(mark.band.left(), mark.label.bottom()),
                       QPointF(mark.band.left(), mark.band.top()));
        }
    }
}

}  // namespace vramscope::widgets
