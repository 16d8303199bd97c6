#include "vramscope/widgets/advice_panel.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "vramscope/analysis/collectives/straggler.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

/// Fixed notation with about four significant digits (no exponent): 1234, 12.35, 0.0001234;
/// whole numbers without decimals.
QString fixedSignificant(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
        return QLocale().toString(v, 'f', 0);
    }
    const int magnitude = v == 0.0 ? 0 : static_cast<int>(std::floor(std::log10(std::fabs(v))));
    return QLocale().toString(v, 'f', std::clamp(3 - magnitude, 0, 10));
}

QString evidenceValue(const analysis::Evidence& e) {
    if (e.unit == "bytes" || e.unit == "bytes/iteration") {
        return formatBytes(e.value);
    }
    if (e.unit == "ns") {
        return formatDuration(e.value);
    }
    if (e.unit == "fraction") {
        return QStringLiteral("%1 %").arg(e.value * 100.0, 0, 'f', 1);
    }
    return fixedSignificant(e.value) +
           (e.unit.empty() ? QString() : QLatin1Char(' ') + QString::fromStdString(e.unit));
}

/// A cost or GPU-hours as the CLI prints it (analysis::formatAmount).
QString amount(double v) {
    return QString::fromStdString(analysis::formatAmount(v));
}

/// "Job: 2 of 128 ranks present (partial: ...). last of the ranks present ...".
std::string jobFactsText(const analysis::JobAnalysis& a) {
    const analysis::JobCoverage& c = a.coverage;
    if (!c.notOneJob.empty()) {
        return "Job: the inputs are not one job (" + c.notOneJob +
               "): collectives are not matched across them.";
    }
    std::string text = "Job: " + analysis::coverageText(c.ranksPresent, c.worldSize);
    if (c.partial()) {
        text +=
            " (partial: last arrivals, waits and skew speak of the ranks present only; no "
            "straggler is named)";
    }
    const std::string last = analysis::stragglerSummary(a.straggler, a.collectives, c);
    if (last.empty()) {
        return text + ".";
    }
    return text + ". " + char(std::toupper(static_cast<unsigned char>(last[0]))) + last.substr(1) +
           ".";
}

}  // namespace

AdviceModel::AdviceModel(QObject* parent) : QAbstractTableModel(parent) {}

void AdviceModel::setAdvice(std::vector<analysis::Advice> advice) {
    beginResetModel();
    m_advice = std::move(advice);
    endResetModel();
}

int AdviceModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_advice.size());
}

int AdviceModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AdviceModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(m_advice.size())) {
        return {};
    }
    const analysis::Advice& a = m_advice[size_t(index.row())];
    QString where;
    if (toInt(a.rank) >= 0) {
        where = QStringLiteral("rank %1").arg(toInt(a.rank));
    } else if (a.device != trace::kHostDevice) {
        where = QStringLiteral("rank ?");
    }
    if (a.device != trace::kHostDevice) {
        where += (where.isEmpty() ? QString() : QStringLiteral(" \u00b7 ")) +
                 QStringLiteral("GPU %1").arg(toInt(a.device));
    }
    if (where.isEmpty()) {
        where = tr("job");
    }
    if (role == RawValueRole) {
        switch (index.column()) {
            case SeverityColumn:
                return int(a.severity);
            case RuleColumn:
                return QString::fromStdString(a.rule);
            case WhereColumn:
                return where;
            case MessageColumn:
                return QString::fromStdString(a.message);
        }
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case SeverityColumn:
                return QString::fromUtf8(analysis::toString(a.severity));
            case RuleColumn:
                return QString::fromStdString(a.rule);
            case WhereColumn:
                return where;
            case MessageColumn:
                return QString::fromStdString(a.message);
        }
        return {};
    }
    if (role == Qt::ToolTipRole && index.column() == MessageColumn) {
        return QString::fromStdString(a.message);
    }
    if (role == Qt::ForegroundRole && index.column() == SeverityColumn) {
        if (a.severity == analysis::Severity::Critical) {
            return QColor(200, 30, 30);
        }
        if (a.severity == analysis::Severity::Warning) {
            return QColor(190, 120, 0);
        }
    }
    return {};
}

QVariant AdviceModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
        case SeverityColumn:
            return tr("Severity");
        case RuleColumn:
            return tr("Rule");
        case WhereColumn:
            return tr("Where");
        case MessageColumn:
            return tr("What was seen and what to try");
    }
    return {};
}

QString adviceDetailsHtml(const analysis::Advice& a) {
    QString html = QStringLiteral("<p><b>%1</b> (%2)</p><p>%3</p>")
                       .arg(QString::fromStdString(a.rule).toHtmlEscaped(),
                            QString::fromUtf8(analysis::toString(a.severity)),
                            QString::fromStdString(a.message).toHtmlEscaped());
    if (!a.evidence.empty()) {
        html += QObject::tr("<p><b>Evidence</b></p><table cellspacing=0 cellpadding=2>");
        for (const analysis::Evidence& e : a.evidence) {
            html += QStringLiteral("<tr><td>%1</td><td align=right>&nbsp;&nbsp;%2</td></tr>")
                        .arg(QString::fromStdString(e.name).toHtmlEscaped(),
                             evidenceValue(e).toHtmlEscaped());
        }
        html += QStringLiteral("</table>");
    }
    return html;
}

AdvicePanel::AdvicePanel(QWidget* parent)
    : QWidget(parent),
      m_model(new AdviceModel(this)),
      m_table(new QTableView),
      m_jobFacts(new QLabel),
      m_details(new QTextBrowser),
      m_checks(new QTextBrowser),
      m_pages(new QTabWidget),
      m_price(new QDoubleSpinBox),
      m_steps(new QSpinBox),
      m_cost(new QLabel) {
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);
    m_price->setRange(0.0, 1000.0);
    m_price->setDecimals(2);
    m_price->setSingleStep(0.25);
    m_price->setValue(2.50);
    m_price->setToolTip(tr("Price of one GPU for one hour, in any currency"));
    m_steps->setRange(0, 1'000'000'000);
    m_steps->setSingleStep(1000);
    m_steps->setSpecialValueText(tr("as observed"));
    m_steps->setToolTip(tr("Training steps planned; 'as observed' uses the steps in the trace"));
    m_cost->setWordWrap(true);
    m_cost->setTextFormat(Qt::RichText);
    m_cost->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* costBox = new QGroupBox(tr("Cost"));
    auto* form = new QFormLayout;
    form->addRow(tr("Price per GPU-hour"), m_price);
    form->addRow(tr("Planned steps"), m_steps);
    auto* costLayout = new QVBoxLayout(costBox);
    costLayout->addLayout(form);
    costLayout->addWidget(m_cost);

    m_pages->addTab(m_details, tr("Details"));
    m_pages->addTab(m_checks, tr("Checks"));
    m_pages->setTabToolTip(1, tr("The CI rules of vramscope-cli check on this job"));
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_table);
    split->addWidget(m_pages);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    m_jobFacts->setWordWrap(true);
    m_jobFacts->setTextFormat(Qt::PlainText);
    m_jobFacts->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_jobFacts);
    layout->addWidget(split, 1);
    layout->addWidget(costBox);

    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid() && current.row() < int(m_model->advice().size())) {
                    m_details->setHtml(adviceDetailsHtml(m_model->advice()[size_t(current.row())]));
                }
            });
    connect(m_price, &QDoubleSpinBox::valueChanged, this, &AdvicePanel::updateCost);
    connect(m_steps, &QSpinBox::valueChanged, this, &AdvicePanel::updateCost);
}

void AdvicePanel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    m_job = std::move(job);
    m_model->setAdvice(m_job ? m_job->advice() : std::vector<analysis::Advice>{});
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->resizeRowsToContents();
    m_checks->setHtml(m_job ? checksHtml(*m_job) : QString());
    m_jobFacts->setText(m_job ? QString::fromStdString(jobFactsText(m_job->analysis)) : QString());
    if (m_model->rowCount() > 0) {
        m_table->setCurrentIndex(m_model->index(0, 0));
        m_pages->setCurrentWidget(m_details);
    } else if (m_job) {
        // No advice is no verdict: show what the rules found and what they could not check.
        m_details->setHtml(
            tr("<p>No advice for this job; the Checks tab says what was checked "
               "and what could not be.</p>"));
        m_pages->setCurrentWidget(m_checks);
    } else {
        m_details->clear();
    }
    updateCost();
}

QString checksHtml(const analysis::JobModel& job) {
    if (!job.analysisProblem.empty()) {
        return QObject::tr("<p>The rules could not run: %1</p>")
            .arg(QString::fromStdString(job.analysisProblem).toHtmlEscaped());
    }
    QString html =
        QObject::tr("<p><b>Checks</b> (the rules of <tt>vramscope-cli check</tt>):</p><ul>");
    for (const analysis::RuleResult& r : job.checks) {
        const QString where =
            r.input == SIZE_MAX ? QString()
                                : QString::fromStdString(analysis::deviceLabel(r.rank, r.device)) +
                                      QStringLiteral(": ");
        const char* colour = r.outcome == analysis::RuleOutcome::Fail   ? "#c62828"
                             : r.outcome == analysis::RuleOutcome::Pass ? "#2e7d32"
                                                                        : "#777777";
        html += QStringLiteral("<li><b style=\"color:%1\">%2</b> %3: %4%5</li>")
                    .arg(QLatin1String(colour), QLatin1String(analysis::toString(r.outcome)),
                         QString::fromStdString(r.rule).toHtmlEscaped(), where.toHtmlEscaped(),
                         QString::fromStdString(r.detail).toHtmlEscaped());
    }
    html += QStringLiteral("</ul>");
    if (job.analysis.assessments.empty()) {
        return html;
    }
    html += QObject::tr(
        "<p><b>Training checklist</b> (<tt>vramscope-cli check --advice all</tt>): what each "
        "rule found, or what it lacks to judge:</p><ul>");
    for (const analysis::AdviceAssessment& a : job.analysis.assessments) {
        const bool fired = a.outcome == analysis::AssessmentOutcome::Fired;
        const char* colour = fired
                                 ? (a.severity == analysis::Severity::Info ? "#1565c0" : "#c62828")
                             : a.outcome == analysis::AssessmentOutcome::Clear ? "#2e7d32"
                                                                               : "#777777";
        const QString outcome = fired ? QString::fromLatin1(analysis::toString(a.severity))
                                      : QString::fromLatin1(analysis::toString(a.outcome));
        html +=
            QStringLiteral("<li><b style=\"color:%1\">%2</b> %3: %4: %5</li>")
                .arg(
                    QLatin1String(colour), outcome.toUpper(),
                    QString::fromStdString(a.rule).toHtmlEscaped(),
                    QString::fromStdString(analysis::deviceLabel(a.rank, a.device)).toHtmlEscaped(),
                    QString::fromStdString(a.detail).toHtmlEscaped());
    }
    return html + QStringLiteral("</ul>");
}

void AdvicePanel::setGpuHourPrice(double price) {
    m_price->setValue(price);
}

void AdvicePanel::setPlannedSteps(int steps) {
    m_steps->setValue(steps);
}

void AdvicePanel::updateCost() {
    if (!m_job) {
        m_cost->clear();
        return;
    }
    analysis::CostInput input = m_job->cost;
    input.gpuHourPrice = m_price->value();
    if (m_steps->value() > 0) {
        input.steps = m_steps->value();
        input.stepsSource = "planned";
    }
    m_estimate = analysis::estimateCost(input);
    const analysis::CostEstimate& e = m_estimate;
    if (!e.known) {
        m_cost->setText(tr("cost: unknown (%1)").arg(QString::fromStdString(e.unknownReason)));
        return;
    }
    QString text =
        tr("cost = GPU-hours \u00d7 price = %1 \u00d7 %2 = <b>%3</b>; GPU-hours = GPUs \u00d7 "
           "step time \u00d7 steps = %4 \u00d7 %5 (%6) \u00d7 %7 (%8) = %4 \u00d7 %9 h of wall "
           "time<br>")
            .arg(amount(e.gpuHours), amount(input.gpuHourPrice), amount(e.totalCost))
            .arg(input.gpus)
            .arg(formatDuration(double(input.stepTimeNs)),
                 QString::fromStdString(input.stepTimeSource), QString::number(input.steps),
                 QString::fromStdString(input.stepsSource), amount(e.hours));
    if (e.idleKnown) {
        text += tr("idle cost = cost \u00d7 idle / span = %1 \u00d7 %2 / %3 (%4) = <b>%5</b>")
                    .arg(amount(e.totalCost), formatDuration(double(input.idleNs)),
                         formatDuration(double(input.spanNs)),
                         QString::fromStdString(analysis::formatPercent(e.idleFraction)),
                         amount(e.idleCost));
    } else {
        text += tr("idle cost: unknown (no kernel records: idle time needs kernels)");
    }
    if (m_job->analysis.straggler && m_job->analysis.straggler->meetsEvidence) {
        const analysis::StragglerFinding& f = *m_job->analysis.straggler;
        text +=
            tr("<br>waiting for the straggler (rank %1) = %2 GPU-hours \u00d7 price = <b>%3</b> "
               "in this trace")
                .arg(toInt(f.rank))
                .arg(amount(f.waitGpuHours), amount(f.waitGpuHours * input.gpuHourPrice));
    }
    m_cost->setText(text);
}

}  // namespace vramscope::widgets
