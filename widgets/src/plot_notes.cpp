#include "vramscope/widgets/plot_notes.h"

#include <algorithm>

namespace vramscope::widgets {

namespace {
constexpr int kLabelWidthPx = 220;  // the longest label, px, before the headline is elided
constexpr double kLabelRowsShare = 0.4;
}  // namespace

QRectF textItemRect(const QCPItemText* text) {
    if (!text || !text->visible() || text->text().isEmpty()) {
        return {};
    }
    return QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition()).normalized();
}

PlotNoteItems::PlotNoteItems(QCustomPlot* plot) : m_plot(plot) {}

void PlotNoteItems::setNotes(const std::vector<NumberedNote>& notes) {
    for (const PlotNoteMark& m : m_marks) {
        for (QCPAbstractItem* item :
             {static_cast<QCPAbstractItem*>(m.line), static_cast<QCPAbstractItem*>(m.band),
              static_cast<QCPAbstractItem*>(m.label)}) {
            if (item) {
                m_plot->removeItem(item);
            }
        }
    }
    m_marks.clear();
    m_notes = notes;
    QCPLayer* under = m_plot->layer(QStringLiteral("grid"));  // bands under the curves
    for (const NumberedNote& n : m_notes) {
        const QColor color = noteColor(n.note);
        PlotNoteMark mark{n.note.id, n.number, nullptr, nullptr, nullptr};
        const QString id = QString::fromStdString(n.note.id);
        if (n.note.isRange()) {
            mark.band = new QCPItemRect(m_plot);
            mark.band->setLayer(under);
            mark.band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
            mark.band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
            mark.band->topLeft->setCoords(static_cast<double>(n.note.startNs), 0);
            mark.band->bottomRight->setCoords(static_cast<double>(n.note.endNs), 1);
            QColor fill = color;
            fill.setAlpha(45);
            mark.band->setBrush(fill);
            QColor edge = color;
            edge.setAlpha(140);
            mark.band->setPen(QPen(edge, 1));
            mark.band->setSelectable(false);
            mark.band->setProperty("noteId", id);
        } else {
            mark.line = new QCPItemStraightLine(m_plot);
            mark.line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
            mark.line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
            mark.line->point1->setCoords(static_cast<double>(n.note.startNs), 0);
            mark.line->point2->setCoords(static_cast<double>(n.note.startNs), 1);
            mark.line->setPen(QPen(color, 1.5));
            mark.line->setSelectable(false);
            mark.line->setProperty("noteId", id);
        }
        mark.label = new QCPItemText(m_plot);
        mark.label->position->setType(QCPItemPosition::ptAbsolute);
        mark.label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        mark.label->setPadding(QMargins(3, 1, 3, 1));
        QColor back = color;
        back.setAlpha(225);
        mark.label->setBrush(back);
        mark.label->setPen(QPen(color.darker(140), 1));
        mark.label->setColor(color.lightness() < 120 ? Qt::white : Qt::black);
        mark.label->setSelectable(false);
        mark.label->setProperty("noteId", id);
        mark.label->setVisible(false);  // until placed
        m_marks.push_back(mark);
    }
}

void PlotNoteItems::place(const std::vector<QRectF>& obstacles) {
    const QRect area = m_plot->axisRect()->rect();
    const QCPRange range = m_plot->xAxis->range();
    std::vector<QRectF> taken;
    for (const QRectF& r : obstacles) {
        if (!r.isEmpty()) {
            taken.push_back(r.adjusted(-2, -1, 2, 1));
        }
    }
    for (size_t i = 0; i < m_marks.size(); ++i) {
        PlotNoteMark& mark = m_marks[i];
        const trace::Note& note = m_notes[i].note;
        const bool shown = static_cast<double>(note.startNs) <= range.upper &&
                           static_cast<double>(std::max(note.startNs, note.endNs)) >= range.lower;
        for (QCPAbstractItem* item :
             {static_cast<QCPAbstractItem*>(mark.line), static_cast<QCPAbstractItem*>(mark.band)}) {
            if (item) {
                item->setVisible(shown);
            }
        }
        mark.label->setVisible(false);
        if (!shown || area.width() < 20 || area.height() < 10) {
            continue;
        }
        const QFontMetrics fm(mark.label->font());
        const double x = std::max(m_plot->xAxis->coordToPixel(static_cast<double>(note.startNs)),
                                  static_cast<double>(area.left()));
        const double rowHeight = fm.height() + 2;
        const int rows = std::max(1, static_cast<int>(area.height() * kLabelRowsShare / rowHeight));
        const QString full = fm.elidedText(noteLabel(m_notes[i]), Qt::ElideRight, kLabelWidthPx);
        const QString texts[] = {full, QString::number(m_notes[i].number)};
        bool placed = false;
        for (const QString& text : texts) {
            const double w = fm.horizontalAdvance(text) + 6;
            for (int row = 0; row < rows && !placed; ++row) {
                const double y = area.top() + 2 + row * rowHeight;
                for (const double left : {x + 3, x - 3 - w}) {
                    const double cl = std::clamp(
                        left, static_cast<double>(area.left()) + 1,
                        std::max(static_cast<double>(area.left()) + 1, area.right() - w - 1));
                    const QRectF r(cl, y, w, rowHeight);
                    const bool clear =
                        std::none_of(taken.begin(), taken.end(),
                                     [&r](const QRectF& t) { return t.intersects(r); });
                    if (clear && r.right() <= area.right()) {
                        mark.label->setText(text);
                        mark.label->position->setCoords(r.left(), r.top());
                        mark.label->setVisible(true);
                        taken.push_back(r);
                        placed = true;
                        break;
                    }
                }
            }
            if (placed) {
                break;
            }
        }
    }
}

}  // namespace vramscope::widgets
