#pragma once
// The Details dock: what is alive on the clicked GPU at the clicked time (the live-set query over
// the job model's AllocationIndex), and the role of memory and the stack of the allocation
// selected in that list.

#include <QWidget>

#include <memory>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/live_set_model.h"

class QLabel;
class QListView;
class QStringListModel;
class QTableView;

namespace vramscope::widgets {

class ZoomState;

/// Shows what is alive on `zoom`'s selected GPU at its selected time: a LiveSetModel (largest
/// first) with a heading, and the role (roleLines) and full stack of the selected row. It follows
/// the ZoomState's selection (selectedGpuChanged) and asks the job model for the live set
/// (analysis::liveSetAt over the GPU's AllocationIndex); it computes nothing else.
/// GUI thread only; the ZoomState must outlive it.
class DetailsPanel : public QWidget {
    Q_OBJECT
public:
    explicit DetailsPanel(ZoomState* zoom, QWidget* parent = nullptr);

    /// Shows `job` (may be null: nothing open) at the zoom's current selection: the live set of
    /// the selected GPU at the selected job time, or, without a selected GPU, a sentence saying
    /// why the list is empty (no GPU, no allocation events, or how to choose a time).
    void setJob(std::shared_ptr<const analysis::JobModel> job);
    /// Lists what is alive on `gpu` of the job at job time `jobTimeNs` (converted to the rank's
    /// trace time for the query). The heading names the GPU, the time (at the precision of the
    /// zoom's visible span), the count and the total bytes: "rank 0 · GPU 0 at 1.20 s: 312
    /// allocation(s) alive, 6.1 GiB" (segments at the reserved level). A GPU whose live set is
    /// not known gets the reason instead; an unknown GPU, the placeholder of setJob.
    void showLiveSetAt(analysis::GpuKey gpu, int64_t jobTimeNs);

    /// Shows `rows` under `heading` (e.g. "rank 0 · GPU 0 at 1.20 s: 312 allocations, 6.1 GiB").
    void setLiveSet(const QString& heading, std::vector<LiveRow> rows);
    /// Empties the list and shows `message` instead.
    void clear(const QString& message);

    /// The heading (or the message of clear()) as shown, rich text.
    QString headingText() const;

    LiveSetModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    /// The stack shown for the selected row, innermost frame first.
    QStringList shownStack() const;
    /// The role lines shown for the selected row (roleLines), empty without a selection.
    QString shownRole() const;

signals:
    /// "Add note for this allocation" was chosen in the context menu of row `row` of model().
    void allocationNoteRequested(int row);

private:
    void showStackOf(int row);

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    QLabel* m_heading = nullptr;
    QTableView* m_table = nullptr;
    LiveSetModel* m_model = nullptr;
    QLabel* m_role = nullptr;
    QLabel* m_stackHeading = nullptr;
    QListView* m_stack = nullptr;
    QStringListModel* m_stackModel = nullptr;
};

}  // namespace vramscope::widgets
