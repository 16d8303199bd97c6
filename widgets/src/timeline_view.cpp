#include "vramscope/widgets/timeline_view.h"

#include <QEvent>
#include <QLabel>
#include <QMetaMethod>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

#include "vramscope/widgets/heat_strip.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/range_lane.h"
#include "vramscope/widgets/time_axis_bar.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

TimelineView::TimelineView(ZoomState* zoom, QWidget* parent) : QWidget(parent), m_zoom(zoom) {
    m_colors = PlotColors::fromPalette(palette());
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_lane = new RangeLane(m_zoom, this);
    layout->addWidget(m_lane);
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(m_scroll, 1);
    m_axis = new TimeAxisBar(m_zoom, this);
    layout->addWidget(m_axis);
    m_content = new QWidget;
    m_contentLayout = new QVBoxLayout(m_content);
    m_contentLayout->setContentsMargins(0, 0, 0, 0);
    m_contentLayout->setSpacing(2);
    m_scroll->setWidget(m_content);
    m_empty = new QLabel(this);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_contentLayout->addWidget(m_empty);
    m_heat = new HeatStrip(m_zoom, m_content);
    m_contentLayout->addWidget(m_heat);
    const int left = MemoryPlot::defaultLeftMargin(fontMetrics());
    m_lane->setMargins(left, MemoryPlot::kRightMarginPx);
    m_heat->setMargins(left, MemoryPlot::kRightMarginPx);
    m_axis->setMargins(left, MemoryPlot::kRightMarginPx);
    // Keep the lane and the axis bar aligned with the plots when the vertical scroll bar shows.
    connect(m_scroll->verticalScrollBar(), &QScrollBar::rangeChanged, this,
            [this, left](int, int max) {
                const int right = MemoryPlot::kRightMarginPx +
                                  (max > 0 ? m_scroll->verticalScrollBar()->sizeHint().width() : 0);
                m_lane->setMargins(left, right);
                m_axis->setMargins(left, right);
            });
    connect(m_zoom, &ZoomState::selectedGpuChanged, this, [this] {
        updateLaneRank();
        if (isCompact() && !m_plots.empty() && m_zoom->selectedGpu().isValid() &&
            !(m_plots.front()->gpu() == m_zoom->selectedGpu())) {
            rebuild();
        }
    });
    rebuild();
}

void TimelineView::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    m_roleLayers.clear();
    m_shown.clear();
    if (m_job) {
        for (const analysis::GpuSeries& g : m_job->gpus) {
            m_shown.push_back(g.key);
        }
    }
    rebuild();
}

void TimelineView::setShownGpus(std::vector<analysis::GpuKey> gpus) {
    m_shown = std::move(gpus);
    rebuild();
}

void TimelineView::setLayoutMode(LayoutMode mode) {
    m_mode = mode;
    rebuild();
}

bool TimelineView::isCompact() const {
    return m_mode == LayoutMode::Compact || (m_mode == LayoutMode::Automatic &&
                                             static_cast<int>(m_shown.size()) > kCompactThreshold);
}

void TimelineView::setScaleToCapacity(bool toCapacity) {
    m_scaleToCapacity = toCapacity;
    for (MemoryPlot* plot : m_plots) {
        plot->setScaleToCapacity(toCapacity);
    }
}

void TimelineView::setStackByRole(bool stacked) {
    m_stackByRole = stacked;
    for (MemoryPlot* plot : m_plots) {
        plot->setRoleLayers(stacked, stacked ? roleLayersOf(plot->gpu()) : nullptr);
    }
}

std::shared_ptr<const analysis::RoleLayers> TimelineView::roleLayersOf(analysis::GpuKey gpu) {
    if (!m_job) {
        return nullptr;
    }
    const std::pair<int, int32_t> key{gpu.rankIndex, toInt(gpu.device)};
    if (auto it = m_roleLayers.find(key); it != m_roleLayers.end()) {
        return it->second;
    }
    std::shared_ptr<const analysis::RoleLayers> layers;
    const analysis::GpuMemoryAnalysis* memory = m_job->memoryOf(gpu);
    if (memory && memory->device->roles) {
        const size_t rank = static_cast<size_t>(gpu.rankIndex);
        const trace::TraceData& data = m_job->job.ranks[rank].trace.data;
        layers = std::make_shared<const analysis::RoleLayers>(analysis::buildRoleLayers(
            analysis::buildRoleSeries(data, memory->index(), *memory->device->roles),
            m_job->ranks[rank].toJobNs));
    }
    m_roleLayers.emplace(key, layers);
    return layers;
}

void TimelineView::applyColors(const PlotColors& colors) {
    m_colors = colors;
    for (MemoryPlot* plot : m_plots) {
        plot->applyColors(colors);
    }
    m_lane->applyColors(colors);
    m_heat->applyColors(colors);
    m_axis->applyColors(colors);
    QPalette pal = m_content->palette();
    pal.setColor(QPalette::Window, colors.background);
    m_content->setAutoFillBackground(true);
    m_content->setPalette(pal);
}

void TimelineView::replotNow() {
    for (MemoryPlot* plot : m_plots) {
        plot->refresh();
        plot->replot(QCustomPlot::rpImmediateRefresh);
    }
    m_axis->replot(QCustomPlot::rpImmediateRefresh);
    m_lane->update();
    m_heat->update();
}

void TimelineView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        applyColors(PlotColors::fromPalette(palette()));
    }
    QWidget::changeEvent(event);
}

void TimelineView::updateLaneRank() {
    int rankIndex = -1;
    if (m_zoom->selectedGpu().isValid()) {
        rankIndex = m_zoom->selectedGpu().rankIndex;
    } else if (!m_shown.empty()) {
        rankIndex = m_shown.front().rankIndex;
    } else if (m_job && !m_job->ranks.empty()) {
        rankIndex = 0;
    }
    m_lane->setRank(m_job, rankIndex);
}

void TimelineView::rebuild() {
    for (MemoryPlot* plot : m_plots) {
        // Hidden now: a deferred delete runs only when the event loop gets back to this level,
        // and until then the old plot would stay painted over the heat strip at its old place.
        plot->hide();
        plot->deleteLater();
        m_contentLayout->removeWidget(plot);
    }
    m_plots.clear();
    updateLaneRank();
    const bool compact = isCompact();
    if (!m_job || m_shown.empty()) {
        m_empty->setText(!m_job             ? tr("Open a trace (File > Open) or drop files here.")
                         : hasNoGpu(*m_job) ? noGpuSentence()
                         : m_job->gpus.empty()
                             ? tr("This job has no GPU memory data: no memory events, memory "
                                  "counters or devices were recorded.")
                             : tr("No GPU is ticked in the Ranks and GPUs list."));
        m_empty->show();
        m_heat->hide();
        m_axis->hide();
        return;
    }
    m_empty->hide();
    // A job without a single timed event has no time scale to read (its span is a stand-in).
    m_axis->setVisible(m_job->durationNs > 1);
    std::vector<analysis::GpuKey> plotted = m_shown;
    if (compact) {
        m_heat->setGpus(m_job, m_shown);
        m_heat->show();
        analysis::GpuKey focus = m_zoom->selectedGpu();
        if (!m_job->gpu(focus)) {
            focus = m_shown.front();
        }
        plotted = {focus};
    } else {
        m_heat->hide();
    }
    // Only GPUs of this job: a list of shown GPUs may still name the previous job's.
    std::erase_if(plotted,
                  [this](const analysis::GpuKey& key) { return m_job->gpu(key) == nullptr; });
    const int left = MemoryPlot::defaultLeftMargin(fontMetrics());
    for (size_t i = 0; i < plotted.size(); ++i) {
        auto* plot = new MemoryPlot(m_job, plotted[i], m_zoom, m_content);
        plot->setLeftMargin(left);
        plot->setTimeLabelsVisible(false);  // the axis bar below the scroll area carries them
        plot->setLegendVisible(i == 0);
        plot->setScaleToCapacity(m_scaleToCapacity);
        plot->applyColors(m_colors);
        if (m_stackByRole) {
            plot->setRoleLayers(true, roleLayersOf(plotted[i]));
        }
        const analysis::GpuKey key = plotted[i];
        plot->setContextMenuHandler([this, key](QPoint global, int64_t t) {
            if (!isSignalConnected(QMetaMethod::fromSignal(&TimelineView::contextMenuRequested))) {
                return false;
            }
            emit contextMenuRequested(global, t, key);
            return true;
        });
        m_contentLayout->addWidget(plot, 1);
        m_plots.push_back(plot);
    }
    applyNotes();
}

void TimelineView::applyNotes() {
    const std::vector<NumberedNote> numbered = numberNotes(m_notes);
    for (MemoryPlot* plot : m_plots) {
        std::vector<NumberedNote> shown;
        for (const NumberedNote& n : numbered) {
            if (noteShownOn(n.note, plot->gpu())) {
                shown.push_back(n);
            }
        }
        plot->setNotes(shown);
    }
}

void TimelineView::setNotes(std::vector<trace::Note> notes) {
    m_notes = std::move(notes);
    applyNotes();
}

}  // namespace vramscope::widgets
