#pragma once
// The leak panel: per GPU the verdict (sawtooth, staircase, inconclusive), growth per iteration
// and iterations to OOM; a chart of baselines per iteration with the fitted line; the survivors.

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/widgets/zoom_state.h"

class QCustomPlot;
class QLabel;
class QStackedWidget;
class QTableView;

namespace vramscope::widgets {

/// One row per GPU with allocation events: rank, GPU, verdict, growth per iteration, iterations to
/// OOM, iterations (count and source). Plain values from analysis::JobModel; GUI thread only.
class LeakSummaryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        GpuColumn = 0,
        VerdictColumn,
        GrowthColumn,
        ToOomColumn,
        IterationsColumn,
        ColumnCount
    };
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit LeakSummaryModel(QObject* parent = nullptr);
    void setJob(std::shared_ptr<const analysis::JobModel> job);
    /// The GPU of `row`, or an invalid key.
    analysis::GpuKey gpuAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const analysis::JobModel> m_job;
};

/// The survivor groups of one GPU's LeakReport, each described by what it is: bytes in all, what
/// survives per iteration (analysis::survivorPattern), in how many iterations, where (the user's
/// frame, else the top frame). GUI thread only.
class SurvivorModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { BytesColumn = 0, PatternColumn, IterationsColumn, WhereColumn, ColumnCount };
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit SurvivorModel(QObject* parent = nullptr);
    void setReport(const analysis::LeakReport* report);
    const analysis::SurvivorGroup* groupAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    const analysis::LeakReport* m_report = nullptr;
};

/// The Leak dock. Selecting a GPU shows its chart and survivors; selecting a survivor selects in
/// the ZoomState the time range over which the group's still-alive allocations were made (the
/// VRAM plots shade it) and emits survivorSelected so the flame view highlights the stack.
/// GUI thread only.
class LeakPanel : public QWidget {
    Q_OBJECT
public:
    explicit LeakPanel(ZoomState* zoom, QWidget* parent = nullptr);
    /// Modest, so that a dock of it leaves the timeline most of the window.
    QSize sizeHint() const override { return {520, 240}; }
    void setJob(std::shared_ptr<const analysis::JobModel> job);
    /// Shows `gpu` (one with allocation events).
    void setGpu(analysis::GpuKey gpu);
    analysis::GpuKey gpu() const { return m_gpu; }
    /// Selects survivor group `row` of the shown GPU (as a click does).
    void selectSurvivor(int row);

    LeakSummaryModel* summaryModel() const { return m_summary; }
    SurvivorModel* survivorModel() const { return m_survivors; }
    QCustomPlot* chart() const { return m_chart; }

signals:
    void survivorSelected(vramscope::analysis::GpuKey gpu, trace::StackId stack);

private:
    void updateChart();
    void showSurvivor(int row);

    ZoomState* m_zoom;
    std::shared_ptr<const analysis::JobModel> m_job;
    analysis::GpuKey m_gpu;
    LeakSummaryModel* m_summary;
    SurvivorModel* m_survivors;
    QTableView* m_summaryView;
    QTableView* m_survivorView;
    QLabel* m_reason;
    QCustomPlot* m_chart;
    QLabel* m_chartMessage;        ///< shown instead of the chart when there is nothing to chart
    QStackedWidget* m_chartStack;  ///< the chart or the message
};

}  // namespace vramscope::widgets
