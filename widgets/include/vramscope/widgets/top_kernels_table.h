#pragma once
// The Top Kernels table: one GPU's kernel time per kernel name (analysis::topKernels), as a Qt
// table model with a numeric sort proxy, and the panel with its GPU chooser and busy-time line.

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QWidget>

#include <memory>
#include <vector>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/time/top_kernels.h"

class QComboBox;
class QLabel;
class QTableView;

namespace vramscope::widgets {

/// The rows of one GPU's kernels (DeviceAnalysis::kernelTimes: the largest names, as the
/// analysis kept them). Plain values; GUI thread only.
class TopKernelsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        KernelColumn = 0,
        CategoryColumn,
        LaunchesColumn,
        TotalColumn,
        ShareColumn,
        MaxColumn,
        ColumnCount
    };
    /// The raw value for sorting and tests: the full name, the category's name, launches
    /// (qulonglong), total and max (qlonglong ns), share (double, 0..1 of busy).
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit TopKernelsModel(QObject* parent = nullptr);
    /// Shows `times` (null: no rows).
    void setKernelTimes(std::shared_ptr<const analysis::DeviceKernelTimes> times);
    const analysis::DeviceKernelTimes* kernelTimes() const { return m_times.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const analysis::DeviceKernelTimes> m_times;
    std::vector<QString> m_shortNames;  ///< analysis::shortenNames over the rows
};

/// The Top Kernels dock: a GPU chooser (the GPUs with kernels), the busy time with the share
/// formula, and the table sorted by total time (any column sorts, numerically). GUI thread only.
class TopKernelsPanel : public QWidget {
    Q_OBJECT
public:
    explicit TopKernelsPanel(QWidget* parent = nullptr);
    QSize sizeHint() const override { return {520, 240}; }
    void setJob(std::shared_ptr<const analysis::JobModel> job);
    /// Shows `gpu`'s kernels; a GPU without kernels leaves the panel as it was.
    void setGpu(analysis::GpuKey gpu);

    TopKernelsModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }
    QComboBox* gpuBox() const { return m_gpuBox; }
    QLabel* summary() const { return m_summary; }

private:
    void showGpu(size_t gpuIndex);

    std::shared_ptr<const analysis::JobModel> m_job;
    /// The job's GPUs with kernels, in the job's device order, and their kernel times.
    std::vector<std::pair<analysis::GpuKey, std::shared_ptr<const analysis::DeviceKernelTimes>>>
        m_gpus;
    QComboBox* m_gpuBox;
    QLabel* m_summary;
    TopKernelsModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_table;
};

}  // namespace vramscope::widgets
