#include "vramscope/widgets/flame_panel.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScrollArea>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "vramscope/analysis/memory/flame_service.h"
#include "vramscope/analysis/memory/leak.h"
#include "vramscope/widgets/flame_view.h"
#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

QString jobTime(const analysis::JobModel& job, int64_t ns) {
    const TimeUnit unit = timeUnitFor(double(std::max<int64_t>(job.durationNs, 1)));
    return formatTime(double(ns), unit, unit.ns / 100.0);
}

/// Gives a word-wrapped label the height its text needs at its current width.
void fitCaption(QLabel* label) {
    // NOTE(qt): QLabel::heightForWidth is never below the label's minimum height, so the minimum
    // is dropped before measuring; otherwise a caption once fitted to a narrow width stays as
    // tall when the panel widens (a tall empty band above the flame graph).
    const int old = label->minimumHeight();
    label->setMinimumHeight(0);
    const int h = label->heightForWidth(std::max(1, label->width()));
    label->setMinimumHeight(h > 0 ? h : old);
}

/// How the caption names a grouping.
QString groupingText(analysis::FlameGrouping grouping) {
    switch (grouping) {
        case analysis::FlameGrouping::Stack:
            return FlamePanel::tr("by stack (root frame at the top)");
        case analysis::FlameGrouping::Nvtx:
            return FlamePanel::tr("by NVTX range");
        case analysis::FlameGrouping::Category:
            return FlamePanel::tr("by memory kind and size class");
        case analysis::FlameGrouping::Role:
            return FlamePanel::tr("by role of memory, then stack");
    }
    return {};
}

}  // namespace

FlamePanel::FlamePanel(ZoomState* zoom, QWidget* parent)
    : QWidget(parent),
      m_zoom(zoom),
      m_gpuBox(new QComboBox(this)),
      m_momentBox(new QComboBox(this)),
      m_groupBox(new QComboBox(this)),
      m_searchEdit(new QLineEdit(this)),
      m_caption(new QLabel(this)),
      m_view(new FlameView),
      m_timer(new QTimer(this)) {
    m_momentBox->addItem(tr("At the cursor"), int(Moment::Cursor));
    m_momentBox->addItem(tr("At the peak"), int(Moment::Peak));
    m_momentBox->addItem(tr("At the OOM"), int(Moment::Oom));
    m_momentBox->addItem(tr("What grew over the selection"), int(Moment::WhatGrew));
    m_groupBox->addItem(tr("By stack"), int(analysis::FlameGrouping::Stack));
    m_groupBox->addItem(tr("By NVTX range"), int(analysis::FlameGrouping::Nvtx));
    m_groupBox->addItem(tr("By category"), int(analysis::FlameGrouping::Category));
    m_groupBox->addItem(tr("By role"), int(analysis::FlameGrouping::Role));
    m_searchEdit->setPlaceholderText(tr("Search frames"));
    m_searchEdit->setClearButtonEnabled(true);
    m_caption->setWordWrap(true);
    m_caption->setTextFormat(Qt::PlainText);
    m_gpuBox->setToolTip(tr("GPU whose live set is shown"));
    m_gpuBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    // A wrapped label gets its height for another width from the layout; set it here instead.
    m_caption->installEventFilter(this);
    m_momentBox->setToolTip(tr("Which moment's live set to show"));
    m_groupBox->setToolTip(tr("How allocations are grouped into the tree"));

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_gpuBox);
    bar->addWidget(m_momentBox);
    bar->addWidget(m_groupBox);
    bar->addWidget(m_searchEdit, 1);
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
    connect(m_timer, &QTimer::timeout, this, &FlamePanel::rebuildNow);
    connect(m_gpuBox, &QComboBox::activated, this, [this](int i) {
        if (m_job && i >= 0 && size_t(i) < m_job->memory.size()) {
            setGpu(m_job->memory[size_t(i)].key);
        }
    });
    connect(m_momentBox, &QComboBox::activated, this,
            [this](int i) { setMoment(Moment(m_momentBox->itemData(i).toInt())); });
    connect(m_groupBox, &QComboBox::activated, this, [this](int i) {
        setGrouping(analysis::FlameGrouping(m_groupBox->itemData(i).toInt()));
    });
    connect(m_searchEdit, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_view->setSearch(text);
        m_caption->setText(caption());
        fitCaption(m_caption);
    });
    connect(m_view, &FlameView::zoomNodeChanged, this, [this] {
        m_caption->setText(caption());
        fitCaption(m_caption);
    });
    connect(m_view, &FlameView::frameNoteRequested, this, [this](uint32_t node) {
        const analysis::FlameTree& tree = m_view->tree();
        if (!m_job || node == 0 || node >= tree.nodes.size()) {
            return;
        }
        QStringList names;
        for (const std::string& name : tree.path(node)) {
            names.append(QString::fromStdString(name));
        }
        trace::Note note;
        note.flameFrame = names.join(QLatin1Char(';')).toStdString();
        note.title = shortFrameLabel(tree.nodes[node].name).toStdString();
        note.text =
            tr("%1 held at %2")
                .arg(formatBytes(double(tree.nodes[node].bytes)), jobTime(*m_job, m_shownNs))
                .toStdString();
        note.startNs = note.endNs = m_shownNs;
        if (tree.isDiff) {
            note.startNs = m_beforeNs;
        }
        note.rankIndex = m_gpu.rankIndex;
        note.device = toInt(m_gpu.device);
        emit noteRequested(note);
    });
    connect(m_zoom, &ZoomState::cursorChanged, this, [this] {
        if (m_moment == Moment::Cursor) {
            scheduleRebuild();
        }
    });
    connect(m_zoom, &ZoomState::selectedGpuChanged, this, [this] {
        if (m_moment == Moment::Cursor) {
            scheduleRebuild();
        }
    });
    connect(m_zoom, &ZoomState::selectionChanged, this, [this] {
        if (m_moment == Moment::WhatGrew) {
            scheduleRebuild();
        }
    });
    connect(m_zoom, &ZoomState::visibleRangeChanged, this, [this] {
        if (m_moment == Moment::WhatGrew && !m_zoom->hasSelection()) {
            scheduleRebuild();
        }
    });
}

void FlamePanel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    m_gpu = {};
    if (m_job && !m_job->memory.empty()) {
        m_gpu = m_job->memory.front().key;
    }
    fillGpus();
    rebuildNow();
}

bool FlamePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_caption &&
        (event->type() == QEvent::Resize || event->type() == QEvent::FontChange)) {
        fitCaption(m_caption);
    }
    return QWidget::eventFilter(watched, event);
}

void FlamePanel::fillGpus() {
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

const analysis::GpuMemoryAnalysis* FlamePanel::current() const {
    return m_job ? m_job->memoryOf(m_gpu) : nullptr;
}

void FlamePanel::setGpu(analysis::GpuKey gpu) {
    if (!m_job || !m_job->memoryOf(gpu) || gpu == m_gpu) {
        return;
    }
    m_gpu = gpu;
    for (size_t i = 0; i < m_job->memory.size(); ++i) {
        if (m_job->memory[i].key == gpu) {
            m_gpuBox->setCurrentIndex(int(i));
        }
    }
    rebuildNow();
}

void FlamePanel::setMoment(Moment moment) {
    m_moment = moment;
    m_momentBox->setCurrentIndex(m_momentBox->findData(int(moment)));
    rebuildNow();
}

void FlamePanel::setGrouping(analysis::FlameGrouping grouping) {
    m_grouping = grouping;
    m_groupBox->setCurrentIndex(m_groupBox->findData(int(grouping)));
    rebuildNow();
}

void FlamePanel::setSearch(const QString& text) {
    m_searchEdit->setText(text);
}

void FlamePanel::scheduleRebuild() {
    if (!m_timer->isActive()) {
        m_timer->start();
    }
}

void FlamePanel::followZoomGpu() {
    if (!m_job) {
        return;
    }
    const analysis::GpuKey hovered = m_zoom->hasCursor() ? m_zoom->cursorGpu() : analysis::GpuKey{};
    const analysis::GpuKey wanted = hovered.isValid() ? hovered : m_zoom->selectedGpu();
    // Follow the GPU the user points at when it changes; a GPU picked in the box stays otherwise.
    if (!wanted.isValid() || wanted == m_lastFollowed) {
        return;
    }
    m_lastFollowed = wanted;
    if (wanted != m_gpu && m_job->memoryOf(wanted)) {
        m_gpu = wanted;
        fillGpus();
    }
}

void FlamePanel::rebuildNow() {
    m_timer->stop();
    m_note.clear();
    if (m_moment == Moment::Cursor) {
        followZoomGpu();
    }
    const analysis::GpuMemoryAnalysis* g = current();
    if (!g) {
        m_view->setTree({});
        QString why = tr("No job loaded.");
        if (m_job) {
            bool kernels = false;
            for (const trace::RankTrace& r : m_job->job.ranks) {
                kernels = kernels || r.trace.data.kernels.size() > 0;
            }
            why = kernels ? tr("No GPU of this job has allocation events (a trace of kernels "
                               "only): no live set to show.")
                          : tr("This job has no allocation events: no live set to show.");
            // Where they would come from, for the next capture.
            why += QLatin1Char(' ') + allocationEventsSources();
            if (hasNoGpu(*m_job)) {
                why = noGpuSentence();
            }
        }
        m_view->setPlaceholder(why);
        m_caption->clear();
        return;
    }
    if (!g->liveSet.known) {
        // The totals may be right while the live set is not: say why the tree stays empty.
        m_view->setTree({});
        m_view->setPlaceholder(
            tr("No live set for %1: %2.")
                .arg(gpuLabel(*m_job, g->key), QString::fromStdString(g->liveSet.reason)));
        m_caption->clear();
        return;
    }
    m_view->setPlaceholder({});
    const trace::TraceData& data = m_job->job.ranks[size_t(m_gpu.rankIndex)].trace.data;
    const int rank = m_gpu.rankIndex;
    int64_t t = m_job->toJob(rank, g->peakTimeNs);
    switch (m_moment) {
        case Moment::Cursor:
            if (m_zoom->hasCursor()) {
                t = m_zoom->cursorNs();
            } else if (m_zoom->selectedGpu().isValid()) {
                t = m_zoom->selectedTimeNs();
            } else {
                m_note = tr("(no cursor yet: showing the peak)");
            }
            break;
        case Moment::Peak:
            break;
        case Moment::Oom: {
            bool found = false;
            for (const trace::OomEvent& o : data.ooms) {
                if (o.device == m_gpu.device) {
                    t = m_job->toJob(rank, o.timestampNs);
                    found = true;
                    break;
                }
            }
            if (!found) {
                m_note = tr("(no OOM on this GPU: showing the peak)");
            }
            break;
        }
        case Moment::WhatGrew: {
            const TimeRange r =
                m_zoom->hasSelection() ? m_zoom->selection() : m_zoom->visibleRange();
            m_beforeNs = r.startNs;
            m_shownNs = r.endNs;
            m_view->setTree(*m_job->flames->diff(m_gpu.rankIndex, m_gpu.device,
                                                 m_job->toRank(rank, r.startNs),
                                                 m_job->toRank(rank, r.endNs), m_grouping));
            updateFrameMarks();
            m_caption->setText(caption());
            fitCaption(m_caption);
            emit treeShown(m_shownNs);
            return;
        }
    }
    m_shownNs = t;
    m_view->setTree(
        *m_job->flames->at(m_gpu.rankIndex, m_gpu.device, m_job->toRank(rank, t), m_grouping));
    updateFrameMarks();
    m_caption->setText(caption());
    fitCaption(m_caption);
    emit treeShown(m_shownNs);
}

QString FlamePanel::caption() const {
    const analysis::GpuMemoryAnalysis* g = current();
    if (!g) {
        return {};
    }
    const analysis::JobModel& job = *m_job;
    const analysis::FlameTree& tree = m_view->tree();
    const analysis::FlameNode& root = tree.root();
    const QString who = gpuLabel(job, m_gpu);
    const QString level = QString::fromUtf8(trace::toString(g->level));
    QString text;
    if (tree.isDiff) {
        text = tr("What grew on %1 (%2) from %3 to %4: %5%6 (%7 \u2192 %8). Red grew, blue shrank; "
                  "widths are the bytes at %4.")
                   .arg(who, level, jobTime(job, m_beforeNs), jobTime(job, m_shownNs),
                        root.bytes > 0 ? QStringLiteral("+") : QString(),
                        formatBytes(double(root.bytes)), formatBytes(double(root.beforeBytes)),
                        formatBytes(double(root.afterBytes)));
    } else {
        const char* moment = m_moment == Moment::Peak  ? "peak"
                             : m_moment == Moment::Oom ? "OOM"
                                                       : "cursor";
        text = tr("Live set of %1 (%2) at %3 (%4): %5 in %6 allocations, grouped %7.")
                   .arg(who, level, jobTime(job, m_shownNs), QString::fromUtf8(moment),
                        formatBytes(double(root.bytes)), QLocale().toString(qlonglong(root.count)),
                        groupingText(m_grouping));
    }
    if (!m_note.isEmpty()) {
        text += QLatin1Char(' ') + m_note;
    }
    if (!m_searchEdit->text().trimmed().isEmpty()) {
        const int64_t all = tree.isDiff ? root.afterBytes : root.bytes;
        text += tr(" Search matches %1 (%2 %).")
                    .arg(formatBytes(double(m_view->searchMatchBytes())))
                    .arg(all > 0 ? 100.0 * double(m_view->searchMatchBytes()) / double(all) : 0.0,
                         0, 'f', 1);
    }
    text += notesCaption();
    text += tr(" Click a frame to zoom in, double-click to zoom out.");
    return text;
}

QString FlamePanel::notesCaption() const {
    if (!m_job || m_notes.empty()) {
        return {};
    }
    // "At this time" as precisely as the caption prints the time (jobTime: 1/100 of its unit).
    const TimeUnit unit = timeUnitFor(double(std::max<int64_t>(m_job->durationNs, 1)));
    const int64_t slack = std::max<int64_t>(1, int64_t(unit.ns / 200.0));
    const bool diff = m_view->tree().isDiff;
    const int64_t from = (diff ? m_beforeNs : m_shownNs) - slack;
    const int64_t to = m_shownNs + slack;
    const std::vector<std::pair<uint32_t, int>> marked = m_view->markedNodes();
    QStringList parts;
    for (const NumberedNote& n : numberNotes(m_notes)) {
        if (!noteShownOn(n.note, m_gpu)) {
            continue;
        }
        const bool onFrame = std::any_of(marked.begin(), marked.end(),
                                         [&n](const auto& m) { return m.second == n.number; });
        const bool atTime = noteMeets(n.note, from, to);
        if (!onFrame && !atTime) {
            continue;
        }
        parts.append(tr("%1 “%2” (%3)")
                         .arg(n.number)
                         .arg(noteHeadline(n.note),
                              onFrame ? (atTime ? tr("on a frame, at this time") : tr("on a frame"))
                                      : tr("at this time")));
    }
    if (parts.isEmpty()) {
        return {};
    }
    return tr(" %n note(s): %1.", nullptr, int(parts.size())).arg(parts.join(QStringLiteral("; ")));
}

void FlamePanel::updateFrameMarks() {
    std::vector<FlameView::FrameMark> marks;
    for (const NumberedNote& n : numberNotes(m_notes)) {
        if (n.note.flameFrame.empty() || !noteShownOn(n.note, m_gpu)) {
            continue;
        }
        FlameView::FrameMark mark;
        QStringList names = QString::fromStdString(n.note.flameFrame).split(QLatin1Char(';'));
        // A path written with the root's name ("all;main ...") names the same frame.
        if (names.size() > 1 && names.front().toStdString() == m_view->tree().root().name) {
            names.removeFirst();
        }
        for (const QString& name : names) {
            mark.path.push_back(name.toStdString());
        }
        mark.number = n.number;
        mark.color = noteColor(n.note);
        marks.push_back(std::move(mark));
    }
    m_view->setFrameMarks(std::move(marks));
}

bool FlamePanel::showOom() {
    if (!m_job) {
        return false;
    }
    const analysis::JobModel& job = *m_job;
    bool found = false;
    analysis::GpuKey best;
    int64_t bestNs = 0;
    for (const analysis::GpuMemoryAnalysis& g : m_job->memory) {
        const trace::TraceData& data = job.job.ranks[size_t(g.key.rankIndex)].trace.data;
        for (const trace::OomEvent& o : data.ooms) {
            const int64_t t = job.toJob(g.key.rankIndex, o.timestampNs);
            if (o.device == g.key.device && (!found || t < bestNs)) {
                found = true;
                best = g.key;
                bestNs = t;
            }
        }
    }
    if (!found) {
        return false;
    }
    const int64_t half = std::max<int64_t>(job.durationNs / 20, ZoomState::kMinimumSpanNs);
    m_zoom->setVisibleRange({bestNs - half, bestNs + half});
    m_zoom->setSelectedGpu(best, bestNs);
    m_gpu = best;
    fillGpus();
    setMoment(Moment::Oom);
    return true;
}

void FlamePanel::highlightStack(analysis::GpuKey gpu, trace::StackId stack) {
    if (!m_job || !m_job->memoryOf(gpu)) {
        return;
    }
    m_gpu = gpu;
    fillGpus();
    if (m_grouping != analysis::FlameGrouping::Stack) {
        m_grouping = analysis::FlameGrouping::Stack;
        m_groupBox->setCurrentIndex(m_groupBox->findData(int(m_grouping)));
    }
    rebuildNow();
    const trace::TraceData& data = m_job->job.ranks[size_t(gpu.rankIndex)].trace.data;
    std::vector<std::string> path;
    if (toInt(stack) < data.stacks.size()) {
        const std::vector<trace::FrameId>& frames = data.stacks[toInt(stack)];
        for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
            path.push_back(analysis::frameLabel(data, *it));
        }
    }
    if (path.empty()) {
        path.push_back("(no stack)");
    }
    m_view->setHighlightPath(path);
}

void FlamePanel::setNotes(std::vector<trace::Note> notes) {
    m_notes = std::move(notes);
    updateFrameMarks();
    if (current()) {
        m_caption->setText(caption());
        fitCaption(m_caption);
    }
}

}  // namespace vramscope::widgets
