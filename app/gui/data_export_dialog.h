#pragma once
// File > Export Data...: a dialog that sets up one export (format, then the CSV table and points,
// or the GPU, time and grouping of a speedscope flame), and the run that writes it off the GUI
// thread once a file is chosen.

#include <QDialog>

#include <memory>

#include "data_export.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QMainWindow;
class QSpinBox;
class QStackedWidget;

namespace vramscope::app {

/// The export dialog over one job model; it only builds a DataExportRequest (request()), the
/// writing is exportData's. Holds a reference to `job`, which must outlive it. GUI thread only.
class DataExportDialog : public QDialog {
    Q_OBJECT
public:
    /// `selectedGpu` / `selectedTimeNs` (job time): the GPU and time selected in the viewer (the
    /// Details time), preselected for speedscope; an invalid key selects the first GPU with
    /// allocations at its peak.
    DataExportDialog(const analysis::JobModel& job, analysis::GpuKey selectedGpu,
                     int64_t selectedTimeNs, QWidget* parent = nullptr);

    DataExportRequest request() const;
    /// Picks `format` when offered; false otherwise (for tests and the caller).
    bool setFormat(analysis::ExportFormat format);
    /// Picks a CSV table and the points (0 = every step).
    void setCsv(analysis::CsvTable table, size_t points);

private:
    void updatePage();
    QWidget* csvPage();
    QWidget* speedscopePage(analysis::GpuKey selectedGpu, int64_t selectedTimeNs);

    const analysis::JobModel& m_job;
    QComboBox* m_format = nullptr;
    QLabel* m_formatNote = nullptr;
    QStackedWidget* m_pages = nullptr;
    QComboBox* m_table = nullptr;
    QCheckBox* m_reduce = nullptr;
    QSpinBox* m_points = nullptr;
    QComboBox* m_gpu = nullptr;
    QComboBox* m_time = nullptr;
    QComboBox* m_grouping = nullptr;
    int64_t m_selectedTimeNs = 0;
    analysis::GpuKey m_selectedGpu;
};

/// Asks for a file name (the format's extension as filter), then writes `request` of `job` on a
/// worker thread: "Exporting..." and then the result in `window`'s status bar, an error in a
/// message box that names the file. Returns at once.
void startDataExport(QMainWindow* window, std::shared_ptr<const analysis::JobModel> job,
                     const DataExportRequest& request);

/// The file name the save dialog proposes: the job title's stem, the CSV table, the extension
/// ("bert.json.gz" -> "bert-memory.csv").
QString suggestedExportName(const analysis::JobModel& job, const DataExportRequest& request);

}  // namespace vramscope::app
