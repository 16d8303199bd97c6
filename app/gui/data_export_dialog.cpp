#include "data_export_dialog.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMainWindow>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QThread>
#include <QVBoxLayout>

#include <algorithm>

#include "vramscope/analysis/model/text_format.h"

namespace vramscope::app {

namespace {

using analysis::ExportFormat;

constexpr int kPeak = -1;  // time combo: the GPU's peak instead of the selected time

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// What each table holds, one line for the table combo.
QString tableText(analysis::CsvTable table) {
    switch (table) {
        case analysis::CsvTable::Memory:
            return QObject::tr("memory: allocated and reserved bytes over time, per GPU");
        case analysis::CsvTable::Gaps:
            return QObject::tr("gaps: idle gaps between kernels, with their cause");
        case analysis::CsvTable::Collectives:
            return QObject::tr("collectives: each matched collective on each rank, with waits");
        case analysis::CsvTable::Iterations:
            return QObject::tr("iterations: each iteration per GPU, with its peaks");
    }
    return {};
}

/// Greys out combo entry `row` with `why` as its tooltip.
void disableEntry(QComboBox* combo, int row, const QString& why) {
    if (auto* model = qobject_cast<QStandardItemModel*>(combo->model())) {
        model->item(row)->setEnabled(false);
    }
    combo->setItemText(row, combo->itemText(row) + QObject::tr(" (not available)"));
    combo->setItemData(row, why, Qt::ToolTipRole);
}

/// Selects the first enabled entry when the current one is disabled.
void selectEnabled(QComboBox* combo) {
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    if (!model || combo->currentIndex() < 0 || model->item(combo->currentIndex())->isEnabled()) {
        return;
    }
    for (int i = 0; i < combo->count(); ++i) {
        if (model->item(i)->isEnabled()) {
            combo->setCurrentIndex(i);
            return;
        }
    }
}

}  // namespace

DataExportDialog::DataExportDialog(const analysis::JobModel& job, analysis::GpuKey selectedGpu,
                                   int64_t selectedTimeNs, QWidget* parent)
    : QDialog(parent), m_job(job), m_selectedTimeNs(selectedTimeNs), m_selectedGpu(selectedGpu) {
    setWindowTitle(tr("Export Data"));
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    m_format = new QComboBox(this);
    const std::vector<ExportFormat> available = dataExportFormats();
    for (const analysis::ExportFormatInfo& f : analysis::exportFormats()) {
        m_format->addItem(qs(f.name) + QStringLiteral(" (") + qs(f.extension) + QStringLiteral(")"),
                          static_cast<int>(f.format));
        const int row = m_format->count() - 1;
        if (std::find(available.begin(), available.end(), f.format) == available.end()) {
            disableEntry(m_format, row, tr("Not available in this build."));
        } else if (f.format == ExportFormat::Speedscope && job.memory.empty()) {
            disableEntry(m_format, row,
                         tr("No GPU of this job has allocation events: no live set to export."));
        }
    }
    form->addRow(tr("&Format:"), m_format);
    layout->addLayout(form);
    m_formatNote = new QLabel(this);
    m_formatNote->setWordWrap(true);
    layout->addWidget(m_formatNote);
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(csvPage());
    m_pages->addWidget(speedscopePage(selectedGpu, selectedTimeNs));
    m_pages->addWidget(new QWidget(this));  // formats without options
    layout->addWidget(m_pages);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Export…"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    m_format->setCurrentIndex(m_format->findData(static_cast<int>(ExportFormat::Csv)));
    selectEnabled(m_format);
    connect(m_format, &QComboBox::currentIndexChanged, this, &DataExportDialog::updatePage);
    updatePage();
    setMinimumWidth(560);
}

QWidget* DataExportDialog::csvPage() {
    auto* page = new QWidget(this);
    auto* form = new QFormLayout(page);
    form->setContentsMargins(0, 0, 0, 0);
    m_table = new QComboBox(page);
    for (analysis::CsvTable t : analysis::csvTables()) {
        m_table->addItem(tableText(t), static_cast<int>(t));
        if (std::string why = analysis::csvTableUnavailable(m_job, t); !why.empty()) {
            disableEntry(m_table, m_table->count() - 1, QString::fromStdString(why));
        }
    }
    selectEnabled(m_table);
    form->addRow(tr("&Table:"), m_table);
    auto* points = new QHBoxLayout;
    m_reduce = new QCheckBox(tr("&At most"), page);
    m_points = new QSpinBox(page);
    m_points->setRange(1, 100'000'000);
    m_points->setValue(2000);
    m_points->setSuffix(tr(" time buckets per GPU"));
    m_points->setEnabled(false);
    connect(m_reduce, &QCheckBox::toggled, m_points, &QWidget::setEnabled);
    points->addWidget(m_reduce);
    points->addWidget(m_points, 1);
    form->addRow(tr("Memory rows:"), points);
    auto* note = new QLabel(
        tr("Times are ns from the job start (the timeline's axis), bytes are bytes, an empty "
           "cell was not recorded. With a bucket limit, each bucket keeps the steps with its "
           "largest allocated and reserved bytes, so no peak is lost."),
        page);
    note->setWordWrap(true);
    form->addRow(note);
    connect(m_table, &QComboBox::currentIndexChanged, this, [this] {
        const bool memory =
            m_table->currentData().toInt() == static_cast<int>(analysis::CsvTable::Memory);
        m_reduce->setEnabled(memory);
        m_points->setEnabled(memory && m_reduce->isChecked());
    });
    return page;
}

QWidget* DataExportDialog::speedscopePage(analysis::GpuKey selectedGpu, int64_t selectedTimeNs) {
    auto* page = new QWidget(this);
    auto* form = new QFormLayout(page);
    form->setContentsMargins(0, 0, 0, 0);
    m_gpu = new QComboBox(page);
    for (size_t i = 0; i < m_job.memory.size(); ++i) {
        const analysis::GpuMemoryAnalysis& g = m_job.memory[i];
        const analysis::GpuSeries* series = m_job.gpu(g.key);
        QString text =
            QString::fromStdString(analysis::rankLabel(m_job.ranks[size_t(g.key.rankIndex)].rank) +
                                   " GPU " + std::to_string(toInt(g.key.device)));
        if (series && !series->deviceName.empty()) {
            text += QStringLiteral(" (") + QString::fromStdString(series->deviceName) +
                    QStringLiteral(")");
        }
        m_gpu->addItem(text, static_cast<int>(i));
        if (!g.liveSet.known) {
            disableEntry(m_gpu, m_gpu->count() - 1, QString::fromStdString(g.liveSet.reason));
        }
        if (g.key == selectedGpu) {
            m_gpu->setCurrentIndex(m_gpu->count() - 1);
        }
    }
    selectEnabled(m_gpu);
    form->addRow(tr("&GPU:"), m_gpu);
    m_time = new QComboBox(page);
    if (selectedGpu.isValid()) {
        m_time->addItem(
            tr("The selected time, %1 from the job start")
                .arg(QString::fromStdString(analysis::formatDuration(double(selectedTimeNs)))),
            0);
    }
    m_time->addItem(tr("The GPU's peak"), kPeak);
    form->addRow(tr("T&ime:"), m_time);
    m_grouping = new QComboBox(page);
    for (analysis::FlameGrouping g :
         {analysis::FlameGrouping::Stack, analysis::FlameGrouping::Nvtx,
          analysis::FlameGrouping::Category, analysis::FlameGrouping::Role}) {
        m_grouping->addItem(QString::fromUtf8(analysis::toString(g)), static_cast<int>(g));
    }
    form->addRow(tr("Group &by:"), m_grouping);
    auto* note = new QLabel(tr("The allocations alive at that time as a flame in bytes: one "
                               "sample per allocation site, weighted by its bytes."),
                            page);
    note->setWordWrap(true);
    form->addRow(note);
    return page;
}

void DataExportDialog::updatePage() {
    const auto format = static_cast<ExportFormat>(m_format->currentData().toInt());
    m_formatNote->setText(qs(analysis::exportFormatInfo(format).description));
    m_pages->setCurrentIndex(format == ExportFormat::Csv          ? 0
                             : format == ExportFormat::Speedscope ? 1
                                                                  : 2);
}

bool DataExportDialog::setFormat(ExportFormat format) {
    const int row = m_format->findData(static_cast<int>(format));
    auto* model = qobject_cast<QStandardItemModel*>(m_format->model());
    if (row < 0 || (model && !model->item(row)->isEnabled())) {
        return false;
    }
    m_format->setCurrentIndex(row);
    return true;
}

void DataExportDialog::setCsv(analysis::CsvTable table, size_t points) {
    m_table->setCurrentIndex(m_table->findData(static_cast<int>(table)));
    m_reduce->setChecked(points > 0);
    if (points > 0) {
        m_points->setValue(static_cast<int>(std::min<size_t>(points, 100'000'000)));
    }
}

DataExportRequest DataExportDialog::request() const {
    DataExportRequest r;
    r.format = static_cast<ExportFormat>(m_format->currentData().toInt());
    r.csv.table = static_cast<analysis::CsvTable>(m_table->currentData().toInt());
    r.csv.points = r.csv.table == analysis::CsvTable::Memory && m_reduce->isChecked()
                       ? static_cast<size_t>(m_points->value())
                       : 0;
    r.grouping = static_cast<analysis::FlameGrouping>(m_grouping->currentData().toInt());
    if (m_gpu->currentIndex() >= 0) {
        const analysis::GpuMemoryAnalysis& g =
            m_job.memory[static_cast<size_t>(m_gpu->currentData().toInt())];
        r.gpu = g.key;
        r.jobTimeNs = m_time->currentData().toInt() == kPeak
                          ? m_job.toJob(g.key.rankIndex, g.peakTimeNs)
                          : m_selectedTimeNs;
    }
    return r;
}

QString suggestedExportName(const analysis::JobModel& job, const DataExportRequest& request) {
    QString stem = QString::fromStdString(job.title);
    for (const char* suffix : {".gz", ".json", ".pickle", ".pkl", ".vscope", ".tar", ".tgz"}) {
        if (stem.endsWith(QLatin1String(suffix))) {
            stem.chop(static_cast<int>(qstrlen(suffix)));
        }
    }
    if (stem.isEmpty()) {
        stem = QStringLiteral("vramscope");
    }
    if (request.format == ExportFormat::Csv) {
        stem += QLatin1Char('-') + QString::fromUtf8(analysis::toString(request.csv.table));
    }
    return stem + qs(analysis::exportFormatInfo(request.format).extension);
}

void startDataExport(QMainWindow* window, std::shared_ptr<const analysis::JobModel> job,
                     const DataExportRequest& request) {
    const analysis::ExportFormatInfo& info = analysis::exportFormatInfo(request.format);
    const QString extension = qs(info.extension);
    // The dialog adds the extension to a bare name itself, before it asks whether to replace an
    // existing file, so that no file is replaced without asking.
    QFileDialog save(
        window, QObject::tr("Export Data"), suggestedExportName(*job, request),
        qs(info.description) + QStringLiteral(" (*") + extension + QStringLiteral(")"));
    save.setAcceptMode(QFileDialog::AcceptSave);
    save.setFileMode(QFileDialog::AnyFile);
    save.setDefaultSuffix(extension.mid(1));
    if (save.exec() != QDialog::Accepted || save.selectedFiles().isEmpty()) {
        return;
    }
    const QString path = save.selectedFiles().constFirst();
    window->statusBar()->showMessage(QObject::tr("Exporting to %1…").arg(path));
    // The full-resolution memory table of a long job runs to gigabytes: write it off the GUI
    // thread. The thread keeps the model alive; the result comes back through `window`.
    auto result = std::make_shared<trace::Result<std::string>>(std::string());
    QThread* thread = QThread::create(
        [job, request, path, result] { *result = exportData(*job, request, path.toStdString()); });
    QObject::connect(thread, &QThread::finished, window, [window, path, result] {
        if (result->ok()) {
            window->statusBar()->showMessage(QString::fromStdString(result->value()));
        } else {
            window->statusBar()->clearMessage();
            QMessageBox::warning(window, QObject::tr("Export Data"),
                                 QObject::tr("Could not export to %1:\n%2")
                                     .arg(path, QString::fromStdString(result->error().message)));
        }
    });
    QObject::connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    // Quitting while a file is written waits for it (a running QThread must not be destroyed).
    QObject::connect(qApp, &QCoreApplication::aboutToQuit, thread, [thread] { thread->wait(); });
    thread->start();
}

}  // namespace vramscope::app
