#pragma once
// Internal: appending one decoded .vscope Chunk to a TraceData (used by trace_reader.cpp).

#include <cstdint>
#include <string>

#include "vramscope/trace/trace_data.h"
#include "vramscope/trace/v1/trace.pb.h"

namespace vramscope::trace::detail {

/// What applying one chunk found that the reader reports but does not skip the chunk for.
struct ChunkNotes {
    uint64_t valuesReset = 0;  ///< enum values out of range, reset to the default
    std::string tableGap;      ///< non-empty: table ids were missing before this chunk's entries
};

/// Appends the table entries and then the events of `chunk` to `data` (the header is not
/// touched). All or nothing: when a column's length disagrees with its table's row count, a table
/// holds more than kMaxRowsPerChunk rows, or table ids overlap ids already loaded, nothing is
/// appended and `why` says what was wrong. Never throws except std::bad_alloc.
bool applyChunk(const v1::Chunk& chunk, TraceData& data, std::string& why, ChunkNotes& notes);

}  // namespace vramscope::trace::detail
