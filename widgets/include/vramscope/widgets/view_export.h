#pragma once
// Pictures that stand on their own: a view (or the whole window) framed with a title, the trace
// name, the time range, the legend, the notes, and a footer with the vramscope version and the
// formulas behind the figures shown; written as PNG (raster) or SVG / PDF (vector: text stays
// text, plots are drawn as paths, not as a pasted bitmap).

#include <QImage>
#include <QRect>
#include <QSize>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

#include "vramscope/trace/notes.h"

class QPainter;
class QWidget;

namespace vramscope::widgets {

enum class ExportFormat { Png, Svg, Pdf };

/// The format a file name asks for, from its suffix (.png, .svg, .pdf, any case); nullopt for
/// anything else.
std::optional<ExportFormat> exportFormatFor(const QString& path);

/// What frames the picture. Every field may be empty; empty parts are left out.
struct ExportFrame {
    QString title;       ///< e.g. "Memory timeline", "Allocation flame view"
    QString traceName;   ///< the job's title (file or directory name)
    QString timeRange;   ///< e.g. "0 ms – 305 ms (305 ms shown of 305 ms)"
    QStringList legend;  ///< legend lines the view itself does not draw, e.g. "— reserved"
    std::vector<trace::Note> notes;  ///< listed under the view, numbered as the markers are
    QStringList formulas;            ///< footer: how the figures shown are computed
    QString version;                 ///< e.g. "vramscope 0.4.0"
};

/// How to write it. `size` is the whole picture in logical pixels (the view is laid out at what
/// is left inside the frame); PNG is written at `scale` device pixels per logical pixel, or at
/// exactly `widthPx` pixels wide (height in proportion) when widthPx > 0.
struct ExportOptions {
    ExportFormat format = ExportFormat::Png;
    QSize size{1600, 1000};
    double scale = 1.0;
    int widthPx = 0;
};

/// Paints `frame` and `view` into `page` (logical px) of the painter's device: the frame's header
/// and footer as text, the view through its own painting, QCustomPlot children through
/// QCustomPlot::toPainter so that SVG and PDF get vector plots. `view` keeps its current size.
void paintExportPage(QPainter& painter, const QRect& page, QWidget& view, const ExportFrame& frame);

/// Resizes `view` to fit `options.size` inside the frame, lays it out, and writes the picture to
/// `path`. Returns an empty string on success, else a message naming the path ("cannot write
/// /x/y.pdf: ...").
QString exportView(QWidget& view, const ExportFrame& frame, const ExportOptions& options,
                   const QString& path);

/// The same picture as a raster image (for the clipboard), `size` logical px at `scale`; a null
/// image when the size or scale is out of range (see exportView).
QImage exportImage(QWidget& view, const ExportFrame& frame, QSize size, double scale = 1.0);

/// The size (logical px) the view gets inside a page of `pageSize` framed by `frame`: what the
/// header, legend, notes and footer leave. Lets a caller lay a view out before exporting it.
QSize exportViewSize(const ExportFrame& frame, QSize pageSize);

/// A PDF of one or more pages of `pageSize` logical px each (1 px = 1/96 inch), written to a
/// temporary file and renamed over `path` by finish(), so a failed run leaves no half file.
/// GUI thread only (it paints widgets). Pages are painted with a QCPPainter in vector mode.
class ExportPdfDocument {
public:
    ExportPdfDocument(const QString& path, QSize pageSize, const QString& title);
    ~ExportPdfDocument();
    ExportPdfDocument(const ExportPdfDocument&) = delete;
    ExportPdfDocument& operator=(const ExportPdfDocument&) = delete;

    /// Opens the file; empty on success, else "cannot write PATH: reason". Call once, first.
    QString begin();
    /// A page framed by `frame` around `view`, laid out at exportViewSize(frame, pageSize).
    void paintViewPage(QWidget& view, const ExportFrame& frame);
    /// A page of text under the frame's header: `lines` in a fixed-width font of the largest
    /// size from 16 px down to 6 px at which the longest line and all lines fit; past that the
    /// last lines are cut.
    void paintTextPage(const ExportFrame& frame, const QStringList& lines);
    /// Starts a page (the first call uses the first page) and gives its painter, for pages the
    /// two above do not cover. Coordinates: logical px, (0,0) top left.
    QPainter& newPage();
    /// Writes the file; empty on success, else the message naming the path.
    QString finish();
    int pageCount() const;

private:
    struct Private;
    QString m_path;
    QSize m_pageSize;
    QString m_title;
    std::unique_ptr<Private> d;
};

}  // namespace vramscope::widgets
