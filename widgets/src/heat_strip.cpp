#include "vramscope/widgets/heat_strip.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "vramscope/widgets/time_interaction.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {
constexpr int kRowHeight = 14;
constexpr int kRowGap = 1;

int64_t peakOf(const GpuSeries& g) {
    return std::max(g.peakReservedBytes, g.peakAllocatedBytes);
}

QString rowLabel(const GpuSeries& g) {
    // Short enough for the plots' left margin: "r12/0" is rank 12, GPU 0.
    return g.rank >= 0 ? QStringLiteral("r%1/%2").arg(g.rank).arg(g.key.device)
                       : QStringLiteral("GPU %1").arg(g.key.device);
}
}  // namespace

HeatStrip::HeatStrip(ZoomState* zoom, QWidget* parent) : QWidget(parent), m_zoom(zoom) {
    auto gpuAt = [this](QPointF pos) {
        const int row = rowAt(static_cast<int>(pos.y()));
        return row >= 0 ? m_gpus[static_cast<size_t>(row)] : GpuKey{};
    };
    auto clicked = [this, gpuAt](QPointF pos, int64_t timeNs) {
        if (const GpuKey key = gpuAt(pos); key.isValid()) {
            m_zoom->setSelectedGpu(key, timeNs);
        }
    };
    new TimeInteraction(m_zoom, this, {[this] { return mapper(); }, gpuAt, clicked});
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_colors = PlotColors::fromPalette(palette());
    connect(m_zoom, &ZoomState::visibleRangeChanged, this, qOverload<>(&QWidget::update));
    connect(m_zoom, &ZoomState::cursorChanged, this, qOverload<>(&QWidget::update));
    connect(m_zoom, &ZoomState::selectedGpuChanged, this, qOverload<>(&QWidget::update));
}

void HeatStrip::setGpus(std::shared_ptr<const LoadedJob> job, std::vector<GpuKey> gpus) {
    m_job = std::move(job);
    m_gpus = std::move(gpus);
    m_jobPeak = 1.0;
    for (GpuKey key : m_gpus) {
        if (const GpuSeries* g = m_job->gpu(key)) {
            m_jobPeak = std::max(m_jobPeak, static_cast<double>(peakOf(*g)));
        }
    }
    setFixedHeight(std::max(1, rowCount()) * (kRowHeight + kRowGap) + 2);
    updateGeometry();
    update();
}

void HeatStrip::setMargins(int left, int right) {
    m_left = left;
    m_right = right;
    update();
}

void HeatStrip::applyColors(const PlotColors& colors) {
    m_colors = colors;
    update();
}

QSize HeatStrip::sizeHint() const {
    return QSize(400, height());
}

int HeatStrip::rowHeight() const {
    return kRowHeight + kRowGap;
}

int HeatStrip::rowAt(int y) const {
    const int row = (y - 1) / rowHeight();
    return row >= 0 && row < rowCount() ? row : -1;
}

TimeMapper HeatStrip::mapper() const {
    return {m_zoom->visibleRange(), static_cast<double>(m_left),
            static_cast<double>(width() - m_right)};
}

double HeatStrip::denominator(const GpuSeries& g) const {
    return g.capacityBytes > 0 ? static_cast<double>(g.capacityBytes) : m_jobPeak;
}

double HeatStrip::peakShare(int row) const {
    const GpuSeries* g = m_job ? m_job->gpu(m_gpus[static_cast<size_t>(row)]) : nullptr;
    return g ? static_cast<double>(peakOf(*g)) / denominator(*g) : 0.0;
}

void HeatStrip::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), m_colors.background);
    if (!m_job) {
        return;
    }
    const TimeRange visible = m_zoom->visibleRange();
    const int columns = std::max(1, width() - m_left - m_right);
    const QFontMetrics fm = p.fontMetrics();
    for (int row = 0; row < rowCount(); ++row) {
        const GpuSeries* g = m_job->gpu(m_gpus[static_cast<size_t>(row)]);
        if (!g) {
            continue;
        }
        const int y = 1 + row * rowHeight();
        const double share = peakShare(row);
        QFont f = p.font();
        f.setBold(share >= 0.8);
        p.setFont(f);
        p.setPen(share >= 0.8 ? m_colors.capacity : m_colors.text);
        const QString label = rowLabel(*g) + QStringLiteral(" %1%").arg(100.0 * share, 0, 'f', 0);
        p.drawText(QRect(2, y, m_left - 6, kRowHeight), Qt::AlignRight | Qt::AlignVCenter,
                   QFontMetrics(f).elidedText(label, Qt::ElideLeft, m_left - 6));
        const analysis::LodSeries& lod = g->reserved.series().empty() ? g->allocated : g->reserved;
        const std::vector<analysis::LodBucket> buckets =
            lod.query(visible.startNs, visible.endNs, static_cast<size_t>(columns));
        const double denom = denominator(*g);
        for (size_t i = 0; i < buckets.size(); ++i) {
            const double fraction = static_cast<double>(buckets[i].maxBytes) / denom;
            p.fillRect(QRect(m_left + static_cast<int>(i), y, 1, kRowHeight),
                       usageColor(fraction, m_colors.dark));
        }
        if (m_zoom->selectedGpu() == g->key) {
            p.setPen(QPen(m_colors.text, 1));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRect(m_left - 1, y - 1, columns + 1, kRowHeight + 1));
        }
    }
    if (m_zoom->hasCursor()) {
        const double x = mapper().xAt(m_zoom->cursorNs());
        p.setPen(QPen(m_colors.crosshair, 1, Qt::DashLine));
        p.drawLine(QPointF(x, 0), QPointF(x, height()));
    }
}

void HeatStrip::mouseMoveEvent(QMouseEvent* event) {
    // Navigation and the cursor are TimeInteraction's; here only the row's tooltip.
    const QPointF pos = event->position();
    const int row = rowAt(static_cast<int>(pos.y()));
    const GpuKey key = row >= 0 ? m_gpus[static_cast<size_t>(row)] : GpuKey{};
    if (const GpuSeries* g = row >= 0 ? m_job->gpu(key) : nullptr) {
        setToolTip(QStringLiteral("rank %1 · GPU %2: peak %3 (%4 % of %5)\nclick to show its plot")
                       .arg(g->rank >= 0 ? QString::number(g->rank) : QStringLiteral("?"))
                       .arg(g->key.device)
                       .arg(formatBytes(static_cast<double>(peakOf(*g))))
                       .arg(100.0 * peakShare(row), 0, 'f', 1)
                       .arg(g->capacityBytes > 0
                                ? formatBytes(static_cast<double>(g->capacityBytes), 1)
                                : QStringLiteral("the job's highest peak")));
    }
}

}  // namespace vramscope::widgets
