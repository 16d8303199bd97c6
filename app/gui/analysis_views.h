#pragma once
// The analysis panels of the main window: allocation flame view, idle gaps, leak and advice docks,
// the communication lanes tab, and the "Jump to OOM" toolbar action.

#include <QObject>

#include <memory>

#include "vramscope/analysis/model/job_model.h"

class QAction;
class QDockWidget;

namespace vramscope::widgets {
class AdvicePanel;
class CollectivesPanel;
class CommLanesView;
class FlamePanel;
class GapsPanel;
class LeakPanel;
class SegmentPanel;
class TopKernelsPanel;
}  // namespace vramscope::widgets

namespace vramscope::app {

class MainWindow;

/// Adds the analysis panels to `window` and hands each new job model (built with its analyses
/// off the GUI thread by the JobLoader) to them. Views registered for --view: flame, lanes,
/// collectives, gaps, leak, advice, segments (the reserved segments, at the first OOM when there is
/// one), top-kernels (kernel time per name on one GPU), and oom (the flame view at the first OOM,
/// as Jump to OOM shows it). Owned by the window; GUI thread only.
class AnalysisViews : public QObject {
    Q_OBJECT
public:
    explicit AnalysisViews(MainWindow* window);
    ~AnalysisViews() override;

    const std::shared_ptr<const analysis::JobModel>& job() const { return m_job; }

    widgets::FlamePanel* flame() const { return m_flame; }
    widgets::CommLanesView* lanes() const { return m_lanes; }
    widgets::CollectivesPanel* collectives() const { return m_collectives; }
    widgets::GapsPanel* gaps() const { return m_gaps; }
    widgets::LeakPanel* leak() const { return m_leak; }
    widgets::AdvicePanel* advice() const { return m_advice; }
    widgets::SegmentPanel* segments() const { return m_segments; }
    widgets::TopKernelsPanel* topKernels() const { return m_topKernels; }
    QAction* jumpToOomAction() const { return m_jumpToOom; }

private:
    void apply(std::shared_ptr<const analysis::JobModel> job);
    void raiseFrontTab();
    void jumpToOom();
    void showDock(QDockWidget* dock);

    MainWindow* m_window;
    widgets::FlamePanel* m_flame;
    widgets::CommLanesView* m_lanes;
    widgets::CollectivesPanel* m_collectives;
    widgets::GapsPanel* m_gaps;
    widgets::LeakPanel* m_leak;
    widgets::AdvicePanel* m_advice;
    widgets::SegmentPanel* m_segments;
    widgets::TopKernelsPanel* m_topKernels;
    QDockWidget* m_flameDock = nullptr;
    QDockWidget* m_gapsDock = nullptr;
    QDockWidget* m_leakDock = nullptr;
    QDockWidget* m_adviceDock = nullptr;
    QDockWidget* m_segmentsDock = nullptr;
    QDockWidget* m_collectivesDock = nullptr;
    QDockWidget* m_topKernelsDock = nullptr;
    QWidget* m_lanesTab = nullptr;
    QAction* m_jumpToOom = nullptr;

    std::shared_ptr<const analysis::JobModel> m_job;
};

}  // namespace vramscope::app
