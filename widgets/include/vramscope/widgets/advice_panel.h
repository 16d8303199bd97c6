#pragma once
// The advice and cost panel: each piece of advice with its evidence and formula, and the cost of
// the job with an editable price per GPU-hour and number of planned steps.

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>

#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/model/job_model.h"

class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTextBrowser;

namespace vramscope::widgets {

/// One row per analysis::Advice: severity, rule, where (rank and GPU), message. GUI thread only.
class AdviceModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { SeverityColumn = 0, RuleColumn, WhereColumn, MessageColumn, ColumnCount };
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit AdviceModel(QObject* parent = nullptr);
    void setAdvice(std::vector<analysis::Advice> advice);
    const std::vector<analysis::Advice>& advice() const { return m_advice; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<analysis::Advice> m_advice;
};

/// HTML of one piece of advice: message, then its evidence as a table (name, value, unit).
QString adviceDetailsHtml(const analysis::Advice& advice);

/// HTML of the CI rule results (JobModel::checks): one line per rule and GPU, PASS / FAIL /
/// NOT CHECKED with the numbers or the reason, as `vramscope-cli check` prints them.
QString checksHtml(const analysis::JobModel& job);

/// The Advice dock: the advice table, the selected advice's details, the CI checks, and the cost
/// estimate (analysis::estimateCost) recomputed whenever the price or the planned steps change.
/// GUI thread only.
class AdvicePanel : public QWidget {
    Q_OBJECT
public:
    explicit AdvicePanel(QWidget* parent = nullptr);
    /// Modest, so that a dock of it leaves the timeline most of the window.
    QSize sizeHint() const override { return {520, 240}; }
    void setJob(std::shared_ptr<const analysis::JobModel> job);

    /// Price of one GPU for one hour (any currency).
    void setGpuHourPrice(double price);
    /// Planned steps; 0 = the steps seen in the trace.
    void setPlannedSteps(int steps);
    /// The estimate shown now.
    analysis::CostEstimate estimate() const { return m_estimate; }

    AdviceModel* model() const { return m_model; }
    QDoubleSpinBox* priceBox() const { return m_price; }
    QSpinBox* stepsBox() const { return m_steps; }
    QLabel* costLabel() const { return m_cost; }
    /// The job-level line above the table: ranks present of the world size, and who arrived
    /// last in the collectives (partial jobs say so).
    QLabel* jobFactsLabel() const { return m_jobFacts; }
    QTextBrowser* checksView() const { return m_checks; }
    /// The Details / Checks tabs (Checks is in front when the job has no advice).
    QTabWidget* pages() const { return m_pages; }

private:
    void updateCost();

    std::shared_ptr<const analysis::JobModel> m_job;
    AdviceModel* m_model;
    QTableView* m_table;
    QLabel* m_jobFacts;
    QTextBrowser* m_details;
    QTextBrowser* m_checks;
    QTabWidget* m_pages;  // Details, Checks
    QDoubleSpinBox* m_price;
    QSpinBox* m_steps;
    QLabel* m_cost;
    analysis::CostEstimate m_estimate;
};

}  // namespace vramscope::widgets
