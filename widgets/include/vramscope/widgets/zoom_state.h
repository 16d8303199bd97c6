#pragma once
// The one visible-range / selection / cursor state that every time view follows.

#include <QObject>

#include <cstdint>

#include "vramscope/analysis/model/job_model.h"

namespace vramscope::widgets {

/// A time interval on the job's time axis, in ns relative to the job start: [startNs, endNs).
struct TimeRange {
    int64_t startNs = 0;
    int64_t endNs = 0;
    int64_t durationNs() const { return endNs - startNs; }
    bool isEmpty() const { return endNs <= startNs; }
    bool operator==(const TimeRange&) const = default;
};

/// Shared navigation state of the GUI thread: visible range, selected range, cursor time and the
/// selected GPU (plus the time clicked on it). Views read it and call its setters; every change is
/// announced by a signal, and a setter that changes nothing emits nothing. Owned by the main
/// window.
class ZoomState : public QObject {
    Q_OBJECT
public:
    /// Narrowest visible range, ns: below this the steps of a ns-resolution trace are all visible.
    static constexpr int64_t kMinimumSpanNs = 100;

    explicit ZoomState(QObject* parent = nullptr);

    /// The whole job; the visible range is kept inside it. Resets the view to all of it.
    void setFullRange(TimeRange full);
    TimeRange fullRange() const { return m_full; }

    TimeRange visibleRange() const { return m_visible; }
    /// Shows `range`, clamped into the full range and widened to kMinimumSpanNs.
    void setVisibleRange(TimeRange range);
    /// Zooms by `factor` (< 1 zooms in) keeping `anchorNs` at the same place on screen.
    void zoomAround(int64_t anchorNs, double factor);
    /// Zooms around the middle of the visible range.
    void zoom(double factor);
    /// Moves the visible range by `fraction` of its width (negative = towards the start).
    void pan(double fraction);
    /// Moves the visible range by `deltaNs`.
    void panBy(int64_t deltaNs);
    /// Shows the full range.
    void resetZoom();

    bool hasSelection() const { return !m_selection.isEmpty(); }
    TimeRange selection() const { return m_selection; }
    /// Sets the selected range (normalised so that start <= end); an empty range clears it.
    void setSelection(TimeRange range);
    void clearSelection() { setSelection({}); }

    bool hasCursor() const { return m_hasCursor; }
    int64_t cursorNs() const { return m_cursorNs; }
    /// The GPU whose plot the mouse is over, or an invalid key.
    analysis::GpuKey cursorGpu() const { return m_cursorGpu; }
    void setCursor(int64_t timeNs, analysis::GpuKey gpu);
    void clearCursor();

    /// The GPU the user clicked (details follow it) and the time clicked on it.
    analysis::GpuKey selectedGpu() const { return m_selectedGpu; }
    int64_t selectedTimeNs() const { return m_selectedTimeNs; }
    void setSelectedGpu(analysis::GpuKey gpu, int64_t timeNs);

signals:
    void visibleRangeChanged(vramscope::widgets::TimeRange range);
    void selectionChanged(vramscope::widgets::TimeRange range);
    void cursorChanged();
    void selectedGpuChanged(vramscope::analysis::GpuKey gpu, int64_t timeNs);

private:
    TimeRange clamp(TimeRange range) const;

    TimeRange m_full{0, 1};
    TimeRange m_visible{0, 1};
    TimeRange m_selection;
    bool m_hasCursor = false;
    int64_t m_cursorNs = 0;
    analysis::GpuKey m_cursorGpu;
    analysis::GpuKey m_selectedGpu;
    int64_t m_selectedTimeNs = 0;
};

}  // namespace vramscope::widgets
