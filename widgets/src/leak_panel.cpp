#include "vramscope/widgets/leak_panel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "vramscope/analysis/memory/leak_fit.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/flame_view.h"
#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

QString verdictText(analysis::LeakVerdict v) {
    switch (v) {
        case analysis::LeakVerdict::Staircase:
            return QObject::tr("staircase (leak)");
        case analysis::LeakVerdict::Sawtooth:
            return QObject::tr("sawtooth (healthy)");
        case analysis::LeakVerdict::Inconclusive:
            return QObject::tr("inconclusive");
    }
    return {};
}

}  // namespace

// --- LeakSummaryModel ---

LeakSummaryModel::LeakSummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void LeakSummaryModel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    beginResetModel();
    m_job = std::move(job);
    endResetModel();
}

analysis::GpuKey LeakSummaryModel::gpuAt(int row) const {
    if (!m_job || row < 0 || row >= int(m_job->memory.size())) {
        return {};
    }
    return m_job->memory[size_t(row)].key;
}

int LeakSummaryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_job ? 0 : int(m_job->memory.size());
}

int LeakSummaryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LeakSummaryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_job || index.row() >= int(m_job->memory.size())) {
        return {};
    }
    const analysis::GpuMemoryAnalysis& g = m_job->memory[size_t(index.row())];
    const analysis::LeakReport& r = g.leak();
    if (role == RawValueRole) {
        switch (index.column()) {
            case GpuColumn:
                return index.row();
            case VerdictColumn:
                return int(r.verdict);
            case GrowthColumn:
                return qlonglong(r.growthBytesPerIteration);
            case ToOomColumn:
                return r.iterationsToOom ? QVariant(*r.iterationsToOom) : QVariant();
            case IterationsColumn:
                return qlonglong(r.iterations.size());
        }
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case GpuColumn:
                return gpuLabel(*m_job, g.key);
            case VerdictColumn:
                return r.iterationSource == analysis::IterationSource::None
                           ? tr("inconclusive: no iteration structure")
                           : verdictText(r.verdict);
            case GrowthColumn:
                return r.verdict == analysis::LeakVerdict::Staircase
                           ? QVariant(formatBytes(double(r.growthBytesPerIteration)))
                           : QVariant(QStringLiteral("-"));
            case ToOomColumn:
                if (r.iterationsToOom) {
                    return QString::fromStdString(analysis::formatSignificant(*r.iterationsToOom));
                }
                if (r.verdict == analysis::LeakVerdict::Staircase && r.capacityBytes == 0) {
                    return tr("? (capacity unknown)");
                }
                return QStringLiteral("-");
            case IterationsColumn:
                return tr("%1 (%2)")
                    .arg(r.iterations.size())
                    .arg(QString::fromUtf8(analysis::toString(r.iterationSource)));
        }
        return {};
    }
    if (role == Qt::ToolTipRole) {
        return QString::fromStdString(r.reason);
    }
    if (role == Qt::ForegroundRole && index.column() == VerdictColumn &&
        r.verdict == analysis::LeakVerdict::Staircase) {
        return QColor(200, 30, 30);
    }
    return {};
}

QVariant LeakSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
        case GpuColumn:
            return tr("GPU");
        case VerdictColumn:
            return tr("Verdict");
        case GrowthColumn:
            return tr("Growth / iteration");
        case ToOomColumn:
            return tr("Iterations to OOM");
        case IterationsColumn:
            return tr("Iterations (source)");
    }
    return {};
}

// --- SurvivorModel ---

SurvivorModel::SurvivorModel(QObject* parent) : QAbstractTableModel(parent) {}

void SurvivorModel::setReport(const analysis::LeakReport* report) {
    beginResetModel();
    m_report = report;
    endResetModel();
}

const analysis::SurvivorGroup* SurvivorModel::groupAt(int row) const {
    if (!m_report || row < 0 || row >= int(m_report->survivors.size())) {
        return nullptr;
    }
    return &m_report->survivors[size_t(row)];
}

int SurvivorModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_report ? 0 : int(m_report->survivors.size());
}

int SurvivorModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SurvivorModel::data(const QModelIndex& index, int role) const {
    const analysis::SurvivorGroup* g = index.isValid() ? groupAt(index.row()) : nullptr;
    if (!g) {
        return {};
    }
    const QString where =
        shortFrameLabel(!g->userFrame.empty() ? g->userFrame
                                              : (g->topFrames.empty() ? std::string("(no stack)")
                                                                      : g->topFrames.front()));
    if (role == RawValueRole) {
        switch (index.column()) {
            case BytesColumn:
                return qulonglong(g->bytes);
            case PatternColumn:
                return qulonglong(g->sizeBytes);
            case IterationsColumn:
                return g->iterations;
            case WhereColumn:
                return where;
        }
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case BytesColumn:
                return formatBytes(double(g->bytes));
            case PatternColumn:
                return QString::fromStdString(analysis::survivorPattern(*g));
            case IterationsColumn:
                return g->iterations < m_report->survivorIterations
                           ? tr("%1 of %2").arg(g->iterations).arg(m_report->survivorIterations)
                           : QString::number(g->iterations);
            case WhereColumn:
                return where;
        }
        return {};
    }
    if (role == Qt::ToolTipRole) {
        QStringList frames;
        for (const std::string& f : g->topFrames) {
            frames << QString::fromStdString(f).toHtmlEscaped();
        }
        return tr("<b>%1</b><br><b>Stack (innermost first)</b><br>%2")
            .arg(
                QString::fromStdString(analysis::describeSurvivor(*g, m_report->survivorIterations))
                    .toHtmlEscaped(),
                frames.join(QStringLiteral("<br>")));
    }
    if (role == Qt::TextAlignmentRole && index.column() != WhereColumn &&
        index.column() != PatternColumn) {
        return int(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant SurvivorModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
        case BytesColumn:
            return tr("Surviving bytes");
        case PatternColumn:
            return tr("Kept per iteration");
        case IterationsColumn:
            return tr("Iterations");
        case WhereColumn:
            return tr("Allocated at");
    }
    return {};
}

// --- LeakPanel ---

LeakPanel::LeakPanel(ZoomState* zoom, QWidget* parent)
    : QWidget(parent),
      m_zoom(zoom),
      m_summary(new LeakSummaryModel(this)),
      m_survivors(new SurvivorModel(this)),
      m_summaryView(new QTableView),
      m_survivorView(new QTableView),
      m_reason(new QLabel),
      m_chart(new QCustomPlot),
      m_chartMessage(new QLabel),
      m_chartStack(new QStackedWidget) {
    for (QTableView* v : {m_summaryView, m_survivorView}) {
        v->setSelectionBehavior(QAbstractItemView::SelectRows);
        v->setSelectionMode(QAbstractItemView::SingleSelection);
        v->verticalHeader()->setVisible(false);
        v->horizontalHeader()->setStretchLastSection(true);
        v->setWordWrap(false);
    }
    m_summaryView->setModel(m_summary);
    m_survivorView->setModel(m_survivors);
    m_survivorView->setTextElideMode(Qt::ElideLeft);
    m_reason->setWordWrap(true);
    m_reason->setTextFormat(Qt::PlainText);
    // Tall enough for the vertical axis title and three byte labels.
    m_chart->setMinimumSize(240, 170);
    // The legend goes under the plot, in one row, so that it never hides the points.
    m_chart->plotLayout()->addElement(1, 0, m_chart->legend);
    m_chart->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_chart->plotLayout()->setRowStretchFactor(1, 0.001);

    auto* bottom = new QSplitter(Qt::Vertical);
    m_chartMessage->setWordWrap(true);
    m_chartMessage->setAlignment(Qt::AlignCenter);
    m_chartMessage->setTextFormat(Qt::PlainText);
    m_chartStack->addWidget(m_chart);
    m_chartStack->addWidget(m_chartMessage);
    bottom->addWidget(m_chartStack);
    bottom->addWidget(m_survivorView);
    bottom->setStretchFactor(0, 4);
    bottom->setStretchFactor(1, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_summaryView);
    auto* lower = new QWidget;
    auto* lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addWidget(m_reason);
    lowerLayout->addWidget(bottom, 1);
    split->addWidget(lower);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(m_summaryView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { setGpu(m_summary->gpuAt(current.row())); });
    connect(m_survivorView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showSurvivor(current.row()); });
}

void LeakPanel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    m_summary->setJob(m_job);
    m_summaryView->resizeColumnsToContents();
    // As tall as its rows (up to six), the rest goes to the chart.
    const int rows = std::min(std::max(m_summary->rowCount(), 1), 6);
    m_summaryView->setMaximumHeight(m_summaryView->horizontalHeader()->height() +
                                    rows * m_summaryView->verticalHeader()->defaultSectionSize() +
                                    4);
    m_gpu = {};
    m_survivors->setReport(nullptr);
    // Show the most worrying GPU first: a staircase, else the first.
    analysis::GpuKey first;
    if (m_job) {
        for (const analysis::GpuMemoryAnalysis& g : m_job->memory) {
            if (!first.isValid() || g.leak().verdict == analysis::LeakVerdict::Staircase) {
                first = g.key;
                if (g.leak().verdict == analysis::LeakVerdict::Staircase) {
                    break;
                }
            }
        }
    }
    if (first.isValid()) {
        setGpu(first);
    } else {
        m_reason->setText(tr("No GPU of this job has allocation events: no leak analysis."));
        updateChart();
    }
}

void LeakPanel::setGpu(analysis::GpuKey gpu) {
    if (!m_job || !m_job->memoryOf(gpu) || gpu == m_gpu) {
        return;
    }
    m_gpu = gpu;
    const analysis::GpuMemoryAnalysis* g = m_job->memoryOf(gpu);
    for (int row = 0; row < m_summary->rowCount(); ++row) {
        if (m_summary->gpuAt(row) == gpu && m_summaryView->currentIndex().row() != row) {
            m_summaryView->setCurrentIndex(m_summary->index(row, 0));
        }
    }
    m_survivors->setReport(&g->leak());
    m_survivorView->resizeColumnsToContents();
    QString text =
        gpuLabel(*m_job, gpu) + QStringLiteral(": ") + QString::fromStdString(g->leak().reason);
    if (!g->leak().survivors.empty()) {
        const analysis::LeakReport& l = g->leak();
        text += tr(" Survivors (made in one iteration, still alive two later), %1 in all; the "
                   "largest: %2. Select one to see where its allocations were made.")
                    .arg(formatBytes(double(l.survivorBytes)),
                         QString::fromStdString(analysis::describeSurvivor(l.survivors.front(),
                                                                           l.survivorIterations)));
    }
    m_reason->setText(text);
    updateChart();
}

void LeakPanel::selectSurvivor(int row) {
    if (m_survivorView->currentIndex().row() != row && m_survivors->groupAt(row)) {
        m_survivorView->setCurrentIndex(m_survivors->index(row, 0));  // shows it, via the signal
        return;
    }
    showSurvivor(row);
}

void LeakPanel::showSurvivor(int row) {
    const analysis::SurvivorGroup* s = m_survivors->groupAt(row);
    const analysis::GpuMemoryAnalysis* g = m_job ? m_job->memoryOf(m_gpu) : nullptr;
    if (!s || !g) {
        return;
    }
    const analysis::JobModel& job = *m_job;
    const trace::TraceData& data = job.job.ranks[size_t(m_gpu.rankIndex)].trace.data;
    const int64_t aliveAt =
        g->leak().iterations.empty() ? INT64_MAX : g->leak().iterations.back().endNs;
    const analysis::StackAllocations a =
        analysis::allocationsOfStack(data, g->index(), s->stack, aliveAt);
    if (a.count > 0) {
        m_zoom->setSelection({job.toJob(m_gpu.rankIndex, a.firstNs),
                              job.toJob(m_gpu.rankIndex, std::max(a.lastNs, a.firstNs + 1))});
    }
    emit survivorSelected(m_gpu, s->stack);
}

void LeakPanel::updateChart() {
    m_chart->clearGraphs();
    m_chart->clearItems();
    const PlotColors colors = PlotColors::fromPalette(palette());
    m_chart->setBackground(colors.background);
    for (QCPAxis* axis : {m_chart->xAxis, m_chart->yAxis}) {
        axis->setBasePen(QPen(colors.axis));
        axis->setTickPen(QPen(colors.axis));
        axis->setSubTickPen(QPen(colors.axis));
        axis->setTickLabelColor(colors.text);
        axis->setLabelColor(colors.text);
        axis->grid()->setPen(QPen(colors.grid, 0, Qt::DotLine));
    }
    m_chart->xAxis->setLabel(tr("iteration"));
    m_chart->yAxis->setLabel(tr("allocated bytes"));
    m_chart->yAxis->setTicker(QSharedPointer<BytesTicker>::create());
    // About one byte label per 40 px, so that they never overlap.
    m_chart->yAxis->ticker()->setTickCount(std::clamp(m_chart->height() / 40, 2, 6));
    auto integers = QSharedPointer<QCPAxisTickerFixed>::create();
    integers->setTickStep(1.0);
    integers->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_chart->xAxis->setTicker(integers);
    const analysis::GpuMemoryAnalysis* g = m_job ? m_job->memoryOf(m_gpu) : nullptr;
    if (!g || g->leak().iterations.empty()) {
        // A message in place of an empty chart.
        m_chartMessage->setText(
            !m_job ? tr("No job loaded.")
            : !g   ? tr("No GPU of this job has allocation events: no per-iteration memory "
                          "to chart.")
                   : tr("No iterations found on %1: no per-iteration memory to chart.")
                       .arg(gpuLabel(*m_job, m_gpu)));
        m_chartStack->setCurrentWidget(m_chartMessage);
        m_chart->replot();
        return;
    }
    m_chartStack->setCurrentWidget(m_chart);
    const analysis::LeakReport& r = g->leak();
    QVector<double> x, base, peak, fit;
    const analysis::LeakFitLine line = analysis::leakFitLine(r);
    for (size_t i = 0; i < r.iterations.size(); ++i) {
        x << double(r.iterations[i].number);
        base << double(r.iterations[i].baselineBytes);
        peak << double(r.iterations[i].peakBytes);
        fit << line.at(double(i));
    }
    QCPGraph* peaks = m_chart->addGraph();
    peaks->setName(tr("peak"));
    peaks->setData(x, peak, true);
    peaks->setPen(QPen(colors.reserved, 1.5, Qt::DashLine));
    QCPGraph* baselines = m_chart->addGraph();
    baselines->setName(tr("baseline (lowest)"));
    baselines->setData(x, base, true);
    baselines->setPen(QPen(gpuColor(0, colors.dark), 2));
    baselines->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    // The analysis fits a line only from LeakOptions::minIterations iterations on.
    if (r.iterations.size() >= size_t(analysis::LeakOptions{}.minIterations)) {
        QCPGraph* fitted = m_chart->addGraph();
        fitted->setName(tr("fit: %1 / iteration").arg(formatBytes(r.slopeBytesPerIteration)));
        // NOTE(qcp): legend items measure their text with their own font, taken when the plot was
        // made; give them the plot's current font so that the text is not cut.
        m_chart->legend->setFont(m_chart->font());
        for (int i = 0; i < m_chart->legend->itemCount(); ++i) {
            m_chart->legend->item(i)->setFont(m_chart->font());
        }
        fitted->setData(x, fit, true);
        fitted->setPen(QPen(colors.oom, 1.5, Qt::DashDotLine));
    }
    m_chart->rescaleAxes();
    const QCPRange y = m_chart->yAxis->range();
    const double pad = std::max(y.size() * 0.1, 1.0);
    m_chart->yAxis->setRange(std::max(0.0, y.lower - pad), y.upper + pad);
    m_chart->xAxis->setRange(x.front() - 0.5, x.back() + 0.5);
    m_chart->legend->setVisible(true);
    m_chart->legend->setBrush(colors.background);
    m_chart->legend->setBorderPen(Qt::NoPen);
    m_chart->legend->setTextColor(colors.text);
    m_chart->replot();
}

}  // namespace vramscope::widgets
