#include "vramscope/widgets/view_export.h"

#include <QApplication>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QImageWriter>
#include <QLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QPicture>
#include <QSaveFile>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>

#include "export_page_layout.h"
#include "qcustomplot.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

/// Lays out every layout below `widget` now, so that a view never shown on screen has its
/// children placed before it is painted.
void activateLayouts(QWidget& widget) {
    if (QLayout* layout = widget.layout())
        layout->activate();
    for (QObject* child : widget.children()) {
        if (auto* w = qobject_cast<QWidget*>(child))
            activateLayouts(*w);
    }
}

/// A view is painted at `size`; this gives it that size for the duration of an export and then
/// gives back the one it had, so a view inside the main window returns to its place.
class ScopedViewSize {
public:
    ScopedViewSize(QWidget& view, QSize size) : m_view(view), m_old(view.size()) {
        if (!view.isVisible() && view.isWindow()) {
            // Shown off screen only: layouts and resize events are delivered to visible widgets.
            view.setAttribute(Qt::WA_DontShowOnScreen, true);
            view.show();
            m_hideAfter = true;
        }
        // A view that needs more room than the page leaves (many GPU lanes) is laid out at its
        // minimum and painted scaled down, rather than clipped.
        view.resize(size.expandedTo(view.minimumSizeHint()));
        // A few rounds: a child that fits itself to its new width (a word-wrapped caption sets
        // its minimum height on resize) asks for another layout.
        for (int round = 0; round < 3; ++round) {
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            activateLayouts(view);
            QCoreApplication::sendPostedEvents();
        }
    }
    ~ScopedViewSize() {
        if (m_hideAfter)
            m_view.hide();
        if (!m_view.isWindow())
            m_view.resize(m_old);
    }
    ScopedViewSize(const ScopedViewSize&) = delete;
    ScopedViewSize& operator=(const ScopedViewSize&) = delete;

private:
    QWidget& m_view;
    QSize m_old;
    bool m_hideAfter = false;
};

/// One plot through its own drawing, never its cached pixmap. `qcp` is the page painter when it
/// is a QCPPainter; otherwise the plot is recorded as a QPicture (vector commands) and replayed.
void paintPlot(QPainter& painter, QCPPainter* qcp, QCustomPlot& plot) {
    // NOTE(qcp): toPainter draws the layers afresh, but the axes' ranges and the plottables'
    // data are brought up to date by replot(); a view laid out just now has not replotted yet.
    plot.replot(QCustomPlot::rpImmediateRefresh);
    if (qcp != nullptr) {
        qcp->save();
        plot.toPainter(qcp, plot.width(), plot.height());
        qcp->restore();
        return;
    }
    QPicture picture;
    QCPPainter recorder(&picture);
    recorder.setMode(QCPPainter::pmVectorized);
    plot.toPainter(&recorder, plot.width(), plot.height());
    recorder.end();
    painter.drawPicture(0, 0, picture);
}

/// Paints `widget` and its visible children, each at its place inside `root`, clipped to what its
/// ancestors show (`clip`, root coordinates). Each widget paints itself alone (no DrawChildren),
/// so that QCustomPlot children below ordinary widgets still go through paintPlot.
void paintTree(QPainter& painter, QCPPainter* qcp, QWidget& root, QWidget& widget,
               const QRect& clip) {
    const QPoint origin = &widget == &root ? QPoint() : widget.mapTo(&root, QPoint());
    const QRect shown = QRect(origin, widget.size()).intersected(clip);
    if (shown.isEmpty())
        return;
    painter.save();
    painter.translate(origin);
    painter.setClipRect(shown.translated(-origin), Qt::IntersectClip);
    if (auto* plot = qobject_cast<QCustomPlot*>(&widget)) {
        paintPlot(painter, qcp, *plot);
        painter.restore();
        return;  // a plot's children (none in our views) are part of its own drawing
    }
    widget.render(&painter, QPoint(), QRegion(), QWidget::DrawWindowBackground);
    painter.restore();
    for (QObject* child : widget.children()) {
        auto* w = qobject_cast<QWidget*>(child);
        if (w == nullptr || w->isWindow() || !w->isVisibleTo(&root))
            continue;
        paintTree(painter, qcp, root, *w, shown);
    }
}

void paintText(QPainter& painter, const QRectF& rect, const QFont& font, const QColor& color,
               const QString& text, int flags = Qt::TextWordWrap) {
    if (text.isEmpty() || rect.isEmpty())
        return;
    painter.setFont(font);
    painter.setPen(color);
    painter.drawText(rect, flags | Qt::AlignLeft | Qt::AlignTop, text);
}

/// The page: frame texts around the view. `qcp` is non-null when `painter` is a QCPPainter.
void paintPage(QPainter& painter, QCPPainter* qcp, const QRect& page, QWidget& view,
               const ExportFrame& frame) {
    const ExportPageLayout layout = layoutExportPage(page, frame);
    const ExportPageFonts& fonts = layout.fonts;
    painter.save();
    painter.fillRect(page, Qt::white);
    paintText(painter, layout.title, fonts.title, Qt::black, frame.title, Qt::TextSingleLine);
    paintText(painter, layout.subtitle, fonts.body, QColor(0x44, 0x44, 0x44), layout.subtitleText);

    // The view at its own size, scaled down (never up) when it is larger than its place.
    const QSize viewSize = view.size();
    if (!viewSize.isEmpty() && !layout.view.isEmpty()) {
        const double scale = std::min({1.0, layout.view.width() / double(viewSize.width()),
                                       layout.view.height() / double(viewSize.height())});
        painter.save();
        painter.translate(layout.view.topLeft());
        painter.scale(scale, scale);
        paintTree(painter, qcp, view, view, QRect(QPoint(), viewSize));
        painter.restore();
        painter.setPen(QColor(0xbb, 0xbb, 0xbb));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(layout.view.topLeft(), QSizeF(viewSize) * scale));
    }

    paintText(painter, layout.legend, fonts.body, Qt::black, layout.legendText);
    if (!layout.notesText.isEmpty()) {
        paintText(painter, layout.notesHeading, fonts.heading, Qt::black, QObject::tr("Notes"),
                  Qt::TextSingleLine);
        paintText(painter, layout.notes, fonts.body, Qt::black, layout.notesText);
    }
    paintText(painter, layout.footer, fonts.small, QColor(0x55, 0x55, 0x55), layout.footerText);
    painter.restore();
}

/// Checks what the picture can be; empty when fine, else the sentence naming `path`.
QString checkOptions(const ExportOptions& options, const QString& path) {
    constexpr int kMaxSide = 20000;  // a 20000 px PNG is 1.6 GB of pixels: far past any slide
    if (options.size.width() < 200 || options.size.height() < 150 ||
        options.size.width() > kMaxSide || options.size.height() > kMaxSide)
        return QObject::tr("cannot write %1: the picture size %2x%3 is outside 200x150 .. %4x%4")
            .arg(path)
            .arg(options.size.width())
            .arg(options.size.height())
            .arg(kMaxSide);
    if (options.widthPx < 0 || options.widthPx > kMaxSide || !(options.scale > 0.0) ||
        options.scale * std::max(options.size.width(), options.size.height()) > kMaxSide)
        return QObject::tr("cannot write %1: the PNG width or scale asks for more than %2 pixels")
            .arg(path)
            .arg(kMaxSide);
    return {};
}

QImage renderImage(QWidget& view, const ExportFrame& frame, QSize size, double scale) {
    const QSize pixels(int(std::lround(size.width() * scale)),
                       int(std::lround(size.height() * scale)));
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull())
        return image;
    // Logical size stays `size`: the page is laid out the same at every scale.
    image.setDevicePixelRatio(double(pixels.width()) / size.width());
    image.fill(Qt::white);
    QCPPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    paintPage(painter, &painter, QRect(QPoint(), size), view, frame);
    painter.end();
    return image;
}

QString writePng(QWidget& view, const ExportFrame& frame, const ExportOptions& options,
                 const QString& path) {
    const double scale =
        options.widthPx > 0 ? double(options.widthPx) / options.size.width() : options.scale;
    QImage image = renderImage(view, frame, options.size, scale);
    if (options.widthPx > 0 && !image.isNull() && image.width() != options.widthPx)
        image = image.scaledToWidth(options.widthPx, Qt::SmoothTransformation);
    if (image.isNull())
        return QObject::tr("cannot write %1: out of memory for the image").arg(path);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return QObject::tr("cannot write %1: %2").arg(path, file.errorString());
    image.setDevicePixelRatio(1.0);
    QImageWriter writer(&file, "png");
    if (!writer.write(image))
        return QObject::tr("cannot write %1: %2").arg(path, writer.errorString());
    if (!file.commit())
        return QObject::tr("cannot write %1: %2").arg(path, file.errorString());
    return {};
}

QString writeSvg(QWidget& view, const ExportFrame& frame, const ExportOptions& options,
                 const QString& path) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return QObject::tr("cannot write %1: %2").arg(path, file.errorString());
    QSvgGenerator generator;
    generator.setOutputDevice(&file);
    generator.setSize(options.size);
    generator.setViewBox(QRect(QPoint(), options.size));
    // One SVG user unit per logical pixel, so fonts in points come out as on a 96 dpi screen.
    generator.setResolution(96);
    generator.setTitle(frame.title);
    generator.setDescription(frame.traceName);
    QCPPainter painter;
    if (!painter.begin(&generator))
        return QObject::tr("cannot write %1: the SVG painter did not start").arg(path);
    painter.setMode(QCPPainter::pmVectorized);
    paintPage(painter, &painter, QRect(QPoint(), options.size), view, frame);
    painter.end();
    if (!file.commit())
        return QObject::tr("cannot write %1: %2").arg(path, file.errorString());
    return {};
}

}  // namespace

std::optional<ExportFormat> exportFormatFor(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png"))
        return ExportFormat::Png;
    if (suffix == QLatin1String("svg"))
        return ExportFormat::Svg;
    if (suffix == QLatin1String("pdf"))
        return ExportFormat::Pdf;
    return std::nullopt;
}

void paintExportPage(QPainter& painter, const QRect& page, QWidget& view,
                     const ExportFrame& frame) {
    paintPage(painter, nullptr, page, view, frame);
}

QSize exportViewSize(const ExportFrame& frame, QSize pageSize) {
    return layoutExportPage(QRect(QPoint(), pageSize), frame).view.size();
}

QString exportView(QWidget& view, const ExportFrame& frame, const ExportOptions& options,
                   const QString& path) {
    if (QString bad = checkOptions(options, path); !bad.isEmpty())
        return bad;
    ScopedViewSize sized(view, exportViewSize(frame, options.size));
    switch (options.format) {
        case ExportFormat::Png:
            return writePng(view, frame, options, path);
        case ExportFormat::Svg:
            return writeSvg(view, frame, options, path);
        case ExportFormat::Pdf: {
            ExportPdfDocument pdf(path, options.size, frame.title);
            if (QString error = pdf.begin(); !error.isEmpty())
                return error;
            pdf.paintViewPage(view, frame);
            return pdf.finish();
        }
    }
    return {};
}

QImage exportImage(QWidget& view, const ExportFrame& frame, QSize size, double scale) {
    ExportOptions options;
    options.size = size;
    options.scale = scale;
    if (!checkOptions(options, QString()).isEmpty())
        return {};
    ScopedViewSize sized(view, exportViewSize(frame, size));
    return renderImage(view, frame, size, scale);
}

// --- ExportPdfDocument -----------------------------------------------------------------------

struct ExportPdfDocument::Private {
    QSaveFile file;
    std::unique_ptr<QPdfWriter> writer;
    QCPPainter painter;
    int pages = 0;
    QString error;
};

ExportPdfDocument::ExportPdfDocument(const QString& path, QSize pageSize, const QString& title)
    : m_path(path), m_pageSize(pageSize), m_title(title), d(std::make_unique<Private>()) {}

ExportPdfDocument::~ExportPdfDocument() {
    if (d->painter.isActive())
        d->painter.end();
}

QString ExportPdfDocument::begin() {
    d->file.setFileName(m_path);
    if (!d->file.open(QIODevice::WriteOnly))
        return d->error = QObject::tr("cannot write %1: %2").arg(m_path, d->file.errorString());
    d->writer = std::make_unique<QPdfWriter>(&d->file);
    // 96 units per inch: one PDF unit per logical pixel, the page exactly the picture's size.
    d->writer->setResolution(96);
    d->writer->setPageSize(QPageSize(QSizeF(m_pageSize) * 72.0 / 96.0, QPageSize::Point, QString(),
                                     QPageSize::ExactMatch));
    d->writer->setPageMargins(QMarginsF(0, 0, 0, 0));
    d->writer->setTitle(m_title);
    d->writer->setCreator(QCoreApplication::applicationName());
    if (!d->painter.begin(d->writer.get()))
        return d->error = QObject::tr("cannot write %1: the PDF painter did not start").arg(m_path);
    d->painter.setMode(QCPPainter::pmVectorized);
    return {};
}

QPainter& ExportPdfDocument::newPage() {
    if (d->pages > 0)
        d->writer->newPage();
    ++d->pages;
    return d->painter;
}

void ExportPdfDocument::paintViewPage(QWidget& view, const ExportFrame& frame) {
    ScopedViewSize sized(view, exportViewSize(frame, m_pageSize));
    newPage();
    paintPage(d->painter, &d->painter, QRect(QPoint(), m_pageSize), view, frame);
}

void ExportPdfDocument::paintTextPage(const ExportFrame& frame, const QStringList& lines) {
    QPainter& painter = newPage();
    QWidget nothing;  // the frame without a view: the text takes the view's place
    nothing.resize(0, 0);
    const QRect page(QPoint(), m_pageSize);
    paintPage(painter, &d->painter, page, nothing, frame);
    const ExportPageLayout layout = layoutExportPage(page, frame);
    QFont mono = layout.fonts.mono;
    int pixels = 16;  // as large as fits, from 16 px down
    const QString text = lines.join(QLatin1Char('\n'));
    for (; pixels > 6; --pixels) {
        mono.setPixelSize(pixels);
        const QRectF box = QFontMetricsF(mono).boundingRect(QRectF(0, 0, 1e6, 1e6), 0, text);
        if (box.width() <= layout.view.width() && box.height() <= layout.view.height())
            break;
    }
    mono.setPixelSize(pixels);
    painter.save();
    painter.setFont(mono);
    painter.setPen(Qt::black);
    painter.drawText(layout.view, Qt::AlignLeft | Qt::AlignTop, text);
    painter.restore();
}

QString ExportPdfDocument::finish() {
    if (!d->error.isEmpty())
        return d->error;
    if (d->painter.isActive())
        d->painter.end();
    d->writer.reset();  // flushes the PDF's trailer into the file
    if (!d->file.commit())
        return QObject::tr("cannot write %1: %2").arg(m_path, d->file.errorString());
    return {};
}

int ExportPdfDocument::pageCount() const {
    return d->pages;
}

}  // namespace vramscope::widgets
