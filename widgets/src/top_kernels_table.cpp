#include "vramscope/widgets/top_kernels_table.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <string>

#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

/// Bytes of a kernel name in the table (the tooltip has the whole name), shortened as one set
/// by analysis::shortenNames so that different kernels read apart.
constexpr size_t kTopKernelNameWidth = 48;

QString percent(double fraction) {
    return QString::fromStdString(analysis::formatPercent(fraction));
}

}  // namespace

TopKernelsModel::TopKernelsModel(QObject* parent) : QAbstractTableModel(parent) {}

void TopKernelsModel::setKernelTimes(std::shared_ptr<const analysis::DeviceKernelTimes> times) {
    beginResetModel();
    m_times = std::move(times);
    m_shortNames.clear();
    if (m_times) {
        std::vector<std::string> names;
        for (const analysis::KernelTime& k : m_times->byName) {
            names.push_back(k.name);
        }
        for (const std::string& n : analysis::shortenNames(names, kTopKernelNameWidth)) {
            m_shortNames.push_back(QString::fromStdString(n));
        }
    }
    endResetModel();
}

int TopKernelsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_times ? 0 : int(m_times->byName.size());
}

int TopKernelsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TopKernelsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_times || index.row() >= int(m_times->byName.size())) {
        return {};
    }
    const analysis::KernelTime& k = m_times->byName[size_t(index.row())];
    if (role == RawValueRole) {
        switch (index.column()) {
            case KernelColumn:
                return QString::fromStdString(k.name);
            case CategoryColumn:
                return QString::fromLatin1(trace::toString(k.category));
            case LaunchesColumn:
                return qulonglong(k.count);
            case TotalColumn:
                return qlonglong(k.totalNs);
            case ShareColumn:
                return k.busyShare;
            case MaxColumn:
                return qlonglong(k.maxNs);
        }
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case KernelColumn:
                return m_shortNames[size_t(index.row())];
            case CategoryColumn:
                return QString::fromLatin1(trace::toString(k.category));
            case LaunchesColumn:
                return QLocale().toString(qulonglong(k.count));
            case TotalColumn:
                return formatDuration(double(k.totalNs));
            case ShareColumn:
                return percent(k.busyShare);
            case MaxColumn:
                return formatDuration(double(k.maxNs));
        }
        return {};
    }
    if (role == Qt::ToolTipRole && index.column() == KernelColumn) {
        return QString::fromStdString(k.name);
    }
    if (role == Qt::TextAlignmentRole && index.column() >= LaunchesColumn) {
        return int(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant TopKernelsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    if (role == Qt::ToolTipRole && section == ShareColumn) {
        return tr(
            "Total time / busy time of the GPU (the union of its kernels); kernels running "
            "concurrently make the shares sum above 100 %");
    }
    if (role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
        case KernelColumn:
            return tr("Kernel");
        case CategoryColumn:
            return tr("Category");
        case LaunchesColumn:
            return tr("Launches");
        case TotalColumn:
            return tr("Total time");
        case ShareColumn:
            return tr("Share of busy");
        case MaxColumn:
            return tr("Max");
    }
    return {};
}

TopKernelsPanel::TopKernelsPanel(QWidget* parent)
    : QWidget(parent),
      m_gpuBox(new QComboBox(this)),
      m_summary(new QLabel(this)),
      m_model(new TopKernelsModel(this)),
      m_proxy(new QSortFilterProxyModel(this)),
      m_table(new QTableView(this)) {
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(TopKernelsModel::RawValueRole);
    m_gpuBox->setToolTip(tr("GPU whose kernels are listed"));
    m_gpuBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(TopKernelsModel::TotalColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->setVisible(false);
    // The name takes the room left: the numbers stay next to one another.
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideMiddle);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_gpuBox);
    bar->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);

    connect(m_gpuBox, &QComboBox::activated, this, [this](int i) {
        if (i >= 0 && size_t(i) < m_gpus.size()) {
            showGpu(size_t(i));
        }
    });
}

void TopKernelsPanel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    m_gpus.clear();
    m_gpuBox->clear();
    if (m_job) {
        for (const analysis::DeviceAnalysis& d : m_job->analysis.devices) {
            if (d.kernelTimes) {
                // Aliases the job model, which owns the analysis: no copy of the rows.
                m_gpus.emplace_back(
                    analysis::GpuKey{int(d.input), d.device},
                    std::shared_ptr<const analysis::DeviceKernelTimes>(m_job, &*d.kernelTimes));
                m_gpuBox->addItem(gpuLabel(*m_job, m_gpus.back().first));
            }
        }
    }
    m_gpuBox->setEnabled(!m_gpus.empty());
    if (m_gpus.empty()) {
        m_gpuBox->addItem(tr("no GPU with kernels"));
        m_model->setKernelTimes(nullptr);
        m_summary->setText(!m_job             ? QString()
                           : hasNoGpu(*m_job) ? noGpuSentence()
                                              : tr("This job has no kernel records (e.g. a "
                                                   "memory snapshot): no kernels to list."));
        return;
    }
    showGpu(0);
}

void TopKernelsPanel::setGpu(analysis::GpuKey gpu) {
    for (size_t i = 0; i < m_gpus.size(); ++i) {
        if (m_gpus[i].first == gpu) {
            showGpu(i);
        }
    }
}

void TopKernelsPanel::showGpu(size_t gpuIndex) {
    m_gpuBox->setCurrentIndex(int(gpuIndex));
    const analysis::DeviceKernelTimes& t = *m_gpus[gpuIndex].second;
    m_model->setKernelTimes(m_gpus[gpuIndex].second);
    QString categories;
    for (const analysis::KernelTime& c : t.byCategory) {
        categories += (categories.isEmpty() ? QString() : QStringLiteral(", ")) +
                      QStringLiteral("%1 %2 (%3)")
                          .arg(QString::fromStdString(c.name), formatDuration(double(c.totalNs)),
                               percent(c.busyShare));
    }
    QString text =
        tr("Busy %1 (the union of all kernels on this GPU) in %2 launches of %3 kernels; by "
           "category: %4. Share of busy = a kernel's total time / busy: kernels running "
           "concurrently (several streams) make the shares sum above 100 %.")
            .arg(formatDuration(double(t.busyNs)), QLocale().toString(qulonglong(t.kernels)),
                 QLocale().toString(qulonglong(t.kernelNames)), categories);
    if (t.otherNames > 0) {
        text += QLatin1Char(' ') +
                tr("The %1 largest are listed; the other %2 kernels took %3 (%4) in %5 launches.")
                    .arg(QLocale().toString(qulonglong(t.byName.size())),
                         QLocale().toString(qulonglong(t.otherNames)),
                         formatDuration(double(t.otherTotalNs)), percent(t.otherBusyShare),
                         QLocale().toString(qulonglong(t.otherCount)));
    }
    m_summary->setText(text);
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setSectionResizeMode(TopKernelsModel::KernelColumn,
                                                      QHeaderView::Stretch);
}

}  // namespace vramscope::widgets
