#pragma once
// The payload of one .vscope frame: trace.proto's Chunk message, serialised by an encoder that the
// frame writer (TraceStreamWriter, trace_file.h) calls for each chunk it writes. Two encoders
// write the same bytes for the same input (tests/unit/trace_format/protozero_encoder_test.cpp
// parses and compares them):
//  - makeProtobufChunkEncoder(): libprotobuf's generated classes (vramscope::trace_io); what
//    TraceWriter, and so every tool, writes with;
//  - makeProtozeroChunkEncoder(): the header-only protozero library (vramscope::trace_write, which
//    does not link libprotobuf); what the capture agent writes with, so that it loads into jobs
//    whose images have no libprotobuf.
// Both serialise as libprotobuf does, which is what makes their bytes equal: fields in
// field-number order; proto3 scalars equal to 0 (doubles: the bit pattern 0, so -0.0 is written)
// and empty bytes / strings left out; repeated scalars packed (an empty one left out); every
// element of a repeated bytes field written, empty ones too; a sub-message that is present
// written even when empty; lengths as shortest varints.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "vramscope/trace/trace_data.h"

namespace vramscope::trace {

struct TraceSummary;

/// Rows [begin, end) of one table of a TraceData.
struct RowRange {
    size_t begin = 0;
    size_t end = 0;
    bool empty() const { return begin >= end; }
};

/// What one event chunk holds: a range of rows of each table of a TraceData. String, frame and
/// stack entries are identified by their index in the TraceData (their id), so a range of them
/// also gives the table's first_id. Every range lies inside its table.
struct ChunkContents {
    RowRange strings;
    RowRange frames;
    RowRange stacks;
    RowRange memory;
    RowRange kernels;
    RowRange collectives;
    RowRange ranges;
    RowRange counters;
    RowRange ooms;
    RowRange dataLoss;
    RowRange annotations;
    RowRange communicators;
};

/// Turns chunks into payload bytes (trace.proto, message Chunk). Each call replaces `out` with
/// the serialised message and returns its size in bytes. When that size is above
/// kMaxFramePayloadBytes (trace_file.h) the caller refuses the chunk, and an encoder may return
/// the size without filling `out`. No errors besides std::bad_alloc. Not thread-safe: one writer
/// uses one encoder.
class ChunkEncoder {
public:
    virtual ~ChunkEncoder() = default;
    /// A Chunk holding only `header` (field 1), its formatMajor / formatMinor as given.
    virtual size_t encodeHeader(const FileHeader& header, std::string& out) = 0;
    /// A Chunk holding `contents` of `data`: table entries (fields 2-4), event tables (5-9, by
    /// the column rules of trace.proto: deltas modulo 2^64, columns whose rows all hold the
    /// default left empty), OOMs, data loss, annotations and communicators (10-12, 15). The
    /// caller has checked that the columns of each table have equal lengths.
    virtual size_t encodeEvents(const TraceData& data, const ChunkContents& contents,
                                std::string& out) = 0;
    /// A Chunk holding only `summary` (field 13) with Summary.sequence = `sequence`; the
    /// summary's header is not written (it has its own frame).
    virtual size_t encodeSummary(const TraceSummary& summary, uint32_t sequence,
                                 std::string& out) = 0;
};

/// The protozero encoder. Defined in vramscope::trace_write, which needs no libprotobuf.
std::unique_ptr<ChunkEncoder> makeProtozeroChunkEncoder();
/// The libprotobuf encoder (generated trace.pb.h classes). Defined in vramscope::trace_io.
std::unique_ptr<ChunkEncoder> makeProtobufChunkEncoder();

}  // namespace vramscope::trace
