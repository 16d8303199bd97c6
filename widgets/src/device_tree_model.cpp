#include "vramscope/widgets/device_tree_model.h"

#include <QFileInfo>

#include <algorithm>

#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {
// internalId: 0 for rank rows, rank row + 1 for GPU rows.
constexpr quintptr kRankId = 0;
}  // namespace

DeviceTreeModel::DeviceTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void DeviceTreeModel::setJob(const std::shared_ptr<const analysis::JobModel>& job, bool dark) {
    beginResetModel();
    m_ranks.clear();
    if (job) {
        m_ranks.resize(job->ranks.size());
        for (size_t r = 0; r < job->ranks.size(); ++r) {
            const analysis::RankInfo& info = job->ranks[r];
            RankRow& row = m_ranks[r];
            const QString file = QFileInfo(QString::fromStdString(info.path)).fileName();
            row.name = toInt(info.rank) >= 0 ? tr("rank %1").arg(toInt(info.rank))
                                             : tr("rank ? (%1)").arg(file);
            row.tooltip = row.name + QLatin1Char('\n') + QString::fromStdString(info.path);
            if (!info.host.empty()) {
                row.tooltip += tr("\nhost %1").arg(QString::fromStdString(info.host));
            }
        }
        for (const analysis::GpuSeries& g : job->gpus) {
            GpuRow row;
            row.key = g.key;
            row.name = tr("GPU %1").arg(toInt(g.key.device));
            if (!g.deviceName.empty()) {
                row.name += QStringLiteral(" · ") + QString::fromStdString(g.deviceName);
            }
            row.color = gpuColor(g.colorIndex, dark);
            row.memory = g.memory;
            row.hasData = !g.allocated.series().empty() || !g.reserved.series().empty();
            row.tooltip = row.name + QLatin1Char('\n') +
                          tr("peak allocated %1, peak reserved %2, %3 memory events")
                              .arg(formatBytes(static_cast<double>(g.memory.peakAllocatedBytes)),
                                   formatBytes(static_cast<double>(g.memory.peakReservedBytes)))
                              .arg(g.memory.memoryEvents);
            m_ranks[static_cast<size_t>(g.key.rankIndex)].gpus.push_back(row);
        }
    }
    endResetModel();
    emit checkedGpusChanged();
}

std::vector<analysis::GpuKey> DeviceTreeModel::checkedGpus() const {
    std::vector<analysis::GpuKey> out;
    for (const RankRow& rank : m_ranks) {
        for (const GpuRow& gpu : rank.gpus) {
            if (gpu.checked) {
                out.push_back(gpu.key);
            }
        }
    }
    return out;
}

void DeviceTreeModel::setCheckedGpus(const std::vector<analysis::GpuKey>& gpus) {
    for (RankRow& rank : m_ranks) {
        for (GpuRow& gpu : rank.gpus) {
            gpu.checked = std::find(gpus.begin(), gpus.end(), gpu.key) != gpus.end();
        }
    }
    if (!m_ranks.empty()) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, 0), {Qt::CheckStateRole});
        for (int r = 0; r < rowCount(); ++r) {
            const QModelIndex parent = index(r, 0);
            if (rowCount(parent) > 0) {
                emit dataChanged(index(0, 0, parent), index(rowCount(parent) - 1, 0, parent),
                                 {Qt::CheckStateRole});
            }
        }
    }
    emit checkedGpusChanged();
}

QModelIndex DeviceTreeModel::indexOf(analysis::GpuKey gpu) const {
    if (gpu.rankIndex < 0 || static_cast<size_t>(gpu.rankIndex) >= m_ranks.size()) {
        return {};
    }
    const auto& gpus = m_ranks[static_cast<size_t>(gpu.rankIndex)].gpus;
    for (size_t i = 0; i < gpus.size(); ++i) {
        if (gpus[i].key == gpu) {
            return index(static_cast<int>(i), 0, index(gpu.rankIndex, 0));
        }
    }
    return {};
}

QModelIndex DeviceTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount) {
        return {};
    }
    if (!parent.isValid()) {
        return static_cast<size_t>(row) < m_ranks.size() ? createIndex(row, column, kRankId)
                                                         : QModelIndex();
    }
    if (parent.internalId() != kRankId || parent.column() != 0) {
        return {};
    }
    const RankRow& rank = m_ranks[static_cast<size_t>(parent.row())];
    return static_cast<size_t>(row) < rank.gpus.size()
               ? createIndex(row, column, static_cast<quintptr>(parent.row()) + 1)
               : QModelIndex();
}

QModelIndex DeviceTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == kRankId) {
        return {};
    }
    return createIndex(static_cast<int>(child.internalId() - 1), 0, kRankId);
}

int DeviceTreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) {
        return static_cast<int>(m_ranks.size());
    }
    if (parent.internalId() == kRankId && parent.column() == 0) {
        return static_cast<int>(m_ranks[static_cast<size_t>(parent.row())].gpus.size());
    }
    return 0;
}

int DeviceTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

Qt::CheckState DeviceTreeModel::rankState(const RankRow& rank) const {
    const auto ticked = std::count_if(rank.gpus.begin(), rank.gpus.end(),
                                      [](const GpuRow& g) { return g.checked; });
    if (ticked == 0) {
        return Qt::Unchecked;
    }
    return static_cast<size_t>(ticked) == rank.gpus.size() ? Qt::Checked : Qt::PartiallyChecked;
}

QVariant DeviceTreeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) {
        return {};
    }
    if (index.internalId() == kRankId) {
        const RankRow& rank = m_ranks[static_cast<size_t>(index.row())];
        if (index.column() != NameColumn) {
            return {};
        }
        switch (role) {
            case Qt::DisplayRole:
                return rank.gpus.empty() ? tr("%1 (no GPU memory data)").arg(rank.name) : rank.name;
            case Qt::ToolTipRole:
                return rank.tooltip;
            case Qt::CheckStateRole:
                return rank.gpus.empty() ? QVariant() : QVariant(rankState(rank));
            default:
                return {};
        }
    }
    const GpuRow& gpu = m_ranks[index.internalId() - 1].gpus[static_cast<size_t>(index.row())];
    const analysis::MemorySummary& m = gpu.memory;
    const double peak = static_cast<double>(m.peakBytes());
    switch (role) {
        case Qt::DisplayRole:
            if (index.column() == NameColumn) {
                return gpu.name;
            }
            if (index.column() == CapacityColumn) {
                return m.capacityBytes > 0 ? formatBytes(static_cast<double>(m.capacityBytes))
                                           : tr("unknown");
            }
            if (!gpu.hasData) {
                return tr("no data");
            }
            if (const std::optional<double> share = m.peakShare()) {
                return tr("%1 (%2)").arg(formatBytes(peak),
                                         QString::fromStdString(analysis::formatPercent(*share)));
            }
            return formatBytes(peak);
        case Qt::DecorationRole:
            return index.column() == NameColumn ? QVariant(gpu.color) : QVariant();
        case Qt::CheckStateRole:
            return index.column() == NameColumn
                       ? QVariant(gpu.checked ? Qt::Checked : Qt::Unchecked)
                       : QVariant();
        case Qt::ToolTipRole:
            return gpu.tooltip;
        case Qt::TextAlignmentRole:
            return index.column() == NameColumn ? QVariant()
                                                : QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case RawValueRole:
            if (index.column() == CapacityColumn) {
                return QVariant::fromValue<qulonglong>(m.capacityBytes);
            }
            if (index.column() == PeakColumn) {
                return QVariant::fromValue<qlonglong>(m.peakBytes());
            }
            return {};
        default:
            return {};
    }
}

bool DeviceTreeModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::CheckStateRole || index.column() != NameColumn) {
        return false;
    }
    const bool checked = value.value<Qt::CheckState>() != Qt::Unchecked;
    if (index.internalId() == kRankId) {
        RankRow& rank = m_ranks[static_cast<size_t>(index.row())];
        for (GpuRow& gpu : rank.gpus) {
            gpu.checked = checked;
        }
        emit dataChanged(index, index, {Qt::CheckStateRole});
        if (!rank.gpus.empty()) {
            emit dataChanged(this->index(0, 0, index),
                             this->index(static_cast<int>(rank.gpus.size()) - 1, 0, index),
                             {Qt::CheckStateRole});
        }
    } else {
        m_ranks[index.internalId() - 1].gpus[static_cast<size_t>(index.row())].checked = checked;
        emit dataChanged(index, index, {Qt::CheckStateRole});
        const QModelIndex rank = parent(index);
        emit dataChanged(rank, rank, {Qt::CheckStateRole});
    }
    emit checkedGpusChanged();
    return true;
}

Qt::ItemFlags DeviceTreeModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) {
        return Qt::NoItemFlags;
    }
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == NameColumn) {
        f |= Qt::ItemIsUserCheckable;
    }
    return f;
}

QVariant DeviceTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case NameColumn:
            return tr("Rank / GPU");
        case CapacityColumn:
            return tr("Capacity");
        case PeakColumn:
            return tr("Peak");
        default:
            return {};
    }
}

}  // namespace vramscope::widgets
