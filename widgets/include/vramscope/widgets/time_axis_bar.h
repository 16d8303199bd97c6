#pragma once
// The time axis under the stacked plots: it stays in view however many plots scroll above it.

#include <qcustomplot.h>

#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/time_mapper.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::widgets {

/// A QCustomPlot showing only the time axis (ns from the job start, unit by zoom) of the
/// ZoomState's visible range; TimeInteraction navigates on it as on the plots. GUI thread only.
class TimeAxisBar : public QCustomPlot {
    Q_OBJECT
public:
    explicit TimeAxisBar(ZoomState* zoom, QWidget* parent = nullptr);

    /// Left and right margins, px, matching the plots' axis rectangle.
    void setMargins(int left, int right);
    void applyColors(const PlotColors& colors);
    /// The visible range on the axis rectangle's x span (from the margins).
    TimeMapper mapper() const;

private:
    ZoomState* m_zoom;
};

}  // namespace vramscope::widgets
