#pragma once
// Where the parts of an export page go (header, view, legend, notes, footer), computed from the
// frame's texts and the page size alone, so that exportView can size the view before painting
// and the painting puts every text where it was measured. Private to widgets.

#include <QFont>
#include <QRect>
#include <QString>

#include "vramscope/widgets/view_export.h"

namespace vramscope::widgets {

/// Fonts of the page in pixel sizes: the same on a 96 dpi screen, a PNG, an SVG and a PDF.
struct ExportPageFonts {
    QFont title;
    QFont heading;
    QFont body;
    QFont small;
    QFont mono;
};
ExportPageFonts exportPageFonts();

/// Rectangles in page coordinates; an empty rectangle: the part is left out.
struct ExportPageLayout {
    ExportPageFonts fonts;
    QRect title;
    QRect subtitle;
    QString subtitleText;  ///< "trace · time range"
    QRect view;
    QRect legend;
    QString legendText;
    QRect notesHeading;
    QRect notes;
    QString notesText;  ///< one numbered paragraph per note
    QRect footer;
    QString footerText;  ///< version, then the formulas
};

/// The layout of `frame` on `page`. The view gets what the texts leave (at least a third of the
/// page height: notes and formulas past that are cut at a line boundary).
ExportPageLayout layoutExportPage(const QRect& page, const ExportFrame& frame);

/// "1. title (12.0 ms - 15.0 ms, GPU 0:1): text", one per note, numbered from 1 in frame order.
QString exportNotesText(const std::vector<trace::Note>& notes);

}  // namespace vramscope::widgets
