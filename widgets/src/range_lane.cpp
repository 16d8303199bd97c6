#include "vramscope/widgets/range_lane.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "vramscope/widgets/time_interaction.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {
constexpr uint32_t kNvtxRows = 2;  // outermost NVTX depths shown
}

RangeLane::RangeLane(ZoomState* zoom, QWidget* parent) : QWidget(parent), m_zoom(zoom) {
    auto clicked = [this](QPointF pos, int64_t) {
        if (const analysis::RangeSpan* s = rangeAt(pos.toPoint())) {
            const int64_t pad = std::max<int64_t>(1, (s->endNs - s->startNs) / 50);
            m_zoom->setVisibleRange({s->startNs - pad, s->endNs + pad});
        }
    };
    new TimeInteraction(m_zoom, this, {[this] { return mapper(); }, {}, clicked});
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_colors = PlotColors::fromPalette(palette());
    connect(m_zoom, &ZoomState::visibleRangeChanged, this, qOverload<>(&QWidget::update));
    connect(m_zoom, &ZoomState::cursorChanged, this, qOverload<>(&QWidget::update));
}

void RangeLane::setRank(std::shared_ptr<const analysis::JobModel> job, int rankIndex) {
    m_job = std::move(job);
    m_rows.clear();
    if (m_job && rankIndex >= 0 && static_cast<size_t>(rankIndex) < m_job->ranks.size()) {
        const analysis::RankInfo& rank = m_job->ranks[static_cast<size_t>(rankIndex)];
        const QString who = m_job->ranks.size() > 1 && toInt(rank.rank) >= 0
                                ? QStringLiteral(" r%1").arg(toInt(rank.rank))
                                : QString();
        Row iterations{QStringLiteral("iterations") + who, {}};
        std::vector<Row> nvtx(kNvtxRows);
        for (uint32_t d = 0; d < kNvtxRows; ++d) {
            nvtx[d].label = d == 0 ? QStringLiteral("NVTX") + who : QString();
        }
        for (const analysis::RangeSpan& span : rank.ranges) {
            if (span.kind == trace::RangeKind::Iteration) {
                iterations.spans.push_back(&span);
            } else if (span.depth < kNvtxRows) {
                nvtx[span.depth].spans.push_back(&span);
            }
        }
        for (Row* row : {&iterations, &nvtx[0], &nvtx[1]}) {
            if (!row->spans.empty()) {
                std::sort(row->spans.begin(), row->spans.end(),
                          [](const analysis::RangeSpan* a, const analysis::RangeSpan* b) {
                              return a->startNs < b->startNs;
                          });
                m_rows.push_back(std::move(*row));
            }
        }
        if (!m_rows.empty() && m_rows.front().label.isEmpty()) {
            m_rows.front().label = QStringLiteral("NVTX") + who;
        }
    }
    setFixedHeight(static_cast<int>(m_rows.size()) * kRowHeight + 2);
    setVisible(!m_rows.empty());
    updateGeometry();
    update();
}

void RangeLane::setMargins(int left, int right) {
    m_left = left;
    m_right = right;
    update();
}

void RangeLane::applyColors(const PlotColors& colors) {
    m_colors = colors;
    update();
}

QSize RangeLane::sizeHint() const {
    return QSize(400, static_cast<int>(m_rows.size()) * kRowHeight + 2);
}

TimeMapper RangeLane::mapper() const {
    return {m_zoom->visibleRange(), static_cast<double>(m_left),
            static_cast<double>(width() - m_right)};
}

int RangeLane::rowAt(int y) const {
    const int row = (y - 1) / kRowHeight;
    return row >= 0 && row < static_cast<int>(m_rows.size()) ? row : -1;
}

const analysis::RangeSpan* RangeLane::rangeAt(QPoint pos) const {
    const int row = rowAt(pos.y());
    if (row < 0 || pos.x() < m_left) {
        return nullptr;
    }
    const int64_t t = mapper().timeAt(pos.x());
    const auto& spans = m_rows[static_cast<size_t>(row)].spans;
    // Last span starting at or before t that still covers it.
    auto it =
        std::upper_bound(spans.begin(), spans.end(), t,
                         [](int64_t v, const analysis::RangeSpan* s) { return v < s->startNs; });
    while (it != spans.begin()) {
        --it;
        if ((*it)->endNs >= t) {
            return *it;
        }
        if (t - (*it)->startNs > m_zoom->visibleRange().durationNs()) {
            break;
        }
    }
    return nullptr;
}

void RangeLane::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), m_colors.background);
    const TimeRange visible = m_zoom->visibleRange();
    const TimeMapper tm = mapper();
    const QFontMetrics fm = p.fontMetrics();
    for (size_t r = 0; r < m_rows.size(); ++r) {
        const Row& row = m_rows[r];
        const int y = 1 + static_cast<int>(r) * kRowHeight;
        p.setPen(m_colors.text);
        p.drawText(QRect(2, y, m_left - 6, kRowHeight), Qt::AlignRight | Qt::AlignVCenter,
                   fm.elidedText(row.label, Qt::ElideLeft, m_left - 6));
        p.save();
        p.setClipRect(QRect(m_left, y, width() - m_left - m_right, kRowHeight));
        double lastRight = -1e9;
        int index = 0;
        for (const analysis::RangeSpan* s : row.spans) {
            ++index;
            if (s->endNs < visible.startNs || s->startNs > visible.endNs) {
                continue;
            }
            const double x0 = std::max(tm.xAt(s->startNs), static_cast<double>(m_left - 2));
            const double x1 = std::min(tm.xAt(s->endNs), static_cast<double>(width()));
            if (x1 < lastRight + 1.0) {
                continue;  // sub-pixel ranges merge into the mark already drawn
            }
            const QRectF box(x0, y + 1, std::max(1.0, x1 - x0), kRowHeight - 3);
            QColor c;
            if (s->kind == trace::RangeKind::Iteration) {
                c = index % 2 == 0 ? QColor(0x5b, 0x8d, 0xd6) : QColor(0x3f, 0x6f, 0xb8);
            } else {
                c = QColor::fromHsv(
                    static_cast<int>(qHash(QByteArray::fromStdString(s->name)) % 360), 70,
                    m_colors.dark ? 150 : 215);
            }
            p.fillRect(box, c);
            lastRight = x1;
            // A name only where a readable part of it fits ("Op...ep" says nothing; the tooltip
            // names every range).
            if (box.width() > 24 &&
                (box.width() - 5 >= fm.horizontalAdvance(QStringLiteral("Abcdefgh")) ||
                 fm.horizontalAdvance(QString::fromStdString(s->name)) <= box.width() - 5)) {
                p.setPen(s->kind == trace::RangeKind::Iteration ? Qt::white : Qt::black);
                p.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                           elideName(fm, s->name, static_cast<int>(box.width()) - 5));
            }
        }
        p.restore();
    }
    if (m_zoom->hasCursor()) {
        const double x = tm.xAt(m_zoom->cursorNs());
        p.setPen(QPen(m_colors.crosshair, 1, Qt::DashLine));
        p.drawLine(QPointF(x, 0), QPointF(x, height()));
    }
}

void RangeLane::mouseMoveEvent(QMouseEvent* event) {
    // Navigation and the cursor are TimeInteraction's; here only the range's tooltip.
    const QPoint pos = event->position().toPoint();
    if (const analysis::RangeSpan* s = rangeAt(pos)) {
        QToolTip::showText(event->globalPosition().toPoint(),
                           QStringLiteral("%1\nstarts %2, lasts %3\nclick to zoom to it")
                               .arg(QString::fromStdString(s->name),
                                    formatDuration(static_cast<double>(s->startNs)),
                                    formatDuration(static_cast<double>(s->endNs - s->startNs))),
                           this);
    } else {
        QToolTip::hideText();
    }
}

}  // namespace vramscope::widgets
