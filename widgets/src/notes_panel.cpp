#include "vramscope/widgets/notes_panel.h"

#include <QGridLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "vramscope/widgets/notes_model.h"

namespace vramscope::widgets {

namespace {
/// A text button without QPushButton's minimum width, so that four of them fit a narrow dock.
QToolButton* makeButton(const QString& text, QWidget* parent) {
    auto* b = new QToolButton(parent);
    b->setText(text);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    return b;
}
}  // namespace

NotesPanel::NotesPanel(NotesModel* model, QWidget* parent)
    : QWidget(parent),
      m_model(model),
      m_table(new QTableView(this)),
      m_info(new QLabel(this)),
      m_add(makeButton(tr("Add"), this)),
      m_edit(makeButton(tr("Edit…"), this)),
      m_delete(makeButton(tr("Delete"), this)),
      m_findings(makeButton(tr("Place notes for findings"), this)) {
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 4);
    m_table->horizontalHeader()->setSectionResizeMode(NotesModel::TitleColumn,
                                                      QHeaderView::Stretch);
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);
    m_table->installEventFilter(this);
    m_add->setToolTip(tr("Add a note at the cursor (M); Shift+M notes the selected range"));
    m_findings->setToolTip(
        tr("Place notes for what vramscope found: peaks, OOMs, a staircase, the worst straggler, "
           "the longest idle gap"));
    m_info->setWordWrap(true);
    m_info->hide();

    // Two rows, so that the dock (tabbed with Details at the window's side) stays narrow and the
    // timeline keeps most of the window.
    auto* buttons = new QGridLayout;
    buttons->addWidget(m_add, 0, 0);
    buttons->addWidget(m_edit, 0, 1);
    buttons->addWidget(m_delete, 0, 2);
    buttons->addWidget(m_findings, 1, 0, 1, 3);
    for (QToolButton* b : {m_add, m_edit, m_delete, m_findings}) {
        b->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_info);
    layout->addLayout(buttons);

    connect(m_table, &QTableView::clicked, this, [this](const QModelIndex& index) {
        emit jumpRequested(index.data(NotesModel::IdRole).toString());
    });
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        emit editRequested(index.data(NotesModel::IdRole).toString());
    });
    connect(m_add, &QToolButton::clicked, this, &NotesPanel::addRequested);
    connect(m_findings, &QToolButton::clicked, this, &NotesPanel::findingsRequested);
    connect(m_delete, &QToolButton::clicked, this, &NotesPanel::deleteRequested);
    connect(m_edit, &QToolButton::clicked, this, [this] {
        const std::vector<std::string> ids = selectedIds();
        if (!ids.empty()) {
            emit editRequested(QString::fromStdString(ids.front()));
        }
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &NotesPanel::updateButtons);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        m_table->resizeColumnToContents(NotesModel::NumberColumn);
        m_table->resizeColumnToContents(NotesModel::TimeColumn);
        updateButtons();
    });
    updateButtons();
}

std::vector<std::string> NotesPanel::selectedIds() const {
    std::vector<std::string> ids;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) {
        ids.push_back(index.data(NotesModel::IdRole).toString().toStdString());
    }
    return ids;
}

void NotesPanel::selectNote(const std::string& id) {
    const int row = m_model->rowOf(id);
    if (row < 0) {
        return;
    }
    m_table->selectRow(row);
    m_table->scrollTo(m_model->index(row, 0));
}

void NotesPanel::setInfo(const QString& text) {
    m_info->setText(text);
    m_info->setVisible(!text.isEmpty());
}

QString NotesPanel::info() const {
    return m_info->text();
}

bool NotesPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_table && event->type() == QEvent::KeyPress) {
        const auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Delete || key->key() == Qt::Key_Backspace) {
            emit deleteRequested();
            return true;
        }
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            const std::vector<std::string> ids = selectedIds();
            if (!ids.empty()) {
                emit editRequested(QString::fromStdString(ids.front()));
            }
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void NotesPanel::updateButtons() {
    const bool any = m_table->selectionModel()->hasSelection();
    m_edit->setEnabled(any);
    m_delete->setEnabled(any);
}

}  // namespace vramscope::widgets
