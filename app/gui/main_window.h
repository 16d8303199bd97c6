#pragma once
// The vramscope main window: timeline in the centre, ranks and GPUs on the left, details on the
// right, menus, status bar read-out, recent files and window state.

#include <QMainWindow>
#include <QStringList>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "vramscope/analysis/memory/allocation_index.h"

#include "vramscope/analysis/model/job_model.h"

class QAction;
class QActionGroup;
class QLabel;
class QMenu;
class QProgressDialog;
class QTabWidget;
class QTreeView;

namespace vramscope::widgets {
class DetailsPanel;
class DeviceTreeModel;
class TimelineView;
class ZoomState;
}  // namespace vramscope::widgets

namespace vramscope::app {

class JobLoader;
class LiveSession;
class SummaryController;

/// One thing File > Export View can picture: its name (the picture's default title) and widget.
struct ExportTarget {
    QString name;
    QWidget* widget = nullptr;
    /// The view's name in analysis::exportableViews() (its formulas go in the footer); empty
    /// for the whole window and panels that show no figures of their own.
    QString view;
};

/// Owns the shared ZoomState and the views that follow it. Jobs arrive as immutable
/// analysis::JobModel values, loaded on a worker thread (openPaths) or handed in ready (setJob).
/// Further views join as tabs of the centre (addCentralTab) or docks, and register a name for
/// --view (addView). GUI thread only.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Loads files and directories as one job on a worker thread, with a cancellable progress
    /// dialog; an empty list opens the bundled sample.
    void openPaths(const QStringList& paths);
    /// Shows `job` (loaded elsewhere, e.g. synchronously for --screenshot). `paths` go to the
    /// recent list when not empty.
    void setJob(std::shared_ptr<const analysis::JobModel> job, const QStringList& paths = {});
    const std::shared_ptr<const analysis::JobModel>& job() const { return m_job; }
    /// The inputs the shown job was opened from (empty for the bundled sample).
    const QStringList& currentPaths() const { return m_currentPaths; }

    /// File > Attach to Running Job: connects to running jobs' live sockets and shows what they
    /// stream, rebuilt a few times a second (LiveSession). The view follows the newest
    /// followSpanNs() until the user pans or zooms; End follows again. False with `error` set
    /// when no socket could be reached. Replaces any earlier live session.
    bool attachLive(const QStringList& sockets, QString* error = nullptr);
    /// Stops receiving; the data shown stays (and can be saved).
    void detachLive();
    /// The live session, null when none.
    LiveSession* liveSession() const { return m_live.get(); }
    /// Whether the view keeps the newest data in view (live sessions only).
    bool isFollowing() const { return m_following; }
    /// Follow the newest data again (End).
    void followLive();
    /// The time span kept in view while following, ns (default 30 s).
    int64_t followSpanNs() const { return m_followSpanNs; }
    void setFollowSpanNs(int64_t ns) { m_followSpanNs = std::max<int64_t>(ns, 1'000'000); }

    /// How the shown file was opened from summaries (overview, window, job index).
    SummaryController* summaries() const { return m_summaries; }
    /// Shows the banner again (the summary note changed).
    void refreshBanner() { updateBanner(); }

    widgets::ZoomState* zoomState() const { return m_zoom; }
    widgets::TimelineView* timeline() const { return m_timeline; }
    widgets::DetailsPanel* details() const { return m_details; }
    widgets::DeviceTreeModel* deviceModel() const { return m_deviceModel; }
    QTabWidget* centralTabs() const { return m_tabs; }

    /// Adds a view as a tab of the centre, e.g. a flame view or communication lanes.
    int addCentralTab(QWidget* view, const QString& title);
    /// Registers a view name for showView (and the command line's --view).
    void addView(const QString& name, std::function<void()> activate);
    /// Brings the named view to the front; false when no view has that name.
    bool showView(const QString& name);
    QStringList viewNames() const;

    /// Switches to the "system", "light" or "dark" palette for this session (View > Theme keeps
    /// the choice).
    void setTheme(const QString& theme) { applyTheme(theme); }

    /// View > Stack Allocated Memory by Role (checkable, shortcut R); also on the analysis toolbar.
    QAction* stackByRoleAction() const { return m_stackByRole; }

    /// Renders the whole window at `size` (logical px) into an image, after replotting every view.
    QImage renderToImage(QSize size);

    /// View > Reset Layout: every dock back in its default place and size (window_layout.h), the
    /// analysis tab in front chosen for the job as when it opened.
    void resetLayout();
    /// True when the constructor restored a window state saved by this layout version (the
    /// default layout was then not applied).
    bool layoutRestored() const { return m_layoutRestored; }

    /// What File > Export View and Edit > Copy Image can picture: the current centre tab first,
    /// then the docks shown (those in front of their tab group first), each with its name
    /// ("Memory timeline", "Idle gaps"), and last the whole window. Never empty.
    std::vector<ExportTarget> exportTargets();

signals:
    /// A job has been shown; views added as tabs or docks follow it from here.
    void jobChanged(std::shared_ptr<const vramscope::analysis::JobModel> job);
    /// The docks went back to the default layout; the analysis views bring the job's tab to the
    /// front again.
    void layoutReset();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void createDocks();
    void createMenus();
    void createViewActions(QMenu* view);
    void createHelpMenu();
    void applyTheme(const QString& theme);
    void updateRecentMenu();
    void addRecent(const QStringList& paths);
    void fitDeviceNames();
    void updateBanner();
    void updateCursorReadout();
    void updateSelectionReadout();
    void showProblems(const analysis::JobModel& job);
    void onLoadFinished(std::shared_ptr<const analysis::JobModel> job, const QStringList& paths);
    void onLoadFailed(const QString& message, const QStringList& paths);
    void showShortcuts();
    void showLiveModel(std::shared_ptr<const analysis::JobModel> job);
    void applyFollow();
    void chooseAndAttach();
    void saveReceived();
    QString liveBannerLine() const;
    void showAbout();

    widgets::ZoomState* m_zoom = nullptr;
    std::shared_ptr<const analysis::JobModel> m_job;
    JobLoader* m_loader = nullptr;
    SummaryController* m_summaries = nullptr;
    QProgressDialog* m_progress = nullptr;

    QTabWidget* m_tabs = nullptr;
    widgets::TimelineView* m_timeline = nullptr;
    widgets::DeviceTreeModel* m_deviceModel = nullptr;
    QTreeView* m_deviceTree = nullptr;
    widgets::DetailsPanel* m_details = nullptr;
    QLabel* m_banner = nullptr;  ///< above the views: data lost, files skipped, no events
    QLabel* m_cursorLabel = nullptr;
    QLabel* m_selectionLabel = nullptr;
    QMenu* m_recentMenu = nullptr;
    QActionGroup* m_layoutGroup = nullptr;
    QActionGroup* m_themeGroup = nullptr;
    QAction* m_stackByRole = nullptr;
    std::map<QString, std::function<void()>> m_views;
    QStringList m_currentPaths;
    std::unique_ptr<LiveSession> m_live;
    bool m_following = true;
    bool m_liveRangeGuard = false;  ///< the window itself is moving the view (not the user)
    int64_t m_followSpanNs = 30'000'000'000;
    QAction* m_detachAction = nullptr;
    QAction* m_saveReceivedAction = nullptr;
    QAction* m_followAction = nullptr;
    bool m_applyingTheme = false;
    bool m_layoutRestored = false;  ///< a saved state of this version was restored
    bool m_layoutFitted = false;    ///< the default dock sizes were fitted to the shown window
};

}  // namespace vramscope::app
