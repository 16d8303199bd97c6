#include "vramscope/widgets/view_renderer.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QFontMetrics>
#include <QLineEdit>
#include <QWidget>

#include <algorithm>

#include "vramscope/analysis/model/view_formulas.h"
#include "vramscope/widgets/advice_panel.h"
#include "vramscope/widgets/comm_lanes_view.h"
#include "vramscope/widgets/flame_panel.h"
#include "vramscope/widgets/gap_table_model.h"
#include "vramscope/widgets/leak_panel.h"
#include "vramscope/widgets/memory_plot.h"
#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/segment_panel.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

QString gpuText(analysis::GpuKey key) {
    return QStringLiteral("%1:%2").arg(key.rankIndex).arg(trace::toInt(key.device));
}

/// Every GPU the job knows (memory timelines, allocation analyses, kernel lanes), in job order.
std::vector<analysis::GpuKey> jobGpus(const analysis::JobModel& job) {
    std::vector<analysis::GpuKey> keys;
    const auto add = [&keys](analysis::GpuKey key) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            keys.push_back(key);
    };
    for (const analysis::GpuSeries& g : job.gpus)
        add(g.key);
    for (const analysis::GpuMemoryAnalysis& g : job.memory)
        add(g.key);
    for (const analysis::GpuKernelAnalysis& g : job.kernels)
        add(g.key);
    return keys;
}

/// What a view shows that its own drawing does not explain.
QStringList legendFor(const QString& view, const analysis::JobModel& job) {
    if (view == QLatin1String("timeline") || view == QLatin1String("roles")) {
        const bool capacityKnown =
            std::any_of(job.gpus.begin(), job.gpus.end(),
                        [](const analysis::GpuSeries& g) { return g.memory.capacityBytes > 0; });
        // Only lines that are drawn are explained: a PyTorch snapshot names no capacity.
        const QString capacity =
            capacityKnown ? QObject::tr(
                                "Top line: device capacity; dashed line: %1 % of "
                                "capacity; ")
                                .arg(100.0 * analysis::kCapacityWarningShare, 0, 'f', 0)
                          : QObject::tr("No capacity line: the trace names no device capacity; ");
        return {capacity + QObject::tr("red marks: out-of-memory events; bars above the plots: "
                                       "NVTX ranges and iterations.")};
    }
    if (view == QLatin1String("lanes"))
        return {
            QObject::tr("Per GPU: a compute row, a communication row and a memory-copy row; "
                        "lines join the arrivals of one collective on every rank; the red dot "
                        "is the last rank to arrive; hatching is the time the others waited.")};
    if (view.startsWith(QLatin1String("flame")) || view == QLatin1String("oom"))
        return {QObject::tr("Width: bytes alive; a frame's children are the calls it made.")};
    return {};
}

/// Notes that the view shows: overlapping `range` (when given) and on `gpu` or every GPU.
std::vector<trace::Note> notesFor(const ViewRequest& request) {
    std::vector<trace::Note> kept;
    for (const trace::Note& note : request.notes) {
        if (request.range &&
            (note.endNs < request.range->startNs || note.startNs > request.range->endNs))
            continue;
        if (request.gpu.isValid() && note.pinnedToGpu() &&
            (note.rankIndex != request.gpu.rankIndex ||
             note.device != trace::toInt(request.gpu.device)))
            continue;
        kept.push_back(note);
    }
    // The markers and the list below the view number the notes in one order (by time).
    return notesInDisplayOrder(std::move(kept));
}

QString rangeText(const analysis::JobModel& job, const std::optional<TimeRange>& range) {
    const double whole = double(job.durationNs);
    if (!range)
        return QObject::tr("whole job: 0 \u2013 %1").arg(formatDuration(whole));
    return QObject::tr("%1 \u2013 %2 (%3 shown of %4)")
        .arg(formatDuration(double(range->startNs)), formatDuration(double(range->endNs)),
             formatDuration(double(range->durationNs())), formatDuration(whole));
}

/// The widget of `view` following `zoom`; null for an unknown name.
std::unique_ptr<QWidget> makeWidget(const std::shared_ptr<const analysis::JobModel>& job,
                                    const ViewRequest& request,
                                    const std::vector<trace::Note>& notes, ZoomState& zoom) {
    const QString& view = request.view;
    const analysis::GpuKey gpu = request.gpu;
    if (view == QLatin1String("timeline") || view == QLatin1String("roles")) {
        auto w = std::make_unique<TimelineView>(&zoom);
        w->setJob(job);
        if (gpu.isValid())
            w->setShownGpus({gpu});
        w->setStackByRole(view == QLatin1String("roles"));
        w->setNotes(notes);
        return w;
    }
    if (view == QLatin1String("lanes")) {
        auto w = std::make_unique<CommLanesView>(&zoom);
        w->setMargins(MemoryPlot::defaultLeftMargin(QFontMetrics(w->font())), 16);
        w->setJob(job);
        w->setNotes(notes);
        return w;
    }
    if (view == QLatin1String("flame") || view == QLatin1String("flame-role") ||
        view == QLatin1String("oom")) {
        auto w = std::make_unique<FlamePanel>(&zoom);
        w->setJob(job);
        if (gpu.isValid())
            w->setGpu(gpu);
        if (view == QLatin1String("flame-role"))
            w->setGrouping(analysis::FlameGrouping::Role);
        if (view == QLatin1String("oom")) {
            w->setMoment(FlamePanel::Moment::Oom);
        } else if (request.range) {
            zoom.setSelection(*request.range);
            w->setMoment(FlamePanel::Moment::WhatGrew);
        } else {
            w->setMoment(FlamePanel::Moment::Peak);
        }
        w->setNotes(notes);
        w->rebuildNow();
        return w;
    }
    if (view == QLatin1String("gaps")) {
        auto w = std::make_unique<GapsPanel>(&zoom);
        w->setJob(job);
        return w;
    }
    if (view == QLatin1String("leak")) {
        auto w = std::make_unique<LeakPanel>(&zoom);
        w->setJob(job);
        if (gpu.isValid())
            w->setGpu(gpu);
        return w;
    }
    if (view == QLatin1String("advice")) {
        auto w = std::make_unique<AdvicePanel>();
        w->setJob(job);
        return w;
    }
    if (view == QLatin1String("segments")) {
        auto w = std::make_unique<SegmentPanel>(&zoom);
        w->setJob(job);
        if (gpu.isValid())
            w->setGpu(gpu);
        w->rebuildNow();
        return w;
    }
    return nullptr;
}

/// Empty when `request` fits `job`, else the sentence naming what does not.
QString checkRequest(const analysis::JobModel& job, const ViewRequest& request) {
    if (!renderableViews().contains(request.view))
        return QObject::tr("unknown view \"%1\"; known views: %2")
            .arg(request.view, renderableViews().join(QStringLiteral(", ")));
    if (request.view == QLatin1String("oom") &&
        std::none_of(job.gpus.begin(), job.gpus.end(),
                     [](const analysis::GpuSeries& g) { return !g.ooms.empty(); }))
        return QObject::tr(
            "this job has no out-of-memory event; --view flame shows the live set "
            "at the peak");
    if (request.gpu.isValid() &&
        (request.view == QLatin1String("lanes") || request.view == QLatin1String("gaps") ||
         request.view == QLatin1String("advice")))
        // These views show every GPU of the job (the lanes join the ranks of each collective):
        // a picture titled with one GPU would say what it does not show.
        return QObject::tr(
                   "the %1 view shows every GPU of the job; --gpu applies to timeline, "
                   "roles, flame, leak and segments")
            .arg(request.view);
    if (request.gpu.isValid()) {
        const std::vector<analysis::GpuKey> gpus = jobGpus(job);
        if (std::find(gpus.begin(), gpus.end(), request.gpu) == gpus.end()) {
            QStringList known;
            for (const analysis::GpuKey& k : gpus)
                known << gpuText(k);
            return QObject::tr("no GPU %1 in this job (GPUs, rank index:device: %2)")
                .arg(gpuText(request.gpu),
                     known.isEmpty() ? QObject::tr("none") : known.join(QStringLiteral(", ")));
        }
    }
    if (request.range) {
        const TimeRange r = *request.range;
        if (r.endNs <= r.startNs || r.startNs < 0 ||
            r.startNs >= std::max<int64_t>(job.durationNs, 1))
            return QObject::tr("the range %1 \u2013 %2 lies outside the job (0 \u2013 %3)")
                .arg(formatDuration(double(r.startNs)), formatDuration(double(r.endNs)),
                     formatDuration(double(job.durationNs)));
    }
    return {};
}

}  // namespace

RenderedView::RenderedView(std::unique_ptr<ZoomState> zoom, std::unique_ptr<QWidget> widget,
                           ExportFrame frame)
    : m_zoom(std::move(zoom)), m_widget(std::move(widget)), m_frame(std::move(frame)) {}

// The widget goes first: it disconnects from the zoom state it follows.
RenderedView::~RenderedView() {
    m_widget.reset();
}

QStringList renderableViews() {
    QStringList names;
    for (std::string_view v : analysis::exportableViews())
        names << QString::fromUtf8(v.data(), qsizetype(v.size()));
    names << QStringLiteral("flame-role") << QStringLiteral("oom");
    return names;
}

QString exportVersionLine() {
    return QStringLiteral("vramscope " VRAMSCOPE_VERSION);
}

BuiltView buildView(std::shared_ptr<const analysis::JobModel> job, const ViewRequest& request,
                    QSize pageSize) {
    BuiltView out;
    if (!job) {
        out.error = QObject::tr("no job to show");
        return out;
    }
    if (QString bad = checkRequest(*job, request); !bad.isEmpty()) {
        out.error = bad;
        return out;
    }
    auto zoom = std::make_unique<ZoomState>();
    zoom->setFullRange({0, std::max<int64_t>(job->durationNs, 1)});
    std::optional<TimeRange> range = request.range;
    if (range) {
        range->endNs = std::min(range->endNs, std::max<int64_t>(job->durationNs, 1));
        zoom->setVisibleRange(*range);
    }
    ViewRequest clamped = request;
    clamped.range = range;
    const std::vector<trace::Note> notes = notesFor(clamped);

    const std::string name = request.view.toStdString();
    const std::string base =
        request.view == QLatin1String("flame-role") || request.view == QLatin1String("oom")
            ? std::string("flame")
            : name;
    ExportFrame frame;
    frame.title = QString::fromStdString(analysis::viewTitle(base));
    if (request.view == QLatin1String("flame-role"))
        frame.title += QObject::tr(", by role");
    if (request.view == QLatin1String("oom"))
        frame.title += QObject::tr(" at the OOM");
    if (request.gpu.isValid())
        frame.title += QStringLiteral(" \u00b7 ") + gpuLabel(*job, request.gpu);
    frame.traceName =
        request.traceName.isEmpty() ? QString::fromStdString(job->title) : request.traceName;
    frame.legend = legendFor(request.view, *job);
    frame.notes = notes;
    for (const std::string& f : analysis::viewFormulas(base))
        frame.formulas << QString::fromStdString(f);
    frame.version = exportVersionLine();

    std::unique_ptr<QWidget> widget = makeWidget(job, clamped, notes, *zoom);
    // The flame and segment panels say their moment in their own caption, inside the view.
    frame.timeRange = rangeText(*job, range);
    widget->setAttribute(Qt::WA_DontShowOnScreen, true);
    // A picture has nothing to click: the panels' choosers and search fields go (what they
    // chose is in the frame's title and the captions). Styles draw them from cached pixmaps,
    // which would also put bitmaps into an SVG or PDF.
    for (QWidget* control : widget->findChildren<QWidget*>()) {
        if (qobject_cast<QComboBox*>(control) || qobject_cast<QLineEdit*>(control) ||
            qobject_cast<QAbstractButton*>(control))
            control->hide();
    }
    // Table headers drawn by the style are cached pixmaps too; drawn from a style sheet they are
    // rectangles and text.
    widget->setStyleSheet(QStringLiteral(
        "QHeaderView::section { background-color: palette(button); border: none; "
        "border-right: 1px solid palette(mid); border-bottom: 1px solid palette(mid); "
        "padding: 0px 2px; }"));
    widget->resize(exportViewSize(frame, pageSize));
    out.view = std::make_unique<RenderedView>(std::move(zoom), std::move(widget), std::move(frame));
    return out;
}

}  // namespace vramscope::widgets
