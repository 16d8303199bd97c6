#include "vramscope/widgets/details_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QMenu>
#include <QSplitter>
#include <QStringListModel>
#include <QTableView>
#include <QVBoxLayout>

#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/widgets/units.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::widgets {

namespace {

/// What the panel says while it lists nothing: why, when nothing can be listed.
QString placeholder(const analysis::JobModel* job) {
    if (job && hasNoGpu(*job)) {
        return noGpuSentence();
    }
    if (job && !job->gpus.empty() && hasNoAllocationEvents(*job)) {
        return noAllocationEventsSentence();
    }
    return QObject::tr("Click a GPU's plot to list the allocations alive at that time.");
}

/// A time read-out as precise as the visible span needs (as the window's status bar).
QString readTime(int64_t ns, const ZoomState& zoom) {
    const double span = static_cast<double>(zoom.visibleRange().durationNs());
    return formatTime(static_cast<double>(ns), timeUnitFor(span), span / 1000.0);
}

}  // namespace

DetailsPanel::DetailsPanel(ZoomState* zoom, QWidget* parent) : QWidget(parent), m_zoom(zoom) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_heading = new QLabel(this);
    m_heading->setWordWrap(true);
    m_heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_heading);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    m_model = new LiveSetModel(this);
    m_table = new QTableView(splitter);
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 4);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);

    auto* stackBox = new QWidget(splitter);
    auto* stackLayout = new QVBoxLayout(stackBox);
    stackLayout->setContentsMargins(0, 4, 0, 0);
    m_role = new QLabel(stackBox);
    m_role->setWordWrap(true);
    m_role->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_role->setTextFormat(Qt::PlainText);
    stackLayout->addWidget(m_role);
    m_stackHeading = new QLabel(tr("Stack of the selected allocation (innermost first)"), stackBox);
    m_stackHeading->setWordWrap(true);  // a narrow dock wraps it rather than growing for it
    stackLayout->addWidget(m_stackHeading);
    m_stackModel = new QStringListModel(this);
    m_stack = new QListView(stackBox);
    m_stack->setModel(m_stackModel);
    m_stack->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_stack->setAlternatingRowColors(true);
    m_stack->setUniformItemSizes(true);
    stackLayout->addWidget(m_stack);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    layout->addWidget(splitter, 1);

    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex index = m_table->indexAt(pos);
        if (!index.isValid()) {
            return;
        }
        QMenu menu(this);
        QAction* add = menu.addAction(tr("Add note for this allocation"));
        if (menu.exec(m_table->viewport()->mapToGlobal(pos)) == add) {
            emit allocationNoteRequested(index.row());
        }
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showStackOf(current.row()); });
    connect(m_zoom, &ZoomState::selectedGpuChanged, this, &DetailsPanel::showLiveSetAt);
    clear(placeholder(nullptr));
}

void DetailsPanel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    showLiveSetAt(m_zoom->selectedGpu(), m_zoom->selectedTimeNs());
}

void DetailsPanel::showLiveSetAt(analysis::GpuKey gpu, int64_t jobTimeNs) {
    const analysis::GpuSeries* g = m_job ? m_job->gpu(gpu) : nullptr;
    if (!g) {
        clear(placeholder(m_job.get()));
        return;
    }
    const trace::TraceData& data = m_job->job.ranks[static_cast<size_t>(gpu.rankIndex)].trace.data;
    const int64_t rankT = m_job->toRank(gpu.rankIndex, jobTimeNs);
    // The index the analyses built for the GPU (none for a GPU with memory totals only).
    const analysis::GpuMemoryAnalysis* memory = m_job->memoryOf(gpu);
    const QString name = gpuLabel(*m_job, gpu);
    if (memory && !memory->liveSet.known) {
        clear(tr("<b>%1</b>: no live set: %2.")
                  .arg(name, QString::fromStdString(memory->liveSet.reason)));
        return;
    }
    const trace::MemoryLevel level =
        memory ? memory->level : analysis::detailLevel(data, gpu.device);
    const std::vector<analysis::LiveAllocation> live =
        memory ? analysis::liveSetAt(data, memory->index(), rankT)
               : std::vector<analysis::LiveAllocation>{};
    std::vector<LiveRow> rows =
        memory ? liveRowsFrom(data, live, rankT, memory->device->roles.get(), &memory->index())
               : liveRowsFrom(data, live, rankT);
    uint64_t total = 0;
    for (const LiveRow& r : rows) {
        total += r.sizeBytes;
    }
    QString heading =
        tr("<b>%1</b> at %2: %n %3 alive, %4", nullptr, static_cast<int>(rows.size()))
            .arg(name, readTime(jobTimeNs, *m_zoom),
                 level == trace::MemoryLevel::Allocated ? tr("allocation(s)") : tr("segment(s)"),
                 formatBytes(static_cast<double>(total)));
    if (rows.empty() && g->memory.memoryEvents == 0) {
        heading += tr("<br>This trace has only memory totals for this GPU, no allocation events.");
    }
    setLiveSet(heading, std::move(rows));
}

void DetailsPanel::setLiveSet(const QString& heading, std::vector<LiveRow> rows) {
    m_heading->setText(heading);
    m_model->setRows(std::move(rows));
    m_table->resizeColumnsToContents();
    if (m_model->rowCount() > 0) {
        m_table->selectRow(0);
        showStackOf(0);
    } else {
        showStackOf(-1);
    }
}

void DetailsPanel::clear(const QString& message) {
    setLiveSet(message, {});
}

QString DetailsPanel::headingText() const {
    return m_heading->text();
}

QStringList DetailsPanel::shownStack() const {
    return m_stackModel->stringList();
}

QString DetailsPanel::shownRole() const {
    return m_role->text();
}

void DetailsPanel::showStackOf(int row) {
    const auto& rows = m_model->rows();
    if (row < 0 || static_cast<size_t>(row) >= rows.size()) {
        m_stackModel->setStringList({});
        m_role->clear();
        m_role->hide();
        return;
    }
    const LiveRow& r = rows[static_cast<size_t>(row)];
    m_role->setText(roleLines(r).join(QLatin1Char('\n')));
    m_role->show();
    m_stackModel->setStringList(
        r.stack.isEmpty() ? QStringList{tr("(the trace recorded no stack for it)")} : r.stack);
}

}  // namespace vramscope::widgets
