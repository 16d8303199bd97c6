#pragma once
// The collectives of a job as a table (one row per function, message size and group size, from
// analysis::collectiveBandwidth), with a sort/filter proxy, the per-GPU verdicts, and the panel
// around them.

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

#include "vramscope/analysis/collectives/collective_bandwidth.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/zoom_state.h"

class QLabel;
class QLineEdit;
class QTableView;

namespace vramscope::widgets {

/// One row of the Collectives table: a CollectiveGroup as analysis computed it, with where its
/// longest occurrence ran on the job's time axis.
struct CollectiveRow {
    analysis::CollectiveGroup group;
    /// Whether any occurrence of the group was matched across ranks (CollectiveBandwidth::waitNs
    /// >= 0): without a match the wait and the straggler are unknown, not zero.
    bool matched = false;
    /// Whether `longest` named an occurrence of the report (else there is nothing to zoom to).
    bool located = false;
    /// The longest occurrence (CollectiveGroup::longest), job time: [start, start + duration).
    int64_t longestStartNs = 0;
    int64_t longestDurationNs = 0;
    trace::RankId longestRank = trace::kUnknownRank;
};

/// The rows of `report` (its groups, in its order) for `job`: each longest occurrence moved from
/// its input's trace time to job time (RankInfo::toJobNs of CollectiveBandwidth::input). A group
/// whose `longest` is out of range is not `located`.
std::vector<CollectiveRow> collectiveRowsFrom(const analysis::JobModel& job,
                                              const analysis::CollectiveBandwidthReport& report);

/// The range a row is shown in: its longest occurrence with a margin of half its length on each
/// side (at least 1 us), as gapViewRange frames a gap.
TimeRange collectiveViewRange(const CollectiveRow& row);

/// Why the table is empty or its bandwidth columns are, in one sentence; empty when there is
/// nothing to explain (every group has a message size). Cases: no job; no GPU; no collectives
/// at all (no communication kernel); communication kernels without collective records (no
/// message sizes to divide by); collective records without message sizes.
QString collectivesEmptySentence(const analysis::JobModel* job,
                                 const analysis::CollectiveBandwidthReport& report);

/// One line per GPU verdict: "rank 0 GPU 0: bandwidth-bound: <evidence>" (limitText, then the
/// evidence, or for an unknown verdict what is missing), lines joined by newlines; empty
/// without verdicts.
QString collectiveVerdictText(const analysis::CollectiveBandwidthReport& report);

/// Table of collective groups: function, message size, ranks, count, median and max duration,
/// busBw min and median (GB/s, 1e9 B/s), straggler rank, wait. Unknown figures are blank cells
/// (with a tooltip saying why), never 0. Plain values; GUI thread only.
class CollectiveTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        FunctionColumn = 0,
        SizeColumn,
        RanksColumn,
        CountColumn,
        MedianDurationColumn,
        MaxDurationColumn,
        MinBusBwColumn,
        MedianBusBwColumn,
        StragglerColumn,
        WaitColumn,
        ColumnCount
    };
    /// The number behind a cell (bytes, ranks, count, ns, GB/s as double, rank) or the function
    /// name, for sorting and tests; -1 for an unknown figure, so that unknowns sort below every
    /// known one.
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit CollectiveTableModel(QObject* parent = nullptr);
    void setRows(std::vector<CollectiveRow> rows);
    const std::vector<CollectiveRow>& rows() const { return m_rows; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QVariant rawValue(const CollectiveRow& r, int column) const;
    QVariant displayValue(const CollectiveRow& r, int column) const;

    std::vector<CollectiveRow> m_rows;
};

/// Sorts by the raw values (numbers as numbers) and filters by a text matched against the
/// function name (case-insensitive).
class CollectiveFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit CollectiveFilterModel(QObject* parent = nullptr);
    void setTextFilter(const QString& text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString m_text;
};

/// The Collectives dock: the per-GPU verdicts, a function filter, the sorted table (largest
/// summed duration first, as analysis orders the groups) and, when empty, why. Selecting a row
/// shows its longest occurrence (collectiveViewRange) in every time view through the ZoomState
/// and selects it. Reads JobModel::analysis.bandwidth. GUI thread only.
class CollectivesPanel : public QWidget {
    Q_OBJECT
public:
    explicit CollectivesPanel(ZoomState* zoom, QWidget* parent = nullptr);
    /// Modest, so that a dock of it leaves the timeline most of the window.
    QSize sizeHint() const override { return {640, 240}; }
    void setJob(std::shared_ptr<const analysis::JobModel> job);

    CollectiveTableModel* model() const { return m_model; }
    CollectiveFilterModel* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filterEdit; }
    /// The verdicts above the table.
    QLabel* verdictLabel() const { return m_verdicts; }
    /// The sentence saying why the table (or its bandwidth) is empty; hidden when not.
    QLabel* emptyLabel() const { return m_empty; }

signals:
    /// A row was selected: the job-time range shown (collectiveViewRange of that row).
    void rangeShown(vramscope::widgets::TimeRange range);

private:
    void showRow(const QModelIndex& proxyIndex);

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    CollectiveTableModel* m_model;
    CollectiveFilterModel* m_proxy;
    QLineEdit* m_filterEdit;
    QLabel* m_verdicts;
    QLabel* m_empty;
    QTableView* m_table;
};

}  // namespace vramscope::widgets
