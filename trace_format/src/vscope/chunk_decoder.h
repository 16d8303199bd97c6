#pragma once
// Internal: appending one decoded .vscope Chunk to a TraceData (used by trace_reader.cpp).

#include <cstdint>
#include <string>
#include <string_view>

#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/v1/trace.pb.h"

namespace vramscope::trace::detail {

/// What applying one chunk found that the reader reports but does not skip the chunk for.
struct ChunkNotes {
    uint64_t valuesReset = 0;  ///< enum values out of range, reset to the default
    std::string tableGap;      ///< non-empty: table ids were missing before this chunk's entries
};

/// The enum value `v` read from a file, or `def` (counted in `reset`) when `v` is above the
/// largest value `maxValue` this reader knows: a newer writer's value, or a damaged file.
template <class E>
E checkedEnum(uint64_t v, E maxValue, E def, uint64_t& reset) {
    if (v > static_cast<uint64_t>(maxValue)) {
        ++reset;
        return def;
    }
    return static_cast<E>(v);
}

/// Appends the table entries and then the events of `chunk` to `data` (the header is not
/// touched). All or nothing: when a column's length disagrees with its table's row count, a table
/// holds more than kMaxRowsPerChunk rows, or table ids overlap ids already loaded, nothing is
/// appended and `why` says what was wrong. Never throws except std::bad_alloc.
bool applyChunk(const v1::Chunk& chunk, TraceData& data, std::string& why, ChunkNotes& notes);

/// The parts of applyChunk() that the fast path shares: checks of the tables (ids, lengths; gaps
/// returned for strings, frames, stacks) and of the OOM / data-loss / annotation lists, and
/// appending them.
bool checkTablesAndLists(const v1::Chunk& chunk, const TraceData& data, std::string& why,
                         size_t gaps[3]);
void applyTablesOf(const v1::Chunk& chunk, TraceData& data, const size_t gaps[3],
                   ChunkNotes& notes);
void applyListsOf(const v1::Chunk& chunk, TraceData& data);

/// Result of decodeChunkFast().
enum class FastDecode {
    Applied,   ///< the chunk was appended to the trace
    Rejected,  ///< the chunk is unsound (`why` says how); nothing was appended
    NotFast,   ///< the payload uses a protobuf form the fast path does not take (unpacked or
               ///< repeated columns, odd wire types); nothing was appended: use the generic path
};

/// Decodes a serialised Chunk with the event batches' packed columns read straight into the
/// trace's vectors (no intermediate protobuf message), and everything else (header, tables,
/// lists) into `rest` with the generated code. Same checks and all-or-nothing rule as
/// applyChunk(); `rest.has_header()` tells whether the chunk carried the file header.
FastDecode decodeChunkFast(std::string_view payload, TraceData& data, v1::Chunk& rest,
                           std::string& restBytes, std::string& why, ChunkNotes& notes);

}  // namespace vramscope::trace::detail
