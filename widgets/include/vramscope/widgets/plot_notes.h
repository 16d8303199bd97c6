#pragma once
// Notes drawn on a QCustomPlot over time: a point as a vertical line, a range as a translucent
// band, and a numbered label at the top of the plot area placed clear of the data labels.

#include <QRectF>

#include <string>
#include <vector>

#include <qcustomplot.h>

#include "vramscope/widgets/note_marks.h"

namespace vramscope::widgets {

/// The items of one note on a plot (for tests and hit testing).
struct PlotNoteMark {
    std::string id;
    int number = 0;
    QCPItemStraightLine* line = nullptr;  ///< a point note's line (null for a range)
    QCPItemRect* band = nullptr;          ///< a range note's band (null for a point)
    QCPItemText* label = nullptr;
};

/// Owns the note items of one plot (the plot owns them as QCustomPlot items; this keeps the
/// list). The x axis is job time in ns. Labels go in rows from the top of the axis rectangle
/// down (at most the top 40 % of it), left of or right of the note's time, first with the
/// headline, then with the number only; a label that fits nowhere clear of the data labels and
/// the other notes' labels is hidden (its line or band stays). GUI thread only.
class PlotNoteItems {
public:
    explicit PlotNoteItems(QCustomPlot* plot);

    /// Replaces the drawn notes by `notes` (already the ones this plot shows, numbered).
    void setNotes(const std::vector<NumberedNote>& notes);
    const std::vector<PlotNoteMark>& marks() const { return m_marks; }
    /// Shows the marks of notes in the visible x range and places the labels clear of
    /// `obstacles` (pixel rectangles of the data labels). Call after the plot's layout step
    /// (QCustomPlot::afterLayout), when axis pixel positions are current.
    void place(const std::vector<QRectF>& obstacles);

private:
    QCustomPlot* m_plot;
    std::vector<NumberedNote> m_notes;
    std::vector<PlotNoteMark> m_marks;
};

/// The pixel rectangle of a text item as last laid out (empty when it is hidden).
QRectF textItemRect(const QCPItemText* text);

}  // namespace vramscope::widgets
