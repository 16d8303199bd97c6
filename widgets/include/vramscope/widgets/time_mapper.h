#pragma once
// Job time <-> widget x of a time view: the one mapping every time view draws and hit-tests with.

#include <cstdint>

#include "vramscope/widgets/zoom_state.h"

namespace vramscope::widgets {

/// Maps the visible range [range.startNs, range.endNs] (job time, ns) linearly onto the widget's
/// plot span [left, right] (px, widget coordinates): startNs is drawn at `left`, endNs at `right`.
/// A plain value built per paint or per event from the ZoomState and the view's plot area.
///
/// Rounding, the same for every view: time -> x is not rounded (sub-pixel doubles, as QPainter and
/// QCustomPlot take them); x -> time and px -> ns round to the nearest ns, halves away from zero
/// (std::llround). Nothing is clamped: a point left of the plot maps before startNs. A plot
/// narrower than 1 px counts as 1 px and a range shorter than 1 ns as 1 ns, so nothing divides
/// by zero.
struct TimeMapper {
    TimeRange range;
    double left = 0.0;
    double right = 1.0;

    /// Width of the plot span, px (>= 1).
    double widthPx() const;
    /// Length of the visible range, ns (>= 1).
    double spanNs() const;
    /// ns per px: spanNs() / widthPx().
    double nsPerPixel() const { return spanNs() / widthPx(); }
    /// x (px) where `timeNs` is drawn: left + (timeNs - startNs) * widthPx / spanNs.
    double xAt(int64_t timeNs) const;
    /// Job time (ns) under x (px): startNs + durationAt(x - left).
    int64_t timeAt(double x) const;
    /// Signed ns covered by `dx` px: llround(dx * spanNs / widthPx).
    int64_t durationAt(double dx) const;
    /// True when x lies on the plot span, both ends included.
    bool contains(double x) const { return x >= left && x <= right; }
};

}  // namespace vramscope::widgets
