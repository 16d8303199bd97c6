#include "vramscope/analysis/memory/operator_memory.h"

#include <algorithm>
#include <unordered_map>

namespace vramscope::analysis {

bool isOperatorFrame(const trace::TraceData& data, const trace::Frame& frame) {
    if (!data.string(frame.file).empty() || frame.line != 0) {
        return false;
    }
    const std::string_view name = data.string(frame.name);
    return !name.empty() && name.front() != '<' && !name.starts_with("nn.Module: ");
}

namespace {

/// What one stack contributes: the row of its innermost operator and the rows of every operator
/// on it, once each.
struct StackRows {
    bool known = false;
    uint32_t self = 0;
    std::vector<uint32_t> total;
};

class TableBuilder {
public:
    explicit TableBuilder(const trace::TraceData& data)
        : m_data(data), m_stacks(data.stacks.size()), m_frameRow(data.frames.size(), kUnset) {
        rowOf(kNoOperatorRow);  // row 0
    }

    const StackRows& rowsOf(trace::StackId stack) {
        const size_t s = trace::toInt(stack);
        if (s >= m_stacks.size()) {
            m_stacks.resize(s + 1);
        }
        StackRows& r = m_stacks[s];
        if (r.known) {
            return r;
        }
        r.known = true;
        if (s < m_data.stacks.size()) {
            for (trace::FrameId f : m_data.stacks[s]) {  // leaf first
                const uint32_t row = frameRow(f);
                if (row != kNotOperator) {
                    r.total.push_back(row);
                }
            }
        }
        r.self = r.total.empty() ? 0 : r.total.front();
        if (r.total.empty()) {
            r.total.push_back(0);
        }
        std::sort(r.total.begin(), r.total.end());
        r.total.erase(std::unique(r.total.begin(), r.total.end()), r.total.end());
        return r;
    }

    std::vector<OperatorMemoryRow> rows;

private:
    static constexpr uint32_t kUnset = UINT32_MAX;
    static constexpr uint32_t kNotOperator = UINT32_MAX - 1;

    uint32_t rowOf(std::string_view name) {
        auto it = m_byName.find(name);
        if (it != m_byName.end()) {
            return it->second;
        }
        const auto row = uint32_t(rows.size());
        rows.push_back({std::string(name), 0, 0, 0, 0, 0, 0});
        m_byName.emplace(name, row);
        return row;
    }

    uint32_t frameRow(trace::FrameId id) {
        const size_t f = trace::toInt(id);
        if (f >= m_data.frames.size()) {
            return kNotOperator;
        }
        if (m_frameRow[f] == kUnset) {
            const trace::Frame& frame = m_data.frames[f];
            m_frameRow[f] =
                isOperatorFrame(m_data, frame) ? rowOf(m_data.string(frame.name)) : kNotOperator;
        }
        return m_frameRow[f];
    }

    const trace::TraceData& m_data;
    std::vector<StackRows> m_stacks;
    std::vector<uint32_t> m_frameRow;
    // Keys view the trace's strings (or the literal kNoOperatorRow), which outlive the builder.
    std::unordered_map<std::string_view, uint32_t> m_byName;
};

}  // namespace

OperatorMemoryTable operatorMemory(const trace::TraceData& data, const AllocationIndex& index,
                                   trace::TimestampNs peakTimeNs) {
    OperatorMemoryTable table;
    table.device = index.device();
    table.level = index.level();
    table.peakTimeNs = peakTimeNs;
    std::vector<bool> aliveAtPeak(data.memory.size(), false);
    for (uint32_t e : index.aliveEventsAt(peakTimeNs)) {
        aliveAtPeak[e] = true;
    }
    TableBuilder builder(data);
    for (size_t p = 0; p < index.size(); ++p) {
        if (!index.isAlloc(p)) {
            continue;
        }
        const uint32_t e = index.eventAt(p);
        const auto bytes = uint64_t(allocationBytes(data.memory.sizeBytes[e]));
        const bool alive = aliveAtPeak[e];
        if (data.memory.kind[e] == trace::MemoryKind::PreExisting) {
            table.preExistingPeakBytes += alive ? bytes : 0;
            continue;
        }
        table.peakKnown = table.peakKnown && data.memory.address[e] != 0;
        const StackRows& r = builder.rowsOf(data.memory.stack[e]);
        table.allocations += 1;
        table.bytes += bytes;
        table.peakBytes += alive ? bytes : 0;
        table.attributedAllocations += r.self != 0 ? 1 : 0;
        OperatorMemoryRow& self = builder.rows[r.self];
        self.selfAllocations += 1;
        self.selfBytes += bytes;
        self.selfPeakBytes += alive ? bytes : 0;
        for (uint32_t row : r.total) {
            OperatorMemoryRow& total = builder.rows[row];
            total.totalAllocations += 1;
            total.totalBytes += bytes;
            total.totalPeakBytes += alive ? bytes : 0;
        }
    }
    if (!table.peakKnown) {
        table.peakBytes = 0;
        table.preExistingPeakBytes = 0;
        for (OperatorMemoryRow& r : builder.rows) {
            r.selfPeakBytes = 0;
            r.totalPeakBytes = 0;
        }
    }
    table.rows = std::move(builder.rows);
    table.rows.erase(
        std::remove_if(table.rows.begin(), table.rows.end(),
                       [](const OperatorMemoryRow& r) { return r.totalAllocations == 0; }),
        table.rows.end());
    std::sort(table.rows.begin(), table.rows.end(),
              [](const OperatorMemoryRow& a, const OperatorMemoryRow& b) {
                  if (a.selfBytes != b.selfBytes) {
                      return a.selfBytes > b.selfBytes;
                  }
                  if (a.totalBytes != b.totalBytes) {
                      return a.totalBytes > b.totalBytes;
                  }
                  return a.name < b.name;
              });
    return table;
}

OperatorMemoryRow sumRows(const std::vector<OperatorMemoryRow>& rows, size_t keep,
                          std::string_view name) {
    OperatorMemoryRow sum;
    sum.name = std::string(name);
    for (size_t i = keep; i < rows.size(); ++i) {
        const OperatorMemoryRow& r = rows[i];
        sum.selfAllocations += r.selfAllocations;
        sum.selfBytes += r.selfBytes;
        sum.selfPeakBytes += r.selfPeakBytes;
        sum.totalAllocations += r.totalAllocations;
        sum.totalBytes += r.totalBytes;
        sum.totalPeakBytes += r.totalPeakBytes;
    }
    return sum;
}

}  // namespace vramscope::analysis
