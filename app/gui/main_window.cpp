#include "main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

#include "analysis_views.h"
#include "job_loader.h"
#include "live_session.h"
#include "notes_controller.h"
#include "summary_controller.h"
#include "vramscope/analysis/live_set.h"
#include "vramscope/widgets/details_panel.h"
#include "vramscope/widgets/device_tree_model.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/units.h"
#include "vramscope/widgets/zoom_state.h"
#include "window_layout.h"

namespace vramscope::app {

using widgets::formatBytes;
using widgets::formatDuration;

namespace {
QString gpuName(const analysis::GpuSeries& g) {
    return toInt(g.rank) >= 0
               ? QObject::tr("rank %1 · GPU %2").arg(toInt(g.rank)).arg(toInt(g.key.device))
               : QObject::tr("rank ? · GPU %1").arg(toInt(g.key.device));
}

/// True when some rank of the job has at least one timed event.
bool hasEvents(const trace::Job& job) {
    for (const trace::RankTrace& r : job.ranks) {
        const trace::TraceData& d = r.trace.data;
        if (d.memory.size() > 0 || d.kernels.size() > 0 || d.counters.size() > 0 ||
            d.ranges.size() > 0 || !d.ooms.empty()) {
            return true;
        }
    }
    return false;
}

/// What the Details dock says while it lists nothing: why, when nothing can be listed.
QString detailsPlaceholder(const analysis::JobModel* job) {
    if (job && widgets::hasNoGpu(*job)) {
        return widgets::noGpuSentence();
    }
    if (job && !job->gpus.empty() && widgets::hasNoAllocationEvents(*job)) {
        return widgets::noAllocationEventsSentence();
    }
    return QObject::tr("Click a GPU's plot to list the allocations alive at that time.");
}

/// A time read-out precise enough for the visible span.
QString readTime(int64_t ns, const widgets::ZoomState& zoom) {
    const double span = static_cast<double>(zoom.visibleRange().durationNs());
    return widgets::formatTime(static_cast<double>(ns), widgets::timeUnitFor(span), span / 1000.0);
}
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(tr("vramscope"));
    setAcceptDrops(true);
    m_zoom = new widgets::ZoomState(this);
    m_loader = new JobLoader(this);
    m_summaries = new SummaryController(this);

    auto* centre = new QWidget(this);
    auto* centreLayout = new QVBoxLayout(centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    centreLayout->setSpacing(0);
    m_banner = new QLabel(centre);
    m_banner->setObjectName(QStringLiteral("ProblemBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setMargin(4);
    m_banner->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #5c4400; }"));
    m_banner->hide();
    centreLayout->addWidget(m_banner);
    m_tabs = new QTabWidget(centre);
    m_tabs->setDocumentMode(true);
    m_tabs->tabBar()->setAutoHide(true);
    m_timeline = new widgets::TimelineView(m_zoom, m_tabs);
    m_tabs->addTab(m_timeline, tr("Memory"));
    centreLayout->addWidget(m_tabs, 1);
    // The timeline keeps a readable size; the docks yield to it in small windows.
    m_tabs->setMinimumSize(480, 320);
    setCentralWidget(centre);
    addView(QStringLiteral("timeline"), [this] { m_tabs->setCurrentWidget(m_timeline); });

    createDocks();
    createMenus();
    new AnalysisViews(this);    // flame, lanes, gaps, leak and advice views; Jump to OOM
    new NotesController(this);  // the Notes dock and menus, the views' markers, the sidecar

    m_cursorLabel = new QLabel(this);
    m_selectionLabel = new QLabel(this);
    statusBar()->addWidget(m_cursorLabel, 1);
    statusBar()->addPermanentWidget(m_selectionLabel);

    connect(m_zoom, &widgets::ZoomState::cursorChanged, this, &MainWindow::updateCursorReadout);
    connect(m_zoom, &widgets::ZoomState::selectionChanged, this,
            &MainWindow::updateSelectionReadout);
    connect(m_zoom, &widgets::ZoomState::visibleRangeChanged, this,
            &MainWindow::updateSelectionReadout);
    connect(m_zoom, &widgets::ZoomState::selectedGpuChanged, this, &MainWindow::updateDetails);
    connect(m_loader, &JobLoader::finished, this, &MainWindow::onLoadFinished);
    connect(m_loader, &JobLoader::failed, this, &MainWindow::onLoadFailed);
    connect(m_loader, &JobLoader::cancelled, this, [this] {
        if (m_progress) {
            m_progress->hide();
        }
        statusBar()->showMessage(tr("Loading cancelled."), 5000);
    });
    connect(m_loader, &JobLoader::progress, this, [this](int permille, const QString& text) {
        if (m_progress) {
            m_progress->setValue(permille);
            m_progress->setLabelText(text);
        }
    });

    // Docks created elsewhere (a NotesDock) must exist by now to get their place.
    placeDocksByDefault(*this);
    QSettings settings;
    resize(1400, 900);
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    // A state saved before this layout version (other docks, other places) is refused here and
    // the default layout stays.
    m_layoutRestored = restoreState(settings.value(QStringLiteral("window/state")).toByteArray(),
                                    kWindowStateVersion);
    applyTheme(settings.value(QStringLiteral("view/theme"), QStringLiteral("system")).toString());
    updateRecentMenu();
}

MainWindow::~MainWindow() {
    m_loader->wait();
}

void MainWindow::createDocks() {
    m_deviceModel = new widgets::DeviceTreeModel(this);
    m_deviceTree = new QTreeView(this);
    m_deviceTree->setModel(m_deviceModel);
    m_deviceTree->setRootIsDecorated(true);
    m_deviceTree->setUniformRowHeights(true);
    m_deviceTree->header()->setStretchLastSection(false);
    m_deviceTree->header()->setSectionResizeMode(widgets::DeviceTreeModel::NameColumn,
                                                 QHeaderView::Interactive);
    m_deviceTree->header()->setSectionResizeMode(widgets::DeviceTreeModel::CapacityColumn,
                                                 QHeaderView::ResizeToContents);
    m_deviceTree->header()->setSectionResizeMode(widgets::DeviceTreeModel::PeakColumn,
                                                 QHeaderView::ResizeToContents);
    auto* devices = new QDockWidget(tr("Ranks and GPUs"), this);
    devices->setObjectName(QStringLiteral("DevicesDock"));
    devices->setWidget(m_deviceTree);
    addDockWidget(Qt::LeftDockWidgetArea, devices);
    connect(m_deviceModel, &widgets::DeviceTreeModel::checkedGpusChanged, this, [this] {
        if (m_job) {
            m_timeline->setShownGpus(m_deviceModel->checkedGpus());
        }
    });
    connect(m_deviceTree, &QTreeView::clicked, this, [this](const QModelIndex& index) {
        if (!m_job || !index.parent().isValid()) {
            return;
        }
        const int rankIndex = index.parent().row();
        const auto& gpus = m_job->gpus;
        int n = 0;
        for (const analysis::GpuSeries& g : gpus) {
            if (g.key.rankIndex == rankIndex && n++ == index.row()) {
                m_zoom->setSelectedGpu(g.key, m_zoom->selectedGpu() == g.key
                                                  ? m_zoom->selectedTimeNs()
                                                  : g.memory.detailPeakTimeNs());
                break;
            }
        }
    });

    m_details = new widgets::DetailsPanel(this);
    auto* details = new QDockWidget(tr("Details"), this);
    details->setObjectName(QStringLiteral("DetailsDock"));
    details->setWidget(m_details);
    addDockWidget(Qt::RightDockWidgetArea, details);
}

int MainWindow::addCentralTab(QWidget* view, const QString& title) {
    return m_tabs->addTab(view, title);
}

void MainWindow::addView(const QString& name, std::function<void()> activate) {
    m_views[name] = std::move(activate);
}

bool MainWindow::showView(const QString& name) {
    const auto it = m_views.find(name);
    if (it == m_views.end()) {
        return false;
    }
    it->second();
    return true;
}

QStringList MainWindow::viewNames() const {
    QStringList names;
    for (const auto& [name, activate] : m_views) {
        names.append(name);
    }
    return names;
}

void MainWindow::openPaths(const QStringList& paths) {
    benchOpenStart();
    if (m_live) {  // opening files ends a live session (the jobs go on)
        m_live.reset();
        m_detachAction->setEnabled(false);
        m_saveReceivedAction->setEnabled(false);
        m_followAction->setEnabled(false);
    }
    if (m_summaries->open(paths)) {
        m_loader->cancel();  // an older load must not replace what the summaries show
        return;
    }
    m_summaries->reset();
    if (!m_progress) {
        m_progress = new QProgressDialog(this);
        m_progress->setWindowTitle(tr("Opening"));
        m_progress->setRange(0, 1000);
        m_progress->setMinimumDuration(400);
        m_progress->setAutoClose(false);
        m_progress->setAutoReset(false);
        connect(m_progress, &QProgressDialog::canceled, m_loader, &JobLoader::cancel);
    }
    std::vector<std::string> files;
    for (const QString& p : paths) {
        files.push_back(p.toStdString());
    }
    m_progress->setLabelText(paths.isEmpty()
                                 ? tr("Opening the bundled sample")
                                 : tr("Opening %1").arg(QString::fromStdString(jobTitle(files))));
    m_progress->setValue(0);
    m_progress->show();
    statusBar()->showMessage(m_progress->labelText());
    m_loader->start(paths);
}

void MainWindow::onLoadFinished(std::shared_ptr<const analysis::JobModel> job,
                                const QStringList& paths) {
    if (m_progress) {
        m_progress->hide();
    }
    statusBar()->clearMessage();
    setJob(std::move(job), paths);
    if (m_job && !m_job->problems.empty()) {
        showProblems(*m_job);
    }
    if (qEnvironmentVariableIsSet("VRAMSCOPE_BENCH_OPEN")) {
        m_timeline->replotNow();  // the picture is drawn before the clock is read
        benchOpenStage("detail", true);
    }
}

void MainWindow::onLoadFailed(const QString& message, const QStringList& paths) {
    if (m_progress) {
        m_progress->hide();
    }
    statusBar()->clearMessage();
    QMessageBox::warning(
        this, tr("Could not open"),
        // The message names the file.
        paths.isEmpty()
            ? tr("<p>The bundled sample could not be opened.</p><p>%1</p>")
                  .arg(message.toHtmlEscaped())
            : tr("<p>Nothing could be opened.</p><p>%1</p>").arg(message.toHtmlEscaped()));
}

void MainWindow::showProblems(const analysis::JobModel& job) {
    QStringList lines;
    for (const std::string& p : job.problems) {
        lines.append(QString::fromStdString(p));
    }
    statusBar()->showMessage(
        tr("Opened with %n problem(s); see the message.", nullptr, static_cast<int>(lines.size())),
        10000);
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Opened with problems"),
                                tr("%1 was opened, but not everything in it could be used. What "
                                   "was loaded is shown.")
                                    .arg(QString::fromStdString(job.title)),
                                QMessageBox::Ok, this);
    box->setDetailedText(lines.join(QLatin1Char('\n')));
    box->setInformativeText(lines.mid(0, 3).join(QLatin1Char('\n')));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::setJob(std::shared_ptr<const analysis::JobModel> job, const QStringList& paths) {
    m_job = std::move(job);
    m_currentPaths = paths;
    if (!paths.isEmpty()) {
        addRecent(paths);
    }
    setWindowTitle(m_job ? tr("%1 — vramscope").arg(QString::fromStdString(m_job->title))
                         : tr("vramscope"));
    m_zoom->setSelectedGpu({}, 0);
    m_zoom->setFullRange({0, m_job ? m_job->durationNs : 1});
    m_timeline->setJob(m_job);  // before the device list, whose ticks it follows
    m_deviceModel->setJob(m_job, widgets::PlotColors::fromPalette(palette()).dark);
    m_deviceTree->expandAll();
    QTimer::singleShot(0, this, &MainWindow::fitDeviceNames);
    m_details->clear(detailsPlaceholder(m_job.get()));
    updateSelectionReadout();
    updateBanner();
    if (m_job) {
        // Start with something to read: what is alive at the peak of the first GPU that has one.
        for (const analysis::GpuSeries& g : m_job->gpus) {
            if (g.memory.peakBytes() > 0) {
                m_zoom->setSelectedGpu(g.key, g.memory.detailPeakTimeNs());
                break;
            }
        }
    }
    emit jobChanged(m_job);
}

void MainWindow::updateBanner() {
    QStringList lines;
    if (const QString live = liveBannerLine(); !live.isEmpty()) {
        lines.append(live);
    }
    const QString summaryNote = m_summaries ? m_summaries->note() : QString();
    if (!summaryNote.isEmpty()) {
        lines.append(summaryNote.split(QLatin1Char('\n')));
    }
    if (m_job) {
        if (!hasEvents(m_job->job) && summaryNote.isEmpty()) {
            lines.append(tr("%1: no events loaded.").arg(QString::fromStdString(m_job->title)));
        }
        // A model drawn from summaries holds no events: "no GPU" would be wrong of it.
        if (widgets::hasNoGpu(*m_job) && summaryNote.isEmpty()) {
            lines.append(widgets::noGpuSentence());
        }
        for (const std::string& p : m_job->problems) {
            lines.append(QString::fromStdString(p));
        }
    }
    const int shown = 4;
    if (lines.size() > shown) {
        const auto more = lines.size() - shown;
        lines = lines.mid(0, shown);
        lines.append(tr("... and %1 more").arg(more));
    }
    m_banner->setText(lines.join(QLatin1Char('\n')));
    m_banner->setVisible(!lines.isEmpty());
}

void MainWindow::fitDeviceNames() {
    // Names as wide as they need, within reason (the tooltip has the whole name); the dock widens
    // to show them, within what leaves the timeline most of the window (maxDevicesDockWidth). Sizes
    // are measured over the visible rows, so this runs once the tree is laid out.
    int others =
        2 * m_deviceTree->frameWidth() + m_deviceTree->verticalScrollBar()->sizeHint().width();
    for (int c = 0; c < m_deviceModel->columnCount(); ++c) {
        if (c != widgets::DeviceTreeModel::NameColumn) {
            others += m_deviceTree->columnWidth(c);
        }
    }
    m_deviceTree->resizeColumnToContents(widgets::DeviceTreeModel::NameColumn);
    // At most 56 characters, and no more than leaves the other columns in a third of the window.
    const int most =
        std::max(120, std::min(fontMetrics().averageCharWidth() * 56, width() / 3 - others));
    if (m_deviceTree->columnWidth(widgets::DeviceTreeModel::NameColumn) > most) {
        m_deviceTree->setColumnWidth(widgets::DeviceTreeModel::NameColumn, most);
    }
    const int wanted = others + m_deviceTree->columnWidth(widgets::DeviceTreeModel::NameColumn);
    if (auto* dock = findChild<QDockWidget*>(QStringLiteral("DevicesDock"));
        dock && dock->width() < wanted) {
        resizeDocks({dock}, {std::min(wanted, maxDevicesDockWidth(*this))}, Qt::Horizontal);
        QApplication::sendPostedEvents(dock, QEvent::LayoutRequest);
    }
    // Where the dock could not widen enough, the name gives way rather than the numbers, down to a
    // readable "GPU 0 · T…"; below that the Capacity column goes (the peak keeps its share of
    // capacity, the plots' titles and the tooltips keep the capacity), rather than cutting it.
    const int least = fontMetrics().averageCharWidth() * 9 + 2 * m_deviceTree->indentation() + 32;
    auto numbers = [this](bool withCapacity) {
        int sum = 0;
        for (int c = 0; c < m_deviceModel->columnCount(); ++c) {
            if (c != widgets::DeviceTreeModel::NameColumn &&
                (withCapacity || c != widgets::DeviceTreeModel::CapacityColumn)) {
                // What ResizeToContents gives it, hidden or not.
                // (QTreeView hides sizeHintForColumn; QAbstractItemView's is public.)
                const QAbstractItemView* view = m_deviceTree;
                sum += std::max(view->sizeHintForColumn(c),
                                m_deviceTree->header()->sectionSizeHint(c));
            }
        }
        return sum;
    };
    const int viewport = m_deviceTree->viewport()->width();
    const bool capacityFits = viewport - numbers(true) >= least;
    m_deviceTree->setColumnHidden(widgets::DeviceTreeModel::CapacityColumn, !capacityFits);
    const int room = viewport - numbers(capacityFits);
    if (m_deviceTree->columnWidth(widgets::DeviceTreeModel::NameColumn) > room) {
        m_deviceTree->setColumnWidth(widgets::DeviceTreeModel::NameColumn, std::max(least, room));
    }
}

void MainWindow::updateCursorReadout() {
    if (!m_job || !m_zoom->hasCursor()) {
        m_cursorLabel->clear();
        return;
    }
    const int64_t t = m_zoom->cursorNs();
    QString text = tr("t = %1").arg(readTime(t, *m_zoom));
    if (const analysis::GpuSeries* g = m_job->gpu(m_zoom->cursorGpu())) {
        text += QStringLiteral("   ") + gpuName(*g);
        if (!g->allocated.series().empty()) {
            text += tr("   allocated %1")
                        .arg(formatBytes(static_cast<double>(g->allocated.series().valueAt(t))));
        }
        if (!g->reserved.series().empty()) {
            text += tr("   reserved %1")
                        .arg(formatBytes(static_cast<double>(g->reserved.series().valueAt(t))));
        }
        if (g->memory.capacityBytes > 0) {
            const double used = static_cast<double>(g->bytesInUseAt(t));
            text +=
                tr("   (%1 % of capacity)")
                    .arg(100.0 * used / static_cast<double>(g->memory.capacityBytes), 0, 'f', 1);
        }
    }
    m_cursorLabel->setText(text);
}

void MainWindow::updateSelectionReadout() {
    if (!m_zoom->hasSelection()) {
        const widgets::TimeRange v = m_zoom->visibleRange();
        if (m_job && !hasEvents(m_job->job)) {
            const bool fromSummaries = m_summaries && !m_summaries->note().isEmpty();
            m_selectionLabel->setText(fromSummaries ? tr("drawn from summaries")
                                                    : tr("no events loaded"));
            return;
        }
        m_selectionLabel->setText(
            m_job ? tr("showing %1 of %2")
                        .arg(formatDuration(static_cast<double>(v.durationNs())),
                             formatDuration(static_cast<double>(m_job->durationNs)))
                  : QString());
        return;
    }
    const widgets::TimeRange s = m_zoom->selection();
    m_selectionLabel->setText(tr("selected %1 – %2 (%3); Z zooms to it")
                                  .arg(readTime(s.startNs, *m_zoom), readTime(s.endNs, *m_zoom),
                                       formatDuration(static_cast<double>(s.durationNs()))));
}

void MainWindow::updateDetails() {
    const analysis::GpuKey key = m_zoom->selectedGpu();
    const analysis::GpuSeries* g = m_job ? m_job->gpu(key) : nullptr;
    if (!g) {
        m_details->clear(detailsPlaceholder(m_job.get()));
        return;
    }
    const trace::TraceData& data = m_job->job.ranks[static_cast<size_t>(key.rankIndex)].trace.data;
    const int64_t jobT = m_zoom->selectedTimeNs();
    const int64_t rankT = m_job->toRank(key.rankIndex, jobT);
    // The index the analyses built for the GPU (none for a GPU with memory totals only).
    const analysis::GpuMemoryAnalysis* memory = m_job->memoryOf(key);
    if (memory && !memory->liveSet.known) {
        m_details->clear(tr("<b>%1</b>: no live set: %2.")
                             .arg(gpuName(*g), QString::fromStdString(memory->liveSet.reason)));
        return;
    }
    const trace::MemoryLevel level =
        memory ? memory->level : analysis::detailLevel(data, key.device);
    const std::vector<analysis::LiveAllocation> live =
        memory ? analysis::liveSetAt(data, memory->index(), rankT)
               : std::vector<analysis::LiveAllocation>{};
    std::vector<widgets::LiveRow> rows =
        memory ? widgets::liveRowsFrom(data, live, rankT, memory->device->roles.get(),
                                       &memory->index())
               : widgets::liveRowsFrom(data, live, rankT);
    uint64_t total = 0;
    for (const widgets::LiveRow& r : rows) {
        total += r.sizeBytes;
    }
    QString heading =
        tr("<b>%1</b> at %2: %n %3 alive, %4", nullptr, static_cast<int>(rows.size()))
            .arg(gpuName(*g), readTime(jobT, *m_zoom),
                 level == trace::MemoryLevel::Allocated ? tr("allocation(s)") : tr("segment(s)"),
                 formatBytes(static_cast<double>(total)));
    if (rows.empty() && g->memory.memoryEvents == 0) {
        heading += tr("<br>This trace has only memory totals for this GPU, no allocation events.");
    }
    m_details->setLiveSet(heading, std::move(rows));
}

void MainWindow::resetLayout() {
    placeDocksByDefault(*this);
    // Sized once the docks are laid out in their places: sizes given before are those of the
    // places they came from.
    QApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    fitDefaultDockSizes(*this);
    QApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    fitDeviceNames();
    emit layoutReset();
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    // The default sizes are shares of the window: fitted once it is shown at its size, unless a
    // saved layout came back.
    if (!m_layoutRestored && !m_layoutFitted) {
        m_layoutFitted = true;
        fitDefaultDockSizes(*this);
    }
}

QImage MainWindow::renderToImage(QSize size) {
    resize(size);
    if (!isVisible() && !m_layoutRestored) {
        m_layoutFitted = false;  // fitted at this size when shown
    }
    show();
    for (int i = 0; i < 3; ++i) {
        QApplication::processEvents();
    }
    fitDeviceNames();
    QApplication::processEvents();
    fitDeviceNames();  // again, once the dock has its new width
    QApplication::processEvents();
    m_timeline->replotNow();
    QApplication::processEvents();
    return grab().toImage();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    m_loader->cancel();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState(kWindowStateVersion));
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) {
        for (const QUrl& url : event->mimeData()->urls()) {
            if (url.isLocalFile()) {
                event->acceptProposedAction();
                return;
            }
        }
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile()) {
            paths.append(url.toLocalFile());
        }
    }
    if (!paths.isEmpty()) {
        event->acceptProposedAction();
        openPaths(paths);
    }
}

void MainWindow::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange && m_job && !m_applyingTheme) {
        m_deviceModel->setJob(m_job, widgets::PlotColors::fromPalette(palette()).dark);
        m_deviceModel->setCheckedGpus(m_timeline->shownGpus());
        m_deviceTree->expandAll();
    }
    QMainWindow::changeEvent(event);
}

}  // namespace vramscope::app
