#pragma once
// The segments dock: which GPU, which moment (the picked time, the OOM, the peak), a header line
// with the figures, and the SegmentView.

#include <QWidget>

#include <memory>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/zoom_state.h"

class QComboBox;
class QLabel;
class QTimer;

namespace vramscope::widgets {

class SegmentView;

/// Shows the reserved segments of one GPU at a moment as a SegmentView, following the shared
/// ZoomState: in Cursor mode the time the user picked on a time view (the clicked time, else the
/// time under the mouse, else the peak); a job whose GPU ran out of memory opens at its first OOM,
/// and picking a time switches to Cursor. The layout comes from analysis::segmentLayoutAt over
/// the GPU's indices (replaying at most one checkpoint interval per rebuild); rebuilds are
/// coalesced to one per kRebuildIntervalMs. GUI thread only.
class SegmentPanel : public QWidget {
    Q_OBJECT
public:
    enum class Moment { Cursor, Oom, Peak };
    static constexpr int kRebuildIntervalMs = 30;

    explicit SegmentPanel(ZoomState* zoom, QWidget* parent = nullptr);
    QSize sizeHint() const override { return {520, 240}; }

    void setJob(std::shared_ptr<const analysis::JobModel> job);
    /// GPU shown (one with allocation events); an unknown key is ignored.
    void setGpu(analysis::GpuKey gpu);
    analysis::GpuKey gpu() const { return m_gpu; }
    void setMoment(Moment moment);
    Moment moment() const { return m_moment; }

    /// Rebuilds now (the timer does it after cursor moves).
    void rebuildNow();
    /// Job time (ns) of the layout shown.
    int64_t shownTimeNs() const { return m_shownNs; }
    /// The header: GPU, time and moment, then the totals and the free space against the request
    /// (analysis::segmentTotalsText / segmentFreeText), or why there are no segments.
    QString caption() const;
    SegmentView* view() const { return m_view; }

private:
    void fillGpus();
    void scheduleRebuild();
    const analysis::GpuMemoryAnalysis* current() const;
    /// The first OOM of the GPU shown, or nullptr.
    const trace::OomEvent* firstOom() const;

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    analysis::GpuKey m_gpu;
    Moment m_moment = Moment::Cursor;
    int64_t m_shownNs = 0;
    QString m_header;

    QComboBox* m_gpuBox;
    QComboBox* m_momentBox;
    QLabel* m_caption;
    SegmentView* m_view;
    QTimer* m_timer;
};

}  // namespace vramscope::widgets
