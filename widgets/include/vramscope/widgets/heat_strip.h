#pragma once
// Compact view of many GPUs: one thin strip per GPU, coloured by the share of its capacity in use.

#include <QWidget>

class QPainter;

#include <memory>
#include <optional>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/time_mapper.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::widgets {

/// One row per GPU over the ZoomState's visible range: each pixel column is coloured by the
/// highest memory in that column (reserved, else allocated; from the level-of-detail reduction)
/// divided by the capacity (usageColor, viridis) or by the job's highest peak when the capacity is
/// unknown (relativeUsageColor). The label names the GPU and its peak share, in the warning
/// colour at 80 % and above; a legend under the rows gives the colour scale's values. Clicking a
/// row selects that GPU; otherwise TimeInteraction navigates as on the plots. GUI thread only.
class HeatStrip : public QWidget {
    Q_OBJECT
public:
    HeatStrip(ZoomState* zoom, QWidget* parent = nullptr);

    void setGpus(std::shared_ptr<const analysis::JobModel> job, std::vector<analysis::GpuKey> gpus);
    void setMargins(int left, int right);
    void applyColors(const PlotColors& colors);
    int rowCount() const { return static_cast<int>(m_gpus.size()); }
    /// Share of capacity at the peak of row `row` (MemorySummary::peakShare), as the label shows
    /// it; nullopt when the capacity is unknown (the label then shows the peak in bytes).
    std::optional<double> peakShare(int row) const;
    /// The visible range on the strips' x span (one pixel column per LOD bucket).
    TimeMapper mapper() const;

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    int rowHeight() const;
    int legendTop() const;
    int legendHeight() const;
    void paintLegend(QPainter& p);
    int rowAt(int y) const;

public:
    /// The colour of a column of GPU `g` using `bytes`: the share of its capacity on the viridis
    /// scale (usageColor), or, with the capacity unknown, the share of the job's highest peak in
    /// shades of blue (a warning colour would claim a nearness to capacity nobody knows).
    QColor cellColor(const analysis::GpuSeries& g, int64_t bytes) const;

private:
    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    std::vector<analysis::GpuKey> m_gpus;
    double m_jobPeak = 1.0;
    bool m_anyCapacity = false;  ///< the legend reads "share of capacity" (else of the job peak)
    int m_left = 80;
    int m_right = 16;
    PlotColors m_colors;
};

}  // namespace vramscope::widgets
