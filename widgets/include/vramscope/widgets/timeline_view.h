#pragma once
// The centre of the main window: the range lane above one VRAM plot per shown GPU, stacked on a
// shared time axis, or, for many GPUs, a heat strip of all of them above the plot of the selected.

#include <QWidget>

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "vramscope/analysis/memory/role_layers.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"
#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/zoom_state.h"

class QLabel;
class QScrollArea;
class QVBoxLayout;

namespace vramscope::widgets {

class HeatStrip;
class MemoryPlot;
class RangeLane;
class TimeAxisBar;

/// Lays out the memory views of the shown GPUs; every child follows the shared ZoomState. Owns its
/// child widgets, shares the job read-only. GUI thread only.
class TimelineView : public QWidget {
    Q_OBJECT
public:
    enum class LayoutMode { Automatic, Stacked, Compact };
    /// Above this many shown GPUs, Automatic switches to the compact layout.
    static constexpr int kCompactThreshold = 8;

    explicit TimelineView(ZoomState* zoom, QWidget* parent = nullptr);

    /// Shows `job` with all its GPUs; nullptr clears the view.
    void setJob(std::shared_ptr<const analysis::JobModel> job);
    const std::shared_ptr<const analysis::JobModel>& job() const { return m_job; }
    void setShownGpus(std::vector<analysis::GpuKey> gpus);
    const std::vector<analysis::GpuKey>& shownGpus() const { return m_shown; }

    void setLayoutMode(LayoutMode mode);
    LayoutMode layoutMode() const { return m_mode; }
    /// True when the compact layout is in use (asked for, or automatic with many GPUs).
    bool isCompact() const;
    void setScaleToCapacity(bool toCapacity);
    bool scaleToCapacity() const { return m_scaleToCapacity; }
    /// Stacks each plot's allocated memory by role of memory. The layers of a GPU are built
    /// (buildRoleSeries, buildRoleLayers) the first time it is shown stacked and kept until the
    /// job changes.
    void setStackByRole(bool stacked);
    bool stackByRole() const { return m_stackByRole; }
    /// The stacked layers of `gpu` on job time, built now if need be; nullptr when the GPU has no
    /// roles (no allocation events, or a live set that cannot be rebuilt).
    std::shared_ptr<const analysis::RoleLayers> roleLayersOf(analysis::GpuKey gpu);

    /// The plots on screen, top to bottom (one per shown GPU, or one in the compact layout).
    const std::vector<MemoryPlot*>& plots() const { return m_plots; }
    HeatStrip* heatStrip() const { return m_heat; }
    RangeLane* rangeLane() const { return m_lane; }
    TimeAxisBar* timeAxis() const { return m_axis; }

    void applyColors(const PlotColors& colors);
    /// Queries and repaints every plot now (for screenshots and tests).
    void replotNow();

    /// Notes to draw where this view shows their time or object (a point note as a line, a
    /// range as a band, a title label that never covers the data labels); replaces the last set.
    void setNotes(std::vector<trace::Note> notes);
    const std::vector<trace::Note>& notes() const { return m_notes; }

signals:
    /// A right click (no drag) on the plot of `gpu` at job time `timeNs`; `globalPos` is where
    /// to open a menu. While nothing is connected, a right click clears the selection instead.
    void contextMenuRequested(QPoint globalPos, qint64 timeNs, vramscope::analysis::GpuKey gpu);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void updateLaneRank();
    void applyNotes();

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    std::vector<analysis::GpuKey> m_shown;
    LayoutMode m_mode = LayoutMode::Automatic;
    bool m_scaleToCapacity = false;
    bool m_stackByRole = false;
    /// (rank index, device) -> layers of the current job; a null entry: the GPU has no roles.
    std::map<std::pair<int, int32_t>, std::shared_ptr<const analysis::RoleLayers>> m_roleLayers;
    PlotColors m_colors;

    RangeLane* m_lane = nullptr;
    TimeAxisBar* m_axis = nullptr;
    QScrollArea* m_scroll = nullptr;
    QWidget* m_content = nullptr;
    QVBoxLayout* m_contentLayout = nullptr;
    QLabel* m_empty = nullptr;
    HeatStrip* m_heat = nullptr;
    std::vector<MemoryPlot*> m_plots;
    std::vector<trace::Note> m_notes;
};

}  // namespace vramscope::widgets
