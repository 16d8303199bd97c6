#include "vramscope/widgets/segment_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QTimer>
#include <QVBoxLayout>

#include "vramscope/analysis/memory/segments.h"
#include "vramscope/widgets/segment_view.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

SegmentPanel::SegmentPanel(ZoomState* zoom, QWidget* parent)
    : QWidget(parent),
      m_zoom(zoom),
      m_gpuBox(new QComboBox(this)),
      m_momentBox(new QComboBox(this)),
      m_caption(new QLabel(this)),
      m_view(new SegmentView),
      m_timer(new QTimer(this)) {
    m_momentBox->addItem(tr("At the picked time"), int(Moment::Cursor));
    m_momentBox->addItem(tr("At the OOM"), int(Moment::Oom));
    m_momentBox->addItem(tr("At the peak"), int(Moment::Peak));
    m_momentBox->setToolTip(tr("Which moment's segments to show"));
    m_gpuBox->setToolTip(tr("GPU whose reserved segments are shown"));
    m_gpuBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_caption->setWordWrap(true);
    m_caption->setTextFormat(Qt::PlainText);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_gpuBox);
    bar->addWidget(m_momentBox);
    bar->addStretch(1);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_view);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_caption);
    layout->addWidget(scroll, 1);

    m_timer->setSingleShot(true);
    m_timer->setInterval(kRebuildIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &SegmentPanel::rebuildNow);
    connect(m_gpuBox, &QComboBox::activated, this, [this](int i) {
        if (m_job && i >= 0 && size_t(i) < m_job->memory.size()) {
            setGpu(m_job->memory[size_t(i)].key);
        }
    });
    connect(m_momentBox, &QComboBox::activated, this,
            [this](int i) { setMoment(Moment(m_momentBox->itemData(i).toInt())); });
    connect(m_zoom, &ZoomState::cursorChanged, this, [this] {
        if (m_moment == Moment::Cursor && !m_zoom->selectedGpu().isValid()) {
            scheduleRebuild();
        }
    });
    // A time picked on a time view is what the panel shows from then on.
    connect(m_zoom, &ZoomState::selectedGpuChanged, this, [this](analysis::GpuKey gpu, int64_t) {
        if (!gpu.isValid() || !m_job) {
            return;
        }
        if (gpu != m_gpu && m_job->memoryOf(gpu)) {
            m_gpu = gpu;
            fillGpus();
        }
        m_moment = Moment::Cursor;
        m_momentBox->setCurrentIndex(m_momentBox->findData(int(m_moment)));
        scheduleRebuild();
    });
}

void SegmentPanel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    m_gpu = {};
    m_moment = Moment::Cursor;
    if (m_job && !m_job->memory.empty()) {
        m_gpu = m_job->memory.front().key;
        // Open at the first OOM of the job when there is one: that is what a snapshot taken
        // after an OOM is opened for.
        int64_t best = 0;
        for (const analysis::GpuMemoryAnalysis& g : m_job->memory) {
            for (const trace::OomEvent& o :
                 m_job->job.ranks[size_t(g.key.rankIndex)].trace.data.ooms) {
                const int64_t t = m_job->toJob(g.key.rankIndex, o.timestampNs);
                if (o.device == g.key.device && (m_moment != Moment::Oom || t < best)) {
                    m_moment = Moment::Oom;
                    m_gpu = g.key;
                    best = t;
                }
            }
        }
    }
    m_momentBox->setCurrentIndex(m_momentBox->findData(int(m_moment)));
    fillGpus();
    rebuildNow();
}

void SegmentPanel::fillGpus() {
    m_gpuBox->clear();
    m_gpuBox->setEnabled(true);
    if (!m_job) {
        return;
    }
    if (m_job->memory.empty()) {
        m_gpuBox->addItem(tr("no GPU with memory data"));
        m_gpuBox->setEnabled(false);
        return;
    }
    for (const analysis::GpuMemoryAnalysis& g : m_job->memory) {
        m_gpuBox->addItem(gpuLabel(*m_job, g.key));
        if (g.key == m_gpu) {
            m_gpuBox->setCurrentIndex(m_gpuBox->count() - 1);
        }
    }
}

void SegmentPanel::setGpu(analysis::GpuKey gpu) {
    if (!m_job || !m_job->memoryOf(gpu) || gpu == m_gpu) {
        return;
    }
    m_gpu = gpu;
    fillGpus();
    rebuildNow();
}

void SegmentPanel::setMoment(Moment moment) {
    m_moment = moment;
    m_momentBox->setCurrentIndex(m_momentBox->findData(int(moment)));
    rebuildNow();
}

void SegmentPanel::scheduleRebuild() {
    if (!m_timer->isActive()) {
        m_timer->start();
    }
}

const analysis::GpuMemoryAnalysis* SegmentPanel::current() const {
    return m_job ? m_job->memoryOf(m_gpu) : nullptr;
}

const trace::OomEvent* SegmentPanel::firstOom() const {
    const trace::OomEvent* first = nullptr;
    for (const trace::OomEvent& o : m_job->job.ranks[size_t(m_gpu.rankIndex)].trace.data.ooms) {
        if (o.device == m_gpu.device && (!first || o.timestampNs < first->timestampNs)) {
            first = &o;
        }
    }
    return first;
}

void SegmentPanel::rebuildNow() {
    m_timer->stop();
    const analysis::GpuMemoryAnalysis* g = current();
    if (!g) {
        m_view->setPicture({});
        m_header.clear();
        m_view->setPlaceholder(!m_job             ? tr("No job loaded.")
                               : hasNoGpu(*m_job) ? noGpuSentence()
                                                  : tr("No GPU of this job has allocation "
                                                       "events: no segments to show."));
        m_caption->setText(caption());
        return;
    }
    const trace::TraceData& data = m_job->job.ranks[size_t(m_gpu.rankIndex)].trace.data;
    int64_t t = m_job->toJob(m_gpu.rankIndex, g->peakTimeNs);
    QString moment = tr("the allocated peak");
    uint64_t request = 0;
    if (m_moment == Moment::Cursor) {
        if (m_zoom->selectedGpu().isValid()) {
            t = m_zoom->selectedTimeNs();
            moment = tr("the picked time");
        } else if (m_zoom->hasCursor()) {
            t = m_zoom->cursorNs();
            moment = tr("the cursor");
        } else {
            moment = tr("no time picked yet: the allocated peak");
        }
    } else if (m_moment == Moment::Oom) {
        if (const trace::OomEvent* o = firstOom()) {
            t = m_job->toJob(m_gpu.rankIndex, o->timestampNs);
            request = o->requestedBytes;
            moment = tr("the first OOM");
        } else {
            moment = tr("no OOM on this GPU: the allocated peak");
        }
    }
    m_shownNs = t;
    auto picture = std::make_shared<SegmentPicture>();
    picture->layout =
        analysis::segmentLayoutAt(data, *g->device, m_job->toRank(m_gpu.rankIndex, t));
    picture->requestBytes = request;
    const QString who = gpuLabel(*m_job, m_gpu);
    m_header = tr("Segments of %1 at %2 (%3)").arg(who, formatDuration(double(t)), moment);
    if (!picture->layout.known) {
        m_view->setPicture({});
        m_view->setPlaceholder(
            tr("No segments for %1: %2.").arg(who, QString::fromStdString(picture->layout.reason)));
        m_caption->setText(caption());
        return;
    }
    picture->groups = analysis::groupBlocksByStack(data, picture->layout);
    m_view->setPlaceholder({});
    m_view->setPicture(std::move(picture));
    m_caption->setText(caption());
}

QString SegmentPanel::caption() const {
    const auto& p = m_view->picture();
    if (m_header.isEmpty() || !p) {
        return m_header;
    }
    const analysis::SegmentTotals& t = p->layout.totals;
    // First the totals, then on a line of its own the free space against the request.
    QString free = QString::fromStdString(analysis::segmentFreeText(t, p->requestBytes));
    free[0] = free[0].toUpper();
    QString text = m_header + QStringLiteral(": ") +
                   QString::fromStdString(analysis::segmentTotalsText(t)) + QStringLiteral(".\n") +
                   free + QStringLiteral(".");
    if (t.blocksOutsideSegments > 0) {
        text += tr(" %1 live blocks (%2) lie outside every segment: the trace misses segments.")
                    .arg(t.blocksOutsideSegments)
                    .arg(formatBytes(double(t.bytesOutsideSegments)));
    }
    return text;
}

}  // namespace vramscope::widgets
