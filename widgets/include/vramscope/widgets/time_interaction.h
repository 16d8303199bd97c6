#pragma once
// The mouse and wheel navigation shared by every time view (plots, lanes, heat strip, axis).

#include <QObject>
#include <QPointF>

#include <functional>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/time_mapper.h"
#include "vramscope/widgets/zoom_state.h"

class QWidget;
class QMouseEvent;
class QWheelEvent;

namespace vramscope::widgets {

/// Turns one time view's mouse and wheel events into ZoomState calls, the same way on every view:
/// the wheel zooms around the time under the pointer, a left drag pans, a Shift+left or a right
/// drag selects a range (a right click without a drag opens the view's context menu where it has
/// one, else clears it), a left click that never became
/// a drag is handed back to the view, a double click shows the whole job, and the pointer sets the
/// shared cursor while it is over the plot span (leaving the span or the view clears it).
/// Installed as an event filter on its view, a QObject child of it; GUI thread only.
class TimeInteraction : public QObject {
    Q_OBJECT
public:
    /// What the view tells the filter. `mapper` is required; the others may be left empty.
    struct Hooks {
        /// The view's mapping for its current visible range and size.
        std::function<TimeMapper()> mapper;
        /// The GPU under a point (widget px) for the cursor, or an invalid key.
        std::function<analysis::GpuKey(QPointF)> gpuAt;
        /// A left click (press and release within kDragThresholdPx): the point and its job time.
        std::function<void(QPointF, int64_t)> clicked;
        /// A right click (no drag): the point and its job time. Returns true when the view
        /// showed a context menu; otherwise (or when empty) the right click clears the selection.
        std::function<bool(QPointF, int64_t)> contextMenu;
    };

    /// A press becomes a drag once the pointer is more than this far from it, px, along x or y;
    /// below it the press is a click and nothing pans.
    static constexpr double kDragThresholdPx = 3.0;
    /// Factor of the visible span per wheel notch (120 units of angleDelta, 15 degrees) turned
    /// away from the user; towards the user divides by it.
    static constexpr double kWheelZoomStep = 0.8;

    /// Installs itself on `view` (which owns it) and drives `zoom`, which must outlive it.
    TimeInteraction(ZoomState* zoom, QWidget* view, Hooks hooks);

    /// Span factor for a vertical wheel turn of `angleDeltaY` (Qt's 1/8 degree units):
    /// kWheelZoomStep ^ (angleDeltaY / 120); 1 for 0.
    static double wheelZoomFactor(int angleDeltaY);
    /// True between a press and its release once the pointer passed the threshold.
    bool isDragging() const { return m_drag != Drag::None && m_moved; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    enum class Drag { None, Pan, Select };
    void press(const QMouseEvent& event);
    void move(const QMouseEvent& event);
    void release(const QMouseEvent& event);
    bool wheel(const QWheelEvent& event);
    void updateCursor(QPointF pos);

    ZoomState* m_zoom;
    QWidget* m_view;
    Hooks m_hooks;
    Drag m_drag = Drag::None;
    bool m_moved = false;
    QPointF m_pressPos;
    TimeMapper m_pressMapper;  // the mapping when the button went down: pans are measured in it
    int64_t m_pressTimeNs = 0;
};

}  // namespace vramscope::widgets
