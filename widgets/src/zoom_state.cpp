#include "vramscope/widgets/zoom_state.h"

#include <algorithm>
#include <cmath>

namespace vramscope::widgets {

ZoomState::ZoomState(QObject* parent) : QObject(parent) {}

void ZoomState::setFullRange(TimeRange full) {
    if (full.endNs - full.startNs < kMinimumSpanNs) {
        full.endNs = full.startNs + kMinimumSpanNs;
    }
    m_full = full;
    m_selection = {};
    m_hasCursor = false;
    const TimeRange old = m_visible;
    m_visible = full;
    if (!(old == m_visible)) {
        emit visibleRangeChanged(m_visible);
    }
    emit selectionChanged(m_selection);
}

TimeRange ZoomState::clamp(TimeRange r) const {
    if (r.endNs < r.startNs) {
        std::swap(r.startNs, r.endNs);
    }
    const int64_t fullSpan = m_full.durationNs();
    int64_t span = std::clamp<int64_t>(r.durationNs(), kMinimumSpanNs, fullSpan);
    if (r.durationNs() < kMinimumSpanNs) {
        const int64_t mid = r.startNs + r.durationNs() / 2;
        r.startNs = mid - span / 2;
    }
    r.startNs = std::clamp(r.startNs, m_full.startNs, m_full.endNs - span);
    r.endNs = r.startNs + span;
    return r;
}

void ZoomState::setVisibleRange(TimeRange range) {
    const TimeRange r = clamp(range);
    if (r == m_visible) {
        return;
    }
    m_visible = r;
    emit visibleRangeChanged(m_visible);
}

void ZoomState::zoomAround(int64_t anchorNs, double factor) {
    if (!(factor > 0.0) || !std::isfinite(factor)) {
        return;
    }
    const double start = static_cast<double>(m_visible.startNs);
    const double end = static_cast<double>(m_visible.endNs);
    const double anchor = static_cast<double>(anchorNs);
    TimeRange r;
    r.startNs = static_cast<int64_t>(std::llround(anchor - (anchor - start) * factor));
    r.endNs = static_cast<int64_t>(std::llround(anchor + (end - anchor) * factor));
    if (r.durationNs() < kMinimumSpanNs) {
        // Keep the anchor where it is on screen while stopping at the narrowest span.
        const double share = (anchor - start) / std::max(1.0, end - start);
        r.startNs = anchorNs - static_cast<int64_t>(share * kMinimumSpanNs);
        r.endNs = r.startNs + kMinimumSpanNs;
    }
    setVisibleRange(r);
}

void ZoomState::zoom(double factor) {
    zoomAround(m_visible.startNs + m_visible.durationNs() / 2, factor);
}

void ZoomState::pan(double fraction) {
    panBy(
        static_cast<int64_t>(std::llround(fraction * static_cast<double>(m_visible.durationNs()))));
}

void ZoomState::panBy(int64_t deltaNs) {
    setVisibleRange({m_visible.startNs + deltaNs, m_visible.endNs + deltaNs});
}

void ZoomState::resetZoom() {
    setVisibleRange(m_full);
}

void ZoomState::setSelection(TimeRange range) {
    if (range.endNs < range.startNs) {
        std::swap(range.startNs, range.endNs);
    }
    if (range.isEmpty()) {
        range = {};
    }
    if (range == m_selection) {
        return;
    }
    m_selection = range;
    emit selectionChanged(m_selection);
}

void ZoomState::setCursor(int64_t timeNs, analysis::GpuKey gpu) {
    if (m_hasCursor && timeNs == m_cursorNs && gpu == m_cursorGpu) {
        return;
    }
    m_hasCursor = true;
    m_cursorNs = timeNs;
    m_cursorGpu = gpu;
    emit cursorChanged();
}

void ZoomState::clearCursor() {
    if (!m_hasCursor) {
        return;
    }
    m_hasCursor = false;
    m_cursorGpu = {};
    emit cursorChanged();
}

void ZoomState::setSelectedGpu(analysis::GpuKey gpu, int64_t timeNs) {
    if (gpu == m_selectedGpu && timeNs == m_selectedTimeNs) {
        return;
    }
    m_selectedGpu = gpu;
    m_selectedTimeNs = timeNs;
    emit selectedGpuChanged(gpu, timeNs);
}

}  // namespace vramscope::widgets
