#include "vramscope/widgets/segment_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <array>

#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

constexpr int kViewMargin = 8;

QString hex(uint64_t v) {
    return QStringLiteral("0x") + QString::number(v, 16);
}

/// A tick step on a round number of the binary unit that fits `maxBytes`, about 4-6 ticks.
double tickStep(double maxBytes) {
    double unit = 1.0;
    for (int k = 0; k < 4 && maxBytes >= unit * 1024.0; ++k) {
        unit *= 1024.0;
    }
    for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0}) {
        if (maxBytes / (m * unit) <= 6.0) {
            return m * unit;
        }
    }
    return 1000.0 * unit;
}

/// The hatched brush of free memory (light, so blocks stand out).
QBrush gapBrush(const PlotColors& c) {
    QColor hatch = c.text;
    hatch.setAlpha(c.dark ? 90 : 70);
    return QBrush(hatch, Qt::BDiagPattern);
}

}  // namespace

SegmentView::SegmentView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Minimum);
}

void SegmentView::setPicture(std::shared_ptr<const SegmentPicture> picture) {
    m_picture = std::move(picture);
    relayout();
    update();
}

void SegmentView::setPlaceholder(const QString& text) {
    m_placeholder = text;
    relayout();
    update();
}

size_t SegmentView::count(ItemKind kind) const {
    return size_t(std::count_if(m_items.begin(), m_items.end(),
                                [kind](const Item& i) { return i.kind == kind; }));
}

size_t SegmentView::colourSlot(uint32_t group) {
    return std::min<size_t>(group, kColouredGroups);
}

QColor SegmentView::groupColour(uint32_t group) const {
    // The palette's hues without its red (the request's colour) and grey ("other").
    static constexpr std::array<int, kColouredGroups> kHues = {0, 1, 2, 4, 5, 6, 8, 9};
    const bool dark = PlotColors::fromPalette(palette()).dark;
    const size_t slot = colourSlot(group);
    return slot < kColouredGroups ? gpuColor(kHues[slot], dark) : gpuColor(7, dark);
}

QSize SegmentView::sizeHint() const {
    return {600, std::max(m_contentHeight, 120)};
}

int SegmentView::layoutLegend(int top) {
    const SegmentPicture& p = *m_picture;
    const QFontMetrics fm = fontMetrics();
    std::vector<std::pair<QString, int>> entries;
    const auto& groups = p.groups.groups;
    int64_t otherBytes = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
        if (i < kColouredGroups) {
            entries.emplace_back(elideName(fm, groups[i].label, 280) + QStringLiteral("  ") +
                                     formatBytes(double(groups[i].bytes)),
                                 int(i));
        } else {
            otherBytes += groups[i].bytes;
        }
    }
    if (groups.size() > kColouredGroups) {
        entries.emplace_back(tr("other (%1 stacks)  %2")
                                 .arg(groups.size() - kColouredGroups)
                                 .arg(formatBytes(double(otherBytes))),
                             int(kColouredGroups));
    }
    entries.emplace_back(tr("free inside a segment"), -1);
    if (p.requestBytes > 0) {
        entries.emplace_back(tr("failed request"), -2);
    }
    const int lineHeight = fm.height() + 4;
    int x = kViewMargin;
    for (const auto& [label, slot] : entries) {
        const int w = 12 + 4 + fm.horizontalAdvance(label) + 16;
        if (x > kViewMargin && x + w > width() - kViewMargin) {
            x = kViewMargin;
            top += lineHeight;
        }
        LegendEntry e;
        e.swatch = QRect(x, top + (fm.height() - 12) / 2, 12, 12);
        e.text = QPoint(x + 16, top + fm.ascent());
        e.label = label;
        e.slot = slot;
        m_legend.push_back(e);
        x += w;
    }
    return top + lineHeight;
}

void SegmentView::relayout() {
    m_items.clear();
    m_legend.clear();
    m_rowLabels.clear();
    m_ticks.clear();
    if (!m_picture || !m_placeholder.isEmpty() || !m_picture->layout.known) {
        m_contentHeight = 80;
        setMinimumHeight(m_contentHeight);
        return;
    }
    const SegmentPicture& p = *m_picture;
    const analysis::SegmentLayout& l = p.layout;
    const QFontMetrics fm = fontMetrics();
    int top = layoutLegend(kViewMargin) + 4;

    const std::vector<size_t> order = analysis::segmentsLargestFirst(l);
    std::vector<QString> labels;
    for (size_t i : order) {
        labels.push_back(hex(l.segments[i].address) + QStringLiteral("  ") +
                         formatBytes(double(l.segments[i].sizeBytes)));
    }
    const QString requestLabel = tr("request %1").arg(formatBytes(double(p.requestBytes)));
    const QString largestLabel =
        tr("largest free %1").arg(formatBytes(double(l.totals.largestFreeBlockBytes)));
    m_labelWidth = 0;
    for (const QString& s : labels) {
        m_labelWidth = std::max(m_labelWidth, fm.horizontalAdvance(s));
    }
    if (p.requestBytes > 0) {
        m_labelWidth = std::max(
            {m_labelWidth, fm.horizontalAdvance(requestLabel), fm.horizontalAdvance(largestLabel)});
    }
    const double barLeft = kViewMargin + m_labelWidth + 10;
    const double barWidth = std::max(40.0, double(width()) - barLeft - 2 * kViewMargin);
    uint64_t maxBytes = std::max<uint64_t>(p.requestBytes, 1);
    for (const analysis::Segment& s : l.segments) {
        maxBytes = std::max(maxBytes, s.sizeBytes);
    }
    const double scale = barWidth / double(maxBytes);

    // The byte scale: labels above a baseline; the grid lines run down through the rows.
    m_scaleTop = top;
    const double step = tickStep(double(maxBytes));
    for (double b = 0; b <= double(maxBytes) * 1.0001; b += step) {
        m_ticks.push_back({barLeft + b * scale, formatBytes(b)});
    }
    top += fm.height() + 6;

    auto rowLabel = [&](const QString& text, int rowTop) {
        m_rowLabels.emplace_back(
            QPoint(kViewMargin, rowTop + (kRowHeight + fm.ascent() - fm.descent()) / 2), text);
    };
    if (p.requestBytes > 0) {
        rowLabel(requestLabel, top);
        m_items.push_back(
            {ItemKind::Request,
             QRectF(barLeft, top, std::max(1.0, double(p.requestBytes) * scale), kRowHeight), 0,
             0});
        top += kRowHeight + kRowGap;
        rowLabel(largestLabel, top);
        m_items.push_back(
            {ItemKind::LargestFree,
             QRectF(barLeft, top, std::max(1.0, double(l.totals.largestFreeBlockBytes) * scale),
                    kRowHeight),
             0, 0});
        top += kRowHeight + kRowGap + 8;
    }
    for (size_t row = 0; row < order.size(); ++row) {
        const size_t si = order[row];
        const analysis::Segment& s = l.segments[si];
        rowLabel(labels[row], top);
        const double right = barLeft + std::max(1.0, double(s.sizeBytes) * scale);
        m_items.push_back(
            {ItemKind::Segment, QRectF(barLeft, top, right - barLeft, kRowHeight), si, 0});
        auto span = [&](uint64_t address, uint64_t size) {
            const double x = barLeft + double(address - s.address) * scale;
            const double w = std::min(double(size) * scale, right - x);
            return QRectF(x, top, std::max(0.0, w), kRowHeight);
        };
        for (size_t g = 0; g < s.gaps.size(); ++g) {
            m_items.push_back({ItemKind::Gap, span(s.gaps[g].address, s.gaps[g].sizeBytes), si, g});
        }
        for (size_t b = 0; b < s.blocks.size(); ++b) {
            m_items.push_back(
                {ItemKind::Block, span(s.blocks[b].address, s.blocks[b].sizeBytes), si, b});
        }
        top += kRowHeight + kRowGap;
    }
    m_contentHeight = top + kViewMargin;
    setMinimumHeight(m_contentHeight);
}

const SegmentView::Item* SegmentView::itemAt(QPointF pos) const {
    // Blocks and gaps come after their segment: search backwards for the innermost.
    for (auto it = m_items.rbegin(); it != m_items.rend(); ++it) {
        if (it->rect.contains(pos)) {
            return &*it;
        }
    }
    return nullptr;
}

QString SegmentView::describe(const Item& item) const {
    if (!m_picture) {
        return {};
    }
    const SegmentPicture& p = *m_picture;
    const analysis::SegmentLayout& l = p.layout;
    switch (item.kind) {
        case ItemKind::Request:
            return tr("request %1 (%2 B): the allocation that failed")
                .arg(formatBytes(double(p.requestBytes)))
                .arg(p.requestBytes);
        case ItemKind::LargestFree:
            return tr("largest free block %1: the most one segment could have handed out")
                .arg(formatBytes(double(l.totals.largestFreeBlockBytes)));
        default:
            break;
    }
    const analysis::Segment& s = l.segments[item.segment];
    const QString in = tr("segment %1 (%2)").arg(hex(s.address), formatBytes(double(s.sizeBytes)));
    if (item.kind == ItemKind::Block) {
        const analysis::SegmentBlock& b = s.blocks[item.index];
        const uint32_t group = p.groups.groupOf.at(item.segment).at(item.index);
        return tr("block %1 at %2 in %3: %4")
            .arg(formatBytes(double(b.sizeBytes)), hex(b.address), in,
                 QString::fromStdString(p.groups.groups.at(group).label));
    }
    if (item.kind == ItemKind::Gap) {
        const analysis::SegmentGap& g = s.gaps[item.index];
        return tr("free %1 at %2 in %3").arg(formatBytes(double(g.sizeBytes)), hex(g.address), in);
    }
    return tr("%1: allocated %2, free %3, largest free %4, %5 blocks")
        .arg(in, formatBytes(double(s.allocatedBytes)), formatBytes(double(s.freeBytes)),
             formatBytes(double(s.largestFreeBytes)))
        .arg(s.blocks.size());
}

bool SegmentView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const Item* item = itemAt(help->pos())) {
            QToolTip::showText(help->globalPos(), describe(*item), this);
        } else {
            QToolTip::hideText();
            event->ignore();
        }
        return true;
    }
    return QWidget::event(event);
}

void SegmentView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    relayout();
}

void SegmentView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const PlotColors c = PlotColors::fromPalette(palette());
    painter.fillRect(rect(), c.background);
    painter.setPen(c.text);
    if (!m_placeholder.isEmpty() || !m_picture) {
        painter.drawText(rect().adjusted(kViewMargin, kViewMargin, -kViewMargin, -kViewMargin),
                         Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    QColor gapFill = c.text;
    gapFill.setAlpha(c.dark ? 30 : 18);
    QColor request = c.oom;
    request.setAlpha(170);
    for (const LegendEntry& e : m_legend) {
        if (e.slot >= 0) {
            painter.fillRect(e.swatch, groupColour(uint32_t(e.slot)));
        } else if (e.slot == -1) {
            painter.fillRect(e.swatch, gapFill);
            painter.fillRect(e.swatch, gapBrush(c));
        } else {
            painter.fillRect(e.swatch, request);
        }
        painter.setPen(c.text);
        painter.drawText(e.text, e.label);
    }
    const QFontMetrics fm = fontMetrics();
    double labelsEnd = -1e9;  // right end of the last tick label drawn
    for (const Tick& t : m_ticks) {
        painter.setPen(c.grid);
        painter.drawLine(QPointF(t.x, m_scaleTop + fm.height() + 2),
                         QPointF(t.x, m_contentHeight - kViewMargin));
        const int w = fm.horizontalAdvance(t.label);
        const double x = std::min(t.x - w / 2.0, double(width() - kViewMargin - w));
        if (x < labelsEnd + fm.horizontalAdvance(QLatin1Char(' ')) * 2) {
            continue;  // a narrow bar: the label would run into the one before
        }
        painter.setPen(c.text);
        painter.drawText(QPointF(x, m_scaleTop + fm.ascent()), t.label);
        labelsEnd = x + w;
    }
    painter.setPen(c.text);
    for (const auto& [at, text] : m_rowLabels) {
        painter.drawText(at, text);
    }
    QColor outline = c.text;
    outline.setAlpha(140);
    for (const Item& item : m_items) {
        switch (item.kind) {
            case ItemKind::Segment:
                painter.fillRect(item.rect, gapFill);
                break;
            case ItemKind::Gap:
                painter.fillRect(item.rect, gapBrush(c));
                break;
            case ItemKind::Block: {
                const analysis::SegmentBlockGroups& g = m_picture->groups;
                const QColor fill = groupColour(g.groupOf.at(item.segment).at(item.index));
                painter.fillRect(item.rect, fill);
                if (item.rect.width() >= 4) {
                    painter.setPen(fill.darker(150));
                    painter.drawRect(item.rect.adjusted(0, 0, -1, -1));
                }
                break;
            }
            case ItemKind::Request:
                painter.fillRect(item.rect, request);
                break;
            case ItemKind::LargestFree:
                painter.fillRect(item.rect, gapFill);
                painter.fillRect(item.rect, gapBrush(c));
                painter.setPen(outline);
                painter.drawRect(item.rect.adjusted(0, 0, -1, -1));
                break;
        }
    }
    // Segment outlines last, so that the blocks at their ends do not hide where they end.
    painter.setPen(outline);
    for (const Item& item : m_items) {
        if (item.kind == ItemKind::Segment) {
            painter.drawRect(item.rect.adjusted(0, 0, -1, -1));
        }
    }
}

}  // namespace vramscope::widgets
