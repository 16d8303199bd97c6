#include "vramscope/widgets/memory_plot.h"

#include <algorithm>
#include <cmath>

#include "vramscope/widgets/time_interaction.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {
constexpr int kBottomMarginWithLabels = 26;
constexpr int kBottomMarginWithoutLabels = 8;  // room for half of the "0 GiB" label
constexpr double kHeadroom = 1.22;  // y range above the highest value, room for the labels

/// Room above the axis rectangle for the title line.
int topMarginFor(const QFontMetrics& fm) {
    return fm.height() + 6;
}

QString gpuTitle(const analysis::GpuSeries& g) {
    QString title =
        toInt(g.rank) >= 0
            ? QStringLiteral("rank %1 · GPU %2").arg(toInt(g.rank)).arg(toInt(g.key.device))
            : QStringLiteral("rank ? · GPU %1").arg(toInt(g.key.device));
    if (!g.deviceName.empty()) {
        title += QStringLiteral(" · ") + QString::fromStdString(g.deviceName);
    }
    if (g.allocated.series().empty() && g.reserved.series().empty()) {
        return title + QStringLiteral(" · no memory data");
    }
    const analysis::MemorySummary& m = g.memory;
    const char* level = m.peakReservedBytes >= m.peakAllocatedBytes ? "reserved" : "allocated";
    title +=
        QStringLiteral(" · peak %1 %2").arg(level, formatBytes(static_cast<double>(m.peakBytes())));
    if (const std::optional<double> share = m.peakShare()) {
        title += QStringLiteral(" = %1 % of %2")
                     .arg(100.0 * *share, 0, 'f', 1)
                     .arg(formatBytes(static_cast<double>(m.capacityBytes)));
    }
    return title;
}
}  // namespace

MemoryPlot::MemoryPlot(std::shared_ptr<const analysis::JobModel> job, analysis::GpuKey gpu,
                       ZoomState* zoom, QWidget* parent)
    : QCustomPlot(parent), m_job(std::move(job)), m_gpu(gpu), m_zoom(zoom) {
    m_series = m_job->gpu(gpu);
    Q_ASSERT(m_series);
    new TimeInteraction(m_zoom, this,
                        {[this] { return mapper(); }, [this](QPointF) { return m_gpu; },
                         [this](QPointF, int64_t t) { m_zoom->setSelectedGpu(m_gpu, t); },
                         [this](QPointF pos, int64_t t) {
                             return m_contextMenu && m_contextMenu(mapToGlobal(pos.toPoint()), t);
                         }});
    setMinimumHeight(minimumReadableHeight(fontMetrics()));
    setPlottingHints(QCP::phFastPolylines | QCP::phCacheLabels);
    setAttribute(Qt::WA_OpaquePaintEvent);
    axisRect()->setAutoMargins(QCP::msNone);
    setLeftMargin(defaultLeftMargin(fontMetrics()));
    xAxis->setTicker(QSharedPointer<TimeTicker>::create());
    yAxis->setTicker(QSharedPointer<BytesTicker>::create());
    yAxis->ticker()->setTickCount(3);
    xAxis->ticker()->setTickCount(8);
    yAxis->setPadding(4);
    m_overlay = layer(QStringLiteral("overlay"));
    m_overlay->setMode(QCPLayer::lmBuffered);
    addLayer(QStringLiteral("roles"), layer(QStringLiteral("main")), QCustomPlot::limBelow);
    m_rolesLayer = layer(QStringLiteral("roles"));
    connect(this, &QCustomPlot::afterReplot, this, [this] { m_painted = true; });
    // Before each replot, fit the labels to the width the axis rectangle will get (the layout is
    // updated later in the replot): about one time label per 110 px, so that labels never run
    // together, and the title elided to the plot's width rather than cut.
    connect(this, &QCustomPlot::beforeReplot, this, [this] {
        const QMargins m = axisRect()->margins();
        const int axisWidth = std::max(40, width() - m.left() - m.right());
        xAxis->ticker()->setTickCount(std::clamp(axisWidth / 110, 2, 8));
        if (m_title) {
            // The off-scale marker shares the title's row, at its right end.
            const int marker =
                m_offScale && m_offScale->visible()
                    ? QFontMetrics(m_offScale->font()).horizontalAdvance(m_offScale->text()) + 16
                    : 0;
            const QString full = m_title->property("fullText").toString();
            m_title->setText(QFontMetrics(m_title->font())
                                 .elidedText(full, Qt::ElideRight, axisWidth - 8 - marker));
        }
        if (m_noData) {
            const QString full = m_noData->property("fullText").toString();
            m_noData->setText(
                QFontMetrics(m_noData->font()).elidedText(full, Qt::ElideRight, axisWidth - 8));
        }
        fitLegend(axisWidth);
        updateMarkers();  // the peak label's side depends on the legend, which may have changed
    });
    buildItems();
    m_noteItems = std::make_unique<PlotNoteItems>(this);
    // Once the layout is done, axis pixels and the data labels' rectangles are current.
    connect(this, &QCustomPlot::afterLayout, this,
            [this] { m_noteItems->place(dataLabelRects()); });
    if (m_noData && m_job->durationNs <= 1) {
        setTimeLabelsVisible(false);
    }
    applyColors(PlotColors::fromPalette(palette()));
    updateYRange();
    connect(m_zoom, &ZoomState::visibleRangeChanged, this, [this] { refresh(); });
    connect(m_zoom, &ZoomState::cursorChanged, this, [this] { updateOverlay(); });
    connect(m_zoom, &ZoomState::selectionChanged, this, [this] { updateOverlay(); });
    connect(m_zoom, &ZoomState::selectedGpuChanged, this, [this] { updateOverlay(); });
    refresh();
}

int MemoryPlot::minimumReadableHeight(const QFontMetrics& fm) {
    // The title row, then room for two memory labels (one per 40 px, refresh()) and the peak
    // label: below this, GPUs stacked are scrolled rather than squashed.
    return topMarginFor(fm) + std::max(90, 5 * fm.height());
}

int MemoryPlot::defaultLeftMargin(const QFontMetrics& fm) {
    return fm.horizontalAdvance(QStringLiteral("1023.5 MiB")) + 14;
}

void MemoryPlot::setLeftMargin(int px) {
    const bool labels = xAxis->tickLabels();
    axisRect()->setMargins(QMargins(px, topMarginFor(fontMetrics()), kRightMarginPx,
                                    labels ? kBottomMarginWithLabels : kBottomMarginWithoutLabels));
}

void MemoryPlot::setTimeLabelsVisible(bool visible) {
    // A job without a single timed event has no time scale to read (its span is a stand-in).
    if (m_noData && m_job->durationNs <= 1) {
        visible = false;
    }
    xAxis->setTickLabels(visible);
    const QMargins m = axisRect()->margins();
    axisRect()->setMargins(
        QMargins(m.left(), m.top(), m.right(),
                 visible ? kBottomMarginWithLabels : kBottomMarginWithoutLabels));
    const int least = minimumReadableHeight(fontMetrics());
    setMinimumHeight(visible ? least + kBottomMarginWithLabels : least);
    replot(rpQueuedReplot);
}

void MemoryPlot::setLegendVisible(bool visible) {
    legend->setVisible(visible && !m_noData);
    replot(rpQueuedReplot);
}

void MemoryPlot::setScaleToCapacity(bool toCapacity) {
    m_scaleToCapacity = toCapacity;
    updateYRange();
    updateMarkers();
    replot(rpQueuedReplot);
}

void MemoryPlot::buildItems() {
    const analysis::GpuSeries& g = *m_series;
    // The fill under allocated is its own graph of one point per pixel column (the column's max):
    // filling the min/max stroke polygon instead cost ~23 ms per replot on 10 million steps.
    m_allocatedFill = addGraph();
    m_allocatedFill->setLineStyle(QCPGraph::lsStepLeft);
    m_allocatedFill->setAdaptiveSampling(false);
    m_allocatedFill->setPen(Qt::NoPen);
    m_allocatedFill->removeFromLegend();
    m_allocated = addGraph();
    m_allocated->setName(QStringLiteral("allocated"));
    m_allocated->setLineStyle(QCPGraph::lsStepLeft);
    m_allocated->setAdaptiveSampling(false);
    m_reserved = addGraph();
    m_reserved->setName(QStringLiteral("reserved"));
    m_reserved->setLineStyle(QCPGraph::lsStepLeft);
    m_reserved->setAdaptiveSampling(false);
    // The drawn points are already one min/max stroke per pixel column: antialiasing them only
    // costs time (a filled 6,000-point polygon took ~35 ms per replot with it on).
    for (QCPGraph* graph : {m_allocatedFill, m_allocated, m_reserved}) {
        graph->setAntialiased(false);
        graph->setAntialiasedFill(false);
    }
    if (g.allocated.series().empty()) {
        m_allocated->removeFromLegend();
    }
    if (g.reserved.series().empty()) {
        m_reserved->removeFromLegend();
    }
    // Legend-only entries for the two horizontal lines (QCPLegend lists plottables only).
    m_capacityLegend = addGraph();
    m_capacityLegend->setName(QStringLiteral("capacity"));
    m_warningLegend = addGraph();
    m_warningLegend->setName(
        QStringLiteral("%1 % of capacity").arg(100.0 * analysis::kCapacityWarningShare, 0, 'f', 0));
    if (g.memory.capacityBytes == 0) {
        m_capacityLegend->removeFromLegend();
        m_warningLegend->removeFromLegend();
    }
    legend->setVisible(false);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setWrap(4);
    legend->setRowSpacing(0);
    legend->setColumnSpacing(8);
    legend->setIconSize(18, 8);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

    m_capacityLine = new QCPItemStraightLine(this);
    m_warningLine = new QCPItemStraightLine(this);
    m_capacityText = new QCPItemText(this);
    m_capacityText->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    m_capacityText->position->setTypeY(QCPItemPosition::ptPlotCoords);
    m_capacityText->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    for (QCPItemStraightLine* line : {m_capacityLine, m_warningLine}) {
        line->point1->setCoords(0, static_cast<double>(g.memory.capacityBytes));
        line->point2->setCoords(1, static_cast<double>(g.memory.capacityBytes));
        line->setVisible(g.memory.capacityBytes > 0);
    }
    const double warning =
        analysis::kCapacityWarningShare * static_cast<double>(g.memory.capacityBytes);
    m_warningLine->point1->setCoords(0, warning);
    m_warningLine->point2->setCoords(1, warning);
    m_capacityText->position->setCoords(0.995, static_cast<double>(g.memory.capacityBytes));
    m_capacityText->setText(QStringLiteral("capacity %1")
                                .arg(formatBytes(static_cast<double>(g.memory.capacityBytes))));
    m_capacityText->setVisible(g.memory.capacityBytes > 0);

    // Capacity and the 80 % line above the memory axis (a peak far below capacity): an arrow
    // with their values at the plot's top edge says where they are (updateYRange).
    m_offScale = new QCPItemText(this);
    m_offScale->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_offScale->position->setCoords(1.0, 0.0);
    m_offScale->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    m_offScale->setClipToAxisRect(false);
    m_offScale->setPadding(QMargins(6, 0, 2, 2));
    m_offScale->setVisible(false);

    m_title = new QCPItemText(this);
    m_title->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_title->position->setCoords(0.0, 0.0);
    m_title->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    m_title->setClipToAxisRect(false);
    m_title->setPadding(QMargins(2, 0, 6, 2));
    updateTitle();

    if (g.allocated.series().empty() && g.reserved.series().empty()) {
        m_noData = new QCPItemText(this);
        m_noData->position->setType(QCPItemPosition::ptAxisRectRatio);
        m_noData->position->setCoords(0.5, 0.5);
        m_noData->setText(tr("No memory events or memory counters were recorded for this GPU."));
        m_noData->setProperty("fullText", m_noData->text());
        // No byte scale to read: an axis of made-up bytes would suggest data.
        yAxis->setTickLabels(false);
    }

    m_peakText = new QCPItemText(this);
    m_peakArrow = new QCPItemLine(this);
    m_peakArrow->setHead(QCPLineEnding::esSpikeArrow);
    m_peakArrow->start->setParentAnchor(m_peakArrow->end);
    m_peakText->position->setParentAnchor(m_peakArrow->start);
    m_peakText->setPadding(QMargins(2, 0, 2, 0));

    for (const analysis::OomMark& oom : g.ooms) {
        auto* line = new QCPItemStraightLine(this);
        line->point1->setCoords(static_cast<double>(oom.timeNs), 0);
        line->point2->setCoords(static_cast<double>(oom.timeNs), 1);
        m_oomLines.push_back(line);
        auto* text = new QCPItemText(this);
        text->position->setTypeX(QCPItemPosition::ptPlotCoords);
        text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(static_cast<double>(oom.timeNs), 0.12);
        text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        text->setText(QStringLiteral("OOM: %1 requested")
                          .arg(formatBytes(static_cast<double>(oom.requestedBytes))));
        m_oomTexts.push_back(text);
    }

    m_selectionRect = new QCPItemRect(this);
    m_selectionRect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_selectionRect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_selectionRect->setLayer(m_overlay);
    m_crosshair = new QCPItemStraightLine(this);
    m_crosshair->setLayer(m_overlay);
    m_clickedLine = new QCPItemStraightLine(this);
    m_clickedLine->setLayer(m_overlay);
    for (QCPItemStraightLine* line : {m_crosshair, m_clickedLine}) {
        line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
        line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
}

void MemoryPlot::fitLegend(int axisWidth) {
    // Up to four entries a row; fewer when the rows would be wider than the plot (the role
    // layers add up to eight entries), so that no entry is cut at the left.
    const int wanted = [&] {
        for (int columns = 4; columns > 1; --columns) {
            legend->setWrap(columns);
            legend->setFillOrder(QCPLegend::foColumnsFirst, true);
            if (legend->minimumOuterSizeHint().width() <= axisWidth - 8) {
                return columns;
            }
        }
        return 1;
    }();
    legend->setWrap(wanted);
    legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    // The OOM labels go below the legend's rows, which cover the top right of the plot.
    const int height = std::max(1, axisRect()->height());
    const double below =
        legend->visible()
            ? static_cast<double>(legend->minimumOuterSizeHint().height() + 10) / height
            : 0.0;
    for (size_t i = 0; i < m_oomTexts.size(); ++i) {
        m_oomTexts[i]->position->setCoords(static_cast<double>(m_series->ooms[i].timeNs),
                                           std::max(0.12, below));
    }
}

void MemoryPlot::updateTitle() {
    QString title = gpuTitle(*m_series);
    if (m_roleLayers) {
        title += tr(" · allocated stacked by role");
    } else if (m_stackRequested) {
        title += tr(" · roles unknown: not stacked");
    }
    m_title->setProperty("fullText", title);
    m_title->setText(title);
}

void MemoryPlot::setRoleLayers(bool stacked, std::shared_ptr<const analysis::RoleLayers> layers) {
    for (QCPGraph* graph : m_roleGraphs) {
        removeGraph(graph);
    }
    m_roleGraphs.clear();
    m_stackRequested = stacked;
    m_roleLayers = stacked && layers && !layers->empty() ? std::move(layers) : nullptr;
    if (m_roleLayers) {
        const std::vector<analysis::MemoryRole>& roles = m_roleLayers->roles;
        m_roleGraphs.assign(roles.size(), nullptr);
        // Top of the stack first: plottables of a layer are painted in the order they were added
        // and every layer is filled from zero, so each lower layer is painted over the ones above.
        for (size_t k = roles.size(); k-- > 0;) {
            QCPGraph* graph = addGraph();
            graph->setLayer(m_rolesLayer);
            graph->setName(shortRoleLabel(roles[k]));  // so that four entries fit a row
            graph->setAdaptiveSampling(false);
            graph->setAntialiased(false);
            graph->setAntialiasedFill(false);
            graph->setBrush(roleColor(roles[k], m_colors.background));
            m_roleGraphs[k] = graph;
        }
    }
    m_allocatedFill->setVisible(m_roleLayers == nullptr);
    updateTitle();
    refresh();
}

void MemoryPlot::fillRoleGraphs(TimeRange range, int columns) {
    if (!m_roleLayers) {
        return;
    }
    const size_t maxSteps = static_cast<size_t>(columns) * 2;
    for (size_t k = 0; k < m_roleGraphs.size(); ++k) {
        const analysis::LodSeries& lod = m_roleLayers->tops[k];
        const QColor color = roleColor(m_roleLayers->roles[k], m_colors.background);
        QCPGraph* graph = m_roleGraphs[k];
        QVector<QCPGraphData> points;
        analysis::StepSeries steps;
        if (lod.exactSteps(range.startNs, range.endNs, maxSteps, steps)) {
            points.reserve(static_cast<int>(steps.size()) + 1);
            for (size_t i = 0; i < steps.size(); ++i) {
                points.append(QCPGraphData(static_cast<double>(steps.timeNs[i]),
                                           static_cast<double>(steps.bytes[i])));
            }
            if (!steps.empty()) {
                points.append(QCPGraphData(static_cast<double>(range.endNs),
                                           static_cast<double>(steps.bytes.back())));
            }
            graph->setLineStyle(QCPGraph::lsStepLeft);
            graph->setPen(Qt::NoPen);
        } else {
            // One stroke per pixel column up to the column's maximum of this layer's top. The
            // tops are ordered at every instant (each adds a role's bytes, >= 0, to the one
            // below), so their column maxima are ordered too: the stack never crosses itself,
            // and the highest stroke is the allocated curve's maximum in the column. Within one
            // column a band's height is at most its role's bytes at the instant the band's top
            // peaked (a min/max envelope per layer would instead draw overlapping ranges that do
            // not stack); the exact steps show once few enough are visible.
            const std::vector<analysis::LodBucket> buckets =
                lod.query(range.startNs, range.endNs, static_cast<size_t>(columns));
            points.reserve(static_cast<int>(buckets.size()));
            for (const analysis::LodBucket& b : buckets) {
                points.append(
                    QCPGraphData(static_cast<double>(b.startNs), static_cast<double>(b.maxBytes)));
            }
            graph->setLineStyle(QCPGraph::lsImpulse);
            graph->setPen(QPen(color, 2));
        }
        graph->setBrush(color);  // the fill of a step area; the legend's swatch for strokes
        graph->data()->set(points, true);
    }
}

void MemoryPlot::applyColors(const PlotColors& colors) {
    m_colors = colors;
    setBackground(colors.background);
    axisRect()->setBackground(colors.background);
    for (QCPAxis* axis : {xAxis, yAxis}) {
        axis->setBasePen(QPen(colors.axis, 1));
        axis->setTickPen(QPen(colors.axis, 1));
        axis->setSubTickPen(QPen(colors.axis, 1));
        axis->setTickLabelColor(colors.text);
        axis->setLabelColor(colors.text);
        axis->grid()->setPen(QPen(colors.grid, 1, Qt::SolidLine));
        axis->grid()->setZeroLinePen(Qt::NoPen);
    }
    const QColor gpu = gpuColor(m_series->colorIndex, colors.dark);
    // Opaque blend of the GPU colour into the background, so that overlapping strokes of the
    // per-column fill do not darken.
    const double a = colors.dark ? 0.43 : 0.35;
    m_fillColor = QColor::fromRgbF(
        static_cast<float>(a * gpu.redF() + (1 - a) * colors.background.redF()),
        static_cast<float>(a * gpu.greenF() + (1 - a) * colors.background.greenF()),
        static_cast<float>(a * gpu.blueF() + (1 - a) * colors.background.blueF()));
    m_allocated->setPen(QPen(gpu, 1.5));
    m_allocated->setBrush(Qt::NoBrush);
    m_reserved->setPen(QPen(colors.reserved, 1.5));
    m_capacityLine->setPen(QPen(colors.capacity, 1.5));
    m_capacityLegend->setPen(m_capacityLine->pen());
    m_warningLine->setPen(QPen(colors.warning, 1.5, Qt::DashLine));
    m_warningLegend->setPen(m_warningLine->pen());
    m_capacityText->setColor(colors.capacity);
    m_offScale->setColor(colors.capacity);
    m_title->setColor(colors.text);
    if (m_noData) {
        m_noData->setColor(colors.text);
    }
    QColor titleBack = colors.background;
    titleBack.setAlpha(200);
    m_peakText->setColor(colors.peak);
    m_peakText->setBrush(titleBack);
    m_peakArrow->setPen(QPen(colors.peak, 1));
    for (QCPItemStraightLine* line : m_oomLines) {
        line->setPen(QPen(colors.oom, 2));
    }
    for (QCPItemText* text : m_oomTexts) {
        text->setColor(colors.oom);
        text->setBrush(titleBack);
    }
    legend->setBrush(titleBack);
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(colors.text);
    m_selectionRect->setPen(Qt::NoPen);
    m_selectionRect->setBrush(colors.selection);
    m_crosshair->setPen(QPen(colors.crosshair, 1, Qt::DashLine));
    QColor clicked = colors.selection;
    clicked.setAlpha(255);
    m_clickedLine->setPen(QPen(clicked, 1.5));
    if (m_roleLayers) {
        refresh();  // the layers' colours are blended into the new background
    }
    replot(rpQueuedReplot);
}

void MemoryPlot::updateYRange() {
    const analysis::GpuSeries& g = *m_series;
    const double dataMax = static_cast<double>(g.memory.peakBytes());
    double top = std::max(dataMax, 1024.0 * 1024.0) * kHeadroom;
    const double capacity = static_cast<double>(g.memory.capacityBytes);
    // Show the capacity when asked, or when the peak comes within reach of the 80 % line anyway.
    const double warning = analysis::kCapacityWarningShare * capacity;
    if (capacity > 0 && (m_scaleToCapacity || warning <= top * 1.3)) {
        top = std::max(top, capacity * 1.08);
    }
    yAxis->setRange(0, top);
    // The legend names only the lines that are on screen; the title still gives the capacity.
    const bool capacityShown = capacity > 0 && capacity <= top;
    const bool warningShown = capacity > 0 && warning <= top;
    if (capacity > 0 && !capacityShown) {
        const QString cap = tr("capacity %1").arg(formatBytes(capacity));
        m_offScale->setText(
            QStringLiteral("\u2191 ") +
            (warningShown ? cap : tr("%1 · 80 % line %2").arg(cap, formatBytes(warning))));
    }
    m_offScale->setVisible(capacity > 0 && !capacityShown);
    if (capacityShown) {
        m_capacityLegend->addToLegend();
    } else {
        m_capacityLegend->removeFromLegend();
    }
    if (warningShown) {
        m_warningLegend->addToLegend();
    } else {
        m_warningLegend->removeFromLegend();
    }
}

bool MemoryPlot::fillGraph(QCPGraph* graph, const analysis::LodSeries& lod, TimeRange range,
                           int columns, QCPGraph* envelope) {
    QVector<QCPGraphData> points;
    QVector<QCPGraphData> maxima;
    const auto& series = lod.series();
    if (series.empty()) {
        graph->data()->clear();
        if (envelope) {
            envelope->data()->clear();
        }
        return true;
    }
    analysis::StepSeries steps;
    const size_t maxSteps = static_cast<size_t>(columns) * 2;
    const bool exact = lod.exactSteps(range.startNs, range.endNs, maxSteps, steps);
    if (exact) {
        points.reserve(static_cast<int>(steps.size()) + 1);
        for (size_t i = 0; i < steps.size(); ++i) {
            points.append(QCPGraphData(static_cast<double>(steps.timeNs[i]),
                                       static_cast<double>(steps.bytes[i])));
        }
        if (!steps.empty()) {
            points.append(QCPGraphData(static_cast<double>(range.endNs),
                                       static_cast<double>(steps.bytes.back())));
        }
        maxima = points;
    } else {
        m_exact = false;
        const std::vector<analysis::LodBucket> buckets =
            lod.query(range.startNs, range.endNs, static_cast<size_t>(columns));
        points.reserve(static_cast<int>(buckets.size()) * 4 + 1);
        // On a step-left line, points sharing one key draw the bucket's min..max as a vertical
        // stroke in its pixel column; the last value then holds to the next column.
        maxima.reserve(static_cast<int>(buckets.size()) + 1);
        for (const analysis::LodBucket& b : buckets) {
            const double x = static_cast<double>(b.startNs);
            maxima.append(QCPGraphData(x, static_cast<double>(b.maxBytes)));
            points.append(QCPGraphData(x, static_cast<double>(b.firstBytes)));
            if (b.minBytes != b.maxBytes) {
                points.append(QCPGraphData(x, static_cast<double>(b.maxBytes)));
                points.append(QCPGraphData(x, static_cast<double>(b.minBytes)));
                points.append(QCPGraphData(x, static_cast<double>(b.lastBytes)));
            }
        }
        if (!buckets.empty()) {
            points.append(QCPGraphData(static_cast<double>(range.endNs),
                                       static_cast<double>(buckets.back().lastBytes)));
            maxima.append(QCPGraphData(static_cast<double>(range.endNs),
                                       static_cast<double>(buckets.back().lastBytes)));
        }
    }
    graph->data()->set(points, true);
    if (envelope) {
        envelope->data()->set(maxima, true);
    }
    return exact;
}

void MemoryPlot::refresh() {
    const TimeRange range = m_zoom->visibleRange();
    xAxis->setRange(static_cast<double>(range.startNs), static_cast<double>(range.endNs));
    const int columns = std::max(100, axisRect()->width() > 0 ? axisRect()->width() : width());
    // About one memory label per 40 px of height.
    yAxis->ticker()->setTickCount(std::clamp(axisRect()->height() / 40, 2, 8));
    m_exact = true;
    const bool exactAllocated =
        fillGraph(m_allocated, m_series->allocated, range, columns, m_allocatedFill);
    // Few exact steps: a filled step polygon. One point per column: a 2 px opaque stroke from
    // zero to the column's maximum, which draws in a fraction of the time of filling the polygon
    // (~12 ms per replot at 1,500 columns).
    if (exactAllocated) {
        m_allocatedFill->setLineStyle(QCPGraph::lsStepLeft);
        m_allocatedFill->setPen(Qt::NoPen);
        m_allocatedFill->setBrush(m_fillColor);
    } else {
        m_allocatedFill->setLineStyle(QCPGraph::lsImpulse);
        m_allocatedFill->setPen(QPen(m_fillColor, 2));
        m_allocatedFill->setBrush(Qt::NoBrush);
    }
    fillGraph(m_reserved, m_series->reserved, range, columns);
    fillRoleGraphs(range, columns);
    updateMarkers();
    updateOverlay();
    replot(rpQueuedReplot);
}

void MemoryPlot::updateMarkers() {
    const analysis::GpuSeries& g = *m_series;
    const bool useAllocated = !g.allocated.series().empty();
    const int64_t peak = useAllocated ? g.memory.peakAllocatedBytes : g.memory.peakReservedBytes;
    const int64_t peakTime =
        useAllocated ? g.memory.peakAllocatedTimeNs : g.memory.peakReservedTimeNs;
    const TimeRange range = m_zoom->visibleRange();
    const bool visible = peak > 0 && peakTime >= range.startNs && peakTime <= range.endNs;
    m_peakText->setVisible(visible);
    m_peakArrow->setVisible(visible);
    if (!visible) {
        return;
    }
    m_peakArrow->end->setCoords(static_cast<double>(peakTime), static_cast<double>(peak));
    const QString text =
        QStringLiteral("peak %1 %2 at %3")
            .arg(useAllocated ? QStringLiteral("allocated") : QStringLiteral("reserved"),
                 formatBytes(static_cast<double>(peak)),
                 formatDuration(static_cast<double>(peakTime)));
    // From the margins, not the axis rectangle: before a replot's layout the rectangle still has
    // its old width, and a label judged against it ran past the new right edge ("... at 147 m").
    const TimeMapper tm = mapper();
    const double px = tm.xAt(peakTime);
    // To the left of the peak when the label would run past the plot's right edge.
    const int textWidth = QFontMetrics(m_peakText->font()).horizontalAdvance(text) + 24;
    const bool flip = px + textWidth > width() - axisRect()->margins().right();
    // At the top right the legend sits where the label would go: put the label below the peak.
    const double py = yAxis->coordToPixel(static_cast<double>(peak));
    const bool below = flip && legend->visible() &&
                       py < axisRect()->top() + legend->minimumOuterSizeHint().height() + 16;
    m_peakArrow->start->setCoords(flip ? -14 : 14, below ? 14 : -8);
    m_peakText->setPositionAlignment((flip ? Qt::AlignRight : Qt::AlignLeft) |
                                     (below ? Qt::AlignTop : Qt::AlignVCenter));
    m_peakText->setText(text);
}

void MemoryPlot::updateOverlay() {
    const bool cursor = m_zoom->hasCursor();
    m_crosshair->setVisible(cursor);
    if (cursor) {
        const double x = static_cast<double>(m_zoom->cursorNs());
        m_crosshair->point1->setCoords(x, 0);
        m_crosshair->point2->setCoords(x, 1);
    }
    const bool clicked = m_zoom->selectedGpu() == m_gpu;
    m_clickedLine->setVisible(clicked);
    if (clicked) {
        const double x = static_cast<double>(m_zoom->selectedTimeNs());
        m_clickedLine->point1->setCoords(x, 0);
        m_clickedLine->point2->setCoords(x, 1);
    }
    const TimeRange sel = m_zoom->selection();
    m_selectionRect->setVisible(m_zoom->hasSelection());
    m_selectionRect->topLeft->setCoords(static_cast<double>(sel.startNs), 0);
    m_selectionRect->bottomRight->setCoords(static_cast<double>(sel.endNs), 1);
    if (m_painted) {
        m_overlay->replot();  // NOTE(qcp): a layer has no paint buffer before the first replot
    } else {
        replot(rpQueuedReplot);
    }
}

void MemoryPlot::setNotes(const std::vector<NumberedNote>& notes) {
    m_noteItems->setNotes(notes);
    replot(rpQueuedReplot);
}

const std::vector<PlotNoteMark>& MemoryPlot::noteMarks() const {
    return m_noteItems->marks();
}

void MemoryPlot::setContextMenuHandler(std::function<bool(QPoint, int64_t)> handler) {
    m_contextMenu = std::move(handler);
}

std::vector<QRectF> MemoryPlot::dataLabelRects() const {
    std::vector<QRectF> rects;
    for (const QCPItemText* text : {m_peakText, m_capacityText, m_noData}) {
        if (text && text->visible() && text->clipToAxisRect()) {
            const double y = text->position->pixelPosition().y();
            // The capacity label is off the plot when the axis ends below the capacity.
            if (y < axisRect()->top() - 1 || y > axisRect()->bottom() + 1) {
                continue;
            }
        }
        rects.push_back(textItemRect(text));
    }
    for (const QCPItemText* text : m_oomTexts) {
        rects.push_back(textItemRect(text));
    }
    if (legend->visible()) {
        rects.push_back(QRectF(legend->outerRect()));
    }
    std::erase_if(rects, [](const QRectF& r) { return r.isEmpty(); });
    return rects;
}

TimeMapper MemoryPlot::mapper() const {
    const QMargins m = axisRect()->margins();
    return {m_zoom->visibleRange(), static_cast<double>(m.left()),
            static_cast<double>(width() - m.right())};
}

void MemoryPlot::resizeEvent(QResizeEvent* event) {
    QCustomPlot::resizeEvent(event);
    refresh();
}

}  // namespace vramscope::widgets
