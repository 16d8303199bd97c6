#pragma once
// The main window's opening from summaries: the overview shown at once, the detail loaded behind
// it (or, over the memory budget, only the time window zoomed into), and job indexes whose ranks
// load on a click.

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/summary.h"

class QAction;
class QThread;
class QTimer;

namespace vramscope::app {

class JobLoader;
class MainWindow;

/// Decides how a file opens: from its summaries first when it has some, then the events (all of
/// them within the memory budget, else the window on screen, evicting the previous window); a job
/// index opens as an overview of every rank. Owned by the MainWindow it drives, GUI thread only;
/// loads run on worker threads and hand immutable models back.
class SummaryController : public QObject {
    Q_OBJECT
public:
    explicit SummaryController(MainWindow* window);
    ~SummaryController() override;

    /// Opens `paths` when they are one job index or one .vscope file with summaries and returns
    /// true; false leaves the opening to the usual loader (old files, several inputs, others).
    bool open(const QStringList& paths);
    /// Forgets the summary state (another job is being opened the usual way).
    void reset();

    /// What the shown job is.
    enum class Shown { Other, Overview, Window, Detail, Index, IndexRank };
    Shown shown() const { return m_shown; }
    /// A sentence for the banner about what is shown and what is missing; empty for Other.
    const QString& note() const { return m_note; }
    /// The summary of the file opened from summaries (nullptr otherwise).
    const std::shared_ptr<const trace::TraceSummary>& summary() const { return m_summary; }
    /// True when the file's events are over the memory budget, so only windows load.
    bool overBudget() const { return m_overBudget; }
    /// Frames read for the window shown (framesForWindow), empty unless Shown::Window.
    const std::vector<uint64_t>& windowFrames() const { return m_windowFrames; }
    /// The loaded window (Shown::Window) in the overview's job time [start, end], ns; the window's
    /// own model counts job time from its earliest event (JobModel::originNs).
    std::pair<int64_t, int64_t> windowRange() const { return {m_windowStart, m_windowEnd}; }
    /// The job index overview, nullptr unless an index is open.
    const std::shared_ptr<const analysis::JobModel>& indexModel() const { return m_index; }
    /// Goes back from a rank's detail to the job index overview.
    void showIndex();
    /// View > Back to Job Index (enabled while a rank of an index is shown).
    QAction* backToIndexAction() const { return m_backToIndex; }

signals:
    /// The shown model changed (overview, detail, window or rank), after the window showed it.
    void shownChanged();

private:
    void show(std::shared_ptr<const analysis::JobModel> model, Shown shown, bool keepRange);
    void onDetail(std::shared_ptr<const analysis::JobModel> job, const QStringList& paths);
    void onVisibleRange();
    void loadWindowNow();
    void onSelectedGpu(analysis::GpuKey gpu);
    void updateNote();

    MainWindow* m_window;
    JobLoader* m_loader = nullptr;
    QTimer* m_windowTimer = nullptr;
    QThread* m_windowThread = nullptr;
    QAction* m_backToIndex = nullptr;
    Shown m_shown = Shown::Other;
    QString m_note;
    QString m_path;       ///< the file shown (a rank's file under an index)
    QString m_indexPath;  ///< the job index open, empty when none
    std::shared_ptr<const trace::TraceSummary> m_summary;
    std::shared_ptr<const analysis::JobModel> m_overview;
    std::shared_ptr<const analysis::JobModel> m_index;
    std::vector<uint64_t> m_windowFrames;
    int64_t m_windowStart = 0;  ///< overview job time covered by the shown window
    int64_t m_windowEnd = 0;
    int m_windowGeneration = 0;
    bool m_overBudget = false;
    bool m_showing = false;  ///< inside show(): selection changes are the window's own
};

}  // namespace vramscope::app
