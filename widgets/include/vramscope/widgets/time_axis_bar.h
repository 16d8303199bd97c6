#pragma once
// The time axis under the stacked plots: it stays in view however many plots scroll above it.

#include <qcustomplot.h>

#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::widgets {

/// A QCustomPlot showing only the time axis (ns from the job start, unit by zoom) of the
/// ZoomState's visible range; the wheel zooms and a drag pans, as on the plots. GUI thread only.
class TimeAxisBar : public QCustomPlot {
    Q_OBJECT
public:
    explicit TimeAxisBar(ZoomState* zoom, QWidget* parent = nullptr);

    /// Left and right margins, px, matching the plots' axis rectangle.
    void setMargins(int left, int right);
    void applyColors(const PlotColors& colors);

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;

private:
    ZoomState* m_zoom;
    double m_pressX = 0;
    TimeRange m_pressRange;
};

}  // namespace vramscope::widgets
