// .vscope frame writer: TraceData -> chunks (serialised by a ChunkEncoder) -> frames (layout in
// trace.proto). No libprotobuf here: the capture agent links this with the protozero encoder.

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "vramscope/trace/chunk_encoder.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"
#include "vscope/frame_bytes.h"

namespace vramscope::trace {
namespace {

using detail::putLe32;

/// Rows [i*n, (i+1)*n) of a table of `size` rows, clamped.
RowRange slice(size_t i, size_t n, size_t size) {
    const size_t b = std::min(size, i * n);
    return {b, std::min(size, b + n)};
}

/// What event slice `i` (rows [i*n, (i+1)*n) of every table) holds and the times it spans, for
/// the frame index; `tables`: the chunk also carries table entries.
FrameIndexEntry describeSlice(const TraceData& d, size_t i, size_t n, bool tables) {
    FrameIndexEntry f;
    bool any = false;
    auto span = [&](TimestampNs begin, TimestampNs end) {
        f.minNs = any ? std::min(f.minNs, begin) : begin;
        f.maxNs = any ? std::max(f.maxNs, std::max(begin, end)) : std::max(begin, end);
        any = true;
    };
    auto rows = [&](size_t size, uint32_t bit, auto&& each) {
        const RowRange r = slice(i, n, size);
        if (!r.empty()) {
            f.contents |= bit;
        }
        for (size_t row = r.begin; row < r.end; ++row) {
            each(row);
        }
    };
    rows(d.memory.size(), kFrameMemory,
         [&](size_t r) { span(d.memory.timestampNs[r], d.memory.timestampNs[r]); });
    rows(d.kernels.size(), kFrameKernels,
         [&](size_t r) { span(d.kernels.startNs[r], d.kernels.endNs[r]); });
    rows(d.collectives.size(), kFrameCollectives,
         [&](size_t r) { span(d.collectives.startNs[r], d.collectives.endNs[r]); });
    rows(d.ranges.size(), kFrameRanges,
         [&](size_t r) { span(d.ranges.startNs[r], d.ranges.endNs[r]); });
    rows(d.counters.size(), kFrameCounters,
         [&](size_t r) { span(d.counters.timestampNs[r], d.counters.timestampNs[r]); });
    rows(d.ooms.size(), kFrameOther,
         [&](size_t r) { span(d.ooms[r].timestampNs, d.ooms[r].timestampNs); });
    rows(d.dataLoss.size(), kFrameOther, [](size_t) {});
    rows(d.annotations.size(), kFrameOther, [](size_t) {});
    rows(d.communicators.size(), kFrameOther, [](size_t) {});
    if (tables) {
        f.contents |= kFrameTables;
    }
    return f;
}

class FdSink final : public ByteSink {
public:
    FdSink(int fd, std::string name) : m_fd(fd), m_name(std::move(name)) {}
    ~FdSink() override {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    Status write(std::string_view bytes) override {
        while (!bytes.empty()) {
            const ssize_t n = ::write(m_fd, bytes.data(), bytes.size());
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return Error::make(ErrorCode::Io, m_name,
                                   std::string("cannot write: ") + std::strerror(errno));
            }
            bytes.remove_prefix(static_cast<size_t>(n));
        }
        return Status::success();
    }

private:
    int m_fd;
    std::string m_name;
};

class StringSink final : public ByteSink {
public:
    explicit StringSink(std::string& out) : m_out(out) {}
    Status write(std::string_view bytes) override {
        m_out.append(bytes);
        return Status::success();
    }

private:
    std::string& m_out;
};

}  // namespace

std::unique_ptr<ByteSink> makeFdSink(int fd, std::string name) {
    return std::make_unique<FdSink>(fd, std::move(name));
}

std::unique_ptr<ByteSink> makeStringSink(std::string& out) {
    return std::make_unique<StringSink>(out);
}

struct TraceStreamWriter::Impl {
    std::unique_ptr<ByteSink> sink;
    WriterOptions options;
    std::unique_ptr<ChunkEncoder> encoder;
    ZSTD_CCtx* cctx = nullptr;
    std::string raw;  // the serialised chunk, reused
    std::string frame;
    bool headerWritten = false;
    size_t stringsSent = 1;  // strings[0] == "" is implicit
    size_t framesSent = 0;
    size_t stacksSent = 1;                      // stacks[0] == {} is implicit
    std::unique_ptr<SummaryBuilder> summaries;  // null: options.summaries is off
    uint32_t summarySequence = 0;
    bool finished = false;

    ~Impl() { ZSTD_freeCCtx(cctx); }

    /// Frames the chunk in `raw` (of `size` bytes, as the encoder reported) and hands it to the
    /// sink; `mayCompress` false keeps it raw (summary frames must be, so that a reader finds
    /// them from their first byte).
    Status emitChunk(size_t size, uint64_t& bytesWritten, uint64_t& framesWritten,
                     bool mayCompress = true) {
        if (size > kMaxFramePayloadBytes) {
            return Error::make(ErrorCode::Limit, "",
                               "a chunk serialises to " + std::to_string(size) +
                                   " bytes, more than the frame limit; lower eventsPerChunk")
                .atRecord(static_cast<int64_t>(framesWritten));
        }
        frame.clear();
        uint8_t encoding = kEncodingRaw;
        if (options.compress && mayCompress) {
            if (cctx == nullptr) {
                cctx = ZSTD_createCCtx();
            }
            const size_t bound = ZSTD_compressBound(size);
            frame.resize(kFrameHeadBytes + bound);
            const size_t packed =
                cctx == nullptr ? 0
                                : ZSTD_compressCCtx(cctx, frame.data() + kFrameHeadBytes, bound,
                                                    raw.data(), size, options.zstdLevel);
            // Compression is per frame: a frame it does not shrink is stored raw.
            if (cctx != nullptr && !ZSTD_isError(packed) && packed < size) {
                encoding = kEncodingZstd;
                frame.resize(kFrameHeadBytes + packed);
            }
        }
        if (encoding == kEncodingRaw) {
            frame.resize(kFrameHeadBytes);
            frame.append(raw, 0, size);
        }
        const auto payloadBytes = static_cast<uint32_t>(frame.size() - kFrameHeadBytes);
        for (int i = 0; i < 4; ++i) {
            frame[i] = static_cast<char>((payloadBytes >> (8 * i)) & 0xFFu);
        }
        frame[4] = static_cast<char>(encoding);
        putLe32(frame, crc32c(std::string_view(frame).substr(4)));
        Status s = sink->write(frame);
        if (!s.ok()) {
            return s;
        }
        bytesWritten += frame.size();
        ++framesWritten;
        return Status::success();
    }

    Status writeEvents(const TraceData& data, uint64_t& bytesWritten, uint64_t& framesWritten);

    /// Writes `delta` as one raw summary frame (a Chunk holding only `summary`).
    Status emitSummary(const TraceSummary& delta, uint64_t& bytesWritten, uint64_t& framesWritten) {
        const size_t size = encoder->encodeSummary(delta, summarySequence++, raw);
        return emitChunk(size, bytesWritten, framesWritten, false);
    }
};

Status TraceStreamWriter::Impl::writeEvents(const TraceData& data, uint64_t& bytesWritten,
                                            uint64_t& framesWritten) {
    if (data.strings.size() < stringsSent || data.frames.size() < framesSent ||
        data.stacks.size() < stacksSent) {
        return Error::make(
            ErrorCode::Invalid, "",
            "the string, frame or stack table shrank between writes; tables may only grow");
    }
    if (!data.memory.columnsAgree() || !data.kernels.columnsAgree() ||
        !data.collectives.columnsAgree() || !data.ranges.columnsAgree() ||
        !data.counters.columnsAgree()) {
        return Error::make(ErrorCode::Invalid, "",
                           "an event table has columns of different lengths");
    }
    const size_t n = std::clamp<size_t>(options.eventsPerChunk, 1, kMaxRowsPerChunk);
    const size_t newStrings = data.strings.size() - stringsSent;
    const size_t newFrames = data.frames.size() - framesSent;
    const size_t newStacks = data.stacks.size() - stacksSent;
    const size_t rows =
        std::max({data.memory.size(), data.kernels.size(), data.collectives.size(),
                  data.ranges.size(), data.counters.size(), data.ooms.size(), data.dataLoss.size(),
                  data.annotations.size(), data.communicators.size()});
    // Each part starts in the last chunk of the part before it (strings, frames, stacks, events),
    // so a reader of a cut file that has an event also has every table entry it refers to.
    auto chunksFor = [n](size_t count) { return (count + n - 1) / n; };
    const size_t stringsAt = 0;
    const size_t framesAt = stringsAt + std::max<size_t>(chunksFor(newStrings), 1) - 1;
    const size_t stacksAt = framesAt + std::max<size_t>(chunksFor(newFrames), 1) - 1;
    const size_t eventsAt = stacksAt + std::max<size_t>(chunksFor(newStacks), 1) - 1;
    const size_t chunks =
        std::max({stringsAt + chunksFor(newStrings), framesAt + chunksFor(newFrames),
                  stacksAt + chunksFor(newStacks), eventsAt + chunksFor(rows)});
    for (size_t c = 0; c < chunks; ++c) {
        // Chunk c holds slice c - partStart of each part; a part not yet started gets slice
        // index SIZE_MAX / n, which is empty.
        auto part = [&](size_t start) { return c >= start ? c - start : SIZE_MAX / n; };
        auto shifted = [](RowRange r, size_t by) { return RowRange{r.begin + by, r.end + by}; };
        ChunkContents contents;
        contents.strings = shifted(slice(part(stringsAt), n, newStrings), stringsSent);
        contents.frames = shifted(slice(part(framesAt), n, newFrames), framesSent);
        contents.stacks = shifted(slice(part(stacksAt), n, newStacks), stacksSent);
        const size_t i = part(eventsAt);
        contents.memory = slice(i, n, data.memory.size());
        contents.kernels = slice(i, n, data.kernels.size());
        contents.collectives = slice(i, n, data.collectives.size());
        contents.ranges = slice(i, n, data.ranges.size());
        contents.counters = slice(i, n, data.counters.size());
        contents.ooms = slice(i, n, data.ooms.size());
        contents.dataLoss = slice(i, n, data.dataLoss.size());
        contents.annotations = slice(i, n, data.annotations.size());
        contents.communicators = slice(i, n, data.communicators.size());
        const size_t size = encoder->encodeEvents(data, contents, raw);
        const uint64_t offset = bytesWritten;
        const uint64_t number = framesWritten;
        Status s = emitChunk(size, bytesWritten, framesWritten);
        if (!s.ok()) {
            return s;
        }
        if (summaries) {
            const bool tables =
                !contents.strings.empty() || !contents.frames.empty() || !contents.stacks.empty();
            FrameIndexEntry entry = describeSlice(data, i, n, tables);
            entry.frameNumber = number;
            entry.offset = offset;
            entry.frameBytes = static_cast<uint32_t>(bytesWritten - offset);
            summaries->addFrame(entry);
        }
    }
    if (summaries && chunks > 0) {
        summaries->addBatch(data);
        Status s = emitSummary(summaries->takeDelta(false), bytesWritten, framesWritten);
        if (!s.ok()) {
            return s;
        }
    }
    stringsSent = data.strings.size();
    framesSent = data.frames.size();
    stacksSent = data.stacks.size();
    return Status::success();
}

TraceStreamWriter::TraceStreamWriter(std::unique_ptr<ByteSink> sink, WriterOptions options,
                                     std::unique_ptr<ChunkEncoder> encoder)
    : m_impl(std::make_unique<Impl>()) {
    m_impl->sink = std::move(sink);
    m_impl->options = options;
    m_impl->encoder = std::move(encoder);
    if (options.summaries) {
        m_impl->summaries = std::make_unique<SummaryBuilder>();
    }
}

TraceStreamWriter::~TraceStreamWriter() = default;

Status TraceStreamWriter::writeHeader(const FileHeader& header) {
    try {
        if (m_impl->headerWritten) {
            return Error::make(ErrorCode::Invalid, "", "the header was already written");
        }
        std::string preamble(kMagic);
        preamble.push_back(static_cast<char>(kFormatMajor & 0xFFu));
        preamble.push_back(static_cast<char>((kFormatMajor >> 8) & 0xFFu));
        preamble.push_back(static_cast<char>(kFormatMinor & 0xFFu));
        preamble.push_back(static_cast<char>((kFormatMinor >> 8) & 0xFFu));
        Status s = m_impl->sink->write(preamble);
        if (!s.ok()) {
            return s;
        }
        m_bytesWritten += preamble.size();
        // The version this build writes, whatever the header was read from.
        FileHeader written = header;
        written.formatMajor = kFormatMajor;
        written.formatMinor = kFormatMinor;
        const size_t size = m_impl->encoder->encodeHeader(written, m_impl->raw);
        m_impl->headerWritten = true;
        return m_impl->emitChunk(size, m_bytesWritten, m_framesWritten);
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, "", "out of memory while writing the header");
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Io, "", std::string("cannot write the header: ") + e.what());
    }
}

Status TraceStreamWriter::writeEvents(const TraceData& data) {
    try {
        if (!m_impl->headerWritten) {
            return Error::make(ErrorCode::Invalid, "",
                               "writeHeader() must be called before writeEvents()");
        }
        return m_impl->writeEvents(data, m_bytesWritten, m_framesWritten);
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, "", "out of memory while writing events")
            .atRecord(static_cast<int64_t>(m_framesWritten));
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Io, "", std::string("cannot write events: ") + e.what())
            .atRecord(static_cast<int64_t>(m_framesWritten));
    }
}

Status TraceStreamWriter::flush() {
    return m_impl->sink->flush();
}

Status TraceStreamWriter::finish(const std::vector<DeviceAnalysisSummary>& analysis) {
    try {
        if (m_impl->finished) {
            return Error::make(ErrorCode::Invalid, "", "finish() was already called");
        }
        m_impl->finished = true;
        if (m_impl->summaries && m_impl->headerWritten) {
            TraceSummary delta = m_impl->summaries->takeDelta(true);
            delta.analysis = analysis;
            Status s = m_impl->emitSummary(delta, m_bytesWritten, m_framesWritten);
            if (!s.ok()) {
                return s;
            }
        }
        return flush();
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, "", "out of memory while writing the summary")
            .atRecord(static_cast<int64_t>(m_framesWritten));
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Io, "", std::string("cannot write the summary: ") + e.what())
            .atRecord(static_cast<int64_t>(m_framesWritten));
    }
}

void clearEventTables(TraceData& data) {
    data.memory = {};
    data.kernels = {};
    data.collectives = {};
    data.ranges = {};
    data.counters = {};
    data.ooms.clear();
    data.dataLoss.clear();
    data.annotations.clear();
    data.communicators.clear();
}

}  // namespace vramscope::trace
