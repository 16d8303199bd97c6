#include "vramscope/widgets/note_dialog.h"

#include <QCheckBox>
#include <QColorDialog>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>

#include <algorithm>
#include <cmath>

#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

/// Every GPU of the job that has a plot or a kernel lane, by rank then device.
std::vector<analysis::GpuKey> jobGpus(const analysis::JobModel& job) {
    std::vector<analysis::GpuKey> keys;
    for (const analysis::GpuSeries& g : job.gpus) {
        keys.push_back(g.key);
    }
    for (const analysis::GpuKernelAnalysis& k : job.kernels) {
        if (std::find(keys.begin(), keys.end(), k.key) == keys.end()) {
            keys.push_back(k.key);
        }
    }
    std::sort(keys.begin(), keys.end(), [](const analysis::GpuKey& a, const analysis::GpuKey& b) {
        return std::pair(a.rankIndex, toInt(a.device)) < std::pair(b.rankIndex, toInt(b.device));
    });
    return keys;
}

}  // namespace

NoteDialog::NoteDialog(const trace::Note& note, std::shared_ptr<const analysis::JobModel> job,
                       QWidget* parent)
    : QDialog(parent),
      m_note(note),
      m_job(std::move(job)),
      m_color(QString::fromStdString(note.color)),
      m_title(new QLineEdit(QString::fromStdString(note.title), this)),
      m_text(new QPlainTextEdit(QString::fromStdString(note.text), this)),
      m_colorButton(new QPushButton(this)),
      m_gpu(new QComboBox(this)),
      m_start(new QDoubleSpinBox(this)),
      m_end(new QDoubleSpinBox(this)),
      m_range(new QCheckBox(tr("Range"), this)) {
    setWindowTitle(tr("Note"));
    const int64_t duration =
        m_job ? std::max<int64_t>(m_job->durationNs, 1) : std::max<int64_t>(note.endNs, 1);
    const TimeUnit unit = timeUnitFor(static_cast<double>(duration));
    m_unitNs = unit.ns;
    // Down to a millionth of the job, and never finer than 1 ns.
    const double step = std::max(1.0, static_cast<double>(duration) / 1e6);
    const int decimals = std::clamp(static_cast<int>(std::ceil(std::log10(unit.ns / step) - 1e-9)),
                                    0, static_cast<int>(std::lround(std::log10(unit.ns))));
    for (QDoubleSpinBox* box : {m_start, m_end}) {
        box->setDecimals(decimals);
        box->setRange(
            0.0, static_cast<double>(std::max({duration, note.startNs, note.endNs})) / unit.ns);
        box->setSuffix(QStringLiteral(" ") + QString::fromLatin1(unit.suffix));
        box->setKeyboardTracking(false);
    }
    m_start->setValue(static_cast<double>(note.startNs) / unit.ns);
    m_end->setValue(static_cast<double>(std::max(note.endNs, note.startNs)) / unit.ns);
    m_range->setChecked(note.isRange());
    m_end->setEnabled(note.isRange());
    connect(m_range, &QCheckBox::toggled, m_end, &QWidget::setEnabled);

    m_gpu->addItem(tr("All GPUs"), QVariantList{-1, -1});
    if (m_job) {
        for (const analysis::GpuKey& key : jobGpus(*m_job)) {
            m_gpu->addItem(gpuLabel(*m_job, key), QVariantList{key.rankIndex, toInt(key.device)});
            if (note.rankIndex == key.rankIndex && note.device == toInt(key.device)) {
                m_gpu->setCurrentIndex(m_gpu->count() - 1);
            }
        }
    }
    if (note.pinnedToGpu() && m_gpu->currentIndex() == 0) {
        // A GPU this job does not have (a sidecar edited by hand): kept as it is.
        m_gpu->addItem(tr("rank index %1 \u00b7 GPU %2").arg(note.rankIndex).arg(note.device),
                       QVariantList{note.rankIndex, note.device});
        m_gpu->setCurrentIndex(m_gpu->count() - 1);
    }

    auto* colorRow = new QHBoxLayout;
    colorRow->addWidget(m_colorButton);
    auto* defaultColor = new QPushButton(tr("Default"), this);
    colorRow->addWidget(defaultColor);
    colorRow->addStretch(1);
    connect(m_colorButton, &QPushButton::clicked, this, [this] {
        const QColor c = QColorDialog::getColor(noteColor(this->note()), this, tr("Note colour"));
        if (c.isValid()) {
            setColor(c.name());
        }
    });
    connect(defaultColor, &QPushButton::clicked, this, [this] { setColor({}); });
    updateColorButton();

    auto* timeRow = new QHBoxLayout;
    timeRow->addWidget(m_start, 1);
    timeRow->addWidget(m_range);
    timeRow->addWidget(m_end, 1);

    auto* form = new QFormLayout;
    form->addRow(tr("&Title"), m_title);
    form->addRow(tr("Te&xt"), m_text);
    form->addRow(tr("&Colour"), colorRow);
    form->addRow(tr("&GPU"), m_gpu);
    form->addRow(tr("T&ime"), timeRow);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
    m_text->setMinimumHeight(fontMetrics().height() * 5);
    resize(460, sizeHint().height());
}

void NoteDialog::setColor(const QString& color) {
    m_color = color;
    updateColorButton();
}

void NoteDialog::updateColorButton() {
    const QColor c = noteColor(note());
    m_colorButton->setText(m_color.isEmpty() ? tr("default (%1)").arg(c.name()) : c.name());
    QPixmap swatch(14, 14);
    swatch.fill(c);
    m_colorButton->setIcon(QIcon(swatch));
}

trace::Note NoteDialog::note() const {
    trace::Note n = m_note;
    n.title = m_title->text().trimmed().toStdString();
    n.text = m_text->toPlainText().toStdString();
    n.color = m_color.toStdString();
    const QVariantList gpu = m_gpu->currentData().toList();
    n.rankIndex = gpu.size() == 2 ? gpu[0].toInt() : -1;
    n.device = gpu.size() == 2 ? gpu[1].toInt() : -1;
    const auto toNs = [this](const QDoubleSpinBox* box) {
        return static_cast<int64_t>(std::llround(box->value() * m_unitNs));
    };
    // Unchanged boxes keep the exact time (the box rounds it to its decimals).
    const auto shown = [this](int64_t ns) { return static_cast<double>(ns) / m_unitNs; };
    const int64_t start = std::abs(m_start->value() - shown(m_note.startNs)) <
                                  0.5 * std::pow(10.0, -m_start->decimals())
                              ? m_note.startNs
                              : toNs(m_start);
    int64_t end = start;
    if (m_range->isChecked()) {
        end = std::abs(m_end->value() - shown(m_note.endNs)) <
                      0.5 * std::pow(10.0, -m_end->decimals())
                  ? m_note.endNs
                  : toNs(m_end);
    }
    n.startNs = std::min(start, end);
    n.endNs = std::max(start, end);
    return n;
}

}  // namespace vramscope::widgets
