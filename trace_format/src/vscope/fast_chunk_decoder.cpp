// The reader's hot path: a serialised Chunk's event batches decoded by hand, each packed column
// read once, straight into the TraceData vectors (no protobuf message in between). Payloads in a
// form this path does not take (unpacked or repeated columns, which proto3 writers may produce
// but ours never does) go to the generic path in chunk_decoder.cpp, which gives identical
// results. Wire format: https://protobuf.dev/programming-guides/encoding/.

#include <algorithm>
#include <cstring>
#include <string>

#include "vramscope/trace/trace_file.h"
#include "vscope/chunk_decoder.h"

namespace vramscope::trace::detail {
namespace {

constexpr int kMaxColumns = 17;  // CollectiveBatch has the most columns

/// One packed column of a batch: its bytes and how many values they hold.
struct Column {
    const uint8_t* p = nullptr;
    size_t bytes = 0;
    size_t count = 0;
    bool present = false;
};

struct Batch {
    bool present = false;
    const uint8_t* p = nullptr;
    size_t bytes = 0;
    Column cols[kMaxColumns + 1];  // by field number
};

/// Reads a varint with bounds checks (tags and lengths); false when malformed.
bool readVarint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
        const uint64_t b = *p++;
        v |= (b & 0x7Fu) << shift;
        if (b < 0x80) {
            return true;
        }
    }
    return false;
}

/// Skips one field's value of wire type `wt`; false when malformed or a group.
bool skipValue(const uint8_t*& p, const uint8_t* end, uint32_t wt) {
    uint64_t v = 0;
    switch (wt) {
        case 0:
            return readVarint(p, end, v);
        case 1:
            if (end - p < 8) {
                return false;
            }
            p += 8;
            return true;
        case 2:
            if (!readVarint(p, end, v) || v > static_cast<uint64_t>(end - p)) {
                return false;
            }
            p += v;
            return true;
        case 5:
            if (end - p < 4) {
                return false;
            }
            p += 4;
            return true;
        default:
            return false;
    }
}

/// Counts the varints of a packed column and checks that each is at most 10 bytes and the last
/// one ends inside the column, so that the unchecked decoder below never reads past it.
bool countVarints(const uint8_t* p, size_t n, size_t& count) {
    size_t c = 0;
    size_t run = 0;
    for (size_t i = 0; i < n; ++i) {
        if (p[i] & 0x80) {
            if (++run >= 10) {
                return false;
            }
        } else {
            ++c;
            run = 0;
        }
    }
    count = c;
    return run == 0;
}

/// Splits a batch message into its packed columns 1..maxField (other fields are skipped).
/// False when the batch is not in the packed, one-occurrence-per-column form.
bool scanBatch(Batch& b, int maxField, int doubleField) {
    const uint8_t* p = b.p;
    const uint8_t* end = b.p + b.bytes;
    while (p < end) {
        uint64_t tag = 0;
        if (!readVarint(p, end, tag)) {
            return false;
        }
        const auto field = static_cast<int>(tag >> 3);
        const auto wt = static_cast<uint32_t>(tag & 7u);
        if (field < 1 || field > maxField) {
            if (!skipValue(p, end, wt)) {
                return false;
            }
            continue;
        }
        uint64_t len = 0;
        Column& c = b.cols[field];
        if (wt != 2 || c.present || !readVarint(p, end, len) ||
            len > static_cast<uint64_t>(end - p)) {
            return false;
        }
        c.present = true;
        c.p = p;
        c.bytes = static_cast<size_t>(len);
        if (field == doubleField) {
            if (len % 8 != 0) {
                return false;
            }
            c.count = c.bytes / 8;
        } else if (!countVarints(p, c.bytes, c.count)) {
            return false;
        }
        p += len;
    }
    return true;
}

/// Checks that every column is empty or has as many values as column 1 (the row count).
bool checkBatch(const Batch& b, const char* table, const char* const* names, int maxField,
                std::string& why) {
    const size_t rows = b.cols[1].count;
    if (rows > kMaxRowsPerChunk) {
        why = std::string(table) + " holds " + std::to_string(rows) + " rows, more than the " +
              std::to_string(kMaxRowsPerChunk) + " a chunk may hold";
        return false;
    }
    for (int f = 2; f <= maxField; ++f) {
        const size_t n = b.cols[f].count;
        if (n != 0 && n != rows) {
            why = std::string(table) + " column " + names[f] + " has " + std::to_string(n) +
                  " entries for " + std::to_string(rows) + " rows";
            return false;
        }
    }
    return true;
}

/// Decodes a varint known (from countVarints) to end inside the column.
inline uint64_t nextVarint(const uint8_t*& p) {
    uint64_t b = *p++;
    if (b < 0x80) {
        return b;
    }
    uint64_t v = b & 0x7Fu;
    for (int shift = 7;; shift += 7) {
        b = *p++;
        v |= (b & 0x7Fu) << shift;
        if (b < 0x80) {
            return v;
        }
    }
}

inline int64_t zigzag64(uint64_t v) {
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}
inline int32_t zigzag32(uint64_t v) {
    const auto u = static_cast<uint32_t>(v);
    return static_cast<int32_t>(u >> 1) ^ -static_cast<int32_t>(u & 1);
}

/// Rows decoded per block before they are appended. Appending a block with insert() writes each
/// value once into the column's (reserved, fresh) memory; resize() then overwrite wrote it twice,
/// and the zeroing pass cost about a third of the read (bench/format_bench). 512 values of 8
/// bytes stay in L1.
constexpr size_t kBlockRows = 512;

/// Appends `rows` values of a column, converted by `conv`, or `def` when the column is empty.
template <class T, class Conv>
void put(std::vector<T>& out, const Column& c, size_t rows, T def, Conv conv) {
    if (c.count == 0) {
        out.resize(out.size() + rows, def);
        return;
    }
    T block[kBlockRows];
    const uint8_t* p = c.p;
    const uint8_t* end = c.p + c.bytes;
    size_t left = rows;
    while (left > 0) {
        const size_t want = std::min(left, kBlockRows);
        size_t i = 0;
        // Small values (devices, streams, names, flags, most deltas) are one byte each: take
        // eight at a time when none of the next eight bytes has its continuation bit set.
        while (i + 8 <= want && end - p >= 8) {
            uint64_t word;
            std::memcpy(&word, p, 8);
            if ((word & 0x8080808080808080ull) == 0) {
                for (int k = 0; k < 8; ++k) {
                    block[i + k] = conv((word >> (8 * k)) & 0xFFu);
                }
                i += 8;
                p += 8;
            } else {
                block[i++] = conv(nextVarint(p));
            }
        }
        for (; i < want; ++i) {
            block[i] = conv(nextVarint(p));
        }
        out.insert(out.end(), block, block + want);
        left -= want;
    }
}

template <class T>
void putPlain(std::vector<T>& out, const Column& c, size_t rows, T def) {
    put(out, c, rows, def, [](uint64_t v) { return static_cast<T>(v); });
}

template <class T>
void putZigzag32(std::vector<T>& out, const Column& c, size_t rows, T def) {
    put(out, c, rows, def, [](uint64_t v) { return static_cast<T>(zigzag32(v)); });
}

/// Zigzag deltas, the first row absolute, summed modulo 2^64.
template <class T>
void putDelta(std::vector<T>& out, const Column& c, size_t rows) {
    uint64_t acc = 0;
    put(out, c, rows, T{0}, [&acc](uint64_t v) {
        acc += static_cast<uint64_t>(zigzag64(v));
        return static_cast<T>(acc);
    });
}

/// end = start + duration (modulo 2^64); `start` already holds the chunk's rows at its end.
void putEnds(std::vector<TimestampNs>& end, const std::vector<TimestampNs>& start, const Column& c,
             size_t rows) {
    const size_t base = end.size();
    const TimestampNs* s = start.data() + base;
    if (c.count == 0) {
        end.insert(end.end(), s, s + rows);
        return;
    }
    TimestampNs block[kBlockRows];
    const uint8_t* p = c.p;
    for (size_t done = 0; done < rows;) {
        const size_t want = std::min(rows - done, kBlockRows);
        for (size_t i = 0; i < want; ++i) {
            block[i] = static_cast<TimestampNs>(static_cast<uint64_t>(s[done + i]) + nextVarint(p));
        }
        end.insert(end.end(), block, block + want);
        done += want;
    }
}

const char* const kMemoryNames[] = {
    "",      "timestamp_ns_delta", "address_delta", "size_bytes", "flags", "device", "stream",
    "stack", "nvtx_range"};
const char* const kKernelNames[] = {"",
                                    "start_ns_delta",
                                    "duration_ns",
                                    "device",
                                    "stream",
                                    "name",
                                    "category",
                                    "launch_lead_ns",
                                    "bytes",
                                    "correlation_id_delta",
                                    "launch_unknown",
                                    "operand_type"};
const char* const kCollectiveNames[] = {
    "",          "start_ns_delta", "duration_ns", "device",          "stream", "communicator_hash",
    "rank",      "nranks",         "function",    "seq_number",      "bytes",  "datatype",
    "algorithm", "protocol",       "channels",    "enqueue_lead_ns", "peer",   "timing"};
const char* const kRangeNames[] = {"",      "start_ns_delta", "duration_ns", "name",
                                   "depth", "thread_id",      "device",      "kind"};
const char* const kCounterNames[] = {"", "timestamp_ns_delta", "name", "device", "kind", "value"};

void applyPackedMemory(const Batch& b, MemoryEvents& out, ChunkNotes& notes) {
    const size_t n = b.cols[1].count;
    const size_t base = out.size();
    putDelta(out.timestampNs, b.cols[1], n);
    putDelta(out.address, b.cols[2], n);
    putPlain(out.sizeBytes, b.cols[3], n, uint64_t{0});
    out.action.resize(base + n, MemoryAction::Alloc);
    out.level.resize(base + n, MemoryLevel::Reserved);
    out.kind.resize(base + n, MemoryKind::Unknown);
    if (b.cols[4].count > 0) {
        const uint8_t* p = b.cols[4].p;
        for (size_t i = base; i < base + n; ++i) {
            const auto f = static_cast<uint32_t>(nextVarint(p));
            out.action[i] = static_cast<MemoryAction>(f & 1u);
            out.level[i] = static_cast<MemoryLevel>((f >> 1) & 1u);
            out.kind[i] = checkedEnum((f >> 2) & 0xFu, MemoryKind::PreExisting, MemoryKind::Unknown,
                                      notes.valuesReset);
        }
    }
    putZigzag32(out.device, b.cols[5], n, DeviceIndex{0});
    putPlain(out.stream, b.cols[6], n, uint64_t{0});
    putPlain(out.stack, b.cols[7], n, StackId{0});
    putPlain(out.nvtxRange, b.cols[8], n, uint32_t{0});
}

void applyPackedKernels(const Batch& b, KernelEvents& out, ChunkNotes& notes) {
    const size_t n = b.cols[1].count;
    const size_t base = out.startNs.size();
    putDelta(out.startNs, b.cols[1], n);
    putEnds(out.endNs, out.startNs, b.cols[2], n);
    putZigzag32(out.device, b.cols[3], n, DeviceIndex{0});
    putPlain(out.stream, b.cols[4], n, uint64_t{0});
    putPlain(out.name, b.cols[5], n, StringId{0});
    put(out.category, b.cols[6], n, KernelCategory::Compute, [&](uint64_t v) {
        return checkedEnum(v, KernelCategory::Memset, KernelCategory::Compute, notes.valuesReset);
    });
    if (b.cols[7].count > 0) {
        const uint8_t* lead = b.cols[7].p;
        const uint8_t* unknown = b.cols[10].count > 0 ? b.cols[10].p : nullptr;
        const TimestampNs* start = out.startNs.data() + base;
        TimestampNs block[kBlockRows];
        for (size_t done = 0; done < n;) {
            const size_t want = std::min(n - done, kBlockRows);
            for (size_t i = 0; i < want; ++i) {
                const uint64_t l = static_cast<uint64_t>(zigzag64(nextVarint(lead)));
                const bool known = unknown == nullptr || nextVarint(unknown) == 0;
                block[i] =
                    known ? static_cast<TimestampNs>(static_cast<uint64_t>(start[done + i]) - l)
                          : TimestampNs{-1};
            }
            out.launchNs.insert(out.launchNs.end(), block, block + want);
            done += want;
        }
    } else {
        out.launchNs.resize(base + n, TimestampNs{-1});
    }
    putPlain(out.bytes, b.cols[8], n, uint64_t{0});
    putDelta(out.correlationId, b.cols[9], n);
    putPlain(out.operandType, b.cols[11], n, StringId{0});
}

void applyPackedCollectives(const Batch& b, CollectiveEvents& out, ChunkNotes& notes) {
    const size_t n = b.cols[1].count;
    putDelta(out.startNs, b.cols[1], n);
    putEnds(out.endNs, out.startNs, b.cols[2], n);
    putZigzag32(out.device, b.cols[3], n, DeviceIndex{0});
    putPlain(out.stream, b.cols[4], n, uint64_t{0});
    putPlain(out.communicatorHash, b.cols[5], n, uint64_t{0});
    putZigzag32(out.rank, b.cols[6], n, kUnknownRank);
    putPlain(out.nranks, b.cols[7], n, int32_t{0});
    putPlain(out.function, b.cols[8], n, StringId{0});
    put(out.seqNumber, b.cols[9], n, int64_t{-1}, [](uint64_t v) { return zigzag64(v); });
    putPlain(out.bytes, b.cols[10], n, uint64_t{0});
    putPlain(out.datatype, b.cols[11], n, StringId{0});
    putPlain(out.algorithm, b.cols[12], n, StringId{0});
    putPlain(out.protocol, b.cols[13], n, StringId{0});
    putPlain(out.channels, b.cols[14], n, uint32_t{0});
    put(out.enqueueLeadNs, b.cols[15], n, int64_t{-1}, [](uint64_t v) { return zigzag64(v); });
    putZigzag32(out.peer, b.cols[16], n, int32_t{-1});
    put(out.timing, b.cols[17], n, CollectiveTiming::Unknown, [&](uint64_t v) {
        return checkedEnum(v, CollectiveTiming::Host, CollectiveTiming::Unknown, notes.valuesReset);
    });
}

void applyPackedRanges(const Batch& b, RangeEvents& out, ChunkNotes& notes) {
    const size_t n = b.cols[1].count;
    putDelta(out.startNs, b.cols[1], n);
    putEnds(out.endNs, out.startNs, b.cols[2], n);
    putPlain(out.name, b.cols[3], n, StringId{0});
    putPlain(out.depth, b.cols[4], n, uint32_t{0});
    putPlain(out.threadId, b.cols[5], n, uint64_t{0});
    putZigzag32(out.device, b.cols[6], n, kHostDevice);
    put(out.kind, b.cols[7], n, RangeKind::Nvtx, [&](uint64_t v) {
        return checkedEnum(v, RangeKind::Iteration, RangeKind::Nvtx, notes.valuesReset);
    });
}

void applyPackedCounters(const Batch& b, CounterSamples& out, ChunkNotes& notes) {
    const size_t n = b.cols[1].count;
    putDelta(out.timestampNs, b.cols[1], n);
    putPlain(out.name, b.cols[2], n, StringId{0});
    putZigzag32(out.device, b.cols[3], n, kHostDevice);
    put(out.kind, b.cols[4], n, CounterKind::Generic, [&](uint64_t v) {
        return checkedEnum(v, CounterKind::DeviceGpuUsedBytes, CounterKind::Generic,
                           notes.valuesReset);
    });
    const size_t base = out.value.size();
    out.value.resize(base + n, 0.0);
    if (b.cols[5].count > 0) {
        // Packed doubles are little-endian IEEE 754, as on every host this builds for.
        std::memcpy(out.value.data() + base, b.cols[5].p, n * sizeof(double));
    }
}

}  // namespace

FastDecode decodeChunkFast(std::string_view payload, TraceData& data, v1::Chunk& rest,
                           std::string& restBytes, std::string& why, ChunkNotes& notes) {
    static_assert(std::endian::native == std::endian::little, "packed doubles are copied as is");
    // Chunk fields 5-9 are the batches (memory, kernels, collectives, ranges, counters).
    Batch batches[5];
    restBytes.clear();
    const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
    const uint8_t* end = p + payload.size();
    while (p < end) {
        const uint8_t* fieldStart = p;
        uint64_t tag = 0;
        if (!readVarint(p, end, tag)) {
            return FastDecode::NotFast;
        }
        const auto field = tag >> 3;
        const auto wt = static_cast<uint32_t>(tag & 7u);
        if (field >= 5 && field <= 9 && wt == 2) {
            Batch& b = batches[field - 5];
            uint64_t len = 0;
            if (b.present || !readVarint(p, end, len) || len > static_cast<uint64_t>(end - p)) {
                return FastDecode::NotFast;
            }
            b.present = true;
            b.p = p;
            b.bytes = static_cast<size_t>(len);
            p += len;
            continue;
        }
        if (!skipValue(p, end, wt)) {
            return FastDecode::NotFast;
        }
        restBytes.append(reinterpret_cast<const char*>(fieldStart),
                         static_cast<size_t>(p - fieldStart));
    }
    const int maxField[5] = {8, 11, 17, 7, 5};
    const int doubleField[5] = {0, 0, 0, 0, 5};
    for (int i = 0; i < 5; ++i) {
        if (batches[i].present && !scanBatch(batches[i], maxField[i], doubleField[i])) {
            return FastDecode::NotFast;
        }
    }
    if (!rest.ParseFromArray(restBytes.data(), static_cast<int>(restBytes.size()))) {
        why = "its payload is not a valid Chunk message";
        return FastDecode::Rejected;
    }
    size_t gaps[3] = {0, 0, 0};
    if (!checkBatch(batches[0], "memory", kMemoryNames, 8, why) ||
        !checkBatch(batches[1], "kernel", kKernelNames, 11, why) ||
        !checkBatch(batches[2], "collective", kCollectiveNames, 17, why) ||
        !checkBatch(batches[3], "range", kRangeNames, 7, why) ||
        !checkBatch(batches[4], "counter", kCounterNames, 5, why) ||
        !checkTablesAndLists(rest, data, why, gaps)) {
        return FastDecode::Rejected;
    }
    if (batches[1].cols[10].count > 0 && batches[1].cols[7].count == 0) {
        why = "kernel column launch_unknown is present without launch_lead_ns";
        return FastDecode::Rejected;
    }
    applyTablesOf(rest, data, gaps, notes);
    applyPackedMemory(batches[0], data.memory, notes);
    applyPackedKernels(batches[1], data.kernels, notes);
    applyPackedCollectives(batches[2], data.collectives, notes);
    applyPackedRanges(batches[3], data.ranges, notes);
    applyPackedCounters(batches[4], data.counters, notes);
    applyListsOf(rest, data);
    return FastDecode::Applied;
}

}  // namespace vramscope::trace::detail
