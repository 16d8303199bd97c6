// .vscope writer: TraceData -> column-wise Chunks -> frames (layout in trace.proto).

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "frame_bytes.h"
#include "summary_proto.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"

namespace vramscope::trace {
namespace {

using detail::putLe32;

template <class T>
using PbColumn = google::protobuf::RepeatedField<T>;

/// Difference modulo 2^64 as a signed value: round-trips every pair of values exactly.
inline int64_t wrappingDelta(uint64_t current, uint64_t previous) {
    return static_cast<int64_t>(current - previous);
}

/// Appends col[b, e) converted by `conv`, unless every row equals `def` (then the column stays
/// empty and the reader fills the default).
template <class T, class P, class Conv>
void putColumn(PbColumn<P>* out, const std::vector<T>& col, size_t b, size_t e, T def, Conv conv) {
    bool allDefault = true;
    for (size_t i = b; i < e; ++i) {
        if (!(col[i] == def)) {
            allDefault = false;
            break;
        }
    }
    if (allDefault) {
        return;
    }
    out->Reserve(static_cast<int>(e - b));
    for (size_t i = b; i < e; ++i) {
        out->AddAlreadyReserved(static_cast<P>(conv(col[i])));
    }
}

template <class T, class P>
void putColumn(PbColumn<P>* out, const std::vector<T>& col, size_t b, size_t e, T def) {
    putColumn(out, col, b, e, def, [](T v) { return static_cast<P>(v); });
}

/// Zigzag deltas to the previous row; the first row is absolute. Always written.
template <class T>
void putDeltaColumn(PbColumn<int64_t>* out, const std::vector<T>& col, size_t b, size_t e) {
    out->Reserve(static_cast<int>(e - b));
    uint64_t prev = 0;
    for (size_t i = b; i < e; ++i) {
        const auto v = static_cast<uint64_t>(col[i]);
        out->AddAlreadyReserved(wrappingDelta(v, prev));
        prev = v;
    }
}

/// end - start modulo 2^64, left empty when every duration is 0.
void putDurations(PbColumn<uint64_t>* out, const std::vector<TimestampNs>& start,
                  const std::vector<TimestampNs>& end, size_t b, size_t e) {
    bool allZero = true;
    for (size_t i = b; i < e && allZero; ++i) {
        allZero = start[i] == end[i];
    }
    if (allZero) {
        return;
    }
    out->Reserve(static_cast<int>(e - b));
    for (size_t i = b; i < e; ++i) {
        out->AddAlreadyReserved(static_cast<uint64_t>(end[i]) - static_cast<uint64_t>(start[i]));
    }
}

void encodeMemory(const MemoryEvents& m, size_t b, size_t e, v1::MemoryBatch* out) {
    putDeltaColumn(out->mutable_timestamp_ns_delta(), m.timestampNs, b, e);
    bool anyAddress = false;
    for (size_t i = b; i < e && !anyAddress; ++i) {
        anyAddress = m.address[i] != 0;
    }
    if (anyAddress) {
        putDeltaColumn(out->mutable_address_delta(), m.address, b, e);
    }
    putColumn(out->mutable_size_bytes(), m.sizeBytes, b, e, uint64_t{0});
    bool anyFlags = false;
    for (size_t i = b; i < e && !anyFlags; ++i) {
        anyFlags = m.action[i] != MemoryAction::Alloc || m.level[i] != MemoryLevel::Reserved ||
                   m.kind[i] != MemoryKind::Unknown;
    }
    if (anyFlags) {
        auto* flags = out->mutable_flags();
        flags->Reserve(static_cast<int>(e - b));
        for (size_t i = b; i < e; ++i) {
            flags->AddAlreadyReserved(static_cast<uint32_t>(m.action[i]) |
                                      (static_cast<uint32_t>(m.level[i]) << 1) |
                                      ((static_cast<uint32_t>(m.kind[i]) & 0xFu) << 2));
        }
    }
    putColumn(out->mutable_device(), m.device, b, e, DeviceIndex{0});
    putColumn(out->mutable_stream(), m.stream, b, e, uint64_t{0});
    putColumn(out->mutable_stack(), m.stack, b, e, StackId{0});
    putColumn(out->mutable_nvtx_range(), m.nvtxRange, b, e, uint32_t{0});
}

void encodeKernels(const KernelEvents& k, size_t b, size_t e, v1::KernelBatch* out) {
    putDeltaColumn(out->mutable_start_ns_delta(), k.startNs, b, e);
    putDurations(out->mutable_duration_ns(), k.startNs, k.endNs, b, e);
    putColumn(out->mutable_device(), k.device, b, e, DeviceIndex{0});
    putColumn(out->mutable_stream(), k.stream, b, e, uint64_t{0});
    putColumn(out->mutable_name(), k.name, b, e, StringId{0});
    putColumn(out->mutable_category(), k.category, b, e, KernelCategory::Compute,
              [](KernelCategory c) { return static_cast<uint32_t>(c); });
    size_t known = 0;
    for (size_t i = b; i < e; ++i) {
        known += k.launchNs[i] != -1 ? 1 : 0;
    }
    if (known > 0) {
        auto* lead = out->mutable_launch_lead_ns();
        lead->Reserve(static_cast<int>(e - b));
        for (size_t i = b; i < e; ++i) {
            lead->AddAlreadyReserved(k.launchNs[i] == -1
                                         ? 0
                                         : wrappingDelta(static_cast<uint64_t>(k.startNs[i]),
                                                         static_cast<uint64_t>(k.launchNs[i])));
        }
        if (known < e - b) {
            auto* unknown = out->mutable_launch_unknown();
            unknown->Reserve(static_cast<int>(e - b));
            for (size_t i = b; i < e; ++i) {
                unknown->AddAlreadyReserved(k.launchNs[i] == -1);
            }
        }
    }
    putColumn(out->mutable_bytes(), k.bytes, b, e, uint64_t{0});
    bool anyCorrelation = false;
    for (size_t i = b; i < e && !anyCorrelation; ++i) {
        anyCorrelation = k.correlationId[i] != 0;
    }
    if (anyCorrelation) {
        putDeltaColumn(out->mutable_correlation_id_delta(), k.correlationId, b, e);
    }
    putColumn(out->mutable_operand_type(), k.operandType, b, e, StringId{0});
}

void encodeCollectives(const CollectiveEvents& c, size_t b, size_t e, v1::CollectiveBatch* out) {
    putDeltaColumn(out->mutable_start_ns_delta(), c.startNs, b, e);
    putDurations(out->mutable_duration_ns(), c.startNs, c.endNs, b, e);
    putColumn(out->mutable_device(), c.device, b, e, DeviceIndex{0});
    putColumn(out->mutable_stream(), c.stream, b, e, uint64_t{0});
    putColumn(out->mutable_communicator_hash(), c.communicatorHash, b, e, uint64_t{0});
    putColumn(out->mutable_rank(), c.rank, b, e, kUnknownRank);
    putColumn(out->mutable_nranks(), c.nranks, b, e, int32_t{0});
    putColumn(out->mutable_function(), c.function, b, e, StringId{0});
    putColumn(out->mutable_seq_number(), c.seqNumber, b, e, int64_t{-1});
    putColumn(out->mutable_bytes(), c.bytes, b, e, uint64_t{0});
    putColumn(out->mutable_datatype(), c.datatype, b, e, StringId{0});
    putColumn(out->mutable_algorithm(), c.algorithm, b, e, StringId{0});
    putColumn(out->mutable_protocol(), c.protocol, b, e, StringId{0});
    putColumn(out->mutable_channels(), c.channels, b, e, uint32_t{0});
    putColumn(out->mutable_enqueue_lead_ns(), c.enqueueLeadNs, b, e, int64_t{-1});
    putColumn(out->mutable_peer(), c.peer, b, e, int32_t{-1});
    putColumn(out->mutable_timing(), c.timing, b, e, CollectiveTiming::Unknown,
              [](CollectiveTiming t) { return static_cast<uint32_t>(t); });
}

void encodeRanges(const RangeEvents& r, size_t b, size_t e, v1::RangeBatch* out) {
    putDeltaColumn(out->mutable_start_ns_delta(), r.startNs, b, e);
    putDurations(out->mutable_duration_ns(), r.startNs, r.endNs, b, e);
    putColumn(out->mutable_name(), r.name, b, e, StringId{0});
    putColumn(out->mutable_depth(), r.depth, b, e, uint32_t{0});
    putColumn(out->mutable_thread_id(), r.threadId, b, e, uint64_t{0});
    putColumn(out->mutable_device(), r.device, b, e, DeviceIndex{kHostDevice});
    putColumn(out->mutable_kind(), r.kind, b, e, RangeKind::Nvtx,
              [](RangeKind k) { return static_cast<uint32_t>(k); });
}

void encodeCounters(const CounterSamples& c, size_t b, size_t e, v1::CounterBatch* out) {
    putDeltaColumn(out->mutable_timestamp_ns_delta(), c.timestampNs, b, e);
    putColumn(out->mutable_name(), c.name, b, e, StringId{0});
    putColumn(out->mutable_device(), c.device, b, e, DeviceIndex{kHostDevice});
    putColumn(out->mutable_kind(), c.kind, b, e, CounterKind::Generic,
              [](CounterKind k) { return static_cast<uint32_t>(k); });
    // Compare bit patterns so that -0.0 and NaN payloads survive the round trip.
    bool allZero = true;
    for (size_t i = b; i < e && allZero; ++i) {
        allZero = std::bit_cast<uint64_t>(c.value[i]) == 0;
    }
    if (!allZero) {
        auto* v = out->mutable_value();
        v->Reserve(static_cast<int>(e - b));
        for (size_t i = b; i < e; ++i) {
            v->AddAlreadyReserved(c.value[i]);
        }
    }
}

/// Rows [i*n, (i+1)*n) of a table of `size` rows, clamped.
std::pair<size_t, size_t> slice(size_t i, size_t n, size_t size) {
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
        auto [b, e] = slice(i, n, size);
        if (b < e) {
            f.contents |= bit;
        }
        for (size_t r = b; r < e; ++r) {
            each(r);
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

bool columnsAgree(const MemoryEvents& m) {
    const size_t n = m.size();
    return m.address.size() == n && m.sizeBytes.size() == n && m.action.size() == n &&
           m.level.size() == n && m.kind.size() == n && m.device.size() == n &&
           m.stream.size() == n && m.stack.size() == n && m.nvtxRange.size() == n;
}
bool columnsAgree(const KernelEvents& k) {
    const size_t n = k.size();
    return k.endNs.size() == n && k.device.size() == n && k.stream.size() == n &&
           k.name.size() == n && k.category.size() == n && k.launchNs.size() == n &&
           k.bytes.size() == n && k.correlationId.size() == n && k.operandType.size() == n;
}
bool columnsAgree(const CollectiveEvents& c) {
    const size_t n = c.size();
    return c.endNs.size() == n && c.device.size() == n && c.stream.size() == n &&
           c.communicatorHash.size() == n && c.rank.size() == n && c.nranks.size() == n &&
           c.function.size() == n && c.seqNumber.size() == n && c.bytes.size() == n &&
           c.datatype.size() == n && c.algorithm.size() == n && c.protocol.size() == n &&
           c.channels.size() == n && c.enqueueLeadNs.size() == n && c.peer.size() == n &&
           c.timing.size() == n;
}
bool columnsAgree(const RangeEvents& r) {
    const size_t n = r.size();
    return r.endNs.size() == n && r.name.size() == n && r.depth.size() == n &&
           r.threadId.size() == n && r.device.size() == n && r.kind.size() == n;
}
bool columnsAgree(const CounterSamples& c) {
    const size_t n = c.size();
    return c.name.size() == n && c.device.size() == n && c.kind.size() == n && c.value.size() == n;
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

struct TraceWriter::Impl {
    std::unique_ptr<ByteSink> sink;
    WriterOptions options;
    ZSTD_CCtx* cctx = nullptr;
    v1::Chunk chunk;  // reused: Clear() keeps the columns' capacity
    std::string raw;
    std::string frame;
    bool headerWritten = false;
    size_t stringsSent = 1;  // strings[0] == "" is implicit
    size_t framesSent = 0;
    size_t stacksSent = 1;                      // stacks[0] == {} is implicit
    std::unique_ptr<SummaryBuilder> summaries;  // null: options.summaries is off
    uint32_t summarySequence = 0;
    bool finished = false;

    ~Impl() { ZSTD_freeCCtx(cctx); }

    /// Serialises `chunk` into one frame and hands it to the sink; `mayCompress` false keeps it
    /// raw (summary frames must be, so that a reader finds them from their first byte).
    Status emitChunk(uint64_t& bytesWritten, uint64_t& framesWritten, bool mayCompress = true) {
        const size_t size = chunk.ByteSizeLong();
        if (size > kMaxFramePayloadBytes) {
            return Error::make(ErrorCode::Limit, "",
                               "a chunk serialises to " + std::to_string(size) +
                                   " bytes, more than the frame limit; lower eventsPerChunk")
                .atRecord(static_cast<int64_t>(framesWritten));
        }
        raw.resize(size);
        chunk.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(raw.data()));
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
            frame.append(raw);
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
        chunk.Clear();
        v1::Summary* out = chunk.mutable_summary();
        detail::summaryToProto(delta, *out);
        out->set_sequence(summarySequence++);
        return emitChunk(bytesWritten, framesWritten, false);
    }
};

Status TraceWriter::Impl::writeEvents(const TraceData& data, uint64_t& bytesWritten,
                                      uint64_t& framesWritten) {
    if (data.strings.size() < stringsSent || data.frames.size() < framesSent ||
        data.stacks.size() < stacksSent) {
        return Error::make(
            ErrorCode::Invalid, "",
            "the string, frame or stack table shrank between writes; tables may only grow");
    }
    if (!columnsAgree(data.memory) || !columnsAgree(data.kernels) ||
        !columnsAgree(data.collectives) || !columnsAgree(data.ranges) ||
        !columnsAgree(data.counters)) {
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
        chunk.Clear();
        // Chunk c holds slice c - partStart of each part; a part not yet started gets slice
        // index SIZE_MAX / n, which is empty.
        auto part = [&](size_t start) { return c >= start ? c - start : SIZE_MAX / n; };
        if (auto [b, e] = slice(part(stringsAt), n, newStrings); b < e) {
            auto* t = chunk.mutable_strings();
            t->set_first_id(static_cast<uint32_t>(stringsSent + b));
            for (size_t j = b; j < e; ++j) {
                t->add_values(data.strings[stringsSent + j]);
            }
        }
        if (auto [b, e] = slice(part(framesAt), n, newFrames); b < e) {
            auto* t = chunk.mutable_frames();
            t->set_first_id(static_cast<uint32_t>(framesSent + b));
            for (size_t j = b; j < e; ++j) {
                const Frame& f = data.frames[framesSent + j];
                t->add_name(f.name);
                t->add_file(f.file);
                t->add_line(f.line);
            }
        }
        if (auto [b, e] = slice(part(stacksAt), n, newStacks); b < e) {
            auto* t = chunk.mutable_stacks();
            t->set_first_id(static_cast<uint32_t>(stacksSent + b));
            for (size_t j = b; j < e; ++j) {
                const auto& stack = data.stacks[stacksSent + j];
                t->add_length(static_cast<uint32_t>(stack.size()));
                for (FrameId f : stack) {
                    t->add_frames(toInt(f));
                }
            }
        }
        const size_t i = part(eventsAt);
        if (auto [b, e] = slice(i, n, data.memory.size()); b < e) {
            encodeMemory(data.memory, b, e, chunk.mutable_memory());
        }
        if (auto [b, e] = slice(i, n, data.kernels.size()); b < e) {
            encodeKernels(data.kernels, b, e, chunk.mutable_kernels());
        }
        if (auto [b, e] = slice(i, n, data.collectives.size()); b < e) {
            encodeCollectives(data.collectives, b, e, chunk.mutable_collectives());
        }
        if (auto [b, e] = slice(i, n, data.ranges.size()); b < e) {
            encodeRanges(data.ranges, b, e, chunk.mutable_ranges());
        }
        if (auto [b, e] = slice(i, n, data.counters.size()); b < e) {
            encodeCounters(data.counters, b, e, chunk.mutable_counters());
        }
        for (auto [b, e] = slice(i, n, data.ooms.size()); b < e; ++b) {
            const OomEvent& o = data.ooms[b];
            auto* p = chunk.add_ooms();
            p->set_timestamp_ns(o.timestampNs);
            p->set_device(toInt(o.device));
            p->set_stream(o.stream);
            p->set_requested_bytes(o.requestedBytes);
            p->set_free_bytes(o.freeBytes);
        }
        for (auto [b, e] = slice(i, n, data.communicators.size()); b < e; ++b) {
            const Communicator& m = data.communicators[b];
            auto* p = chunk.add_communicators();
            p->set_hash(m.hash);
            p->set_rank(toInt(m.rank));
            p->set_nranks(m.nranks);
            p->set_nodes(m.nodes);
            p->set_name(m.name);
            p->set_init_ns(m.initNs);
            p->set_device(toInt(m.device));
        }
        for (auto [b, e] = slice(i, n, data.dataLoss.size()); b < e; ++b) {
            const DataLoss& d = data.dataLoss[b];
            auto* p = chunk.add_data_loss();
            p->set_what(std::string(lossCounterInfo(d.counter).name));
            p->set_count(d.count);
            p->set_reason(d.reason);
            p->set_start_ns(d.startNs);
            p->set_end_ns(d.endNs);
        }
        for (auto [b, e] = slice(i, n, data.annotations.size()); b < e; ++b) {
            const Annotation& a = data.annotations[b];
            auto* p = chunk.add_annotations();
            p->set_start_ns(a.startNs);
            p->set_end_ns(a.endNs);
            p->set_device(toInt(a.device));
            p->set_text(a.text);
            p->set_author(a.author);
            p->set_title(a.title);
            p->set_color(a.color);
            p->set_created_unix_ms(a.createdUnixMs);
            p->set_allocation_address(a.allocationAddress);
            p->set_allocation_time_ns(a.allocationTimeNs);
            p->set_flame_frame(a.flameFrame);
            p->set_generated(a.generated);
            p->set_kind(a.kind);
            p->set_id(a.id);
            p->set_all_ranks(a.allRanks);
        }
        const uint64_t offset = bytesWritten;
        const uint64_t number = framesWritten;
        Status s = emitChunk(bytesWritten, framesWritten);
        if (!s.ok()) {
            return s;
        }
        if (summaries) {
            const bool tables = chunk.has_strings() || chunk.has_frames() || chunk.has_stacks();
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

TraceWriter::TraceWriter(std::unique_ptr<ByteSink> sink, WriterOptions options)
    : m_impl(std::make_unique<Impl>()) {
    m_impl->sink = std::move(sink);
    m_impl->options = options;
    if (options.summaries) {
        m_impl->summaries = std::make_unique<SummaryBuilder>();
    }
}

TraceWriter::~TraceWriter() = default;

Status TraceWriter::writeHeader(const FileHeader& header) {
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
        m_impl->chunk.Clear();
        v1::FileHeader* out = m_impl->chunk.mutable_header();
        detail::headerToProto(header, *out);
        // The version this build writes, whatever the header was read from.
        out->set_format_major(kFormatMajor);
        out->set_format_minor(kFormatMinor);
        m_impl->headerWritten = true;
        return m_impl->emitChunk(m_bytesWritten, m_framesWritten);
    } catch (const std::bad_alloc&) {
        return Error::make(ErrorCode::Limit, "", "out of memory while writing the header");
    } catch (const std::exception& e) {
        return Error::make(ErrorCode::Io, "", std::string("cannot write the header: ") + e.what());
    }
}

Status TraceWriter::writeEvents(const TraceData& data) {
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

Status TraceWriter::flush() {
    return m_impl->sink->flush();
}

Status TraceWriter::finish(const std::vector<DeviceAnalysisSummary>& analysis) {
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

Status writeTraceFile(const std::string& path, const TraceData& data, const WriterOptions& options,
                      const std::vector<DeviceAnalysisSummary>& analysis) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot create: ") + std::strerror(errno));
    }
    TraceWriter writer(makeFdSink(fd, path), options);
    Status s = writer.writeHeader(data.header);
    if (s.ok()) {
        s = writer.writeEvents(data);
    }
    if (s.ok()) {
        s = writer.finish(analysis);
    }
    if (!s.ok()) {
        Error e = s.error();
        e.file = path;
        return e;
    }
    return Status::success();
}

std::string writeTraceBytes(const TraceData& data, const WriterOptions& options,
                            const std::vector<DeviceAnalysisSummary>& analysis) {
    std::string out;
    TraceWriter writer(makeStringSink(out), options);
    // A string sink cannot fail; an error here (out of memory) leaves a shorter, still readable
    // byte string.
    if (writer.writeHeader(data.header).ok() && writer.writeEvents(data).ok()) {
        (void)writer.finish(analysis);
    }
    return out;
}

}  // namespace vramscope::trace
