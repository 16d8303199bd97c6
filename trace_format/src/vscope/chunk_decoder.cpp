// Decoding the column-wise tables of a .vscope Chunk into TraceData (layout in trace.proto).

#include "vscope/chunk_decoder.h"

#include <string>

#include "vramscope/trace/trace_file.h"

namespace vramscope::trace::detail {
namespace {

template <class T>
using PbColumn = google::protobuf::RepeatedField<T>;

/// Checks one optional column: empty, or exactly `rows` entries.
class ColumnCheck {
public:
    ColumnCheck(const char* table, size_t rows, std::string& why)
        : m_table(table), m_rows(rows), m_why(why) {}
    bool operator()(int size, const char* column) {
        if (size == 0 || static_cast<size_t>(size) == m_rows) {
            return true;
        }
        m_why = std::string(m_table) + " column " + column + " has " + std::to_string(size) +
                " entries for " + std::to_string(m_rows) + " rows";
        return false;
    }

private:
    const char* m_table;
    size_t m_rows;
    std::string& m_why;
};

bool checkRows(const char* table, size_t rows, std::string& why) {
    if (rows <= kMaxRowsPerChunk) {
        return true;
    }
    why = std::string(table) + " holds " + std::to_string(rows) + " rows, more than the " +
          std::to_string(kMaxRowsPerChunk) + " a chunk may hold";
    return false;
}

/// Appends `rows` values: the column's own (converted) or, when it is empty, `def`.
template <class T, class P, class Conv>
void appendColumn(std::vector<T>& out, const PbColumn<P>& in, size_t rows, T def, Conv conv) {
    if (in.empty()) {
        out.insert(out.end(), rows, def);
        return;
    }
    const size_t base = out.size();
    out.resize(base + rows);
    T* dst = out.data() + base;
    const P* src = in.data();
    for (size_t i = 0; i < rows; ++i) {
        dst[i] = conv(src[i]);
    }
}

template <class T, class P>
void appendColumn(std::vector<T>& out, const PbColumn<P>& in, size_t rows, T def) {
    appendColumn(out, in, rows, def, [](P v) { return static_cast<T>(v); });
}

/// Undoes the zigzag-delta encoding (modulo 2^64); an empty column means all zero.
template <class T>
void appendDeltaColumn(std::vector<T>& out, const PbColumn<int64_t>& in, size_t rows) {
    if (in.empty()) {
        out.insert(out.end(), rows, T{0});
        return;
    }
    const size_t base = out.size();
    out.resize(base + rows);
    T* dst = out.data() + base;
    const int64_t* src = in.data();
    uint64_t acc = 0;
    for (size_t i = 0; i < rows; ++i) {
        acc += static_cast<uint64_t>(src[i]);
        dst[i] = static_cast<T>(acc);
    }
}

/// end = start + duration (modulo 2^64); `start` already holds this chunk's rows at the end.
void appendEnds(std::vector<TimestampNs>& end, const std::vector<TimestampNs>& start,
                const PbColumn<uint64_t>& duration, size_t rows) {
    const size_t base = end.size();
    end.resize(base + rows);
    for (size_t i = 0; i < rows; ++i) {
        const uint64_t d = duration.empty() ? 0 : duration.Get(static_cast<int>(i));
        end[base + i] = static_cast<TimestampNs>(static_cast<uint64_t>(start[base + i]) + d);
    }
}

bool checkMemory(const v1::MemoryBatch& m, std::string& why) {
    const size_t n = static_cast<size_t>(m.timestamp_ns_delta_size());
    ColumnCheck ok("memory", n, why);
    return checkRows("memory", n, why) && ok(m.address_delta_size(), "address_delta") &&
           ok(m.size_bytes_size(), "size_bytes") && ok(m.flags_size(), "flags") &&
           ok(m.device_size(), "device") && ok(m.stream_size(), "stream") &&
           ok(m.stack_size(), "stack") && ok(m.nvtx_range_size(), "nvtx_range");
}

bool checkKernels(const v1::KernelBatch& k, std::string& why) {
    const size_t n = static_cast<size_t>(k.start_ns_delta_size());
    ColumnCheck ok("kernel", n, why);
    if (!(checkRows("kernel", n, why) && ok(k.duration_ns_size(), "duration_ns") &&
          ok(k.device_size(), "device") && ok(k.stream_size(), "stream") &&
          ok(k.name_size(), "name") && ok(k.category_size(), "category") &&
          ok(k.launch_lead_ns_size(), "launch_lead_ns") && ok(k.bytes_size(), "bytes") &&
          ok(k.correlation_id_delta_size(), "correlation_id_delta") &&
          ok(k.launch_unknown_size(), "launch_unknown") &&
          ok(k.operand_type_size(), "operand_type"))) {
        return false;
    }
    if (k.launch_unknown_size() > 0 && k.launch_lead_ns_size() == 0) {
        why = "kernel column launch_unknown is present without launch_lead_ns";
        return false;
    }
    return true;
}

bool checkCollectives(const v1::CollectiveBatch& c, std::string& why) {
    const size_t n = static_cast<size_t>(c.start_ns_delta_size());
    ColumnCheck ok("collective", n, why);
    return checkRows("collective", n, why) && ok(c.duration_ns_size(), "duration_ns") &&
           ok(c.device_size(), "device") && ok(c.stream_size(), "stream") &&
           ok(c.communicator_hash_size(), "communicator_hash") && ok(c.rank_size(), "rank") &&
           ok(c.nranks_size(), "nranks") && ok(c.function_size(), "function") &&
           ok(c.seq_number_size(), "seq_number") && ok(c.bytes_size(), "bytes") &&
           ok(c.datatype_size(), "datatype") && ok(c.algorithm_size(), "algorithm") &&
           ok(c.protocol_size(), "protocol") && ok(c.channels_size(), "channels") &&
           ok(c.enqueue_lead_ns_size(), "enqueue_lead_ns") && ok(c.peer_size(), "peer") &&
           ok(c.timing_size(), "timing");
}

bool checkRanges(const v1::RangeBatch& r, std::string& why) {
    const size_t n = static_cast<size_t>(r.start_ns_delta_size());
    ColumnCheck ok("range", n, why);
    return checkRows("range", n, why) && ok(r.duration_ns_size(), "duration_ns") &&
           ok(r.name_size(), "name") && ok(r.depth_size(), "depth") &&
           ok(r.thread_id_size(), "thread_id") && ok(r.device_size(), "device") &&
           ok(r.kind_size(), "kind");
}

bool checkCounters(const v1::CounterBatch& c, std::string& why) {
    const size_t n = static_cast<size_t>(c.timestamp_ns_delta_size());
    ColumnCheck ok("counter", n, why);
    return checkRows("counter", n, why) && ok(c.name_size(), "name") &&
           ok(c.device_size(), "device") && ok(c.kind_size(), "kind") &&
           ok(c.value_size(), "value");
}

/// Checks that a table's new entries start at `loaded` or after it (a gap means a frame that
/// carried entries was lost); returns the gap through `gap`.
bool checkTableStart(const char* table, uint64_t firstId, size_t loaded, size_t count,
                     std::string& why, size_t& gap) {
    gap = 0;
    if (count == 0) {
        return true;
    }
    if (!checkRows(table, count, why)) {
        return false;
    }
    if (firstId < loaded) {
        why = std::string(table) + " entries start at id " + std::to_string(firstId) + ", but " +
              std::to_string(loaded) + " are already loaded";
        return false;
    }
    gap = static_cast<size_t>(firstId - loaded);
    if (gap > kMaxRowsPerChunk) {
        why = std::string(table) + " entries start at id " + std::to_string(firstId) +
              ", far beyond the " + std::to_string(loaded) + " loaded";
        return false;
    }
    return true;
}

bool checkTables(const v1::Chunk& chunk, const TraceData& data, std::string& why, size_t gaps[3]) {
    const auto& s = chunk.strings();
    const auto& f = chunk.frames();
    const auto& k = chunk.stacks();
    const auto nf = static_cast<size_t>(f.name_size());
    ColumnCheck ok("frame table", nf, why);
    if (!checkTableStart("string table", s.first_id(), data.strings.size(),
                         static_cast<size_t>(s.values_size()), why, gaps[0]) ||
        !checkTableStart("frame table", f.first_id(), data.frames.size(), nf, why, gaps[1]) ||
        !ok(f.file_size(), "file") || !ok(f.line_size(), "line") ||
        !checkTableStart("stack table", k.first_id(), data.stacks.size(),
                         static_cast<size_t>(k.length_size()), why, gaps[2])) {
        return false;
    }
    uint64_t total = 0;
    for (uint32_t len : k.length()) {
        total += len;
    }
    if (total != static_cast<uint64_t>(k.frames_size())) {
        why = "stack table lengths add up to " + std::to_string(total) + " frames, but it holds " +
              std::to_string(k.frames_size());
        return false;
    }
    return true;
}

void applyTables(const v1::Chunk& chunk, TraceData& data, const size_t gaps[3], ChunkNotes& notes) {
    const auto& s = chunk.strings();
    if (s.values_size() > 0) {
        data.strings.resize(data.strings.size() + gaps[0]);
        for (const auto& v : s.values()) {
            data.strings.push_back(v);
        }
    }
    const auto& f = chunk.frames();
    if (f.name_size() > 0) {
        data.frames.resize(data.frames.size() + gaps[1]);
        for (int i = 0; i < f.name_size(); ++i) {
            data.frames.push_back(
                Frame{f.name(i), f.file_size() ? f.file(i) : 0u, f.line_size() ? f.line(i) : 0});
        }
    }
    const auto& k = chunk.stacks();
    if (k.length_size() > 0) {
        data.stacks.resize(data.stacks.size() + gaps[2]);
        int pos = 0;
        for (uint32_t len : k.length()) {
            auto& stack = data.stacks.emplace_back();
            stack.reserve(len);
            for (uint32_t j = 0; j < len; ++j) {
                stack.push_back(FrameId{k.frames(pos + static_cast<int>(j))});
            }
            pos += static_cast<int>(len);
        }
    }
    const char* names[3] = {"string", "frame", "stack"};
    for (int i = 0; i < 3; ++i) {
        if (gaps[i] > 0) {
            notes.tableGap += std::to_string(gaps[i]) + " " + names[i] +
                              " table entries are missing" +
                              " (a frame that carried them was lost); ";
        }
    }
}

void applyMemory(const v1::MemoryBatch& in, MemoryEvents& out, ChunkNotes& notes) {
    const auto n = static_cast<size_t>(in.timestamp_ns_delta_size());
    appendDeltaColumn(out.timestampNs, in.timestamp_ns_delta(), n);
    appendDeltaColumn(out.address, in.address_delta(), n);
    appendColumn(out.sizeBytes, in.size_bytes(), n, uint64_t{0});
    appendColumn(out.action, in.flags(), n, MemoryAction::Alloc,
                 [](uint32_t f) { return static_cast<MemoryAction>(f & 1u); });
    appendColumn(out.level, in.flags(), n, MemoryLevel::Reserved,
                 [](uint32_t f) { return static_cast<MemoryLevel>((f >> 1) & 1u); });
    appendColumn(out.kind, in.flags(), n, MemoryKind::Unknown, [&](uint32_t f) {
        return checkedEnum((f >> 2) & 0xFu, MemoryKind::PreExisting, MemoryKind::Unknown,
                           notes.valuesReset);
    });
    appendColumn(out.device, in.device(), n, DeviceIndex{0});
    appendColumn(out.stream, in.stream(), n, uint64_t{0});
    appendColumn(out.stack, in.stack(), n, StackId{0});
    appendColumn(out.nvtxRange, in.nvtx_range(), n, uint32_t{0});
}

void applyKernels(const v1::KernelBatch& in, KernelEvents& out, ChunkNotes& notes) {
    const auto n = static_cast<size_t>(in.start_ns_delta_size());
    const size_t base = out.startNs.size();
    appendDeltaColumn(out.startNs, in.start_ns_delta(), n);
    appendEnds(out.endNs, out.startNs, in.duration_ns(), n);
    appendColumn(out.device, in.device(), n, DeviceIndex{0});
    appendColumn(out.stream, in.stream(), n, uint64_t{0});
    appendColumn(out.name, in.name(), n, StringId{0});
    appendColumn(out.category, in.category(), n, KernelCategory::Compute, [&](uint32_t c) {
        return checkedEnum(c, KernelCategory::Memset, KernelCategory::Compute, notes.valuesReset);
    });
    out.launchNs.resize(base + n, TimestampNs{-1});
    if (!in.launch_lead_ns().empty()) {
        for (size_t i = 0; i < n; ++i) {
            if (in.launch_unknown_size() > 0 && in.launch_unknown(static_cast<int>(i))) {
                continue;
            }
            out.launchNs[base + i] = static_cast<TimestampNs>(
                static_cast<uint64_t>(out.startNs[base + i]) -
                static_cast<uint64_t>(in.launch_lead_ns(static_cast<int>(i))));
        }
    }
    appendColumn(out.bytes, in.bytes(), n, uint64_t{0});
    appendDeltaColumn(out.correlationId, in.correlation_id_delta(), n);
    appendColumn(out.operandType, in.operand_type(), n, StringId{0});
}

void applyCollectives(const v1::CollectiveBatch& in, CollectiveEvents& out, ChunkNotes& notes) {
    const auto n = static_cast<size_t>(in.start_ns_delta_size());
    appendDeltaColumn(out.startNs, in.start_ns_delta(), n);
    appendEnds(out.endNs, out.startNs, in.duration_ns(), n);
    appendColumn(out.device, in.device(), n, DeviceIndex{0});
    appendColumn(out.stream, in.stream(), n, uint64_t{0});
    appendColumn(out.communicatorHash, in.communicator_hash(), n, uint64_t{0});
    appendColumn(out.rank, in.rank(), n, kUnknownRank);
    appendColumn(out.nranks, in.nranks(), n, int32_t{0});
    appendColumn(out.function, in.function(), n, StringId{0});
    appendColumn(out.seqNumber, in.seq_number(), n, int64_t{-1});
    appendColumn(out.bytes, in.bytes(), n, uint64_t{0});
    appendColumn(out.datatype, in.datatype(), n, StringId{0});
    appendColumn(out.algorithm, in.algorithm(), n, StringId{0});
    appendColumn(out.protocol, in.protocol(), n, StringId{0});
    appendColumn(out.channels, in.channels(), n, uint32_t{0});
    appendColumn(out.enqueueLeadNs, in.enqueue_lead_ns(), n, int64_t{-1});
    appendColumn(out.peer, in.peer(), n, int32_t{-1});
    appendColumn(out.timing, in.timing(), n, CollectiveTiming::Unknown, [&](uint32_t t) {
        return checkedEnum(t, CollectiveTiming::Host, CollectiveTiming::Unknown, notes.valuesReset);
    });
}

void applyRanges(const v1::RangeBatch& in, RangeEvents& out, ChunkNotes& notes) {
    const auto n = static_cast<size_t>(in.start_ns_delta_size());
    appendDeltaColumn(out.startNs, in.start_ns_delta(), n);
    appendEnds(out.endNs, out.startNs, in.duration_ns(), n);
    appendColumn(out.name, in.name(), n, StringId{0});
    appendColumn(out.depth, in.depth(), n, uint32_t{0});
    appendColumn(out.threadId, in.thread_id(), n, uint64_t{0});
    appendColumn(out.device, in.device(), n, kHostDevice);
    appendColumn(out.kind, in.kind(), n, RangeKind::Nvtx, [&](uint32_t k) {
        return checkedEnum(k, RangeKind::Iteration, RangeKind::Nvtx, notes.valuesReset);
    });
}

void applyCounters(const v1::CounterBatch& in, CounterSamples& out, ChunkNotes& notes) {
    const auto n = static_cast<size_t>(in.timestamp_ns_delta_size());
    appendDeltaColumn(out.timestampNs, in.timestamp_ns_delta(), n);
    appendColumn(out.name, in.name(), n, StringId{0});
    appendColumn(out.device, in.device(), n, kHostDevice);
    appendColumn(out.kind, in.kind(), n, CounterKind::Generic, [&](uint32_t k) {
        return checkedEnum(k, CounterKind::DeviceGpuUsedBytes, CounterKind::Generic,
                           notes.valuesReset);
    });
    appendColumn(out.value, in.value(), n, 0.0);
}

}  // namespace

bool checkTablesAndLists(const v1::Chunk& chunk, const TraceData& data, std::string& why,
                         size_t gaps[3]) {
    return checkTables(chunk, data, why, gaps) &&
           checkRows("OOM list", static_cast<size_t>(chunk.ooms_size()), why) &&
           checkRows("data-loss list", static_cast<size_t>(chunk.data_loss_size()), why) &&
           checkRows("annotation list", static_cast<size_t>(chunk.annotations_size()), why) &&
           checkRows("communicator list", static_cast<size_t>(chunk.communicators_size()), why);
}

void applyTablesOf(const v1::Chunk& chunk, TraceData& data, const size_t gaps[3],
                   ChunkNotes& notes) {
    applyTables(chunk, data, gaps, notes);
}

void applyListsOf(const v1::Chunk& chunk, TraceData& data) {
    for (const auto& o : chunk.ooms()) {
        data.ooms.push_back(OomEvent{o.timestamp_ns(), DeviceIndex{o.device()}, o.stream(),
                                     o.requested_bytes(), o.free_bytes()});
    }
    for (const auto& d : chunk.data_loss()) {
        // `what` holds a registry name; older files wrote a label, mapped where it is known and
        // kept in the reason otherwise.
        const LossCounter counter = lossCounterFromName(d.what());
        std::string reason = d.reason();
        if (counter == LossCounter::Other && d.what() != lossCounterInfo(counter).name &&
            !d.what().empty()) {
            reason = d.what() + (reason.empty() ? "" : ": ") + reason;
        }
        data.dataLoss.push_back(
            DataLoss{counter, d.count(), std::move(reason), d.start_ns(), d.end_ns()});
    }
    for (const auto& m : chunk.communicators()) {
        data.communicators.push_back(Communicator{m.hash(), RankId{m.rank()}, m.nranks(), m.nodes(),
                                                  m.name(), m.init_ns(), DeviceIndex{m.device()}});
    }
    for (const auto& a : chunk.annotations()) {
        data.annotations.push_back(Annotation{
            a.start_ns(), a.end_ns(), DeviceIndex{a.device()}, a.text(), a.author(), a.title(),
            a.color(), a.created_unix_ms(), a.allocation_address(), a.allocation_time_ns(),
            a.flame_frame(), a.generated(), a.kind(), a.id(), a.all_ranks()});
    }
}

bool applyChunk(const v1::Chunk& chunk, TraceData& data, std::string& why, ChunkNotes& notes) {
    size_t gaps[3] = {0, 0, 0};
    if (!checkTablesAndLists(chunk, data, why, gaps) || !checkMemory(chunk.memory(), why) ||
        !checkKernels(chunk.kernels(), why) || !checkCollectives(chunk.collectives(), why) ||
        !checkRanges(chunk.ranges(), why) || !checkCounters(chunk.counters(), why)) {
        return false;
    }
    applyTables(chunk, data, gaps, notes);
    applyMemory(chunk.memory(), data.memory, notes);
    applyKernels(chunk.kernels(), data.kernels, notes);
    applyCollectives(chunk.collectives(), data.collectives, notes);
    applyRanges(chunk.ranges(), data.ranges, notes);
    applyCounters(chunk.counters(), data.counters, notes);
    applyListsOf(chunk, data);
    return true;
}

}  // namespace vramscope::trace::detail
