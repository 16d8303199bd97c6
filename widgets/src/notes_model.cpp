#include "vramscope/widgets/notes_model.h"

#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>
#include <set>

#include "vramscope/widgets/note_marks.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {

/// The number of an id "n<number>", or 0 for any other id.
int idNumber(const std::string& id) {
    if (id.size() < 2 || id[0] != 'n' || id.size() > 10) {
        return 0;
    }
    int n = 0;
    for (size_t i = 1; i < id.size(); ++i) {
        if (id[i] < '0' || id[i] > '9') {
            return 0;
        }
        n = n * 10 + (id[i] - '0');
    }
    return n;
}

}  // namespace

/// One undo step: the notes with `ids` before and after it (a note absent on one side is added
/// or removed by the step).
class NotesModel::Command : public QUndoCommand {
public:
    Command(NotesModel* model, const QString& text, std::vector<std::string> ids,
            std::vector<trace::Note> before, std::vector<trace::Note> after)
        : QUndoCommand(text),
          m_model(model),
          m_ids(std::move(ids)),
          m_before(std::move(before)),
          m_after(std::move(after)) {}
    void undo() override { m_model->apply(m_ids, m_before); }
    void redo() override { m_model->apply(m_ids, m_after); }

private:
    NotesModel* m_model;
    std::vector<std::string> m_ids;
    std::vector<trace::Note> m_before;
    std::vector<trace::Note> m_after;
};

NotesModel::NotesModel(QObject* parent)
    : QAbstractTableModel(parent), m_undo(new QUndoStack(this)) {}

NotesModel::~NotesModel() {
    // The commands point back at the model: drop them before the model's members go.
    m_undo->clear();
}

void NotesModel::setJob(std::shared_ptr<const analysis::JobModel> job) {
    beginResetModel();
    m_job = std::move(job);
    endResetModel();
}

void NotesModel::setNotes(std::vector<trace::Note> notes) {
    m_undo->clear();
    beginResetModel();
    m_lastNumber = 0;
    for (const trace::Note& n : notes) {
        m_lastNumber = std::max(m_lastNumber, idNumber(n.id));
    }
    std::set<std::string> taken;
    for (trace::Note& n : notes) {
        if (n.id.empty() || taken.count(n.id) != 0) {
            n.id = nextId();
        }
        taken.insert(n.id);
    }
    m_notes = notesInDisplayOrder(std::move(notes));
    endResetModel();
    emit notesChanged();
}

const trace::Note* NotesModel::find(const std::string& id) const {
    const int row = rowOf(id);
    return row < 0 ? nullptr : &m_notes[static_cast<size_t>(row)];
}

int NotesModel::rowOf(const std::string& id) const {
    for (size_t i = 0; i < m_notes.size(); ++i) {
        if (m_notes[i].id == id) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::string NotesModel::nextId() {
    return "n" + std::to_string(++m_lastNumber);
}

std::string NotesModel::addNote(trace::Note note) {
    const std::vector<std::string> ids = addNotes({std::move(note)}, tr("Add note"));
    return ids.empty() ? std::string() : ids.front();
}

std::vector<std::string> NotesModel::addNotes(std::vector<trace::Note> notes, const QString& what) {
    if (notes.empty()) {
        return {};
    }
    std::vector<std::string> ids;
    std::set<std::string> taken;
    for (const trace::Note& n : m_notes) {
        taken.insert(n.id);
    }
    for (trace::Note& n : notes) {
        if (n.id.empty() || taken.count(n.id) != 0) {
            n.id = nextId();
        }
        m_lastNumber = std::max(m_lastNumber, idNumber(n.id));
        taken.insert(n.id);
        ids.push_back(n.id);
    }
    m_undo->push(new Command(this, what, ids, {}, std::move(notes)));
    return ids;
}

bool NotesModel::editNote(const trace::Note& note) {
    const trace::Note* old = find(note.id);
    if (!old || *old == note) {
        return false;
    }
    m_undo->push(new Command(this, tr("Edit note"), {note.id}, {*old}, {note}));
    return true;
}

bool NotesModel::removeNotes(const std::vector<std::string>& ids) {
    std::vector<std::string> held;
    std::vector<trace::Note> before;
    for (const std::string& id : ids) {
        if (const trace::Note* n = find(id);
            n && std::find(held.begin(), held.end(), id) == held.end()) {
            held.push_back(id);
            before.push_back(*n);
        }
    }
    if (held.empty()) {
        return false;
    }
    const QString what =
        held.size() == 1 ? tr("Delete note") : tr("Delete %1 notes").arg(held.size());
    m_undo->push(new Command(this, what, held, std::move(before), {}));
    return true;
}

void NotesModel::apply(const std::vector<std::string>& ids, const std::vector<trace::Note>& after) {
    beginResetModel();
    std::erase_if(m_notes, [&ids](const trace::Note& n) {
        return std::find(ids.begin(), ids.end(), n.id) != ids.end();
    });
    m_notes.insert(m_notes.end(), after.begin(), after.end());
    m_notes = notesInDisplayOrder(std::move(m_notes));
    endResetModel();
    emit notesChanged();
}

int NotesModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_notes.size());
}

int NotesModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString NotesModel::gpuText(const trace::Note& note) const {
    if (!note.pinnedToGpu()) {
        return tr("all GPUs");
    }
    const analysis::GpuKey key{note.rankIndex, trace::DeviceIndex{note.device}};
    if (m_job) {
        return gpuLabel(*m_job, key);
    }
    return tr("rank index %1 \u00b7 GPU %2").arg(note.rankIndex).arg(note.device);
}

QVariant NotesModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() < 0 || index.row() >= rowCount()) {
        return {};
    }
    const trace::Note& n = m_notes[static_cast<size_t>(index.row())];
    if (role == IdRole) {
        return QString::fromStdString(n.id);
    }
    if (role == Qt::DecorationRole && index.column() == NumberColumn) {
        return noteColor(n);
    }
    if (role == Qt::ToolTipRole) {
        QString tip = QStringLiteral("<b>%1</b>").arg(noteHeadline(n).toHtmlEscaped());
        if (!n.text.empty()) {
            tip += QStringLiteral("<br>") + QString::fromStdString(n.text).toHtmlEscaped().replace(
                                                QLatin1Char('\n'), QStringLiteral("<br>"));
        }
        if (n.generated) {
            tip += tr("<br><i>Placed by vramscope (%1)</i>").arg(QString::fromStdString(n.kind));
        }
        if (!n.flameFrame.empty()) {
            tip +=
                tr("<br>Flame frame: %1").arg(QString::fromStdString(n.flameFrame).toHtmlEscaped());
        }
        if (n.allocationAddress != 0) {
            tip += tr("<br>Allocation 0x%1").arg(n.allocationAddress, 0, 16);
        }
        return tip;
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
        case NumberColumn:
            return index.row() + 1;
        case TitleColumn:
            // The mark for a generated note comes first, so it stays visible when the title is
            // elided.
            return n.generated ? tr("\u2699 %1").arg(noteHeadline(n)) : noteHeadline(n);
        case TimeColumn:
            return noteTimeText(n, m_job ? m_job->durationNs : std::max(n.endNs, n.startNs));
        case GpuColumn:
            return gpuText(n);
        case AuthorColumn:
            return n.generated ? tr("vramscope") : QString::fromStdString(n.author);
        default:
            return {};
    }
}

QVariant NotesModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case NumberColumn:
            return tr("#");
        case TitleColumn:
            return tr("Note");
        case TimeColumn:
            return tr("Time");
        case GpuColumn:
            return tr("GPU");
        case AuthorColumn:
            return tr("Author");
        default:
            return {};
    }
}

}  // namespace vramscope::widgets
