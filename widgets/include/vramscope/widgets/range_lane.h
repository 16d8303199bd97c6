#pragma once
// The lane of iterations and NVTX ranges drawn above the VRAM plots, on the same time axis.

#include <QWidget>

#include <memory>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/time_mapper.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::widgets {

/// Paints one rank's iteration ranges (top row) and outermost NVTX / annotation ranges (below)
/// for the ZoomState's visible range; clicking a range zooms to it, otherwise TimeInteraction
/// navigates as on the plots. Ranges narrower than a pixel merge into one mark. GUI thread only.
class RangeLane : public QWidget {
    Q_OBJECT
public:
    RangeLane(ZoomState* zoom, QWidget* parent = nullptr);

    /// Shows the ranges of `rankIndex` in `job` (nothing when the rank has none).
    void setRank(std::shared_ptr<const analysis::JobModel> job, int rankIndex);
    /// Left and right margins, px, matching the plots' axis rectangle.
    void setMargins(int left, int right);
    void applyColors(const PlotColors& colors);
    /// True when the rank has ranges to show (the lane hides itself otherwise).
    bool hasRanges() const { return !m_rows.empty(); }
    /// The range under x (widget px) in row `row`, or nullptr.
    const analysis::RangeSpan* rangeAt(QPoint pos) const;
    /// The visible range on the lane's x span (between the label margin and the right margin).
    TimeMapper mapper() const;

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    struct Row {
        QString label;
        std::vector<const analysis::RangeSpan*> spans;  // sorted by start
    };
    int rowAt(int y) const;

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    std::vector<Row> m_rows;
    int m_left = 80;
    int m_right = 16;
    PlotColors m_colors;
    static constexpr int kRowHeight = 18;
};

}  // namespace vramscope::widgets
