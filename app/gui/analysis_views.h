#pragma once
// The analysis panels of the main window: allocation flame view, idle gaps, leak and advice docks,
// the communication lanes tab, and the "Jump to OOM" toolbar action.

#include <QObject>

#include <memory>
#include <thread>

#include "vramscope/widgets/job_analyses.h"

class QAction;
class QDockWidget;
class QThread;

namespace vramscope::widgets {
class AdvicePanel;
class CommLanesView;
class FlamePanel;
class GapsPanel;
class LeakPanel;
}  // namespace vramscope::widgets

namespace vramscope::app {

class MainWindow;

/// Adds the analysis panels to `window` and keeps them fed: on every new job the analyses
/// (widgets::analyzeJob) run on a worker thread and are handed to the panels on the GUI thread;
/// showing a panel before they are done (e.g. --screenshot --view flame) waits for them. Views
/// registered for --view: flame, lanes, gaps, leak, advice, and oom (the flame view at the
/// first OOM, as Jump to OOM shows it). Owned by the window; GUI thread only.
class AnalysisViews : public QObject {
    Q_OBJECT
public:
    explicit AnalysisViews(MainWindow* window);
    ~AnalysisViews() override;

    /// Waits for the running analyses, if any, and hands them to the panels now.
    void finishAnalyses();
    const std::shared_ptr<const widgets::JobAnalyses>& analyses() const { return m_analyses; }

    widgets::FlamePanel* flame() const { return m_flame; }
    widgets::CommLanesView* lanes() const { return m_lanes; }
    widgets::GapsPanel* gaps() const { return m_gaps; }
    widgets::LeakPanel* leak() const { return m_leak; }
    widgets::AdvicePanel* advice() const { return m_advice; }
    QAction* jumpToOomAction() const { return m_jumpToOom; }

private:
    void startAnalyses(std::shared_ptr<const widgets::LoadedJob> job);
    void apply(std::shared_ptr<const widgets::JobAnalyses> analyses);
    void jumpToOom();
    void showDock(QDockWidget* dock);
    void fitDocks();

    MainWindow* m_window;
    widgets::FlamePanel* m_flame;
    widgets::CommLanesView* m_lanes;
    widgets::GapsPanel* m_gaps;
    widgets::LeakPanel* m_leak;
    widgets::AdvicePanel* m_advice;
    QDockWidget* m_flameDock = nullptr;
    QDockWidget* m_gapsDock = nullptr;
    QDockWidget* m_leakDock = nullptr;
    QDockWidget* m_adviceDock = nullptr;
    QWidget* m_lanesTab = nullptr;
    QAction* m_jumpToOom = nullptr;
    int m_dockPercent = 28;  // share of the window's height for the bottom docks

    std::shared_ptr<const widgets::JobAnalyses> m_analyses;
    // The running analysis: its thread and where it leaves the result.
    std::unique_ptr<std::thread> m_worker;
    std::shared_ptr<std::shared_ptr<const widgets::JobAnalyses>> m_pending;
    uint64_t m_generation = 0;
};

}  // namespace vramscope::app
