#pragma once
// The dialog that edits one note: title, text, colour, GPU (or all) and its time or range.

#include <QDialog>

#include <memory>

#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/notes.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace vramscope::widgets {

/// Edits a copy of a note; note() gives the edited copy (id, author, pins to an allocation or a
/// flame frame and the generated mark are kept as they were). Times are entered in the unit that
/// suits the job's duration (timeUnitFor), within the job. GUI thread only.
class NoteDialog : public QDialog {
    Q_OBJECT
public:
    NoteDialog(const trace::Note& note, std::shared_ptr<const analysis::JobModel> job,
               QWidget* parent = nullptr);

    /// The note as edited (a range whose end is before its start is turned round).
    trace::Note note() const;

    QLineEdit* titleEdit() const { return m_title; }
    QPlainTextEdit* textEdit() const { return m_text; }
    QComboBox* gpuBox() const { return m_gpu; }
    QDoubleSpinBox* startBox() const { return m_start; }
    QDoubleSpinBox* endBox() const { return m_end; }
    QCheckBox* rangeBox() const { return m_range; }
    /// Sets the colour ("#rrggbb"; empty = the default colour).
    void setColor(const QString& color);

private:
    void updateColorButton();

    trace::Note m_note;
    std::shared_ptr<const analysis::JobModel> m_job;
    double m_unitNs = 1.0;
    QString m_color;
    QLineEdit* m_title;
    QPlainTextEdit* m_text;
    QPushButton* m_colorButton;
    QComboBox* m_gpu;
    QDoubleSpinBox* m_start;
    QDoubleSpinBox* m_end;
    QCheckBox* m_range;
};

}  // namespace vramscope::widgets
