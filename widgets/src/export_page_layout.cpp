#include "export_page_layout.h"

#include <QApplication>
#include <QFontMetricsF>

#include <algorithm>
#include <cmath>

#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

constexpr int kPageMargin = 20;
constexpr int kGap = 8;
/// A note's text beyond this is cut with an ellipsis: the page lists notes, the sidecar keeps
/// them whole.
constexpr int kNoteTextChars = 300;
/// A title beyond this is cut too: one unbroken word cannot wrap, and would run off the page.
constexpr int kNoteTitleChars = 120;

QFont pixelFont(const QFont& base, int pixels, bool bold = false) {
    QFont font = base;
    font.setPixelSize(pixels);
    font.setBold(bold);
    return font;
}

/// Height of `text` wrapped at `width` px in `font`; 0 for no text. A pixel of slack per line
/// keeps a device whose hinting differs by a fraction from cutting the last line.
int wrappedHeight(const QFont& font, const QString& text, int width) {
    if (text.isEmpty() || width <= 0)
        return 0;
    const QFontMetricsF metrics(font);
    const QRectF box = metrics.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap, text);
    const double lines = std::max(1.0, std::round(box.height() / metrics.lineSpacing()));
    return int(std::ceil(box.height() + lines));
}

/// `height` rounded down to whole lines of `font`, so that a cut text ends at a line boundary.
int wholeLines(const QFont& font, int height) {
    const double line = QFontMetricsF(font).lineSpacing() + 1.0;
    return int(std::floor(height / line) * line);
}

QString noteWhere(const trace::Note& note) {
    QString where = formatDuration(double(note.startNs));
    if (note.isRange())
        where += QStringLiteral(" \u2013 ") + formatDuration(double(note.endNs));
    if (note.pinnedToGpu())
        where += QStringLiteral(", GPU %1:%2").arg(note.rankIndex).arg(note.device);
    return where;
}

}  // namespace

ExportPageFonts exportPageFonts() {
    const QFont base = QApplication::font();
    ExportPageFonts fonts;
    fonts.title = pixelFont(base, 20, true);
    fonts.heading = pixelFont(base, 14, true);
    fonts.body = pixelFont(base, 13);
    fonts.small = pixelFont(base, 11);
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::TypeWriter);
    fonts.mono = pixelFont(mono, 12);
    return fonts;
}

QString exportNotesText(const std::vector<trace::Note>& notes) {
    QStringList paragraphs;
    int number = 0;
    for (const trace::Note& note : notes) {
        ++number;
        QString text = QString::fromStdString(note.text).simplified();
        QString title = QString::fromStdString(note.title).simplified();
        if (title.isEmpty())
            title = text.section(QLatin1Char('.'), 0, 0);
        if (text.size() > kNoteTextChars)
            text = text.left(kNoteTextChars - 1) + QChar(0x2026);
        if (title.size() > kNoteTitleChars)
            title = title.left(kNoteTitleChars - 1) + QChar(0x2026);
        QString line = QStringLiteral("%1. %2 (%3)").arg(number).arg(title, noteWhere(note));
        if (note.generated)
            line += QObject::tr(" [generated]");
        if (!text.isEmpty() && text != title)
            line += QStringLiteral(": ") + text;
        paragraphs << line;
    }
    return paragraphs.join(QLatin1Char('\n'));
}

ExportPageLayout layoutExportPage(const QRect& page, const ExportFrame& frame) {
    ExportPageLayout out;
    out.fonts = exportPageFonts();
    const ExportPageFonts& f = out.fonts;
    const int left = page.left() + kPageMargin;
    const int width = std::max(1, page.width() - 2 * kPageMargin);
    int top = page.top() + kPageMargin;

    if (!frame.title.isEmpty()) {
        const int h = int(std::ceil(QFontMetricsF(f.title).height()));
        out.title = QRect(left, top, width, h);
        top += h + 2;
    }
    QStringList sub;
    if (!frame.traceName.isEmpty())
        sub << frame.traceName;
    if (!frame.timeRange.isEmpty())
        sub << frame.timeRange;
    out.subtitleText = sub.join(QStringLiteral("  \u00b7  "));
    if (const int h = wrappedHeight(f.body, out.subtitleText, width); h > 0) {
        out.subtitle = QRect(left, top, width, h);
        top += h;
    }
    top += kGap;

    // Below the view, top to bottom: legend, notes, footer; measured first, placed from the
    // bottom up, cut when they would leave the view less than a third of the page.
    out.legendText = frame.legend.join(QStringLiteral("     "));
    out.notesText = exportNotesText(frame.notes);
    QStringList footer;
    if (!frame.version.isEmpty())
        footer << frame.version;
    footer << frame.formulas;
    out.footerText = footer.join(QLatin1Char('\n'));
    int legendH = wrappedHeight(f.body, out.legendText, width);
    const int headingH =
        out.notesText.isEmpty() ? 0 : int(std::ceil(QFontMetricsF(f.heading).height()));
    int notesH = wrappedHeight(f.body, out.notesText, width);
    int footerH = wrappedHeight(f.small, out.footerText, width);

    const int bottom = page.bottom() + 1 - kPageMargin;
    const int minView = page.height() / 3;
    const auto below = [&] {
        return (legendH > 0 ? legendH + kGap : 0) + (notesH > 0 ? headingH + notesH + kGap : 0) +
               (footerH > 0 ? footerH + kGap : 0);
    };
    int spare = bottom - top - minView;
    if (below() > spare) {
        // Notes give way first, then formulas; the legend stays whole.
        const int over = below() - spare;
        notesH = wholeLines(f.body, std::max(0, notesH - over));
        if (below() > spare)
            footerH = wholeLines(f.small, std::max(0, footerH - (below() - spare)));
    }

    int y = bottom;
    if (footerH > 0) {
        y -= footerH;
        out.footer = QRect(left, y, width, footerH);
        y -= kGap;
    }
    if (notesH > 0) {
        y -= notesH;
        out.notes = QRect(left, y, width, notesH);
        y -= headingH;
        out.notesHeading = QRect(left, y, width, headingH);
        y -= kGap;
    } else {
        out.notesText.clear();
    }
    if (legendH > 0) {
        y -= legendH;
        out.legend = QRect(left, y, width, legendH);
        y -= kGap;
    }
    out.view = QRect(left, top, width, std::max(0, y - top));
    return out;
}

}  // namespace vramscope::widgets
