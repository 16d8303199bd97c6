// .vscope reader: preamble, frames (length, encoding, payload, CRC-32C), then chunks into
// TraceData. Layout in proto/vramscope/trace/v1/trace.proto.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"
#include "vscope/chunk_decoder.h"
#include "vscope/frame_bytes.h"
#include "vscope/summary_proto.h"

namespace vramscope::trace {
namespace {

using detail::kProgressStepBytes;
using detail::plural;
using detail::readLe16;
using detail::readLe32;

/// Problems kept in the report; more are counted in one closing entry.
constexpr size_t kMaxProblems = 1000;

/// Asks Linux to back a large column buffer with transparent huge pages. Filling a loaded
/// trace's columns touches hundreds of MB of fresh memory; with 4 KiB pages the page faults cost
/// about as much as decoding (measured with bench/format_bench: 17 -> 28 M events/s on a zstd
/// file). Only the 2 MiB-aligned interior is advised; a kernel without THP ignores the advice.
void adviseHugePages(const void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
    constexpr uintptr_t kHuge = uintptr_t{2} << 20;
    const auto begin = reinterpret_cast<uintptr_t>(data);
    const uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t last = (begin + bytes) & ~(kHuge - 1);
    if (last > first) {
        ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
    }
#else
    (void)data;
    (void)bytes;
#endif
}

/// One pass over the bytes of a .vscope file.
class Reader {
public:
    Reader(std::string_view bytes, const std::string& name, const ReadOptions& options)
        : m_bytes(bytes), m_name(name), m_options(options) {}
    ~Reader() { ZSTD_freeDCtx(m_dctx); }

    Result<LoadedTrace> run();

private:
    enum class Outcome { Loaded, Skipped, Stop };

    /// Records a problem that did not stop the read (at most kMaxProblems are kept).
    void problem(ErrorCode code, int64_t offset, int64_t frame, std::string message);
    Status readPreamble();
    /// Reads the frame at m_offset; on a fatal problem (only possible for the header frame)
    /// returns an Error through `fatal`.
    Outcome readFrame(uint64_t index, std::optional<Error>& fatal);
    /// Decompresses the payload if needed; returns an empty string or why it could not.
    std::string unpackPayload(uint8_t encoding, std::string_view payload, std::string_view& raw);
    /// Decodes a raw Chunk and appends it to the trace (all or nothing); returns an empty
    /// string or why it could not. m_chunk then holds the header, if the chunk has one.
    std::string applyPayload(std::string_view raw, uint64_t index, detail::ChunkNotes& notes);
    void validateIds();
    /// Counts the frame at m_offset as loaded and steps past it.
    void countLoaded(uint64_t frameBytes) {
        ++m_out.report.framesLoaded;
        m_out.report.bytesLoaded += frameBytes;
        m_offset += frameBytes;
    }
    /// Reserves the event columns for the rows the rest of the file probably holds.
    void reserveAhead();
    void addDataLoss();

    std::string_view m_bytes;
    const std::string& m_name;
    const ReadOptions& m_options;
    LoadedTrace m_out;
    uint64_t m_offset = 0;
    uint64_t m_problemsDropped = 0;
    uint64_t m_skippedBytes = 0;
    ZSTD_DCtx* m_dctx = nullptr;
    std::string m_scratch;
    std::string m_restBytes;
    size_t m_lastRows[5] = {0, 0, 0, 0, 0};  // rows of each event table after the last frame
    v1::Chunk m_chunk;
};

void Reader::problem(ErrorCode code, int64_t offset, int64_t frame, std::string message) {
    m_out.report.complete = false;
    if (m_out.report.problems.size() < kMaxProblems) {
        m_out.report.problems.push_back(
            Error::make(code, m_name, std::move(message)).atByte(offset).atRecord(frame));
    } else {
        ++m_problemsDropped;
    }
}

Status Reader::readPreamble() {
    if (m_bytes.empty()) {
        return Error::make(ErrorCode::Truncated, m_name, "the file is empty").atByte(0);
    }
    const size_t magicBytes = std::min(m_bytes.size(), kMagic.size());
    if (m_bytes.substr(0, magicBytes) != kMagic.substr(0, magicBytes)) {
        return Error::make(ErrorCode::Unsupported, m_name,
                           "not a .vscope file (it does not start with the .vscope magic bytes)")
            .atByte(0);
    }
    if (m_bytes.size() < kPreambleBytes) {
        return Error::make(ErrorCode::Truncated, m_name,
                           "the file ends inside its 12-byte preamble; it holds no trace")
            .atByte(static_cast<int64_t>(m_bytes.size()));
    }
    const uint16_t major = readLe16(m_bytes.data() + 8);
    const uint16_t minor = readLe16(m_bytes.data() + 10);
    const std::string readable = "this build of vramscope reads .vscope format versions 1.0 to " +
                                 std::to_string(kFormatMajor) + ".x";
    if (major > kFormatMajor) {
        return Error::make(ErrorCode::Unsupported, m_name,
                           "written in .vscope format version " + std::to_string(major) + "." +
                               std::to_string(minor) + ", newer than this build can read; " +
                               readable + ". Update vramscope to open it.")
            .atByte(8);
    }
    if (major == 0) {
        return Error::make(ErrorCode::Corrupt, m_name,
                           "declares .vscope format version 0." + std::to_string(minor) +
                               ", which does not exist; " + readable)
            .atByte(8);
    }
    m_out.data.header.formatMajor = major;
    m_out.data.header.formatMinor = minor;
    m_offset = kPreambleBytes;
    return Status::success();
}

std::string Reader::unpackPayload(uint8_t encoding, std::string_view payload,
                                  std::string_view& raw) {
    const char* data = payload.data();
    size_t size = payload.size();
    if (encoding == kEncodingZstd) {
        const unsigned long long content = ZSTD_getFrameContentSize(data, size);
        if (content == ZSTD_CONTENTSIZE_ERROR) {
            return "its payload is not zstd data";
        }
        if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
            return "its zstd payload does not state its decompressed size";
        }
        if (content > kMaxFramePayloadBytes) {
            return "its zstd payload claims " + std::to_string(content) +
                   " decompressed bytes, more than the limit of " +
                   std::to_string(kMaxFramePayloadBytes);
        }
        if (m_dctx == nullptr) {
            m_dctx = ZSTD_createDCtx();
            if (m_dctx == nullptr) {
                return "the zstd decoder could not be created";
            }
        }
        m_scratch.resize(static_cast<size_t>(content));
        const size_t got =
            ZSTD_decompressDCtx(m_dctx, m_scratch.data(), m_scratch.size(), data, size);
        if (ZSTD_isError(got)) {
            return std::string("its zstd payload does not decompress: ") + ZSTD_getErrorName(got);
        }
        if (got != content) {
            return "its zstd payload decompresses to " + std::to_string(got) +
                   " bytes instead of " + std::to_string(content);
        }
        data = m_scratch.data();
        size = got;
    } else if (encoding != kEncodingRaw) {
        return "it uses payload encoding " + std::to_string(encoding) +
               ", which this build does not know";
    }
    raw = std::string_view(data, size);
    return {};
}

std::string Reader::applyPayload(std::string_view raw, uint64_t index, detail::ChunkNotes& notes) {
    std::string why;
    const detail::FastDecode fast =
        detail::decodeChunkFast(raw, m_out.data, m_chunk, m_restBytes, why, notes);
    if (fast == detail::FastDecode::NotFast) {
        if (!m_chunk.ParseFromArray(raw.data(), static_cast<int>(raw.size()))) {
            return "its payload is not a valid Chunk message";
        }
        if (index == 0 && !m_chunk.has_header()) {
            return "it carries no file header";
        }
        detail::applyChunk(m_chunk, m_out.data, why, notes);
    } else if (fast == detail::FastDecode::Applied && index == 0 && !m_chunk.has_header()) {
        return "it carries no file header";  // fatal for frame 0: what was appended is dropped
    }
    return why;
}

Reader::Outcome Reader::readFrame(uint64_t index, std::optional<Error>& fatal) {
    const auto offset = static_cast<int64_t>(m_offset);
    const auto frame = static_cast<int64_t>(index);
    const uint64_t remaining = m_bytes.size() - m_offset;
    auto truncated = [&]() {
        if (index == 0) {
            fatal = Error::make(ErrorCode::Truncated, m_name,
                                "the file ends inside its header frame; it holds no readable trace")
                        .atByte(offset)
                        .atRecord(frame);
            return Outcome::Stop;
        }
        auto& r = m_out.report;
        r.truncated = true;
        r.truncatedAtByte = offset;
        r.truncatedFrame = index;
        problem(ErrorCode::Truncated, offset, frame,
                m_name + " ends inside frame " + std::to_string(index) + " (byte " +
                    std::to_string(offset) + "); " + plural(r.framesLoaded, "frame", "frames") +
                    " loaded. The job probably crashed.");
        return Outcome::Stop;
    };
    if (remaining < kFrameHeadBytes) {
        return truncated();
    }
    const uint32_t length = readLe32(m_bytes.data() + m_offset);
    const auto encoding = static_cast<uint8_t>(m_bytes[m_offset + 4]);
    if (length > kMaxFramePayloadBytes) {
        const std::string msg = "frame " + std::to_string(index) + " declares " +
                                std::to_string(length) + " payload bytes, more than the limit of " +
                                std::to_string(kMaxFramePayloadBytes) + "; the rest of the file (" +
                                std::to_string(remaining) + " bytes) cannot be read";
        if (index == 0) {
            fatal = Error::make(ErrorCode::Limit, m_name, msg).atByte(offset).atRecord(frame);
        } else {
            m_skippedBytes += remaining;
            problem(ErrorCode::Limit, offset, frame, msg);
        }
        return Outcome::Stop;
    }
    const uint64_t frameBytes = kFrameHeadBytes + uint64_t{length} + kFrameTailBytes;
    if (frameBytes > remaining) {
        return truncated();
    }
    const std::string_view payload = m_bytes.substr(m_offset + kFrameHeadBytes, length);
    const uint32_t stored = readLe32(payload.data() + length);
    const uint32_t computed = crc32c(m_bytes.substr(m_offset + 4, 1 + uint64_t{length}));
    std::string why;
    std::string_view raw;
    detail::ChunkNotes notes;
    if (stored != computed) {
        why = "its CRC-32C does not match its contents";
    } else {
        why = unpackPayload(encoding, payload, raw);
    }
    if (why.empty() && index > 0 && detail::isSummaryFrame(encoding, payload)) {
        countLoaded(frameBytes);  // read by readTraceSummary, not as events
        return Outcome::Loaded;
    }
    if (why.empty()) {
        why = applyPayload(raw, index, notes);
        if (why.empty()) {
            if (index == 0) {
                detail::headerFromProto(m_chunk.header(), m_out.data.header);
            }
            m_out.report.idsReset += notes.valuesReset;
            if (!notes.tableGap.empty()) {
                problem(ErrorCode::Corrupt, offset, frame,
                        notes.tableGap + "their ids now name empty entries");
            }
            countLoaded(frameBytes);
            reserveAhead();
            return Outcome::Loaded;
        }
    }
    m_offset += frameBytes;
    if (index == 0) {
        fatal = Error::make(ErrorCode::Corrupt, m_name, "the header frame is damaged: " + why)
                    .atByte(offset)
                    .atRecord(frame);
        return Outcome::Stop;
    }
    ++m_out.report.framesSkipped;
    m_skippedBytes += frameBytes;
    problem(ErrorCode::Corrupt, offset, frame,
            "frame " + std::to_string(index) + " skipped: " + why);
    return Outcome::Skipped;
}

/// Growing the columns by doubling costs a copy of everything loaded and fresh pages at every
/// step, more than decoding itself. After each frame, a table whose spare capacity would not hold
/// another frame like the last is reserved for the rows the file holds if the rest of it is like
/// what was read so far (rows / bytes so far x file size, +5 %). The estimate is capped at one row
/// per file byte, so a file cannot make the reader reserve more than ~50 bytes per byte of input;
/// a file that packs rows tighter just grows by doubling beyond that. A failed reservation is
/// ignored (the vectors then grow as usual).
void Reader::reserveAhead() {
    const uint64_t done = m_offset;
    const uint64_t total = m_bytes.size();
    auto plan = [&](size_t size, size_t capacity, size_t& lastSize) -> size_t {
        const size_t lastFrameRows = size - std::min(size, lastSize);
        lastSize = size;
        if (lastFrameRows == 0 || capacity - size >= lastFrameRows || done == 0) {
            return 0;
        }
        const long double projected = static_cast<long double>(size) * total / done * 1.05L;
        const auto want = static_cast<size_t>(std::min<long double>(projected, total));
        return want > capacity ? std::max(want, size + lastFrameRows) : 0;
    };
    auto reserveAll = [](size_t n, auto& table) {
        try {
            table.reserve(n);
            table.forEachColumn([](auto& column, auto) {
                adviseHugePages(column.data(), column.capacity() * sizeof(column[0]));
            });
        } catch (const std::bad_alloc&) {
        }
    };
    TraceData& d = m_out.data;
    if (size_t n = plan(d.memory.size(), d.memory.timestampNs.capacity(), m_lastRows[0])) {
        reserveAll(n, d.memory);
    }
    if (size_t n = plan(d.kernels.size(), d.kernels.startNs.capacity(), m_lastRows[1])) {
        reserveAll(n, d.kernels);
    }
    if (size_t n = plan(d.collectives.size(), d.collectives.startNs.capacity(), m_lastRows[2])) {
        reserveAll(n, d.collectives);
    }
    if (size_t n = plan(d.ranges.size(), d.ranges.startNs.capacity(), m_lastRows[3])) {
        reserveAll(n, d.ranges);
    }
    if (size_t n = plan(d.counters.size(), d.counters.timestampNs.capacity(), m_lastRows[4])) {
        reserveAll(n, d.counters);
    }
}

/// Resets ids that point outside their table, so that code indexing the tables with them is safe.
void Reader::validateIds() {
    TraceData& d = m_out.data;
    uint64_t total = 0;
    auto fix = [&](auto& column, size_t limit, const char* what, const char* table) {
        uint64_t bad = 0;
        for (auto& v : column) {
            if (static_cast<uint64_t>(v) >= limit) {
                v = std::remove_reference_t<decltype(v)>{0};
                ++bad;
            }
        }
        if (bad > 0) {
            problem(ErrorCode::Corrupt, -1, -1,
                    plural(bad, what, what) + " pointed outside the " + table + " (" +
                        std::to_string(limit) + " entries) and were reset to 0");
            total += bad;
        }
    };
    const size_t strings = d.strings.size();
    uint64_t badFrameNames = 0;
    for (auto& f : d.frames) {
        if (f.name >= strings || f.file >= strings) {
            ++badFrameNames;
            f.name = f.name >= strings ? 0 : f.name;
            f.file = f.file >= strings ? 0 : f.file;
        }
    }
    if (badFrameNames > 0) {
        problem(ErrorCode::Corrupt, -1, -1,
                plural(badFrameNames, "frame", "frames") +
                    " named strings outside the string table and were reset to 0");
        total += badFrameNames;
    }
    uint64_t badFrames = 0;
    for (auto& stack : d.stacks) {
        const size_t before = stack.size();
        std::erase_if(stack, [&](FrameId f) { return toInt(f) >= d.frames.size(); });
        badFrames += before - stack.size();
    }
    if (badFrames > 0) {
        problem(ErrorCode::Corrupt, -1, -1,
                plural(badFrames, "stack entry", "stack entries") +
                    " named frames outside the frame table and were dropped");
        total += badFrames;
    }
    fix(d.memory.stack, d.stacks.size(), "memory event stack id", "stack table");
    fix(d.memory.nvtxRange, d.ranges.size() + 1, "memory event NVTX range id", "range table");
    fix(d.kernels.name, strings, "kernel name id", "string table");
    fix(d.kernels.operandType, strings, "kernel operand type id", "string table");
    fix(d.collectives.function, strings, "collective function id", "string table");
    fix(d.collectives.datatype, strings, "collective datatype id", "string table");
    fix(d.collectives.algorithm, strings, "collective algorithm id", "string table");
    fix(d.collectives.protocol, strings, "collective protocol id", "string table");
    fix(d.ranges.name, strings, "range name id", "string table");
    fix(d.counters.name, strings, "counter name id", "string table");
    if (m_out.report.idsReset > total) {
        problem(ErrorCode::Corrupt, -1, -1,
                plural(m_out.report.idsReset - total, "enum value", "enum values") +
                    " (memory kind, kernel category, range or counter kind) were out of range "
                    "and were reset to the default");
    }
    m_out.report.idsReset += total;
}

void Reader::addDataLoss() {
    const auto& r = m_out.report;
    if (r.framesSkipped > 0) {
        m_out.data.dataLoss.push_back(
            DataLoss{LossCounter::FramesSkipped, r.framesSkipped,
                     plural(r.framesSkipped, "frame", "frames") + " of " + m_name, 0, 0});
    }
    if (r.truncated) {
        m_out.data.dataLoss.push_back(
            DataLoss{LossCounter::TruncatedBytes,
                     r.fileBytes - static_cast<uint64_t>(r.truncatedAtByte), r.summary(), 0, 0});
    }
}

Result<LoadedTrace> Reader::run() {
    auto& report = m_out.report;
    report.fileBytes = m_bytes.size();
    report.fileName = m_name;
    if (Status s = readPreamble(); !s.ok()) {
        return s.error();
    }
    report.bytesLoaded = kPreambleBytes;
    uint64_t nextProgress = kProgressStepBytes;
    for (uint64_t index = 0; m_offset < m_bytes.size(); ++index) {
        if (m_options.progress && m_offset >= nextProgress) {
            if (!reportProgress(m_options.progress, m_offset, m_bytes.size(),
                                "Reading " + m_name)) {
                return Error::cancelled(m_name);
            }
            nextProgress = m_offset + kProgressStepBytes;
        }
        std::optional<Error> fatal;
        const Outcome outcome = readFrame(index, fatal);
        if (fatal) {
            return *fatal;
        }
        if (outcome == Outcome::Stop) {
            break;
        }
    }
    if (report.framesLoaded == 0) {
        return Error::make(ErrorCode::Truncated, m_name,
                           "the file has no header frame; it holds no trace")
            .atByte(kPreambleBytes)
            .atRecord(0);
    }
    validateIds();
    m_out.data.rebuildIndexes();
    if (m_problemsDropped > 0) {
        report.problems.push_back(
            Error::make(ErrorCode::Corrupt, m_name,
                        "and " + std::to_string(m_problemsDropped) + " more problems"));
    }
    addDataLoss();
    if (!reportProgress(m_options.progress, m_bytes.size(), m_bytes.size(), "Reading " + m_name)) {
        return Error::cancelled(m_name);
    }
    return std::move(m_out);
}

/// Reads from `fd` into dst[got, want) until it is full or the input ends; `got` counts what is
/// in dst. Returns 0, or the errno of a failed read.
int readUpTo(int fd, char* dst, size_t want, size_t& got) {
    while (got < want) {
        const ssize_t n = ::read(fd, dst + got, want - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return errno;
        }
        if (n == 0) {
            return 0;
        }
        got += static_cast<size_t>(n);
    }
    return 0;
}

}  // namespace

std::string ReadReport::summary() const {
    std::string out;
    auto add = [&](const std::string& sentence) { out += (out.empty() ? "" : " ") + sentence; };
    if (truncated && eventStream) {
        add(fileName + " ends at byte " + std::to_string(truncatedAtByte) +
            " inside an event; the " +
            plural(framesLoaded, "whole event before it was", "whole events before it were") +
            " loaded. The file was cut (an interrupted download or a job that died while "
            "writing).");
    } else if (truncated) {
        add(fileName + " ends inside frame " + std::to_string(truncatedFrame) + " (byte " +
            std::to_string(truncatedAtByte) + "); " + plural(framesLoaded, "frame", "frames") +
            " loaded. The job probably crashed.");
    }
    if (framesSkipped > 0 && eventStream) {
        add(plural(framesSkipped, "entry", "entries") +
            " of the event list were not events and were skipped.");
    } else if (framesSkipped > 0) {
        add(plural(framesSkipped, "damaged frame was", "damaged frames were") +
            " skipped (CRC mismatch or undecodable); their events are missing.");
    }
    if (idsReset > 0) {
        add(plural(idsReset, "id or value", "ids or values") +
            " pointed outside their tables and were reset.");
    }
    if (out.empty() && !problems.empty()) {
        add(plural(problems.size(), "problem", "problems") +
            " while reading; the first: " + problems.front().describe());
    }
    return out;
}

bool looksLikeVscope(std::string_view bytes) {
    return bytes.starts_with(kMagic);
}

Result<LoadedTrace> readTraceBytes(std::string_view bytes, const std::string& name,
                                   const ReadOptions& options) {
    try {
        Reader reader(bytes, name, options);
        return reader.run();
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, name, "out of memory while reading the trace");
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Corrupt, name,
                           std::string("cannot read the trace: ") + e.what());
    }
}

Result<LoadedTrace> readTraceFile(const std::string& path, const ReadOptions& options) {
    try {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return Error::make(ErrorCode::Io, path,
                               std::string("cannot open: ") + std::strerror(errno));
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
            const int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
            ::close(fd);
            return Error::make(ErrorCode::Io, path,
                               std::string("cannot read: ") + std::strerror(err));
        }
        // A regular file is read up to the size it had when opened (a live trace may grow), into
        // a buffer that is not zeroed first (read() writes every byte of it); anything else (a
        // pipe) until its end, growing by doubling.
        if (S_ISREG(st.st_mode)) {
            const auto size = static_cast<size_t>(std::max<off_t>(st.st_size, 0));
            std::unique_ptr<char[]> buffer(new char[std::max<size_t>(size, 1)]);
            size_t got = 0;
            const int err = readUpTo(fd, buffer.get(), size, got);
            ::close(fd);
            if (err != 0) {
                return Error::make(ErrorCode::Io, path,
                                   std::string("cannot read: ") + std::strerror(err))
                    .atByte(static_cast<int64_t>(got));
            }
            return readTraceBytes(std::string_view(buffer.get(), got), path, options);
        }
        std::string bytes;
        size_t used = 0;
        for (;;) {
            bytes.resize(std::max<size_t>(bytes.size() * 2, 1u << 20));
            const size_t before = used;
            const int err = readUpTo(fd, bytes.data(), bytes.size(), used);
            if (err != 0) {
                ::close(fd);
                return Error::make(ErrorCode::Io, path,
                                   std::string("cannot read: ") + std::strerror(err))
                    .atByte(static_cast<int64_t>(used));
            }
            if (used < bytes.size() || used == before) {
                break;  // the end of the stream
            }
        }
        ::close(fd);
        bytes.resize(used);
        return readTraceBytes(bytes, path, options);
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, path, "out of memory while reading the file");
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Io, path, std::string("cannot read: ") + e.what());
    }
}

}  // namespace vramscope::trace
