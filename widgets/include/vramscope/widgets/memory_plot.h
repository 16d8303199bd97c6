#pragma once
// The VRAM plot of one GPU: allocated (filled, or stacked by role of memory) and reserved bytes as
// step lines, capacity and the 80 % line, the peak, OOM events, the shared crosshair and selection.

#include <functional>
#include <memory>
#include <vector>

#include <qcustomplot.h>

#include "vramscope/analysis/memory/role_layers.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/plot_notes.h"
#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/time_mapper.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::widgets {

/// One QCustomPlot showing one GPU of a job model. It follows the ZoomState's visible range and
/// draws the level-of-detail reduction the analysis built (min/max per pixel column), switching to
/// the exact steps once few enough are visible. Mouse: TimeInteraction's navigation; a click picks
/// this GPU and the time for the details. GUI thread only; shares the job read-only.
class MemoryPlot : public QCustomPlot {
    Q_OBJECT
public:
    MemoryPlot(std::shared_ptr<const analysis::JobModel> job, analysis::GpuKey gpu, ZoomState* zoom,
               QWidget* parent = nullptr);

    analysis::GpuKey gpu() const { return m_gpu; }
    const analysis::GpuSeries& series() const { return *m_series; }
    QCPGraph* allocatedGraph() const { return m_allocated; }
    QCPGraph* reservedGraph() const { return m_reserved; }
    /// The marker at the plot's top edge giving the capacity (and the 80 % line) when they are
    /// above the memory axis's range; hidden when they are on screen or the capacity is unknown.
    const QCPItemText* offScaleMarker() const { return m_offScale; }
    /// True when the graphs hold the exact steps of the visible range (not the reduction).
    bool showsExactSteps() const { return m_exact; }

    /// Stacks the allocated memory by role (`stacked`) with `layers` (buildRoleLayers on job
    /// time, computed by the caller once per GPU), or goes back to the single allocated fill.
    /// Stacked without layers (the GPU has no roles): the plot stays as it was and its title says
    /// that the roles are unknown. The allocated and reserved lines, capacity and the 80 % line
    /// stay on top of the layers.
    void setRoleLayers(bool stacked, std::shared_ptr<const analysis::RoleLayers> layers);
    bool stackedByRole() const { return m_roleLayers != nullptr; }
    const analysis::RoleLayers* roleLayers() const { return m_roleLayers.get(); }
    /// The layer graphs, parallel to roleLayers()->roles: graph k draws the top of layers 0..k and
    /// is named (legend) by shortRoleLabel.
    const std::vector<QCPGraph*>& roleGraphs() const { return m_roleGraphs; }

    /// Shows or hides the time labels under the plot (only the bottom plot of a stack shows them).
    void setTimeLabelsVisible(bool visible);
    void setLegendVisible(bool visible);
    /// Fits the memory axis to the data (false) or to the device capacity (true).
    void setScaleToCapacity(bool toCapacity);
    /// Width of the left margin, px, so that stacked plots line up.
    void setLeftMargin(int px);
    void applyColors(const PlotColors& colors);
    /// Queries the reduction for the visible range and the current width, then replots.
    void refresh();

    /// The least height a plot keeps (without time labels), px: the title row and a readable
    /// memory axis. The timeline scrolls when its plots need more than it has.
    static int minimumReadableHeight(const QFontMetrics& fm);
    /// Draws `notes` (the ones this GPU shows, numbered in the display order of all notes): a
    /// line or band each, with a label placed clear of dataLabelRects().
    void setNotes(const std::vector<NumberedNote>& notes);
    const std::vector<PlotNoteMark>& noteMarks() const;
    /// Pixel rectangles of the labels that carry data (peak, OOMs, capacity, legend, no-data
    /// text) as last laid out; note labels never cover them.
    std::vector<QRectF> dataLabelRects() const;
    /// Called on a right click without a drag with the global position and the job time under
    /// it; returns true when it showed a menu. Without one (or when it returns false) the right
    /// click clears the selection, as on every time view.
    void setContextMenuHandler(std::function<bool(QPoint, int64_t)> handler);

    /// Width of the margin right of the axis rectangle, px; the timeline's lanes keep the same
    /// so that their time axes line up with the plots'.
    static constexpr int kRightMarginPx = 16;
    /// Default width of the memory-axis margin, px, for the current font.
    static int defaultLeftMargin(const QFontMetrics& fm);
    /// The visible range on the axis rectangle's x span (from the margins, so it holds between a
    /// resize and the next replot's layout).
    TimeMapper mapper() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void buildItems();
    void updateYRange();
    void updateMarkers();
    void updateOverlay();
    /// Sets `graph` to the visible part of `lod` (exact steps or min/max strokes per column) and
    /// `envelope`, when given, to one point per column at the column's maximum (for the fill).
    /// Returns true when the exact steps were used.
    bool fillGraph(QCPGraph* graph, const analysis::LodSeries& lod, TimeRange range, int columns,
                   QCPGraph* envelope = nullptr);
    /// Sets the role layer graphs to the visible range: exact steps as filled step areas, or one
    /// stroke per column from zero to the column's maximum of the layer's top.
    void fillRoleGraphs(TimeRange range, int columns);
    void updateTitle();
    /// Sets the legend's entries per row so that it fits `axisWidth` px.
    void fitLegend(int axisWidth);

    std::shared_ptr<const analysis::JobModel> m_job;
    analysis::GpuKey m_gpu;
    const analysis::GpuSeries* m_series = nullptr;
    ZoomState* m_zoom = nullptr;
    PlotColors m_colors;
    QColor m_fillColor;
    bool m_scaleToCapacity = false;
    bool m_exact = false;
    bool m_painted = false;

    QCPGraph* m_allocatedFill = nullptr;
    QCPGraph* m_allocated = nullptr;
    QCPGraph* m_reserved = nullptr;
    QCPGraph* m_capacityLegend = nullptr;
    QCPGraph* m_warningLegend = nullptr;
    QCPItemStraightLine* m_capacityLine = nullptr;
    QCPItemStraightLine* m_warningLine = nullptr;
    QCPItemText* m_capacityText = nullptr;
    QCPItemText* m_offScale = nullptr;  ///< "↑ capacity 80.0 GiB" when it is above the axis
    QCPItemText* m_title = nullptr;
    QCPItemText* m_noData = nullptr;
    QCPItemText* m_peakText = nullptr;
    QCPItemLine* m_peakArrow = nullptr;
    std::vector<QCPItemStraightLine*> m_oomLines;
    std::vector<QCPItemText*> m_oomTexts;
    QCPItemStraightLine* m_crosshair = nullptr;
    QCPItemStraightLine* m_clickedLine = nullptr;
    QCPItemRect* m_selectionRect = nullptr;
    QCPLayer* m_overlay = nullptr;
    QCPLayer* m_rolesLayer = nullptr;  ///< below "main": the layers under the lines
    bool m_stackRequested = false;
    std::shared_ptr<const analysis::RoleLayers> m_roleLayers;
    std::vector<QCPGraph*> m_roleGraphs;
    std::unique_ptr<PlotNoteItems> m_noteItems;
    std::function<bool(QPoint, int64_t)> m_contextMenu;
};

}  // namespace vramscope::widgets
