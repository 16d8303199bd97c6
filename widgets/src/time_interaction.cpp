#include "vramscope/widgets/time_interaction.h"

#include <QMouseEvent>
#include <QWheelEvent>
#include <QWidget>

#include <cmath>

namespace vramscope::widgets {

TimeInteraction::TimeInteraction(ZoomState* zoom, QWidget* view, Hooks hooks)
    : QObject(view), m_zoom(zoom), m_view(view), m_hooks(std::move(hooks)) {
    Q_ASSERT(m_hooks.mapper);
    view->setMouseTracking(true);  // the cursor follows the pointer without a button held
    view->installEventFilter(this);
}

double TimeInteraction::wheelZoomFactor(int angleDeltaY) {
    return std::pow(kWheelZoomStep, angleDeltaY / 120.0);
}

bool TimeInteraction::eventFilter(QObject* watched, QEvent* event) {
    if (watched != m_view) {
        return false;
    }
    switch (event->type()) {
        case QEvent::MouseButtonPress:
            press(static_cast<QMouseEvent&>(*event));
            break;
        case QEvent::MouseButtonRelease:
            release(static_cast<QMouseEvent&>(*event));
            break;
        case QEvent::MouseButtonDblClick:
            // Qt sends press, release, double click, release: the first click already went to the
            // view; the double click only resets, and the last release finds no drag.
            m_drag = Drag::None;
            m_zoom->resetZoom();
            break;
        case QEvent::MouseMove:
            move(static_cast<QMouseEvent&>(*event));
            return false;  // the view may still show a tooltip for the point
        case QEvent::Wheel:
            if (!wheel(static_cast<QWheelEvent&>(*event))) {
                return false;  // no vertical turn: a scroll area around the view may use it
            }
            break;
        case QEvent::Leave:
            m_zoom->clearCursor();
            return false;
        default:
            return false;
    }
    event->accept();
    return true;
}

void TimeInteraction::press(const QMouseEvent& event) {
    m_pressPos = event.position();
    m_pressMapper = m_hooks.mapper();
    m_pressTimeNs = m_pressMapper.timeAt(m_pressPos.x());
    m_moved = false;
    const bool select =
        event.button() == Qt::RightButton ||
        (event.button() == Qt::LeftButton && (event.modifiers() & Qt::ShiftModifier));
    m_drag = select ? Drag::Select : (event.button() == Qt::LeftButton ? Drag::Pan : Drag::None);
}

void TimeInteraction::move(const QMouseEvent& event) {
    const QPointF pos = event.position();
    if (m_drag != Drag::None && !(event.buttons() & (Qt::LeftButton | Qt::RightButton))) {
        m_drag = Drag::None;  // the release went elsewhere (a popup, a grab): the drag is over
    }
    if (m_drag != Drag::None && !m_moved &&
        (std::abs(pos.x() - m_pressPos.x()) > kDragThresholdPx ||
         std::abs(pos.y() - m_pressPos.y()) > kDragThresholdPx)) {
        m_moved = true;
    }
    if (m_moved && m_drag == Drag::Pan) {
        const TimeRange r = m_pressMapper.range;
        const int64_t delta = m_pressMapper.durationAt(m_pressPos.x() - pos.x());
        m_zoom->setVisibleRange({r.startNs + delta, r.endNs + delta});
    } else if (m_moved && m_drag == Drag::Select) {
        m_zoom->setSelection({m_pressTimeNs, m_hooks.mapper().timeAt(pos.x())});
    }
    updateCursor(pos);
}

void TimeInteraction::release(const QMouseEvent& event) {
    if (m_drag != Drag::None && !m_moved) {
        const QPointF pos = event.position();
        if (event.button() == Qt::RightButton && m_hooks.contextMenu &&
            m_hooks.contextMenu(pos, m_hooks.mapper().timeAt(pos.x()))) {
            // The menu offers what the click would have done (clear the selection).
        } else if (m_drag == Drag::Select) {
            m_zoom->clearSelection();
        } else if (m_hooks.clicked) {
            m_hooks.clicked(pos, m_hooks.mapper().timeAt(pos.x()));
        }
    }
    m_drag = Drag::None;
    m_moved = false;
}

bool TimeInteraction::wheel(const QWheelEvent& event) {
    const int delta = event.angleDelta().y();
    if (delta == 0) {
        return false;
    }
    m_zoom->zoomAround(m_hooks.mapper().timeAt(event.position().x()), wheelZoomFactor(delta));
    return true;
}

void TimeInteraction::updateCursor(QPointF pos) {
    const TimeMapper mapper = m_hooks.mapper();
    if (!mapper.contains(pos.x())) {
        m_zoom->clearCursor();
        return;
    }
    m_zoom->setCursor(mapper.timeAt(pos.x()),
                      m_hooks.gpuAt ? m_hooks.gpuAt(pos) : analysis::GpuKey{});
}

}  // namespace vramscope::widgets
