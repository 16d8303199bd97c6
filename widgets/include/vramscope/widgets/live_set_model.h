#pragma once
// The allocations alive at a clicked time, as a table for the Details dock.

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/analysis/memory/live_set.h"
#include "vramscope/analysis/memory/memory_roles.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::widgets {

/// One live allocation as the table shows it (plain values).
struct LiveRow {
    uint64_t sizeBytes = 0;
    uint64_t address = 0;
    int64_t ageNs = 0;         ///< time between its allocation and the inspected time
    QString where;             ///< the top frame that names code, else its NVTX range, else empty
    QStringList stack;         ///< full stack, innermost frame first
    bool preExisting = false;  ///< alive before the trace began (MemoryKind::PreExisting)
    /// Role of memory (memory_roles.h) and the phases it was allocated and freed in; hasRoles is
    /// false when the GPU has no roles (live set unknown), rule NotClassified then.
    bool hasRoles = false;
    analysis::RoleRule rule = analysis::RoleRule::NotClassified;
    analysis::TrainingPhase allocPhase = analysis::TrainingPhase::None;
    analysis::TrainingPhase freePhase = analysis::TrainingPhase::None;
    bool freed = true;  ///< freed before the trace ended (false: still alive at its last event)
};

/// The role lines of the Details dock for `row`: "Role: activations", "Why: allocated in forward,
/// freed in backward" (describe(rule)) and "Phases: allocated in forward, freed in backward"
/// (the phases of the event, "outside any known phase" where none, "never freed"); one line
/// saying that roles are not known when the GPU has none.
QStringList roleLines(const LiveRow& row);

/// Converts an analysis live set into table rows, resolving frames and range names in `data`.
/// `atNs` is the inspected time in the same clock as the allocations (the rank's trace time).
/// `roles` (may be null) give each row its role and phases; `index` (the one the live set and
/// the roles came from; may be null) tells which rows are never freed.
std::vector<LiveRow> liveRowsFrom(const trace::TraceData& data,
                                  const std::vector<analysis::LiveAllocation>& live, int64_t atNs,
                                  const analysis::MemoryRoles* roles = nullptr,
                                  const analysis::AllocationIndex* index = nullptr);

/// Table of live allocations (size, address, age, role, where), in the order given (largest first
/// from analysis::liveSetAt). Holds plain values; GUI thread only.
class LiveSetModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { SizeColumn = 0, AddressColumn, AgeColumn, RoleColumn, WhereColumn, ColumnCount };
    /// Raw numbers (bytes, address, ns) for sorting and tests.
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit LiveSetModel(QObject* parent = nullptr);

    void setRows(std::vector<LiveRow> rows);
    const std::vector<LiveRow>& rows() const { return m_rows; }
    uint64_t totalBytes() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<LiveRow> m_rows;
};

}  // namespace vramscope::widgets
