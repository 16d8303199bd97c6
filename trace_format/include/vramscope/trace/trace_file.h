#pragma once
// Reading and writing .vscope files (layout: proto/vramscope/trace/v1/trace.proto). The readers,
// TraceWriter, writeTraceFile and writeTraceBytes are in vramscope::trace_io (libprotobuf); the
// frame writer TraceStreamWriter, the sinks, clearEventTables and crc32c are in
// vramscope::trace_write, which needs no libprotobuf (the capture agent links only that).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/device_analysis_summary.h"
#include "vramscope/trace/error.h"
#include "vramscope/trace/progress.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::trace {

/// Format version this build writes. Readers accept any version with major <= kFormatMajor.
inline constexpr uint32_t kFormatMajor = 1;
/// Minor 1 added summary frames and job indexes (trace.proto, Summary, JobIndexEntry); minor 2
/// collective channels, enqueue lead, peer and timing source, and communicators (Chunk field 15).
inline constexpr uint32_t kFormatMinor = 2;
/// The 8 magic bytes that open every .vscope file.
inline constexpr std::string_view kMagic{"\x89VSCOPE\n", 8};
/// Size of magic + major + minor.
inline constexpr size_t kPreambleBytes = 12;
/// Largest frame payload a writer produces and a reader accepts (guards against huge allocations).
inline constexpr uint32_t kMaxFramePayloadBytes = 256u << 20;
/// Most rows of one table (or table entries) in one frame. Writers clamp eventsPerChunk to it;
/// readers skip a frame that holds more (a decoded row costs up to ~50 bytes of memory).
inline constexpr size_t kMaxRowsPerChunk = size_t{1} << 22;
/// Bytes of a frame before its payload (u32 length, u8 encoding) and after it (u32 CRC-32C).
inline constexpr size_t kFrameHeadBytes = 5;
inline constexpr size_t kFrameTailBytes = 4;
/// Frame encodings (the byte after the length).
inline constexpr uint8_t kEncodingRaw = 0;
inline constexpr uint8_t kEncodingZstd = 1;

/// Default limit on the size of one input after decompression: 16 GiB. A Kineto JSON of a long
/// profiling window runs to a few GiB; 16 GiB leaves room for that and refuses a gzip bomb before
/// it takes a workstation's memory. Users raise it with vramscope-cli --max-input-gib or
/// VRAMSCOPE_MAX_INPUT_GIB (maxInputBytesSetting()).
inline constexpr uint64_t kDefaultMaxInputBytes = 16ull << 30;

/// What the reader managed to load and what it had to skip.
struct ReadReport {
    uint64_t fileBytes = 0;
    uint64_t bytesLoaded = 0;  ///< bytes of whole, valid frames (plus the preamble)
    uint64_t framesLoaded = 0;
    uint64_t framesSkipped = 0;    ///< frames dropped for a CRC mismatch or undecodable payload
    bool complete = true;          ///< false when the file was cut or a frame was skipped
    std::vector<Error> problems;   ///< one per problem found, each with file, offset and frame
    std::string fileName;          ///< the name used in messages
    bool truncated = false;        ///< the file ends inside a frame (or inside a frame's head)
    int64_t truncatedAtByte = -1;  ///< offset of the first byte of the incomplete frame
    uint64_t truncatedFrame = 0;   ///< 0-based index of the incomplete frame (== framesLoaded +
                                   ///< framesSkipped)
    uint64_t idsReset = 0;  ///< string / frame / stack / range ids or enum values out of range,
                            ///< reset to 0 (frame ids: dropped from their stack)
    /// The input is a stream of events (Kineto / Chrome trace JSON): framesLoaded counts whole
    /// events, framesSkipped entries that were not events, and a cut is not a crash.
    bool eventStream = false;

    /// One or two sentences for a user, e.g. "run.vscope ends inside frame 18421 (byte 7340112);
    /// 18421 frames loaded. The job probably crashed." Frames are numbered from 0 (the header
    /// frame). For an event stream: "t.json.gz ends at byte 1141937 inside an event; the 4688
    /// whole events before it were loaded. The file was cut (an interrupted download or a job
    /// that died while writing)." Empty when nothing was lost.
    std::string summary() const;
};

struct LoadedTrace {
    TraceData data;
    ReadReport report;
};

struct ReadOptions {
    /// Optional; called with the share of the input read (bytes read / bytes, or tables imported /
    /// tables for an Nsight export) and "Reading NAME", about every 4 MiB and once at the end.
    Progress progress;
    /// Largest input (after gzip decompression) openTrace / openJob read into memory, bytes;
    /// larger input is refused with ErrorCode::Limit naming the file (kDefaultMaxInputBytes).
    uint64_t maxInputBytes = kDefaultMaxInputBytes;
};

/// Reads a .vscope file. Fatal problems are returned as Error naming the file, byte offset and
/// frame index: unreadable (Io), empty or cut before its header frame ends (Truncated), wrong
/// magic or a newer major version (Unsupported), a damaged header frame (Corrupt), a header frame
/// above kMaxFramePayloadBytes (Limit), cancelled by the progress callback (Cancelled). Problems
/// in report.problems carry the same codes. A cut or damaged file loads every whole, valid
/// frame; a frame with a CRC mismatch, an undecodable payload or columns of disagreeing lengths is
/// skipped; what was lost goes into report.problems and data.dataLoss. Ids that point outside
/// their table after loading are reset to 0 and counted (report.idsReset). Memory use is bounded
/// by the file size times a small factor: no length read from the file is allocated before it is
/// checked against what remains and against kMaxFramePayloadBytes. Never throws.
Result<LoadedTrace> readTraceFile(const std::string& path, const ReadOptions& options = {});
/// Same, from bytes already in memory; `name` is used in messages.
Result<LoadedTrace> readTraceBytes(std::string_view bytes, const std::string& name,
                                   const ReadOptions& options = {});
/// True when `bytes` starts with the .vscope magic.
bool looksLikeVscope(std::string_view bytes);

/// Where a TraceWriter puts its bytes (a file, a socket, memory).
class ByteSink {
public:
    virtual ~ByteSink() = default;
    virtual Status write(std::string_view bytes) = 0;
    virtual Status flush() { return Status::success(); }
};

/// Sink writing to a file descriptor it owns (closed on destruction).
std::unique_ptr<ByteSink> makeFdSink(int fd, std::string name);
/// Sink appending to a string (tests, in-memory round trips). `out` must outlive the sink.
std::unique_ptr<ByteSink> makeStringSink(std::string& out);

struct WriterOptions {
    bool compress = true;  ///< zstd-compress frame payloads
    int zstdLevel = 3;
    size_t eventsPerChunk = 65536;  ///< rows of one table per frame, at most
    /// Add a summary frame after each writeEvents() that wrote events and one at finish()
    /// (trace/summary.h). Off only for tests of old files.
    bool summaries = true;
};

class ChunkEncoder;  // chunk_encoder.h

/// Streams one rank's trace as frames; `encoder` (chunk_encoder.h) serialises each chunk, this
/// class splits writeEvents() calls into chunks, frames, compresses and adds the summary frames.
/// Single-threaded: the capture agent calls it from its writer thread only. The caller keeps one
/// TraceData whose tables (strings, frames, stacks) only grow; each writeEvents() sends the table
/// entries added since the last call and every event row currently in it, after which the caller
/// may clear the event tables. `encoder` must not be null. Defined in vramscope::trace_write (no
/// libprotobuf).
class TraceStreamWriter {
public:
    TraceStreamWriter(std::unique_ptr<ByteSink> sink, WriterOptions options,
                      std::unique_ptr<ChunkEncoder> encoder);
    virtual ~TraceStreamWriter();
    TraceStreamWriter(const TraceStreamWriter&) = delete;
    TraceStreamWriter& operator=(const TraceStreamWriter&) = delete;

    /// Writes the preamble and the header frame. Must be called once, first.
    Status writeHeader(const FileHeader& header);
    /// Writes new table entries and all events of `data` (memory, kernels, collectives, ranges,
    /// counters, OOMs, data loss, annotations), split into frames of options.eventsPerChunk rows.
    Status writeEvents(const TraceData& data);
    Status flush();
    /// Writes the closing summary frame (final = true), carrying `analysis` when given (the
    /// whole-file analyses of a tool that ran them), then flushes. Call once, last; a writer
    /// destroyed without finish() leaves the summaries of its last writeEvents().
    Status finish(const std::vector<DeviceAnalysisSummary>& analysis = {});
    uint64_t bytesWritten() const { return m_bytesWritten; }
    uint64_t framesWritten() const { return m_framesWritten; }

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    uint64_t m_bytesWritten = 0;
    uint64_t m_framesWritten = 0;
};

/// A TraceStreamWriter that serialises with libprotobuf (makeProtobufChunkEncoder): what the
/// tools write with. Defined in vramscope::trace_io. Its bytes equal those of a TraceStreamWriter
/// over makeProtozeroChunkEncoder(), which is what the capture agent uses.
class TraceWriter final : public TraceStreamWriter {
public:
    explicit TraceWriter(std::unique_ptr<ByteSink> sink, WriterOptions options = {});
};

/// Empties the event tables of `data` (memory, kernels, collectives, ranges, counters, OOMs, data
/// loss, annotations, communicators) and keeps its string, frame and stack tables: what a
/// TraceWriter's caller does after each writeEvents().
void clearEventTables(TraceData& data);

/// Writes a whole in-memory trace to `path` (header, tables, events). Errors name the path.
/// `analysis`: stored in the closing summary (see TraceWriter::finish).
Status writeTraceFile(const std::string& path, const TraceData& data,
                      const WriterOptions& options = {},
                      const std::vector<DeviceAnalysisSummary>& analysis = {});
/// Same, into a string.
std::string writeTraceBytes(const TraceData& data, const WriterOptions& options = {},
                            const std::vector<DeviceAnalysisSummary>& analysis = {});

/// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78; RFC 3720 appendix B.4) of
/// `bytes`, continuing from `crc` (0 to start).
uint32_t crc32c(std::string_view bytes, uint32_t crc = 0);
/// The same CRC computed with the portable table code only (crc32c() uses the SSE4.2 instruction
/// when the CPU has it); for tests and for comparing the two.
uint32_t crc32cPortable(std::string_view bytes, uint32_t crc = 0);

}  // namespace vramscope::trace
