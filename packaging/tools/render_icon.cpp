// vramscope-render-icon: renders the application's SVG icon to the PNG sizes of the hicolor icon
// theme at build time, so the PNGs never drift from the SVG and none is committed.
//   vramscope-render-icon ICON.svg OUTDIR SIZE...   writes OUTDIR/SIZExSIZE/apps/NAME.png
// Exit codes: 0 written, 2 usage, 3 unreadable SVG or unwritable PNG.
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fputs("usage: vramscope-render-icon ICON.svg OUTDIR SIZE...\n", stderr);
        return 2;
    }
    // No display is needed to paint into an image; the platform plugin must still exist.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    const QString svgPath = QString::fromLocal8Bit(argv[1]);
    const QString outDir = QString::fromLocal8Bit(argv[2]);
    QSvgRenderer renderer(svgPath);
    if (!renderer.isValid()) {
        std::fprintf(stderr, "vramscope-render-icon: cannot read %s as SVG\n", argv[1]);
        return 3;
    }
    const QString name = QFileInfo(svgPath).completeBaseName();
    for (int i = 3; i < argc; ++i) {
        bool ok = false;
        const int size = QString::fromLocal8Bit(argv[i]).toInt(&ok);
        if (!ok || size < 8 || size > 1024) {
            std::fprintf(stderr, "vramscope-render-icon: size %s is not between 8 and 1024\n",
                         argv[i]);
            return 2;
        }
        QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        renderer.render(&painter, QRectF(0, 0, size, size));
        painter.end();
        const QString dir = QStringLiteral("%1/%2x%2/apps").arg(outDir).arg(size);
        const QString out = dir + QLatin1Char('/') + name + QStringLiteral(".png");
        if (!QDir().mkpath(dir) || !image.save(out, "PNG")) {
            std::fprintf(stderr, "vramscope-render-icon: cannot write %s\n", qPrintable(out));
            return 3;
        }
    }
    return 0;
}
