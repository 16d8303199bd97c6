#pragma once
// The idle gaps of every GPU of a job as a table, with a sort/filter proxy and the panel around it.

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QWidget>

#include <memory>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/zoom_state.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;

namespace vramscope::widgets {

/// One idle gap as the table shows it (job time).
struct GapRow {
    analysis::GpuKey key;
    trace::RankId rank = trace::kUnknownRank;
    trace::DeviceIndex device{0};
    int64_t startNs = 0;  ///< job time
    int64_t durationNs = 0;
    analysis::GapCause cause = analysis::GapCause::Other;
    QString kernelBefore;  ///< full names (tooltips, sorting, filtering)
    QString kernelAfter;
    QString kernelBeforeShort;  ///< as shown: analysis::shortenNames over the table's kernels
    QString kernelAfterShort;
};

/// The gaps of `job` (each GPU's TimeBreakdown::gaps: the largest ones), largest first.
std::vector<GapRow> gapRowsFrom(const analysis::JobModel& job);

/// The range a gap is shown in: the gap with a margin of half its length on each side (at least
/// 1 us), so the kernels before and after it are in view.
TimeRange gapViewRange(const GapRow& gap);

/// Table of idle gaps: rank, GPU, start, duration, class, kernel before, kernel after. Plain
/// values; GUI thread only.
class GapTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        RankColumn = 0,
        GpuColumn,
        StartColumn,
        DurationColumn,
        ClassColumn,
        BeforeColumn,
        AfterColumn,
        ColumnCount
    };
    /// Raw numbers (rank, device, ns, cause as int) or the string, for sorting and tests.
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit GapTableModel(QObject* parent = nullptr);
    void setRows(std::vector<GapRow> rows);
    const std::vector<GapRow>& rows() const { return m_rows; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<GapRow> m_rows;
};

/// Sorts by the raw values and filters by gap class and by a text matched against the kernel
/// names before and after.
class GapFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit GapFilterModel(QObject* parent = nullptr);
    /// -1 = every class, else an analysis::GapCause.
    void setCauseFilter(int cause);
    void setTextFilter(const QString& text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    int m_cause = -1;
    QString m_text;
};

/// The Idle gaps dock: filters, the sorted table, and a summary line; selecting a row shows that
/// gap (gapViewRange) in every time view through the ZoomState and selects its range. GUI thread
/// only.
class GapsPanel : public QWidget {
    Q_OBJECT
public:
    explicit GapsPanel(ZoomState* zoom, QWidget* parent = nullptr);
    /// Modest, so that a dock of it leaves the timeline most of the window.
    QSize sizeHint() const override { return {520, 240}; }
    void setJob(std::shared_ptr<const analysis::JobModel> job);

    GapTableModel* model() const { return m_model; }
    GapFilterModel* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }

private:
    void showRow(const QModelIndex& proxyIndex);

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    GapTableModel* m_model;
    GapFilterModel* m_proxy;
    QComboBox* m_causeBox;
    QLineEdit* m_filterEdit;
    QLabel* m_summary;
    QTableView* m_table;
};

}  // namespace vramscope::widgets
