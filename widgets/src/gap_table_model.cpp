#include "vramscope/widgets/gap_table_model.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

/// Bytes of a kernel name in the table (the tooltip has the whole name): about what a kernel
/// column of the docked table shows, so that shortenNames, which keeps different names apart,
/// does the shortening rather than the view's blind middle elision.
constexpr size_t kGapKernelNameWidth = 34;

QString kernelName(const trace::TraceData& data, size_t index) {
    if (index >= data.kernels.size()) {
        return {};
    }
    const std::string_view name = data.string(data.kernels.name[index]);
    return QString::fromUtf8(name.data(), qsizetype(name.size()));
}

QString causeText(analysis::GapCause cause) {
    switch (cause) {
        case analysis::GapCause::CollectiveWait:
            return QObject::tr("waiting on a collective");
        case analysis::GapCause::HostBound:
            return QObject::tr("host-bound");
        case analysis::GapCause::Other:
            return QObject::tr("other");
    }
    return {};
}

}  // namespace

std::vector<GapRow> gapRowsFrom(const analysis::JobModel& job) {
    std::vector<GapRow> rows;
    for (const analysis::GpuKernelAnalysis& k : job.kernels) {
        const trace::TraceData& data = job.job.ranks[size_t(k.key.rankIndex)].trace.data;
        for (const analysis::IdleGap& g : k.breakdown->gaps) {
            GapRow row;
            row.key = k.key;
            row.rank = job.ranks[size_t(k.key.rankIndex)].rank;
            row.device = g.device;
            row.startNs = job.toJob(k.key.rankIndex, g.startNs);
            row.durationNs = g.durationNs;
            row.cause = g.cause;
            row.kernelBefore = kernelName(data, g.kernelBefore);
            row.kernelAfter = kernelName(data, g.kernelAfter);
            rows.push_back(std::move(row));
        }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const GapRow& a, const GapRow& b) { return a.durationNs > b.durationNs; });
    // Shortened as one set, so that two different kernels never read the same in the table.
    std::vector<std::string> names;
    for (const GapRow& r : rows) {
        names.push_back(r.kernelBefore.toStdString());
        names.push_back(r.kernelAfter.toStdString());
    }
    const std::vector<std::string> shown = analysis::shortenNames(names, kGapKernelNameWidth);
    for (size_t i = 0; i < rows.size(); ++i) {
        rows[i].kernelBeforeShort = QString::fromStdString(shown[2 * i]);
        rows[i].kernelAfterShort = QString::fromStdString(shown[2 * i + 1]);
    }
    return rows;
}

TimeRange gapViewRange(const GapRow& gap) {
    const int64_t margin = std::max<int64_t>(gap.durationNs / 2, 1000);
    return {gap.startNs - margin, gap.startNs + gap.durationNs + margin};
}

GapTableModel::GapTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void GapTableModel::setRows(std::vector<GapRow> rows) {
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int GapTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int GapTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant GapTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(m_rows.size())) {
        return {};
    }
    const GapRow& g = m_rows[size_t(index.row())];
    if (role == RawValueRole) {
        switch (index.column()) {
            case RankColumn:
                return toInt(g.rank);
            case GpuColumn:
                return toInt(g.device);
            case StartColumn:
                return qlonglong(g.startNs);
            case DurationColumn:
                return qlonglong(g.durationNs);
            case ClassColumn:
                return int(g.cause);
            case BeforeColumn:
                return g.kernelBefore;
            case AfterColumn:
                return g.kernelAfter;
        }
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case RankColumn:
                return toInt(g.rank) >= 0 ? QVariant(toInt(g.rank)) : QVariant(tr("?"));
            case GpuColumn:
                return toInt(g.device);
            case StartColumn:
                return formatDuration(double(g.startNs));
            case DurationColumn:
                return formatDuration(double(g.durationNs));
            case ClassColumn:
                return causeText(g.cause);
            case BeforeColumn:
                return g.kernelBeforeShort;
            case AfterColumn:
                return g.kernelAfterShort;
        }
        return {};
    }
    if (role == Qt::ToolTipRole &&
        (index.column() == BeforeColumn || index.column() == AfterColumn)) {
        return index.column() == BeforeColumn ? g.kernelBefore : g.kernelAfter;
    }
    if (role == Qt::TextAlignmentRole && index.column() <= DurationColumn) {
        return int(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant GapTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
        case RankColumn:
            return tr("Rank");
        case GpuColumn:
            return tr("GPU");
        case StartColumn:
            return tr("Start");
        case DurationColumn:
            return tr("Duration");
        case ClassColumn:
            return tr("Class");
        case BeforeColumn:
            return tr("Kernel before");
        case AfterColumn:
            return tr("Kernel after");
    }
    return {};
}

GapFilterModel::GapFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(GapTableModel::RawValueRole);
}

void GapFilterModel::setCauseFilter(int cause) {
    m_cause = cause;
    invalidateFilter();
}

void GapFilterModel::setTextFilter(const QString& text) {
    m_text = text.trimmed();
    invalidateFilter();
}

bool GapFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QAbstractItemModel* m = sourceModel();
    if (m_cause >= 0 && m->index(sourceRow, GapTableModel::ClassColumn, sourceParent)
                                .data(GapTableModel::RawValueRole)
                                .toInt() != m_cause) {
        return false;
    }
    if (m_text.isEmpty()) {
        return true;
    }
    for (int c : {int(GapTableModel::BeforeColumn), int(GapTableModel::AfterColumn)}) {
        if (m->index(sourceRow, c, sourceParent)
                .data()
                .toString()
                .contains(m_text, Qt::CaseInsensitive)) {
            return true;
        }
    }
    return false;
}

GapsPanel::GapsPanel(ZoomState* zoom, QWidget* parent)
    : QWidget(parent),
      m_zoom(zoom),
      m_model(new GapTableModel(this)),
      m_proxy(new GapFilterModel(this)),
      m_causeBox(new QComboBox(this)),
      m_filterEdit(new QLineEdit(this)),
      m_summary(new QLabel(this)),
      m_table(new QTableView(this)) {
    m_proxy->setSourceModel(m_model);
    m_causeBox->addItem(tr("Every class"), -1);
    for (auto c : {analysis::GapCause::CollectiveWait, analysis::GapCause::HostBound,
                   analysis::GapCause::Other}) {
        m_causeBox->addItem(causeText(c), int(c));
    }
    m_filterEdit->setPlaceholderText(tr("Filter by kernel name"));
    m_filterEdit->setClearButtonEnabled(true);
    m_summary->setWordWrap(true);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(GapTableModel::DurationColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideMiddle);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_causeBox);
    bar->addWidget(m_filterEdit, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);

    connect(m_causeBox, &QComboBox::activated, this,
            [this](int i) { m_proxy->setCauseFilter(m_causeBox->itemData(i).toInt()); });
    connect(m_filterEdit, &QLineEdit::textChanged, m_proxy, &GapFilterModel::setTextFilter);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showRow(current); });
}

void GapsPanel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    m_model->setRows(m_job ? gapRowsFrom(*m_job) : std::vector<GapRow>{});
    int64_t byCause[3] = {0, 0, 0};
    int64_t count = 0;
    int64_t idle = 0;
    if (m_job) {
        for (const analysis::GpuKernelAnalysis& k : m_job->kernels) {
            for (int c = 0; c < 3; ++c) {
                byCause[c] += k.breakdown->gapNsByCause[c];
                count += k.breakdown->gapCountByCause[c];
            }
            idle += k.breakdown->idleNs;
        }
    }
    if (!m_job || m_job->kernels.empty()) {
        m_summary->setText(m_job && hasNoGpu(*m_job) ? noGpuSentence()
                           : m_job ? tr("This job has no kernel records (e.g. a memory "
                                        "snapshot): no idle gaps to list.")
                                   : QString());
        return;
    }
    m_summary->setText(
        tr("%1 idle gaps, %2 idle in all (idle = span from first to last kernel minus the union of "
           "kernels, per GPU): %3 waiting on a collective, %4 host-bound, %5 other. The %6 largest "
           "are listed; select one to show it on the timeline.")
            .arg(QLocale().toString(qlonglong(count)), formatDuration(double(idle)),
                 formatDuration(double(byCause[0])), formatDuration(double(byCause[1])),
                 formatDuration(double(byCause[2])), QLocale().toString(m_model->rowCount())));
    m_table->resizeColumnsToContents();
    for (int c : {int(GapTableModel::BeforeColumn), int(GapTableModel::AfterColumn)}) {
        m_table->setColumnWidth(c, std::min(m_table->columnWidth(c), 260));
    }
}

void GapsPanel::showRow(const QModelIndex& proxyIndex) {
    if (!proxyIndex.isValid()) {
        return;
    }
    const QModelIndex source = m_proxy->mapToSource(proxyIndex);
    if (!source.isValid() || source.row() >= int(m_model->rows().size())) {
        return;
    }
    const GapRow& gap = m_model->rows()[size_t(source.row())];
    m_zoom->setVisibleRange(gapViewRange(gap));
    m_zoom->setSelection({gap.startNs, gap.startNs + gap.durationNs});
}

}  // namespace vramscope::widgets
