#include "export_dialog.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QVBoxLayout>

#include <algorithm>

#include "notes_controller.h"
#include "vramscope/analysis/model/view_formulas.h"
#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/notes_model.h"
#include "vramscope/widgets/timeline_view.h"
#include "vramscope/widgets/units.h"
#include "vramscope/widgets/zoom_state.h"

namespace vramscope::app {

namespace {

/// Page sizes the dialog accepts, logical px (the composer refuses larger ones anyway).
constexpr int kMinPage = 200;
constexpr int kMaxPage = 10000;

QString suffixOf(widgets::ExportFormat format) {
    switch (format) {
        case widgets::ExportFormat::Png:
            return QStringLiteral("png");
        case widgets::ExportFormat::Svg:
            return QStringLiteral("svg");
        case widgets::ExportFormat::Pdf:
            return QStringLiteral("pdf");
    }
    return QStringLiteral("png");
}

/// A file name from a title: "Memory timeline" -> "memory-timeline".
QString fileStem(const QString& title) {
    QString stem;
    for (const QChar c : title.toLower()) {
        stem += c.isLetterOrNumber() ? c : QLatin1Char('-');
    }
    while (stem.contains(QStringLiteral("--"))) {
        stem.replace(QStringLiteral("--"), QStringLiteral("-"));
    }
    stem = stem.mid(stem.startsWith(QLatin1Char('-')) ? 1 : 0);
    if (stem.endsWith(QLatin1Char('-'))) {
        stem.chop(1);
    }
    return stem.isEmpty() ? QStringLiteral("vramscope") : stem;
}

QSpinBox* pageSpin(int value) {
    auto* spin = new QSpinBox;
    spin->setRange(kMinPage, kMaxPage);
    spin->setSuffix(QStringLiteral(" px"));
    spin->setValue(std::clamp(value, kMinPage, kMaxPage));
    return spin;
}

}  // namespace

QSize pageSizeKeeping(const QWidget& widget, const widgets::ExportFrame& frame) {
    // The frame takes the same room whatever the page (a header, notes, a footer): measured once
    // on a probe page.
    const QSize probe(2000, 2000);
    const QSize room = probe - widgets::exportViewSize(frame, probe);
    return widget.size() + room;
}

widgets::ExportFrame exportFrameFor(const MainWindow& window, const QString& title,
                                    const QWidget* target, const QString& view) {
    widgets::ExportFrame frame;
    frame.title = title;
    frame.version = QStringLiteral("vramscope %1").arg(QApplication::applicationVersion());
    if (const auto& job = window.job()) {
        frame.traceName = QString::fromStdString(job->title);
        const widgets::TimeRange v = window.zoomState()->visibleRange();
        frame.timeRange = QObject::tr("%1 – %2 (%3 shown of %4)")
                              .arg(widgets::formatDuration(double(v.startNs)),
                                   widgets::formatDuration(double(v.endNs)),
                                   widgets::formatDuration(double(v.durationNs())),
                                   widgets::formatDuration(double(job->durationNs)));
    }
    if (auto* notes = window.findChild<NotesController*>()) {
        frame.notes = widgets::notesInDisplayOrder(notes->model()->notes());
    } else if (target == window.timeline()) {
        frame.notes = window.timeline()->notes();
    }
    std::vector<std::string> formulas;
    if (!view.isEmpty()) {
        formulas = analysis::viewFormulas(view.toStdString());
    } else if (target == &window) {
        for (const char* shown : {"timeline", "lanes"}) {
            for (std::string& f : analysis::viewFormulas(shown)) {
                if (std::find(formulas.begin(), formulas.end(), f) == formulas.end()) {
                    formulas.push_back(std::move(f));
                }
            }
        }
    }
    for (const std::string& f : formulas) {
        frame.formulas.append(QString::fromStdString(f));
    }
    return frame;
}

ExportDialog::ExportDialog(std::vector<ExportTarget> targets,
                           std::function<QSize(const ExportTarget&)> pageSizeFor,
                           const QString& suggestedPath, QWidget* parent)
    : QDialog(parent), m_targets(std::move(targets)), m_pageSizeFor(std::move(pageSizeFor)) {
    Q_ASSERT(!m_targets.empty());
    setWindowTitle(tr("Export View"));
    auto* form = new QFormLayout;
    m_scope = new QComboBox;
    m_scope->setObjectName(QStringLiteral("ExportScope"));
    for (const ExportTarget& t : m_targets) {
        m_scope->addItem(t.name);
    }
    form->addRow(tr("&View:"), m_scope);
    m_title = new QLineEdit;
    form->addRow(tr("&Title:"), m_title);
    m_format = new QComboBox;
    m_format->addItem(tr("PNG (raster image)"), int(widgets::ExportFormat::Png));
    m_format->addItem(tr("SVG (vector, text stays text)"), int(widgets::ExportFormat::Svg));
    m_format->addItem(tr("PDF (vector, text stays text)"), int(widgets::ExportFormat::Pdf));
    form->addRow(tr("&Format:"), m_format);
    auto* size = new QHBoxLayout;
    m_width = pageSpin(1600);
    m_height = pageSpin(1000);
    size->addWidget(m_width);
    size->addWidget(new QLabel(QStringLiteral("×")));
    size->addWidget(m_height);
    size->addStretch(1);
    form->addRow(tr("Page &size:"), size);
    auto* resolution = new QHBoxLayout;
    m_resolution = new QComboBox;
    m_resolution->addItem(tr("1x (as on screen)"));
    m_resolution->addItem(tr("2x (sharp on high-density screens and slides)"));
    m_resolution->addItem(tr("A width of"));
    m_pngWidth = new QSpinBox;
    m_pngWidth->setRange(100, 20000);
    m_pngWidth->setValue(1920);
    m_pngWidth->setSuffix(QStringLiteral(" px"));
    m_pngWidth->setEnabled(false);
    resolution->addWidget(m_resolution);
    resolution->addWidget(m_pngWidth);
    resolution->addStretch(1);
    form->addRow(tr("PNG &resolution:"), resolution);
    auto* file = new QHBoxLayout;
    m_path = new QLineEdit(suggestedPath);
    auto* browseButton = new QPushButton(tr("&Browse…"));
    file->addWidget(m_path, 1);
    file->addWidget(browseButton);
    form->addRow(tr("F&ile:"), file);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);

    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browseButton, &QPushButton::clicked, this, &ExportDialog::browse);
    connect(m_scope, &QComboBox::currentIndexChanged, this, &ExportDialog::onTargetChanged);
    connect(m_format, &QComboBox::currentIndexChanged, this, &ExportDialog::onFormatChanged);
    connect(m_resolution, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_pngWidth->setEnabled(i == 2 && m_resolution->isEnabled()); });
    connect(m_title, &QLineEdit::textEdited, this, [this] { m_titleEdited = true; });
    onTargetChanged();
}

int ExportDialog::targetIndex() const {
    return std::max(0, m_scope->currentIndex());
}

const ExportTarget& ExportDialog::target() const {
    return m_targets[size_t(targetIndex())];
}

QString ExportDialog::title() const {
    return m_title->text();
}

QString ExportDialog::path() const {
    return m_path->text();
}

widgets::ExportOptions ExportDialog::options() const {
    widgets::ExportOptions o;
    o.format = widgets::ExportFormat(m_format->currentData().toInt());
    o.size = QSize(m_width->value(), m_height->value());
    o.scale = m_resolution->currentIndex() == 1 ? 2.0 : 1.0;
    o.widthPx = m_resolution->currentIndex() == 2 ? m_pngWidth->value() : 0;
    return o;
}

void ExportDialog::setTargetIndex(int index) {
    m_scope->setCurrentIndex(index);
}

void ExportDialog::setFormat(widgets::ExportFormat format) {
    m_format->setCurrentIndex(m_format->findData(int(format)));
}

void ExportDialog::setPngWidth(int widthPx) {
    if (widthPx > 0) {
        m_pngWidth->setValue(widthPx);
        m_resolution->setCurrentIndex(2);
    } else {
        m_resolution->setCurrentIndex(0);
    }
}

void ExportDialog::setPageSize(QSize size) {
    m_width->setValue(size.width());
    m_height->setValue(size.height());
}

void ExportDialog::setPath(const QString& path) {
    m_path->setText(path);
}

void ExportDialog::onTargetChanged() {
    const ExportTarget& t = target();
    if (!m_titleEdited) {
        m_title->setText(t.name);
    }
    // The page keeps the view at its size on screen, framed; a whole window always is.
    setPageSize(m_pageSizeFor(t));
    m_width->setEnabled(!t.widget->isWindow());
    m_height->setEnabled(!t.widget->isWindow());
    // The file is named after the view until the user picks one elsewhere.
    const QFileInfo info(m_path->text());
    const QString dir = m_path->text().isEmpty() ? QDir::currentPath() : info.absolutePath();
    m_path->setText(
        QDir(dir).filePath(fileStem(t.name) + QLatin1Char('.') + suffixOf(options().format)));
}

void ExportDialog::onFormatChanged() {
    const bool png = options().format == widgets::ExportFormat::Png;
    m_resolution->setEnabled(png);
    m_pngWidth->setEnabled(png && m_resolution->currentIndex() == 2);
    const QFileInfo info(m_path->text());
    if (!m_path->text().isEmpty()) {
        m_path->setText(info.dir().filePath(info.completeBaseName() + QLatin1Char('.') +
                                            suffixOf(options().format)));
    }
}

void ExportDialog::browse() {
    const QString suffix = suffixOf(options().format);
    const QString chosen =
        QFileDialog::getSaveFileName(this, tr("Export the view"), m_path->text(),
                                     tr("%1 files (*.%2)").arg(suffix.toUpper(), suffix));
    if (!chosen.isEmpty()) {
        m_path->setText(chosen);
    }
}

void runExportView(MainWindow& window) {
    auto pageSizeFor = [&window](const ExportTarget& t) {
        return pageSizeKeeping(*t.widget, exportFrameFor(window, t.name, t.widget, t.view));
    };
    ExportDialog dialog(window.exportTargets(), pageSizeFor, QString(), &window);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    const ExportTarget& t = dialog.target();
    widgets::ExportOptions options = dialog.options();
    const widgets::ExportFrame frame = exportFrameFor(window, dialog.title(), t.widget, t.view);
    if (t.widget == &window) {
        // The whole window is not resized for the picture: the page is made to fit it.
        options.size = pageSizeKeeping(window, frame);
    }
    const QString error = widgets::exportView(*t.widget, frame, options, dialog.path());
    if (!error.isEmpty()) {
        // The composer's message names the file.
        QMessageBox::warning(&window, QObject::tr("Export View"),
                             QObject::tr("The view could not be exported: %1").arg(error));
        return;
    }
    window.statusBar()->showMessage(QObject::tr("Exported %1").arg(dialog.path()), 5000);
}

void copyViewImage(MainWindow& window) {
    const ExportTarget t = window.exportTargets().front();
    const widgets::ExportFrame frame = exportFrameFor(window, t.name, t.widget, t.view);
    const QImage image = widgets::exportImage(*t.widget, frame, pageSizeKeeping(*t.widget, frame),
                                              window.devicePixelRatioF());
    if (image.isNull()) {
        QMessageBox::warning(&window, QObject::tr("Copy Image"),
                             QObject::tr("The view \"%1\" could not be drawn.").arg(t.name));
        return;
    }
    QApplication::clipboard()->setImage(image);
    window.statusBar()->showMessage(
        QObject::tr("Copied %1 (%2 × %3 px)").arg(t.name).arg(image.width()).arg(image.height()),
        5000);
}

}  // namespace vramscope::app
