#include "summary_controller.h"

#include <QAction>
#include <QStatusBar>
#include <QThread>
#include <QTimer>

#include <filesystem>

#include "job_loader.h"
#include "main_window.h"
#include "open_benchmark.h"
#include "summary_open.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/job_index.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::app {

namespace {

QString bytesText(uint64_t bytes) {
    return QString::fromStdString(analysis::formatBytes(double(bytes)));
}

bool endsWith(const QString& path, std::string_view suffix) {
    return path.endsWith(QLatin1String(suffix.data(), qsizetype(suffix.size())));
}

/// Over the budget a window is loaded with half its width again on each side, so that small pans
/// stay inside what is loaded.
constexpr double kWindowMargin = 0.5;

}  // namespace

SummaryController::SummaryController(MainWindow* window) : QObject(window), m_window(window) {
    m_loader = new JobLoader(this);
    connect(m_loader, &JobLoader::finished, this, &SummaryController::onDetail);
    connect(m_loader, &JobLoader::failed, this, [this](const QString& message, const QStringList&) {
        m_window->statusBar()->showMessage(tr("Detail could not be loaded: %1").arg(message));
    });
    connect(m_loader, &JobLoader::progress, this, [this](int permille, const QString& text) {
        m_window->statusBar()->showMessage(
            tr("Overview from summaries; loading detail: %1 (%2 %)").arg(text).arg(permille / 10));
    });
    m_windowTimer = new QTimer(this);
    m_windowTimer->setSingleShot(true);
    m_windowTimer->setInterval(250);  // let a wheel zoom settle before reading frames
    connect(m_windowTimer, &QTimer::timeout, this, &SummaryController::loadWindowNow);
    connect(window->zoomState(), &widgets::ZoomState::visibleRangeChanged, this,
            &SummaryController::onVisibleRange);
    connect(window->zoomState(), &widgets::ZoomState::selectedGpuChanged, this,
            [this](analysis::GpuKey gpu, int64_t) { onSelectedGpu(gpu); });
    m_backToIndex = new QAction(tr("Back to &Job Index"), this);
    m_backToIndex->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    m_backToIndex->setEnabled(false);
    connect(m_backToIndex, &QAction::triggered, this, &SummaryController::showIndex);
}

SummaryController::~SummaryController() {
    m_loader->cancel();
    m_loader->wait();
    if (m_windowThread) {
        m_windowThread->wait();
    }
}

void SummaryController::reset() {
    m_loader->cancel();
    ++m_windowGeneration;  // a window still loading is dropped
    m_shown = Shown::Other;
    m_note.clear();
    m_path.clear();
    m_summary.reset();
    m_overview.reset();
    m_index.reset();
    m_indexPath.clear();
    m_windowFrames.clear();
    m_overBudget = false;
    m_backToIndex->setEnabled(false);
}

bool SummaryController::open(const QStringList& paths) {
    if (paths.size() != 1) {
        return false;
    }
    const QString path = paths.front();
    const std::string file = path.toStdString();
    if (endsWith(path, trace::kJobIndexSuffix)) {
        reset();
        auto index = loadIndexOverview(file);
        if (!index.ok()) {
            m_window->statusBar()->showMessage(QString::fromStdString(index.error().describe()));
            return false;  // the usual loader says why, in its dialog
        }
        m_index = index.value();
        m_indexPath = path;
        show(m_index, Shown::Index, false);
        markOpenStage(*m_window, OpenStage::Index);
        return true;
    }
    if (!endsWith(path, ".vscope")) {
        return false;
    }
    auto source = readSummarySource(file);
    if (!source.ok() || !source->has_value()) {
        return false;  // old files and unreadable ones open as before
    }
    reset();
    m_path = path;
    m_summary = std::make_shared<const trace::TraceSummary>(std::move((*source)->summary));
    SummarySource drawn;
    drawn.path = file;
    drawn.summary = *m_summary;
    drawn.problem = (*source)->problem;
    m_overview = overviewModel({drawn}, jobTitle({file}) + " (overview)", false);
    m_overBudget = estimatedDetailBytes(*m_summary) > memoryBudgetBytes();
    show(m_overview, Shown::Overview, false);
    markOpenStage(*m_window, OpenStage::Overview, m_overBudget);
    if (!m_overBudget) {
        m_loader->start(paths);
    }
    return true;
}

void SummaryController::show(std::shared_ptr<const analysis::JobModel> model, Shown shown,
                             bool keepRange) {
    const widgets::TimeRange range = m_window->zoomState()->visibleRange();
    m_showing = true;
    m_shown = shown;
    updateNote();
    const QString& path = shown == Shown::Index ? m_indexPath : m_path;
    m_window->setJob(std::move(model), path.isEmpty() ? QStringList() : QStringList{path});
    if (keepRange) {
        m_window->zoomState()->setVisibleRange(range);
    }
    m_showing = false;
    m_backToIndex->setEnabled(m_index && shown == Shown::IndexRank);
    emit shownChanged();
}

void SummaryController::onDetail(std::shared_ptr<const analysis::JobModel> job,
                                 const QStringList& paths) {
    if (m_shown == Shown::Other) {
        return;
    }
    if (m_index) {
        m_path = paths.value(0);
        show(std::move(job), Shown::IndexRank, false);
        return;
    }
    // The same file on the same axis (the summary spans every event): the zoom stays.
    show(std::move(job), Shown::Detail, true);
    markOpenStage(*m_window, OpenStage::Detail);
}

void SummaryController::onVisibleRange() {
    if (m_showing || !m_overBudget || !m_summary ||
        (m_shown != Shown::Overview && m_shown != Shown::Window)) {
        return;
    }
    m_windowTimer->start();
}

void SummaryController::loadWindowNow() {
    // Ranges in the overview's job time; a window's job time starts at its earliest event.
    const int64_t shift =
        m_shown == Shown::Window ? m_window->job()->originNs - m_overview->originNs : 0;
    const widgets::TimeRange shownRange = m_window->zoomState()->visibleRange();
    const widgets::TimeRange visible{shownRange.startNs + shift, shownRange.endNs + shift};
    const widgets::TimeRange full{0, m_overview->durationNs};
    const bool windowZoomedOut =
        m_shown == Shown::Window &&
        shownRange.durationNs() >= m_window->zoomState()->fullRange().durationNs();
    if (m_shown == Shown::Window && !windowZoomedOut && visible.startNs >= m_windowStart &&
        visible.endNs <= m_windowEnd) {
        return;  // still inside the loaded window
    }
    const int64_t width = visible.durationNs();
    const auto margin = static_cast<int64_t>(kWindowMargin * double(width));
    const int64_t start = std::max(full.startNs, visible.startNs - margin);
    const int64_t end = std::min(full.endNs, visible.endNs + margin);
    const int64_t origin = m_overview->originNs;  // trace time = overview job time + origin
    const uint64_t need = estimatedWindowBytes(*m_summary, start + origin, end + origin);
    if (windowZoomedOut || width >= full.durationNs() || need > memoryBudgetBytes()) {
        if (m_shown == Shown::Window) {
            m_windowFrames.clear();
            // The window's events are let go; the overview shows where the window was, or all.
            show(m_overview, Shown::Overview, false);
            m_window->zoomState()->setVisibleRange(windowZoomedOut ? full : visible);
        }
        return;
    }
    const int generation = ++m_windowGeneration;
    const std::string path = m_path.toStdString();
    const auto summary = m_summary;
    m_window->statusBar()->showMessage(tr("Loading the events of the window on screen…"));
    QThread* thread = QThread::create([this, generation, path, summary, start, end, origin] {
        auto loaded = loadWindow(path, *summary, start + origin, end + origin);
        QMetaObject::invokeMethod(
            this,
            [this, generation, loaded = std::move(loaded), start, end, origin]() {
                if (generation != m_windowGeneration) {
                    return;  // zoomed elsewhere meanwhile, or another file opened
                }
                m_window->statusBar()->clearMessage();
                if (!loaded.ok()) {
                    m_window->statusBar()->showMessage(
                        QString::fromStdString(loaded.error().describe()));
                    return;
                }
                m_windowStart = start;
                m_windowEnd = end;
                m_windowFrames = framesForWindow(*m_summary, start + origin, end + origin);
                const widgets::TimeRange before = m_window->zoomState()->visibleRange();
                const int64_t toWindow =
                    (m_shown == Shown::Window ? m_window->job()->originNs : origin) -
                    loaded.value()->originNs;
                show(loaded.value(), Shown::Window, false);
                m_window->zoomState()->setVisibleRange(
                    {before.startNs + toWindow, before.endNs + toWindow});
            },
            Qt::QueuedConnection);
    });
    if (m_windowThread) {
        m_windowThread->wait();
        m_windowThread->deleteLater();
    }
    m_windowThread = thread;
    thread->start();
}

void SummaryController::onSelectedGpu(analysis::GpuKey gpu) {
    if (m_showing || m_shown != Shown::Index || !gpu.isValid() || !m_index) {
        return;
    }
    const std::string& file = m_index->ranks[static_cast<size_t>(gpu.rankIndex)].path;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        m_window->statusBar()->showMessage(
            tr("%1 is missing: only its summary can be shown.").arg(QString::fromStdString(file)));
        return;
    }
    m_window->statusBar()->showMessage(tr("Loading %1…").arg(QString::fromStdString(file)));
    m_loader->start({QString::fromStdString(file)});
}

void SummaryController::showIndex() {
    if (m_index) {
        m_loader->cancel();
        m_path.clear();
        show(m_index, Shown::Index, false);
    }
}

void SummaryController::updateNote() {
    const uint64_t budget = memoryBudgetBytes();
    switch (m_shown) {
        case Shown::Other:
        case Shown::Detail:
            m_note.clear();
            return;
        case Shown::Index:
            m_note =
                tr("Job index: %1 ranks drawn from their summaries, worst peak share first. Click "
                   "a rank to load its events.")
                    .arg(m_index ? m_index->ranks.size() : 0);
            return;
        case Shown::IndexRank:
            m_note = tr("One rank of the job index (View > Back to Job Index).");
            return;
        case Shown::Overview:
        case Shown::Window:
            break;
    }
    QStringList lines;
    if (m_shown == Shown::Window) {
        lines.append(tr("Events of the window on screen only (%1 frames; memory allocated before "
                        "the window shows as one pre-existing allocation per GPU, its size from "
                        "the summaries); zoom out for the overview.")
                         .arg(m_windowFrames.size()));
    } else if (!m_overBudget) {
        lines.append(tr("Overview from the file's summaries; the events are loading."));
    } else {
        lines.append(tr("Overview from the file's summaries; zoom in to load a window's events."));
    }
    if (m_overBudget) {
        QString missing =
            tr("Views that need every event: %1 over the %2 memory budget (Settings > Memory "
               "Budget) — or run vramscope-cli summarize.")
                .arg(bytesText(estimatedDetailBytes(*m_summary)), bytesText(budget));
        const std::vector<std::string> stored = storedAnalysisLines(*m_summary);
        for (const std::string& s : stored) {
            missing += QLatin1Char('\n') + QString::fromStdString(s);
        }
        lines.append(missing);
    }
    m_note = lines.join(QLatin1Char('\n'));
}

}  // namespace vramscope::app
