#include "vramscope/widgets/time_axis_bar.h"

#include <cmath>

namespace vramscope::widgets {

TimeAxisBar::TimeAxisBar(ZoomState* zoom, QWidget* parent) : QCustomPlot(parent), m_zoom(zoom) {
    yAxis->setVisible(false);
    xAxis->setTicker(QSharedPointer<TimeTicker>::create());
    xAxis->ticker()->setTickCount(8);
    xAxis->grid()->setVisible(false);
    axisRect()->setAutoMargins(QCP::msNone);
    setMargins(80, 16);
    setFixedHeight(fontMetrics().height() + 14);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    applyColors(PlotColors::fromPalette(palette()));
    auto follow = [this] {
        const TimeRange r = m_zoom->visibleRange();
        xAxis->setRange(static_cast<double>(r.startNs), static_cast<double>(r.endNs));
        replot(rpQueuedReplot);
    };
    connect(m_zoom, &ZoomState::visibleRangeChanged, this, follow);
    follow();
}

void TimeAxisBar::setMargins(int left, int right) {
    axisRect()->setMargins(QMargins(left, 0, right, height() - 1));
    replot(rpQueuedReplot);
}

void TimeAxisBar::applyColors(const PlotColors& colors) {
    setBackground(colors.background);
    xAxis->setBasePen(QPen(colors.axis, 1));
    xAxis->setTickPen(QPen(colors.axis, 1));
    xAxis->setSubTickPen(QPen(colors.axis, 1));
    xAxis->setTickLabelColor(colors.text);
    replot(rpQueuedReplot);
}

void TimeAxisBar::mousePressEvent(QMouseEvent* event) {
    m_pressX = event->position().x();
    m_pressRange = m_zoom->visibleRange();
}

void TimeAxisBar::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton)) {
        return;
    }
    const double nsPerPixel =
        static_cast<double>(m_pressRange.durationNs()) / std::max(1, axisRect()->width());
    const auto delta =
        static_cast<int64_t>(std::llround((m_pressX - event->position().x()) * nsPerPixel));
    m_zoom->setVisibleRange({m_pressRange.startNs + delta, m_pressRange.endNs + delta});
}

void TimeAxisBar::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps != 0.0) {
        const auto anchor =
            static_cast<int64_t>(std::llround(xAxis->pixelToCoord(event->position().x())));
        m_zoom->zoomAround(anchor, std::pow(0.8, steps));
    }
    event->accept();
}

}  // namespace vramscope::widgets
