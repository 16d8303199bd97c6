// The libprotobuf chunk encoder (chunk_encoder.h) and the writers of the tools: TraceWriter,
// writeTraceFile, writeTraceBytes. Column rules in trace.proto and chunk_columns.h.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "vramscope/trace/chunk_encoder.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"
#include "vscope/chunk_columns.h"
#include "vscope/summary_proto.h"

namespace vramscope::trace {
namespace {

using detail::wrappingDelta;

template <class T>
using PbColumn = google::protobuf::RepeatedField<T>;

/// Appends col[b, e) converted by `conv`, unless every row equals `def` (then the column stays
/// empty and the reader fills the default).
template <class T, class P, class Conv>
void putColumn(PbColumn<P>* out, const std::vector<T>& col, size_t b, size_t e, T def, Conv conv) {
    if (detail::allEqual(col, b, e, def)) {
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
    if (detail::allDurationsZero(start, end, b, e)) {
        return;
    }
    out->Reserve(static_cast<int>(e - b));
    for (size_t i = b; i < e; ++i) {
        out->AddAlreadyReserved(detail::duration(start[i], end[i]));
    }
}

void encodeMemory(const MemoryEvents& m, size_t b, size_t e, v1::MemoryBatch* out) {
    putDeltaColumn(out->mutable_timestamp_ns_delta(), m.timestampNs, b, e);
    if (detail::anyNonZero(m.address, b, e)) {
        putDeltaColumn(out->mutable_address_delta(), m.address, b, e);
    }
    putColumn(out->mutable_size_bytes(), m.sizeBytes, b, e, uint64_t{0});
    if (detail::anyMemoryFlags(m, b, e)) {
        auto* flags = out->mutable_flags();
        flags->Reserve(static_cast<int>(e - b));
        for (size_t i = b; i < e; ++i) {
            flags->AddAlreadyReserved(detail::memoryFlags(m, i));
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
    const size_t known = detail::knownLaunches(k, b, e);
    if (known > 0) {
        auto* lead = out->mutable_launch_lead_ns();
        lead->Reserve(static_cast<int>(e - b));
        for (size_t i = b; i < e; ++i) {
            lead->AddAlreadyReserved(detail::launchLead(k, i));
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
    if (detail::anyNonZero(k.correlationId, b, e)) {
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
    if (!detail::allValuesZero(c, b, e)) {
        auto* v = out->mutable_value();
        v->Reserve(static_cast<int>(e - b));
        for (size_t i = b; i < e; ++i) {
            v->AddAlreadyReserved(c.value[i]);
        }
    }
}

/// Fills `chunk` with `contents` of `data` (the table entries, then the events).
void fillChunk(const TraceData& data, const ChunkContents& contents, v1::Chunk& chunk) {
    if (const RowRange r = contents.strings; !r.empty()) {
        auto* t = chunk.mutable_strings();
        t->set_first_id(static_cast<uint32_t>(r.begin));
        for (size_t j = r.begin; j < r.end; ++j) {
            t->add_values(data.strings[j]);
        }
    }
    if (const RowRange r = contents.frames; !r.empty()) {
        auto* t = chunk.mutable_frames();
        t->set_first_id(static_cast<uint32_t>(r.begin));
        for (size_t j = r.begin; j < r.end; ++j) {
            const Frame& f = data.frames[j];
            t->add_name(f.name);
            t->add_file(f.file);
            t->add_line(f.line);
        }
    }
    if (const RowRange r = contents.stacks; !r.empty()) {
        auto* t = chunk.mutable_stacks();
        t->set_first_id(static_cast<uint32_t>(r.begin));
        for (size_t j = r.begin; j < r.end; ++j) {
            const auto& stack = data.stacks[j];
            t->add_length(static_cast<uint32_t>(stack.size()));
            for (FrameId f : stack) {
                t->add_frames(toInt(f));
            }
        }
    }
    if (const RowRange r = contents.memory; !r.empty()) {
        encodeMemory(data.memory, r.begin, r.end, chunk.mutable_memory());
    }
    if (const RowRange r = contents.kernels; !r.empty()) {
        encodeKernels(data.kernels, r.begin, r.end, chunk.mutable_kernels());
    }
    if (const RowRange r = contents.collectives; !r.empty()) {
        encodeCollectives(data.collectives, r.begin, r.end, chunk.mutable_collectives());
    }
    if (const RowRange r = contents.ranges; !r.empty()) {
        encodeRanges(data.ranges, r.begin, r.end, chunk.mutable_ranges());
    }
    if (const RowRange r = contents.counters; !r.empty()) {
        encodeCounters(data.counters, r.begin, r.end, chunk.mutable_counters());
    }
    for (size_t j = contents.ooms.begin; j < contents.ooms.end; ++j) {
        const OomEvent& o = data.ooms[j];
        auto* p = chunk.add_ooms();
        p->set_timestamp_ns(o.timestampNs);
        p->set_device(toInt(o.device));
        p->set_stream(o.stream);
        p->set_requested_bytes(o.requestedBytes);
        p->set_free_bytes(o.freeBytes);
    }
    for (size_t j = contents.communicators.begin; j < contents.communicators.end; ++j) {
        const Communicator& m = data.communicators[j];
        auto* p = chunk.add_communicators();
        p->set_hash(m.hash);
        p->set_rank(toInt(m.rank));
        p->set_nranks(m.nranks);
        p->set_nodes(m.nodes);
        p->set_name(m.name);
        p->set_init_ns(m.initNs);
        p->set_device(toInt(m.device));
    }
    for (size_t j = contents.dataLoss.begin; j < contents.dataLoss.end; ++j) {
        const DataLoss& d = data.dataLoss[j];
        auto* p = chunk.add_data_loss();
        p->set_what(std::string(lossCounterInfo(d.counter).name));
        p->set_count(d.count);
        p->set_reason(d.reason);
        p->set_start_ns(d.startNs);
        p->set_end_ns(d.endNs);
    }
    for (size_t j = contents.annotations.begin; j < contents.annotations.end; ++j) {
        const Annotation& a = data.annotations[j];
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
}

/// ChunkEncoder over the generated classes. One reused Chunk: Clear() keeps the columns'
/// capacity from one chunk to the next.
class ProtobufChunkEncoder final : public ChunkEncoder {
public:
    size_t encodeHeader(const FileHeader& header, std::string& out) override {
        m_chunk.Clear();
        detail::headerToProto(header, *m_chunk.mutable_header());
        return serialise(out);
    }
    size_t encodeEvents(const TraceData& data, const ChunkContents& contents,
                        std::string& out) override {
        m_chunk.Clear();
        fillChunk(data, contents, m_chunk);
        return serialise(out);
    }
    size_t encodeSummary(const TraceSummary& summary, uint32_t sequence,
                         std::string& out) override {
        m_chunk.Clear();
        v1::Summary* s = m_chunk.mutable_summary();
        detail::summaryToProto(summary, *s);
        s->set_sequence(sequence);
        return serialise(out);
    }

private:
    /// libprotobuf cannot serialise a message of 2 GiB or more: above the frame limit only the
    /// size is returned.
    size_t serialise(std::string& out) {
        const size_t size = m_chunk.ByteSizeLong();
        if (size > kMaxFramePayloadBytes) {
            out.clear();
            return size;
        }
        out.resize(size);
        m_chunk.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data()));
        return size;
    }

    v1::Chunk m_chunk;
};

}  // namespace

std::unique_ptr<ChunkEncoder> makeProtobufChunkEncoder() {
    return std::make_unique<ProtobufChunkEncoder>();
}

TraceWriter::TraceWriter(std::unique_ptr<ByteSink> sink, WriterOptions options)
    : TraceStreamWriter(std::move(sink), options, makeProtobufChunkEncoder()) {}

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
