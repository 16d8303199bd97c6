#include "vramscope/widgets/time_axis_bar.h"

#include "vramscope/widgets/time_interaction.h"

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
    new TimeInteraction(m_zoom, this, {[this] { return mapper(); }, {}, {}});
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

TimeMapper TimeAxisBar::mapper() const {
    const QMargins m = axisRect()->margins();
    return {m_zoom->visibleRange(), static_cast<double>(m.left()),
            static_cast<double>(width() - m.right())};
}

}  // namespace vramscope::widgets
