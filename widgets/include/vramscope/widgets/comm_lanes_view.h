#pragma once
// Communication lanes: per GPU a lane of kernels (compute, communication, memory rows) with idle
// time shaded and the iterations above, stacked by rank, collectives linked across ranks.

#include <QWidget>

#include <memory>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"
#include "vramscope/widgets/time_mapper.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::widgets {

class TimeInteraction;

/// Paints the kernel lanes of every GPU of a job for the ZoomState's visible range, on the same
/// time axis (job time) and with the same navigation as the VRAM plots (TimeInteraction); the
/// cursor carries the GPU of the lane under the pointer. Only what is visible
/// is queried (analysis::KernelLaneIndex::blocks), with kernels closer than a pixel merged. Each
/// matched collective (analysis::matchCollectives) is a line through the arrivals of its ranks;
/// the last to arrive (the straggler) is a red dot and the time the others waited for it is
/// hatched on their communication rows. GUI thread only.
class CommLanesView : public QWidget {
    Q_OBJECT
public:
    /// One GPU lane as laid out (for tests and hit testing).
    struct Lane {
        analysis::GpuKey key;
        const analysis::GpuKernelAnalysis* kernels = nullptr;
        QString label;
        int top = 0;  ///< px, the compute row; communication and memory rows follow
    };
    /// One rank's iteration row.
    struct RankRow {
        int rankIndex = 0;
        int top = 0;  ///< px
        std::vector<const analysis::RangeSpan*> iterations;
    };

    /// One note as drawn (for tests): its band (a point: 1 px wide) and its label in the notes
    /// row above the lanes (empty when it found no room).
    struct NoteMark {
        std::string id;
        int number = 0;
        QRectF band;
        QRectF label;
        QString text;
    };

    explicit CommLanesView(ZoomState* zoom, QWidget* parent = nullptr);

    void setJob(std::shared_ptr<const analysis::JobModel> job);
    /// Left and right margins, px, matching the VRAM plots' axis rectangle.
    void setMargins(int left, int right);

    /// Notes to draw where this view shows their time or object (a point note as a line, a
    /// range as a band, a title label that never covers the data labels); replaces the last set.
    void setNotes(std::vector<trace::Note> notes);
    const std::vector<trace::Note>& notes() const { return m_notes; }
    /// The notes in the visible range as they are drawn now: over the lanes of their GPU, or of
    /// every GPU, with labels in a row of their own between the time axis and the lanes, so
    /// that they never cover the legend, the axis labels or the lane labels.
    std::vector<NoteMark> noteMarks() const;

    const std::vector<Lane>& lanes() const { return m_lanes; }
    /// Height of one of a lane's three rows (compute, communication, memory), px.
    int rowHeight() const { return m_rowHeight; }
    const std::vector<RankRow>& rankRows() const { return m_rankRows; }
    /// Matched collectives that overlap the visible range (indices into the match).
    std::vector<size_t> visibleCollectives() const;
    /// Tooltip text for the point `pos` (kernel, iteration or collective under it), or empty. On
    /// a communication row, the collective under the pointer (JobAnalysis::bandwidth) with its
    /// message, algorithm / protocol, channels, duration, busBw / algBw and timing source, and
    /// its arrivals and waits on the other ranks (JobAnalysis::collectives); unknown fields are
    /// left out.
    QString describeAt(QPoint pos) const;
    /// The visible range on the lanes' x span (between the label margin and the right margin).
    TimeMapper mapper() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    /// A right click (no drag) at job time `timeNs` over the lane of `gpu` (invalid between
    /// lanes); `globalPos` is where to open a menu. While nothing is connected, a right click
    /// clears the selection instead.
    void contextMenuRequested(QPoint globalPos, qint64 timeNs, vramscope::analysis::GpuKey gpu);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    void relayout();
    analysis::GpuKey laneAt(double y) const;

    int laneOfRank(trace::RankId rank) const;
    void paintLane(QPainter& p, const Lane& lane) const;
    void paintCollectives(QPainter& p) const;
    void paintAxis(QPainter& p) const;
    void paintLegend(QPainter& p) const;
    void paintNotes(QPainter& p) const;
    int lanesTop() const;

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    std::vector<Lane> m_lanes;
    std::vector<RankRow> m_rankRows;
    std::vector<trace::RankId> m_collectiveRanks;  // per rank index: the rank its collectives carry
    int m_plotLeft = 80;                           // margin of the VRAM plots
    int m_left = 110;                              // used: the plots' margin or the widest label
    int m_right = 16;
    int m_rowHeight = 9;
    int m_contentHeight = 0;
    TimeInteraction* m_interaction = nullptr;

    static constexpr int kLegendHeight = 22;
    static constexpr int kIterationHeight = 13;
    static constexpr int kLaneGap = 5;
    static constexpr int kAxisHeight = 24;
    int m_notesRowHeight = 0;  // the notes' label row; 0 without notes
    std::vector<trace::Note> m_notes;
};

}  // namespace vramscope::widgets
