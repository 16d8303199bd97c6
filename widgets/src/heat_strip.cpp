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
constexpr int kLegendBar = 8;  // height of the legend's colour bar, px

QString rowLabel(const analysis::GpuSeries& g) {
    // Short enough for the plots' left margin: "r12/0" is rank 12, GPU 0.
    return toInt(g.rank) >= 0 ? QStringLiteral("r%1/%2").arg(toInt(g.rank)).arg(toInt(g.key.device))
                              : QStringLiteral("GPU %1").arg(toInt(g.key.device));
}
}  // namespace

HeatStrip::HeatStrip(ZoomState* zoom, QWidget* parent) : QWidget(parent), m_zoom(zoom) {
    auto gpuAt = [this](QPointF pos) {
        const int row = rowAt(static_cast<int>(pos.y()));
        return row >= 0 ? m_gpus[static_cast<size_t>(row)] : analysis::GpuKey{};
    };
    auto clicked = [this, gpuAt](QPointF pos, int64_t timeNs) {
        if (const analysis::GpuKey key = gpuAt(pos); key.isValid()) {
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

void HeatStrip::setGpus(std::shared_ptr<const analysis::JobModel> job,
                        std::vector<analysis::GpuKey> gpus) {
    m_job = std::move(job);
    m_gpus = std::move(gpus);
    m_jobPeak = 1.0;
    for (analysis::GpuKey key : m_gpus) {
        if (const analysis::GpuSeries* g = m_job->gpu(key)) {
            m_jobPeak = std::max(m_jobPeak, static_cast<double>(g->memory.peakBytes()));
        }
    }
    m_anyCapacity = false;
    for (analysis::GpuKey key : m_gpus) {
        const analysis::GpuSeries* g = m_job->gpu(key);
        m_anyCapacity = m_anyCapacity || (g && g->memory.capacityBytes > 0);
    }
    setFixedHeight(legendTop() + legendHeight());
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

int HeatStrip::legendTop() const {
    return std::max(1, rowCount()) * (kRowHeight + kRowGap) + 2;
}

int HeatStrip::legendHeight() const {
    return kLegendBar + fontMetrics().height() + 8;
}

void HeatStrip::paintLegend(QPainter& p) {
    // The colour scale with its values under the rows, so that a colour reads as a number:
    // "share of capacity" 0 ... 100 %, or, when no GPU's capacity is known, the share of the job's
    // highest peak in the blue of relativeUsageColor.
    const QFontMetrics fm = p.fontMetrics();
    const int barTop = legendTop() + 4;
    const QString caption = m_anyCapacity ? tr("share of capacity") : tr("share of job peak");
    const int barWidth = std::clamp(width() - m_left - m_right - 2 * fm.height(), 60, 360);
    // After the bar's last value ("100 %  share of capacity"): the margin is too narrow for it.
    p.setPen(m_colors.text);
    p.drawText(QRect(m_left + barWidth + 8, barTop, fm.horizontalAdvance(caption) + 4,
                     kLegendBar + fm.height()),
               Qt::AlignLeft | Qt::AlignVCenter, caption);
    for (int x = 0; x < barWidth; ++x) {
        const double f = double(x) / std::max(1, barWidth - 1);
        p.fillRect(QRect(m_left + x, barTop, 1, kLegendBar),
                   m_anyCapacity ? usageColor(f) : relativeUsageColor(f, m_colors.dark));
    }
    // A value under a tick every 20 %; the 80 % mark (where the rule of thumb says to stop) in
    // the warning colour when the share is of capacity.
    for (int v = 0; v <= 100; v += 20) {
        const int x = m_left + (barWidth - 1) * v / 100;
        p.setPen(m_anyCapacity && v == 80 ? m_colors.capacity : m_colors.text);
        p.drawLine(x, barTop + kLegendBar, x, barTop + kLegendBar + 2);
        const QString label = v == 100 ? QStringLiteral("100 %") : QString::number(v);
        const int w = fm.horizontalAdvance(label) + 2;
        // The first label starts at its tick and the last ends at it: none leaves the bar's span.
        const int left = v == 0 ? x : v == 100 ? x - w + 1 : x - w / 2;
        p.drawText(QRect(left, barTop + kLegendBar + 2, w, fm.height()), Qt::AlignCenter, label);
    }
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

QColor HeatStrip::cellColor(const analysis::GpuSeries& g, int64_t bytes) const {
    if (g.memory.capacityBytes > 0) {
        return usageColor(static_cast<double>(bytes) / static_cast<double>(g.memory.capacityBytes));
    }
    return relativeUsageColor(static_cast<double>(bytes) / m_jobPeak, m_colors.dark);
}

std::optional<double> HeatStrip::peakShare(int row) const {
    const analysis::GpuSeries* g = m_job ? m_job->gpu(m_gpus[static_cast<size_t>(row)]) : nullptr;
    return g ? g->memory.peakShare() : std::nullopt;
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
        const analysis::GpuSeries* g = m_job->gpu(m_gpus[static_cast<size_t>(row)]);
        if (!g) {
            continue;
        }
        const int y = 1 + row * rowHeight();
        // The share of capacity when the capacity is known; the peak itself otherwise (the
        // shading is then relative to the job's highest peak, which is no percentage).
        const std::optional<double> share = g->memory.peakShare();
        const bool warn = g->memory.nearCapacity();
        QFont f = p.font();
        f.setBold(warn);
        p.setFont(f);
        p.setPen(warn ? m_colors.capacity : m_colors.text);
        const QString label = rowLabel(*g) + QStringLiteral(" ") +
                              (share ? QStringLiteral("%1%").arg(100.0 * *share, 0, 'f', 0)
                                     : formatBytes(static_cast<double>(g->memory.peakBytes())));
        p.drawText(QRect(2, y, m_left - 6, kRowHeight), Qt::AlignRight | Qt::AlignVCenter,
                   QFontMetrics(f).elidedText(label, Qt::ElideLeft, m_left - 6));
        const analysis::LodSeries& lod = g->reserved.series().empty() ? g->allocated : g->reserved;
        const std::vector<analysis::LodBucket> buckets =
            lod.query(visible.startNs, visible.endNs, static_cast<size_t>(columns));
        for (size_t i = 0; i < buckets.size(); ++i) {
            p.fillRect(QRect(m_left + static_cast<int>(i), y, 1, kRowHeight),
                       cellColor(*g, buckets[i].maxBytes));
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
        p.drawLine(QPointF(x, 0), QPointF(x, legendTop()));
    }
    paintLegend(p);
}

void HeatStrip::mouseMoveEvent(QMouseEvent* event) {
    // Navigation and the cursor are TimeInteraction's; here only the row's tooltip.
    const QPointF pos = event->position();
    const int row = rowAt(static_cast<int>(pos.y()));
    const analysis::GpuKey key = row >= 0 ? m_gpus[static_cast<size_t>(row)] : analysis::GpuKey{};
    if (const analysis::GpuSeries* g = row >= 0 ? m_job->gpu(key) : nullptr) {
        const std::optional<double> share = g->memory.peakShare();
        const QString of =
            share ? QStringLiteral("%1 % of %2")
                        .arg(100.0 * *share, 0, 'f', 1)
                        .arg(formatBytes(static_cast<double>(g->memory.capacityBytes)))
                  : QStringLiteral("capacity unknown; shaded against the job's highest peak");
        setToolTip(
            QStringLiteral("rank %1 · GPU %2: peak %3 (%4)\nclick to show its plot")
                .arg(toInt(g->rank) >= 0 ? QString::number(toInt(g->rank)) : QStringLiteral("?"))
                .arg(toInt(g->key.device))
                .arg(formatBytes(static_cast<double>(g->memory.peakBytes())))
                .arg(of));
    }
}

}  // namespace vramscope::widgets
