#include "vramscope/widgets/collectives_table.h"

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

bool sameGroup(const analysis::CollectiveBandwidth& o, const analysis::CollectiveGroup& g) {
    return o.function == g.function && o.bytes == g.bytes && o.ranks == g.ranks;
}

}  // namespace

std::vector<CollectiveRow> collectiveRowsFrom(const analysis::JobModel& job,
                                              const analysis::CollectiveBandwidthReport& report) {
    std::vector<CollectiveRow> rows;
    rows.reserve(report.groups.size());
    for (const analysis::CollectiveGroup& g : report.groups) {
        CollectiveRow row;
        row.group = g;
        if (g.longest < report.occurrences.size()) {
            const analysis::CollectiveBandwidth& o = report.occurrences[g.longest];
            row.longestStartNs =
                o.input < job.ranks.size() ? job.toJob(int(o.input), o.startNs) : o.startNs;
            row.longestDurationNs = o.durationNs;
            row.longestRank = o.rank;
            row.located = true;
        }
        rows.push_back(std::move(row));
    }
    // Matched or not is known per occurrence only: one pass over them, groups looked up by key.
    for (const analysis::CollectiveBandwidth& o : report.occurrences) {
        if (o.waitNs < 0) {
            continue;
        }
        for (CollectiveRow& row : rows) {
            if (!row.matched && sameGroup(o, row.group)) {
                row.matched = true;
                break;
            }
        }
    }
    return rows;
}

TimeRange collectiveViewRange(const CollectiveRow& row) {
    const int64_t margin = std::max<int64_t>(row.longestDurationNs / 2, 1000);
    return {row.longestStartNs - margin, row.longestStartNs + row.longestDurationNs + margin};
}

QString collectivesEmptySentence(const analysis::JobModel* job,
                                 const analysis::CollectiveBandwidthReport& report) {
    if (!job) {
        return {};
    }
    if (hasNoGpu(*job)) {
        return noGpuSentence();
    }
    if (report.occurrences.empty()) {
        const bool communication = std::any_of(
            job->kernels.begin(), job->kernels.end(), [](const analysis::GpuKernelAnalysis& k) {
                return k.breakdown && k.breakdown->communicationNs > 0;
            });
        if (!communication) {
            return QObject::tr(
                "No collectives in this trace: no rank ran a communication (NCCL/RCCL) kernel.");
        }
        return QObject::tr(
            "This trace has communication kernels but no collective records with message sizes "
            "(a Kineto trace without 'In msg nelems' / 'Input Dims' on its NCCL kernels, or a "
            "capture without the NCCL profiler plugin): no bandwidth to show. The communication "
            "lanes still show their times and waits.");
    }
    const bool anySize =
        std::any_of(report.groups.begin(), report.groups.end(),
                    [](const analysis::CollectiveGroup& g) { return g.bytes > 0; });
    if (!anySize) {
        return QObject::tr(
            "No message sizes in this trace's collective records: durations and waits are shown, "
            "bus bandwidth cannot be computed (it divides the message size by the time).");
    }
    return {};
}

QString collectiveVerdictText(const analysis::CollectiveBandwidthReport& report) {
    QStringList lines;
    for (const analysis::CommunicationVerdict& v : report.verdicts) {
        QString line = QStringLiteral("<b>%1: %2</b>")
                           .arg(QString::fromStdString(analysis::deviceLabel(v.rank, v.device)),
                                QString::fromStdString(analysis::limitText(v)).toHtmlEscaped());
        const std::string& why =
            v.limit == analysis::CommunicationLimit::Unknown && !v.missing.empty() ? v.missing
                                                                                   : v.evidence;
        if (!why.empty()) {
            line += QStringLiteral(" &mdash; ") + QString::fromStdString(why).toHtmlEscaped();
        }
        lines << line;
    }
    return lines.join(QStringLiteral("<br>"));
}

CollectiveTableModel::CollectiveTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void CollectiveTableModel::setRows(std::vector<CollectiveRow> rows) {
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int CollectiveTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CollectiveTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CollectiveTableModel::rawValue(const CollectiveRow& r, int column) const {
    const analysis::CollectiveGroup& g = r.group;
    switch (column) {
        case FunctionColumn:
            return QString::fromStdString(g.function);
        case SizeColumn:
            return g.bytes > 0 ? qlonglong(g.bytes) : qlonglong(-1);
        case RanksColumn:
            return g.ranks > 0 ? g.ranks : -1;
        case CountColumn:
            return qlonglong(g.count);
        case MedianDurationColumn:
            return qlonglong(g.medianDurationNs);
        case MaxDurationColumn:
            return qlonglong(g.maxDurationNs);
        case MinBusBwColumn:
            return g.minBusbwGBps ? *g.minBusbwGBps : -1.0;
        case MedianBusBwColumn:
            return g.medianBusbwGBps ? *g.medianBusbwGBps : -1.0;
        case StragglerColumn:
            return toInt(g.stragglerRank) >= 0 ? toInt(g.stragglerRank) : -1;
        case WaitColumn:
            return r.matched ? qlonglong(g.waitNs) : qlonglong(-1);
    }
    return {};
}

QVariant CollectiveTableModel::displayValue(const CollectiveRow& r, int column) const {
    const analysis::CollectiveGroup& g = r.group;
    switch (column) {
        case FunctionColumn:
            return QString::fromStdString(g.function);
        case SizeColumn:
            return g.bytes > 0 ? formatBytes(double(g.bytes)) : QString();
        case RanksColumn:
            return g.ranks > 0 ? QVariant(g.ranks) : QVariant(QString());
        case CountColumn:
            return QLocale().toString(qlonglong(g.count));
        case MedianDurationColumn:
            return formatDuration(double(g.medianDurationNs));
        case MaxDurationColumn:
            return formatDuration(double(g.maxDurationNs));
        case MinBusBwColumn:
            return g.minBusbwGBps ? formatBandwidth(*g.minBusbwGBps) : QString();
        case MedianBusBwColumn:
            return g.medianBusbwGBps ? formatBandwidth(*g.medianBusbwGBps) : QString();
        case StragglerColumn:
            return toInt(g.stragglerRank) >= 0 ? QVariant(toInt(g.stragglerRank))
                                               : QVariant(QString());
        case WaitColumn:
            return r.matched ? formatDuration(double(g.waitNs)) : QString();
    }
    return {};
}

QVariant CollectiveTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(m_rows.size())) {
        return {};
    }
    const CollectiveRow& r = m_rows[size_t(index.row())];
    if (role == RawValueRole) {
        return rawValue(r, index.column());
    }
    if (role == Qt::DisplayRole) {
        return displayValue(r, index.column());
    }
    if (role == Qt::ToolTipRole) {
        const analysis::CollectiveGroup& g = r.group;
        switch (index.column()) {
            case SizeColumn:
                return g.bytes > 0 ? tr("%1 bytes (count x type size)")
                                         .arg(QLocale().toString(qulonglong(g.bytes)))
                                   : tr("message size unknown");
            case MinBusBwColumn:
            case MedianBusBwColumn:
                return rawValue(r, index.column()).toDouble() >= 0
                           ? tr("busBw = message traffic / duration x the nccl-tests factor "
                                "(GB/s = 1e9 B/s)")
                           : tr("unknown: needs the message size, the group size and a duration");
            case StragglerColumn:
                return !r.matched ? tr("not matched across ranks: the straggler is unknown")
                       : toInt(g.stragglerRank) >= 0 ? tr("the rank that arrived last most often")
                                                     : tr("no rank arrived last (all at once)");
            case WaitColumn:
                return r.matched ? tr("summed time the ranks waited inside these collectives "
                                      "for the last rank")
                                 : tr("not matched across ranks: the wait is unknown");
            case CountColumn:
                return tr("%1 collectives, %2 rank x collective occurrences")
                    .arg(QLocale().toString(qlonglong(g.count)),
                         QLocale().toString(qlonglong(g.occurrences)));
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole && index.column() != FunctionColumn) {
        return int(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant CollectiveTableModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
        case FunctionColumn:
            return tr("Function");
        case SizeColumn:
            return tr("Size");
        case RanksColumn:
            return tr("Ranks");
        case CountColumn:
            return tr("Count");
        case MedianDurationColumn:
            return tr("Median duration");
        case MaxDurationColumn:
            return tr("Max duration");
        case MinBusBwColumn:
            return tr("busBw min");
        case MedianBusBwColumn:
            return tr("busBw median");
        case StragglerColumn:
            return tr("Straggler");
        case WaitColumn:
            return tr("Wait");
    }
    return {};
}

CollectiveFilterModel::CollectiveFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(CollectiveTableModel::RawValueRole);
}

void CollectiveFilterModel::setTextFilter(const QString& text) {
    m_text = text.trimmed();
    invalidateFilter();
}

bool CollectiveFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (m_text.isEmpty()) {
        return true;
    }
    return sourceModel()
        ->index(sourceRow, CollectiveTableModel::FunctionColumn, sourceParent)
        .data(CollectiveTableModel::RawValueRole)
        .toString()
        .contains(m_text, Qt::CaseInsensitive);
}

CollectivesPanel::CollectivesPanel(ZoomState* zoom, QWidget* parent)
    : QWidget(parent),
      m_zoom(zoom),
      m_model(new CollectiveTableModel(this)),
      m_proxy(new CollectiveFilterModel(this)),
      m_filterEdit(new QLineEdit(this)),
      m_verdicts(new QLabel(this)),
      m_empty(new QLabel(this)),
      m_table(new QTableView(this)) {
    m_proxy->setSourceModel(m_model);
    m_filterEdit->setPlaceholderText(tr("Filter by function"));
    m_filterEdit->setClearButtonEnabled(true);
    m_verdicts->setWordWrap(true);
    m_verdicts->setTextFormat(Qt::RichText);
    m_empty->setWordWrap(true);
    m_empty->hide();
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    // Unsorted: the analysis order (largest summed duration first) until a header is clicked.
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_filterEdit, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_verdicts);
    layout->addLayout(bar);
    layout->addWidget(m_empty);
    layout->addWidget(m_table, 1);

    connect(m_filterEdit, &QLineEdit::textChanged, m_proxy, &CollectiveFilterModel::setTextFilter);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showRow(current); });
}

void CollectivesPanel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    static const analysis::CollectiveBandwidthReport kNone;
    const analysis::CollectiveBandwidthReport& report = m_job ? m_job->analysis.bandwidth : kNone;
    m_model->setRows(m_job ? collectiveRowsFrom(*m_job, report) : std::vector<CollectiveRow>{});
    const QString verdicts = collectiveVerdictText(report);
    m_verdicts->setText(verdicts);
    m_verdicts->setVisible(!verdicts.isEmpty());
    const QString empty = collectivesEmptySentence(m_job.get(), report);
    m_empty->setText(empty);
    m_empty->setVisible(!empty.isEmpty());
    m_table->resizeColumnsToContents();
    m_table->setColumnWidth(
        CollectiveTableModel::FunctionColumn,
        std::min(m_table->columnWidth(CollectiveTableModel::FunctionColumn), 220));
}

void CollectivesPanel::showRow(const QModelIndex& proxyIndex) {
    if (!proxyIndex.isValid()) {
        return;
    }
    const QModelIndex source = m_proxy->mapToSource(proxyIndex);
    if (!source.isValid() || source.row() >= int(m_model->rows().size())) {
        return;
    }
    const CollectiveRow& row = m_model->rows()[size_t(source.row())];
    if (!row.located) {
        return;
    }
    const TimeRange range = collectiveViewRange(row);
    m_zoom->setVisibleRange(range);
    m_zoom->setSelection({row.longestStartNs, row.longestStartNs + row.longestDurationNs});
    emit rangeShown(range);
}

}  // namespace vramscope::widgets
