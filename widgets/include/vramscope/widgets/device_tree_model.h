#pragma once
// The ranks -> GPUs tree of the left dock, with a tick box per GPU choosing what the timeline
// shows.

#include <QAbstractItemModel>
#include <QColor>

#include <memory>
#include <vector>

#include "vramscope/analysis/model/job_model.h"

namespace vramscope::widgets {

/// Two-level model: top rows are ranks, their children the rank's GPUs. Columns: name (with
/// colour swatch and tick box), capacity, peak. Holds plain values copied from the job; GUI
/// thread only. Ticking a rank ticks all its GPUs.
class DeviceTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn = 0, CapacityColumn, PeakColumn, ColumnCount };
    /// Raw numbers for sorting and tests (bytes for capacity / peak).
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit DeviceTreeModel(QObject* parent = nullptr);

    /// Rebuilds the rows from `job` (every GPU ticked); nullptr empties the model.
    void setJob(const std::shared_ptr<const analysis::JobModel>& job, bool dark);
    /// The ticked GPUs, in tree order.
    std::vector<analysis::GpuKey> checkedGpus() const;
    /// Ticks exactly `gpus`.
    void setCheckedGpus(const std::vector<analysis::GpuKey>& gpus);
    /// The index of a GPU's row (column 0), invalid when it is not in the tree.
    QModelIndex indexOf(analysis::GpuKey gpu) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

signals:
    void checkedGpusChanged();

private:
    struct GpuRow {
        analysis::GpuKey key;
        QString name;
        QString tooltip;
        QColor color;
        analysis::MemorySummary memory;
        bool checked = true;
        bool hasData = true;  ///< false when the GPU has no memory series at all
    };
    struct RankRow {
        QString name;
        QString tooltip;
        std::vector<GpuRow> gpus;
    };
    Qt::CheckState rankState(const RankRow& rank) const;

    std::vector<RankRow> m_ranks;
};

}  // namespace vramscope::widgets
