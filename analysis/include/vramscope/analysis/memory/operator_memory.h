#pragma once
// Memory per operator: what each PyTorch operator allocated on a GPU and held at its peak, as the
// PyTorch profiler's "Self CUDA Mem" / "CUDA Mem" columns give, from the operator frames that the
// Kineto importer puts on each `[memory]` event's stack (kineto_stacks.h).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// The row of the allocations whose stack holds no operator frame.
inline constexpr const char* kNoOperatorRow = "(no operator)";

/// Whether a frame is an operator: a PyTorch profiler CPU op or record_function range (aten::mm,
/// autograd::engine::evaluate_function: MmBackward0, SumBackward0, ProfilerStep#3,
/// Optimizer.step#AdamW.step, nccl:all_reduce, "## forward ##"), as the Kineto importer writes
/// them: Frame{op name, file "", line 0}. The rule: no file, line 0, a non-empty name, and a name
/// not of the two forms PyTorch's Python tracer gives calls without a source line, "nn.Module: "
/// (a module's call) and "<" ("<built-in method addmm ...>", "<built-in function linear>").
/// Frames with a file (Python frames, snapshot frames, C++ frames "??") are never operators.
bool isOperatorFrame(const trace::TraceData& data, const trace::Frame& frame);

/// One operator's memory on one GPU. Bytes and counts are of the allocation events of the table's
/// level. Self: the operator is the innermost operator frame of the allocation's stack (it
/// allocated). Total: the operator is anywhere on the stack (it or an operator it called
/// allocated), each allocation counted once however often the name recurs.
struct OperatorMemoryRow {
    std::string name;  ///< the operator's name, or kNoOperatorRow
    uint64_t selfAllocations = 0;
    uint64_t selfBytes = 0;
    uint64_t selfPeakBytes = 0;  ///< of selfBytes, the allocations alive at the peak
    uint64_t totalAllocations = 0;
    uint64_t totalBytes = 0;
    uint64_t totalPeakBytes = 0;
};

/// The operator table of one GPU. Plain value.
///
/// Every allocation event of the level is in exactly one row's self columns (its innermost
/// operator's, or kNoOperatorRow's), so the self columns sum to `allocations`, `bytes` and
/// `peakBytes`: the table accounts for every byte the trace saw allocated. Total columns overlap
/// (an aten::linear's total includes its aten::addmm's) and do not sum to anything.
struct OperatorMemoryTable {
    trace::DeviceIndex device{0};
    trace::MemoryLevel level = trace::MemoryLevel::Allocated;
    trace::TimestampNs peakTimeNs = 0;  ///< the time the peak columns are taken at (trace clock)
    /// Alloc events of the level on the device (PreExisting memory, which the trace did not see
    /// being allocated, and DeviceStatic module globals, which the timeline leaves out, excluded).
    uint64_t allocations = 0;
    uint64_t bytes = 0;      ///< their sizes summed
    uint64_t peakBytes = 0;  ///< of `bytes`, the allocations alive at peakTimeNs
    /// PreExisting bytes alive at peakTimeNs: alive at the peak, in no row (no operator made them
    /// in the trace).
    uint64_t preExistingPeakBytes = 0;
    /// Whether the peak columns are known: every allocation counted carries an address, so that
    /// frees pair with allocations (liveSetEvidence's rule; 2021 traces have no Addr). When not,
    /// peakBytes, preExistingPeakBytes and the rows' peak columns are 0 and mean nothing.
    bool peakKnown = true;
    /// Allocations whose stack holds an operator frame; 0 = the trace attributes nothing to
    /// operators (not a profiler trace with CPU ops), and the table is not worth showing.
    uint64_t attributedAllocations = 0;
    /// Sorted by self bytes, then total bytes (both descending), then name.
    std::vector<OperatorMemoryRow> rows;

    bool hasOperators() const { return attributedAllocations > 0; }
};

/// The table of the allocations in `index` (one device and level; see AllocationIndex), with the
/// peak columns taken from the allocations alive at `peakTimeNs` (AllocationIndex::aliveEventsAt:
/// allocated at or before it, not freed at or before it), e.g. MemorySummary::detailPeakTimeNs().
/// `data` must be the trace the index was built from. O(events + stacks x depth).
OperatorMemoryTable operatorMemory(const trace::TraceData& data, const AllocationIndex& index,
                                   trace::TimestampNs peakTimeNs);

/// The rows after the first `keep`, summed into one row named `name` (all six columns: the self
/// columns add up exactly, the total columns only as an upper bound, since they overlap).
OperatorMemoryRow sumRows(const std::vector<OperatorMemoryRow>& rows, size_t keep,
                          std::string_view name);

}  // namespace vramscope::analysis
