#include "vramscope/widgets/live_set_model.h"

#include <algorithm>
#include <tuple>

#include "vramscope/widgets/plot_style.h"
#include "vramscope/widgets/units.h"

namespace vramscope::widgets {

namespace {
/// "name  (file:line)"; `shortFile` keeps only the file's base name.
QString frameText(const trace::TraceData& data, trace::FrameId id, bool shortFile = false) {
    if (toInt(id) >= data.frames.size()) {
        return QStringLiteral("?");
    }
    const trace::Frame& f = data.frames[toInt(id)];
    QString text = QString::fromStdString(std::string(data.string(f.name)));
    if (text.isEmpty()) {
        text = QStringLiteral("??");
    }
    std::string_view file = data.string(f.file);
    if (shortFile) {
        const size_t slash = file.find_last_of("/\\");
        file = slash == std::string_view::npos ? file : file.substr(slash + 1);
    }
    if (!file.empty()) {
        text += QStringLiteral("  (%1:%2)")
                    .arg(QString::fromUtf8(file.data(), static_cast<qsizetype>(file.size())))
                    .arg(f.line);
    }
    return text;
}

/// The first frame (innermost first) from Python source, else the first frame at all: Python frames
/// name the model code a user can change, C++ frames the allocator.
int topFrame(const trace::TraceData& data, const std::vector<trace::FrameId>& stack) {
    for (size_t i = 0; i < stack.size(); ++i) {
        if (toInt(stack[i]) < data.frames.size()) {
            const std::string_view file = data.string(data.frames[toInt(stack[i])].file);
            if (file.size() > 3 && file.ends_with(".py")) {
                return static_cast<int>(i);
            }
        }
    }
    return stack.empty() ? -1 : 0;
}
}  // namespace

QStringList roleLines(const LiveRow& row) {
    if (!row.hasRoles) {
        return {LiveSetModel::tr("Role: not known (no roles were classified on this GPU)")};
    }
    if (row.rule == analysis::RoleRule::NotClassified) {
        return {LiveSetModel::tr("Role: not classified (not an allocation of the roles' level)")};
    }
    const auto phase = [](analysis::TrainingPhase p) {
        return p == analysis::TrainingPhase::None
                   ? LiveSetModel::tr("outside any known phase")
                   : LiveSetModel::tr("in %1").arg(QString::fromUtf8(analysis::toString(p)));
    };
    const QString freed = row.freed ? LiveSetModel::tr("freed %1").arg(phase(row.freePhase))
                                    : LiveSetModel::tr("never freed");
    return {LiveSetModel::tr("Role: %1")
                .arg(QString::fromUtf8(analysis::roleLabel(analysis::roleOf(row.rule)))),
            LiveSetModel::tr("Why: %1").arg(QString::fromUtf8(analysis::describe(row.rule))),
            LiveSetModel::tr("Phases: allocated %1, %2").arg(phase(row.allocPhase), freed)};
}

std::vector<LiveRow> liveRowsFrom(const trace::TraceData& data,
                                  const std::vector<analysis::LiveAllocation>& live, int64_t atNs,
                                  const analysis::MemoryRoles* roles,
                                  const analysis::AllocationIndex* index) {
    std::vector<LiveRow> rows;
    rows.reserve(live.size());
    // Allocations still alive at the index's last event were never freed.
    std::vector<uint32_t> heldToEnd;
    if (index && !index->empty()) {
        heldToEnd = index->aliveEventsAt(index->timeAt(index->size() - 1));
        std::sort(heldToEnd.begin(), heldToEnd.end());
    }
    for (const analysis::LiveAllocation& a : live) {
        LiveRow row;
        if (roles) {
            row.hasRoles = true;
            row.rule = roles->ruleOfEvent(a.eventIndex);
            std::tie(row.allocPhase, row.freePhase) = roles->phasesOfEvent(a.eventIndex);
        }
        if (index) {
            row.freed = !std::binary_search(heldToEnd.begin(), heldToEnd.end(),
                                            static_cast<uint32_t>(a.eventIndex));
        }
        row.sizeBytes = a.sizeBytes;
        row.address = a.address;
        row.ageNs = atNs - a.allocTimeNs;
        row.preExisting = a.kind == trace::MemoryKind::PreExisting;
        if (toInt(a.stack) > 0 && toInt(a.stack) < data.stacks.size()) {
            const auto& stack = data.stacks[toInt(a.stack)];
            for (trace::FrameId id : stack) {
                row.stack.append(frameText(data, id));
            }
            const int top = topFrame(data, stack);
            if (top >= 0) {
                row.where = frameText(data, stack[static_cast<size_t>(top)], true);
            }
        }
        if (row.where.isEmpty() && a.nvtxRange > 0 && a.nvtxRange <= data.ranges.size()) {
            row.where =
                QStringLiteral("NVTX ") +
                QString::fromStdString(std::string(data.string(data.ranges.name[a.nvtxRange - 1])));
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

LiveSetModel::LiveSetModel(QObject* parent) : QAbstractTableModel(parent) {}

void LiveSetModel::setRows(std::vector<LiveRow> rows) {
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

uint64_t LiveSetModel::totalBytes() const {
    uint64_t total = 0;
    for (const LiveRow& r : m_rows) {
        total += r.sizeBytes;
    }
    return total;
}

int LiveSetModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int LiveSetModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LiveSetModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const LiveRow& r = m_rows[static_cast<size_t>(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case SizeColumn:
                return formatBytes(static_cast<double>(r.sizeBytes));
            case AddressColumn:
                if (r.preExisting && r.address == 0) {
                    return QStringLiteral("\u2014");  // an importer's total, no real address
                }
                return QStringLiteral("0x%1").arg(r.address, 0, 16);
            case AgeColumn:
                return formatDuration(static_cast<double>(r.ageNs));
            case RoleColumn:
                return r.hasRoles && r.rule != analysis::RoleRule::NotClassified
                           ? shortRoleLabel(analysis::roleOf(r.rule))
                           : QStringLiteral("\u2014");
            case WhereColumn:
                if (r.where.isEmpty()) {
                    return r.preExisting ? tr("alive before the trace began") : tr("(no stack)");
                }
                return r.where;
            default:
                return {};
        }
    }
    if (role == RawValueRole) {
        switch (index.column()) {
            case SizeColumn:
                return QVariant::fromValue<qulonglong>(r.sizeBytes);
            case AddressColumn:
                return QVariant::fromValue<qulonglong>(r.address);
            case AgeColumn:
                return QVariant::fromValue<qlonglong>(r.ageNs);
            case RoleColumn:
                return static_cast<int>(r.rule);
            default:
                return r.where;
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() != WhereColumn &&
        index.column() != RoleColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::ToolTipRole && index.column() == RoleColumn) {
        return roleLines(r).join(QLatin1Char('\n'));
    }
    if (role == Qt::ToolTipRole) {
        return r.stack.isEmpty() ? QVariant() : QVariant(r.stack.join(QLatin1Char('\n')));
    }
    return {};
}

QVariant LiveSetModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case SizeColumn:
            return tr("Size");
        case AddressColumn:
            return tr("Address");
        case AgeColumn:
            return tr("Age");
        case RoleColumn:
            return tr("Role");
        case WhereColumn:
            return tr("Allocated in");
        default:
            return {};
    }
}

}  // namespace vramscope::widgets
