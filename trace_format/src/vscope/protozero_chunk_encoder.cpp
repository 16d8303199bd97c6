// The protozero chunk encoder (chunk_encoder.h): trace.proto's Chunk written with the header-only
// protozero library, byte for byte what libprotobuf writes for the same input, so that the
// capture agent needs no libprotobuf. Field numbers and types are trace.proto's (the enums below
// repeat them; protozero_encoder_test.cpp parses every message this file writes with the
// libprotobuf-generated parser and compares the bytes). Column rules: chunk_columns.h.

#include <protozero/pbf_builder.hpp>
#include <protozero/pbf_writer.hpp>

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/chunk_encoder.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"
#include "vscope/chunk_columns.h"

namespace vramscope::trace {
namespace {

using detail::wrappingDelta;
using protozero::pbf_tag_type;

// ---- field numbers of trace.proto (vramscope.trace.v1) ----
enum class ChunkField : pbf_tag_type {
    Header = 1,
    Strings = 2,
    Frames = 3,
    Stacks = 4,
    Memory = 5,
    Kernels = 6,
    Collectives = 7,
    Ranges = 8,
    Counters = 9,
    Ooms = 10,
    DataLoss = 11,
    Annotations = 12,
    Summary = 13,
    Communicators = 15,  // 14 (job_index) is written by the job index only
};
enum class HeaderField : pbf_tag_type {
    FormatMajor = 1,         // uint32
    FormatMinor = 2,         // uint32
    Producer = 3,            // bytes
    Host = 4,                // bytes
    Pid = 5,                 // int64
    Rank = 6,                // int32
    LocalRank = 7,           // int32
    WorldSize = 8,           // int32
    JobId = 9,               // bytes
    ClockDomain = 10,        // bytes
    WallClockAnchorNs = 11,  // int64
    AnchorTraceNs = 12,      // int64
    Devices = 13,            // DeviceInfo
    CaptureSettings = 14,    // KeyValue
};
enum class DeviceField : pbf_tag_type { Index = 1, Uuid = 2, Name = 3, TotalMemoryBytes = 4 };
enum class KeyValueField : pbf_tag_type { Key = 1, Value = 2 };
enum class StringTableField : pbf_tag_type { FirstId = 1, Values = 2 };  // values: repeated bytes
enum class FrameTableField : pbf_tag_type { FirstId = 1, Name = 2, File = 3, Line = 4 };
enum class StackTableField : pbf_tag_type { FirstId = 1, Length = 2, Frames = 3 };
enum class MemoryField : pbf_tag_type {
    TimestampNsDelta = 1,  // sint64
    AddressDelta = 2,      // sint64
    SizeBytes = 3,         // uint64
    Flags = 4,             // uint32
    Device = 5,            // sint32
    Stream = 6,            // uint64
    Stack = 7,             // uint32
    NvtxRange = 8,         // uint32
};
enum class KernelField : pbf_tag_type {
    StartNsDelta = 1,        // sint64
    DurationNs = 2,          // uint64
    Device = 3,              // sint32
    Stream = 4,              // uint64
    Name = 5,                // uint32
    Category = 6,            // uint32
    LaunchLeadNs = 7,        // sint64
    Bytes = 8,               // uint64
    CorrelationIdDelta = 9,  // sint64
    LaunchUnknown = 10,      // bool
    OperandType = 11,        // uint32
};
enum class CollectiveField : pbf_tag_type {
    StartNsDelta = 1,      // sint64
    DurationNs = 2,        // uint64
    Device = 3,            // sint32
    Stream = 4,            // uint64
    CommunicatorHash = 5,  // uint64
    Rank = 6,              // sint32
    Nranks = 7,            // int32
    Function = 8,          // uint32
    SeqNumber = 9,         // sint64
    Bytes = 10,            // uint64
    Datatype = 11,         // uint32
    Algorithm = 12,        // uint32
    Protocol = 13,         // uint32
    Channels = 14,         // uint32
    EnqueueLeadNs = 15,    // sint64
    Peer = 16,             // sint32
    Timing = 17,           // uint32
};
enum class CommunicatorField : pbf_tag_type {
    Hash = 1,    // uint64
    Rank = 2,    // sint32
    Nranks = 3,  // int32
    Nodes = 4,   // int32
    Name = 5,    // string
    InitNs = 6,  // sint64
    Device = 7,  // sint32
};
enum class RangeField : pbf_tag_type {
    StartNsDelta = 1,  // sint64
    DurationNs = 2,    // uint64
    Name = 3,          // uint32
    Depth = 4,         // uint32
    ThreadId = 5,      // uint64
    Device = 6,        // sint32
    Kind = 7,          // uint32
};
enum class CounterField : pbf_tag_type {
    TimestampNsDelta = 1,  // sint64
    Name = 2,              // uint32
    Device = 3,            // sint32
    Kind = 4,              // uint32
    Value = 5,             // double
};
enum class OomField : pbf_tag_type {
    TimestampNs = 1,     // int64
    Device = 2,          // sint32
    Stream = 3,          // uint64
    RequestedBytes = 4,  // uint64
    FreeBytes = 5,       // uint64
};
enum class DataLossField : pbf_tag_type {
    What = 1,     // bytes
    Count = 2,    // uint64
    Reason = 3,   // bytes
    StartNs = 4,  // int64
    EndNs = 5,    // int64
};
enum class AnnotationField : pbf_tag_type {
    StartNs = 1,            // int64
    EndNs = 2,              // int64
    Device = 3,             // sint32
    Text = 4,               // bytes
    Author = 5,             // bytes
    Title = 6,              // bytes
    Color = 7,              // string
    CreatedUnixMs = 8,      // int64
    AllocationAddress = 9,  // uint64
    AllocationTimeNs = 10,  // int64
    FlameFrame = 11,        // bytes
    Generated = 12,         // bool
    Kind = 13,              // string
    Id = 14,                // string
    AllRanks = 15,          // bool
};
enum class SummaryField : pbf_tag_type {
    Sequence = 1,   // uint32
    Final = 2,      // bool
    FirstNs = 3,    // int64
    LastNs = 4,     // int64
    TableRows = 5,  // uint64
    Memory = 6,     // MemoryEnvelope
    Kernels = 7,    // KernelHistogram
    Frames = 8,     // FrameIndex
    Analysis = 9,   // DeviceAnalysis
};
enum class EnvelopeField : pbf_tag_type {
    Device = 1,           // sint32
    Level = 2,            // uint32
    Origin = 3,           // uint32
    StartNsDelta = 4,     // sint64
    DurationNs = 5,       // uint64
    MinBytes = 6,         // sint64
    MaxBytes = 7,         // sint64
    FirstBytes = 8,       // sint64
    LastBytes = 9,        // sint64
    Steps = 10,           // uint32
    TotalSteps = 11,      // uint64
    Events = 12,          // uint64
    PeakBytes = 13,       // sint64
    PeakTimeNs = 14,      // int64
    LowestBytes = 15,     // sint64
    UnmatchedFrees = 16,  // uint64
    OutOfOrder = 17,      // uint64
};
enum class HistogramField : pbf_tag_type {
    Device = 1,        // sint32
    Category = 2,      // uint32
    Count = 3,         // uint64
    BusyNs = 4,        // uint64
    Log2Counts = 5,    // uint64
    FirstStartNs = 6,  // int64
    LastEndNs = 7,     // int64
};
enum class FrameIndexField : pbf_tag_type {
    FrameNumber = 1,  // uint64
    Offset = 2,       // uint64
    FrameBytes = 3,   // uint32
    MinNs = 4,        // sint64
    MaxNs = 5,        // sint64
    Contents = 6,     // uint32
};
enum class AnalysisField : pbf_tag_type {
    Device = 1,                  // sint32
    IterationSource = 2,         // bytes
    IterationReason = 3,         // bytes
    IterationStartNs = 4,        // int64
    IterationEndNs = 5,          // int64
    BaselineBytes = 6,           // sint64
    IterationPeakBytes = 7,      // sint64
    LeakVerdict = 8,             // bytes
    SlopeBytesPerIteration = 9,  // double
    GrowthBytes = 10,            // sint64
    LeakReason = 11,             // bytes
    AnalysedBy = 12,             // bytes
};

template <class Tag>
using Builder = protozero::pbf_builder<Tag>;

// ---- proto3 singular fields: a value equal to the default is not written ----
template <class Tag>
void putUint32(Builder<Tag>& b, Tag t, uint32_t v) {
    if (v != 0) {
        b.add_uint32(t, v);
    }
}
template <class Tag>
void putUint64(Builder<Tag>& b, Tag t, uint64_t v) {
    if (v != 0) {
        b.add_uint64(t, v);
    }
}
template <class Tag>
void putInt32(Builder<Tag>& b, Tag t, int32_t v) {
    if (v != 0) {
        b.add_int32(t, v);
    }
}
template <class Tag>
void putInt64(Builder<Tag>& b, Tag t, int64_t v) {
    if (v != 0) {
        b.add_int64(t, v);
    }
}
template <class Tag>
void putSint32(Builder<Tag>& b, Tag t, int32_t v) {
    if (v != 0) {
        b.add_sint32(t, v);
    }
}
template <class Tag>
void putSint64(Builder<Tag>& b, Tag t, int64_t v) {
    if (v != 0) {
        b.add_sint64(t, v);
    }
}
template <class Tag>
void putBool(Builder<Tag>& b, Tag t, bool v) {
    if (v) {
        b.add_bool(t, v);
    }
}
/// libprotobuf compares a proto3 double's bit pattern with 0, so -0.0 is written.
template <class Tag>
void putDouble(Builder<Tag>& b, Tag t, double v) {
    if (std::bit_cast<uint64_t>(v) != 0) {
        b.add_double(t, v);
    }
}
/// bytes and string fields alike (no UTF-8 check: trace.proto's text fields are bytes).
template <class Tag>
void putBytes(Builder<Tag>& b, Tag t, std::string_view v) {
    if (!v.empty()) {
        b.add_bytes(t, v.data(), v.size());
    }
}

/// Sub-message `t` of `parent`, filled by `fill(Builder<SubTag>&)`. Written even when `fill`
/// writes nothing, as libprotobuf writes a sub-message that is set (protozero alone drops an
/// empty one). `buffer` is the string every builder of this chunk appends to.
template <class SubTag, class Tag, class Fill>
void putMessage(Builder<Tag>& parent, std::string& buffer, Tag t, Fill&& fill) {
    const size_t before = buffer.size();
    {
        Builder<SubTag> sub{parent, t};
        fill(sub);
    }
    if (buffer.size() == before) {
        parent.add_bytes(t, "", 0);
    }
}

// ---- packed repeated fields ----
/// get(i) for i in [begin, end) as one packed field; nothing when the range is empty.
template <class Packed, class Tag, class Get>
void putPacked(Builder<Tag>& b, Tag t, size_t begin, size_t end, Get&& get) {
    if (begin >= end) {
        return;
    }
    Packed out{b, t};
    for (size_t i = begin; i < end; ++i) {
        out.add_element(get(i));
    }
}
/// Every value of `col` as one packed field; nothing when it is empty.
template <class Packed, class Tag, class T>
void putAll(Builder<Tag>& b, Tag t, const std::vector<T>& col) {
    putPacked<Packed>(b, t, 0, col.size(), [&](size_t i) { return col[i]; });
}
/// An optional column: left out when every row of [begin, end) equals `def`.
template <class Packed, class Tag, class T, class Conv>
void putColumn(Builder<Tag>& b, Tag t, const std::vector<T>& col, size_t begin, size_t end,
               const T& def, Conv&& conv) {
    if (detail::allEqual(col, begin, end, def)) {
        return;
    }
    putPacked<Packed>(b, t, begin, end, [&](size_t i) { return conv(col[i]); });
}
template <class Packed, class Tag, class T>
void putColumn(Builder<Tag>& b, Tag t, const std::vector<T>& col, size_t begin, size_t end,
               const T& def) {
    putColumn<Packed>(b, t, col, begin, end, def, [](const T& v) { return v; });
}
/// Zigzag deltas to the previous row, the first row absolute (modulo 2^64).
template <class Tag, class T>
void putDeltas(Builder<Tag>& b, Tag t, const std::vector<T>& col, size_t begin, size_t end) {
    uint64_t previous = 0;
    putPacked<protozero::packed_field_sint64>(b, t, begin, end, [&](size_t i) {
        const auto v = static_cast<uint64_t>(col[i]);
        const int64_t d = wrappingDelta(v, previous);
        previous = v;
        return d;
    });
}
/// end - start of every row, left out when all are 0.
template <class Tag>
void putDurations(Builder<Tag>& b, Tag t, const std::vector<TimestampNs>& start,
                  const std::vector<TimestampNs>& end, size_t begin, size_t stop) {
    if (detail::allDurationsZero(start, end, begin, stop)) {
        return;
    }
    putPacked<protozero::packed_field_uint64>(
        b, t, begin, stop, [&](size_t i) { return detail::duration(start[i], end[i]); });
}

constexpr auto deviceInt = [](DeviceIndex d) { return toInt(d); };
constexpr auto rankInt = [](RankId r) { return toInt(r); };
constexpr auto stackInt = [](StackId s) { return toInt(s); };
constexpr auto enumInt = [](auto e) { return static_cast<uint32_t>(e); };

using PackedU32 = protozero::packed_field_uint32;
using PackedU64 = protozero::packed_field_uint64;
using PackedS32 = protozero::packed_field_sint32;
using PackedS64 = protozero::packed_field_sint64;
using PackedI32 = protozero::packed_field_int32;
using PackedI64 = protozero::packed_field_int64;

void putMemory(Builder<MemoryField>& b, const MemoryEvents& m, RowRange r) {
    const size_t s = r.begin;
    const size_t e = r.end;
    putDeltas(b, MemoryField::TimestampNsDelta, m.timestampNs, s, e);
    if (detail::anyNonZero(m.address, s, e)) {
        putDeltas(b, MemoryField::AddressDelta, m.address, s, e);
    }
    putColumn<PackedU64>(b, MemoryField::SizeBytes, m.sizeBytes, s, e, uint64_t{0});
    if (detail::anyMemoryFlags(m, s, e)) {
        putPacked<PackedU32>(b, MemoryField::Flags, s, e,
                             [&](size_t i) { return detail::memoryFlags(m, i); });
    }
    putColumn<PackedS32>(b, MemoryField::Device, m.device, s, e, DeviceIndex{0}, deviceInt);
    putColumn<PackedU64>(b, MemoryField::Stream, m.stream, s, e, uint64_t{0});
    putColumn<PackedU32>(b, MemoryField::Stack, m.stack, s, e, StackId{0}, stackInt);
    putColumn<PackedU32>(b, MemoryField::NvtxRange, m.nvtxRange, s, e, uint32_t{0});
}

void putKernels(Builder<KernelField>& b, const KernelEvents& k, RowRange r) {
    const size_t s = r.begin;
    const size_t e = r.end;
    putDeltas(b, KernelField::StartNsDelta, k.startNs, s, e);
    putDurations(b, KernelField::DurationNs, k.startNs, k.endNs, s, e);
    putColumn<PackedS32>(b, KernelField::Device, k.device, s, e, DeviceIndex{0}, deviceInt);
    putColumn<PackedU64>(b, KernelField::Stream, k.stream, s, e, uint64_t{0});
    putColumn<PackedU32>(b, KernelField::Name, k.name, s, e, StringId{0});
    putColumn<PackedU32>(b, KernelField::Category, k.category, s, e, KernelCategory::Compute,
                         enumInt);
    const size_t known = detail::knownLaunches(k, s, e);
    if (known > 0) {
        putPacked<PackedS64>(b, KernelField::LaunchLeadNs, s, e,
                             [&](size_t i) { return detail::launchLead(k, i); });
    }
    putColumn<PackedU64>(b, KernelField::Bytes, k.bytes, s, e, uint64_t{0});
    if (detail::anyNonZero(k.correlationId, s, e)) {
        putDeltas(b, KernelField::CorrelationIdDelta, k.correlationId, s, e);
    }
    // Field 10 after 8 and 9: fields go in number order, whatever order they are thought of in.
    if (known > 0 && known < e - s) {
        putPacked<protozero::packed_field_bool>(b, KernelField::LaunchUnknown, s, e,
                                                [&](size_t i) { return k.launchNs[i] == -1; });
    }
    putColumn<PackedU32>(b, KernelField::OperandType, k.operandType, s, e, StringId{0});
}

void putCollectives(Builder<CollectiveField>& b, const CollectiveEvents& c, RowRange r) {
    using F = CollectiveField;
    const size_t s = r.begin;
    const size_t e = r.end;
    putDeltas(b, F::StartNsDelta, c.startNs, s, e);
    putDurations(b, F::DurationNs, c.startNs, c.endNs, s, e);
    putColumn<PackedS32>(b, F::Device, c.device, s, e, DeviceIndex{0}, deviceInt);
    putColumn<PackedU64>(b, F::Stream, c.stream, s, e, uint64_t{0});
    putColumn<PackedU64>(b, F::CommunicatorHash, c.communicatorHash, s, e, uint64_t{0});
    putColumn<PackedS32>(b, F::Rank, c.rank, s, e, kUnknownRank, rankInt);
    putColumn<PackedI32>(b, F::Nranks, c.nranks, s, e, int32_t{0});
    putColumn<PackedU32>(b, F::Function, c.function, s, e, StringId{0});
    putColumn<PackedS64>(b, F::SeqNumber, c.seqNumber, s, e, int64_t{-1});
    putColumn<PackedU64>(b, F::Bytes, c.bytes, s, e, uint64_t{0});
    putColumn<PackedU32>(b, F::Datatype, c.datatype, s, e, StringId{0});
    putColumn<PackedU32>(b, F::Algorithm, c.algorithm, s, e, StringId{0});
    putColumn<PackedU32>(b, F::Protocol, c.protocol, s, e, StringId{0});
    putColumn<PackedU32>(b, F::Channels, c.channels, s, e, uint32_t{0});
    putColumn<PackedS64>(b, F::EnqueueLeadNs, c.enqueueLeadNs, s, e, int64_t{-1});
    putColumn<PackedS32>(b, F::Peer, c.peer, s, e, int32_t{-1});
    putColumn<PackedU32>(b, F::Timing, c.timing, s, e, CollectiveTiming::Unknown, enumInt);
}

void putRanges(Builder<RangeField>& b, const RangeEvents& x, RowRange r) {
    const size_t s = r.begin;
    const size_t e = r.end;
    putDeltas(b, RangeField::StartNsDelta, x.startNs, s, e);
    putDurations(b, RangeField::DurationNs, x.startNs, x.endNs, s, e);
    putColumn<PackedU32>(b, RangeField::Name, x.name, s, e, StringId{0});
    putColumn<PackedU32>(b, RangeField::Depth, x.depth, s, e, uint32_t{0});
    putColumn<PackedU64>(b, RangeField::ThreadId, x.threadId, s, e, uint64_t{0});
    putColumn<PackedS32>(b, RangeField::Device, x.device, s, e, kHostDevice, deviceInt);
    putColumn<PackedU32>(b, RangeField::Kind, x.kind, s, e, RangeKind::Nvtx, enumInt);
}

void putCounters(Builder<CounterField>& b, const CounterSamples& c, RowRange r) {
    const size_t s = r.begin;
    const size_t e = r.end;
    putDeltas(b, CounterField::TimestampNsDelta, c.timestampNs, s, e);
    putColumn<PackedU32>(b, CounterField::Name, c.name, s, e, StringId{0});
    putColumn<PackedS32>(b, CounterField::Device, c.device, s, e, kHostDevice, deviceInt);
    putColumn<PackedU32>(b, CounterField::Kind, c.kind, s, e, CounterKind::Generic, enumInt);
    if (!detail::allValuesZero(c, s, e)) {
        putPacked<protozero::packed_field_double>(b, CounterField::Value, s, e,
                                                  [&](size_t i) { return c.value[i]; });
    }
}

/// Fields 2-4: the new string, frame and stack entries.
void putTables(Builder<ChunkField>& chunk, std::string& buf, const TraceData& d,
               const ChunkContents& c) {
    if (const RowRange r = c.strings; !r.empty()) {
        using F = StringTableField;
        putMessage<F>(chunk, buf, ChunkField::Strings, [&](Builder<F>& t) {
            putUint32(t, F::FirstId, static_cast<uint32_t>(r.begin));
            for (size_t j = r.begin; j < r.end; ++j) {
                t.add_bytes(F::Values, d.strings[j]);  // empty ones too
            }
        });
    }
    if (const RowRange r = c.frames; !r.empty()) {
        using F = FrameTableField;
        // Every column of every entry, zeros too (the writer has always written them so).
        putMessage<F>(chunk, buf, ChunkField::Frames, [&](Builder<F>& t) {
            putUint32(t, F::FirstId, static_cast<uint32_t>(r.begin));
            putPacked<PackedU32>(t, F::Name, r.begin, r.end,
                                 [&](size_t j) { return d.frames[j].name; });
            putPacked<PackedU32>(t, F::File, r.begin, r.end,
                                 [&](size_t j) { return d.frames[j].file; });
            putPacked<PackedI32>(t, F::Line, r.begin, r.end,
                                 [&](size_t j) { return d.frames[j].line; });
        });
    }
    if (const RowRange r = c.stacks; !r.empty()) {
        using F = StackTableField;
        putMessage<F>(chunk, buf, ChunkField::Stacks, [&](Builder<F>& t) {
            putUint32(t, F::FirstId, static_cast<uint32_t>(r.begin));
            putPacked<PackedU32>(t, F::Length, r.begin, r.end, [&](size_t j) {
                return static_cast<uint32_t>(d.stacks[j].size());
            });
            PackedU32 frames{t, F::Frames};  // left out when every stack is empty
            for (size_t j = r.begin; j < r.end; ++j) {
                for (FrameId f : d.stacks[j]) {
                    frames.add_element(toInt(f));
                }
            }
        });
    }
}

/// Fields 10-12 and 15: one message per OOM, data-loss record, annotation and communicator.
void putLists(Builder<ChunkField>& chunk, std::string& buf, const TraceData& d,
              const ChunkContents& c) {
    for (size_t j = c.ooms.begin; j < c.ooms.end; ++j) {
        const OomEvent& o = d.ooms[j];
        putMessage<OomField>(chunk, buf, ChunkField::Ooms, [&](Builder<OomField>& m) {
            putInt64(m, OomField::TimestampNs, o.timestampNs);
            putSint32(m, OomField::Device, toInt(o.device));
            putUint64(m, OomField::Stream, o.stream);
            putUint64(m, OomField::RequestedBytes, o.requestedBytes);
            putUint64(m, OomField::FreeBytes, o.freeBytes);
        });
    }
    for (size_t j = c.dataLoss.begin; j < c.dataLoss.end; ++j) {
        const DataLoss& x = d.dataLoss[j];
        putMessage<DataLossField>(chunk, buf, ChunkField::DataLoss, [&](Builder<DataLossField>& m) {
            putBytes(m, DataLossField::What, lossCounterInfo(x.counter).name);
            putUint64(m, DataLossField::Count, x.count);
            putBytes(m, DataLossField::Reason, x.reason);
            putInt64(m, DataLossField::StartNs, x.startNs);
            putInt64(m, DataLossField::EndNs, x.endNs);
        });
    }
    for (size_t j = c.annotations.begin; j < c.annotations.end; ++j) {
        const Annotation& a = d.annotations[j];
        using F = AnnotationField;
        putMessage<F>(chunk, buf, ChunkField::Annotations, [&](Builder<F>& m) {
            putInt64(m, F::StartNs, a.startNs);
            putInt64(m, F::EndNs, a.endNs);
            putSint32(m, F::Device, toInt(a.device));
            putBytes(m, F::Text, a.text);
            putBytes(m, F::Author, a.author);
            putBytes(m, F::Title, a.title);
            putBytes(m, F::Color, a.color);
            putInt64(m, F::CreatedUnixMs, a.createdUnixMs);
            putUint64(m, F::AllocationAddress, a.allocationAddress);
            putInt64(m, F::AllocationTimeNs, a.allocationTimeNs);
            putBytes(m, F::FlameFrame, a.flameFrame);
            putBool(m, F::Generated, a.generated);
            putBytes(m, F::Kind, a.kind);
            putBytes(m, F::Id, a.id);
            putBool(m, F::AllRanks, a.allRanks);
        });
    }
    for (size_t j = c.communicators.begin; j < c.communicators.end; ++j) {
        const Communicator& x = d.communicators[j];
        using F = CommunicatorField;
        putMessage<F>(chunk, buf, ChunkField::Communicators, [&](Builder<F>& m) {
            putUint64(m, F::Hash, x.hash);
            putSint32(m, F::Rank, toInt(x.rank));
            putInt32(m, F::Nranks, x.nranks);
            putInt32(m, F::Nodes, x.nodes);
            putBytes(m, F::Name, x.name);
            putSint64(m, F::InitNs, x.initNs);
            putSint32(m, F::Device, toInt(x.device));
        });
    }
}

void putHeader(Builder<HeaderField>& h, std::string& buf, const FileHeader& x) {
    using F = HeaderField;
    putUint32(h, F::FormatMajor, x.formatMajor);
    putUint32(h, F::FormatMinor, x.formatMinor);
    putBytes(h, F::Producer, x.producer);
    putBytes(h, F::Host, x.host);
    putInt64(h, F::Pid, x.pid);
    putInt32(h, F::Rank, toInt(x.rank));
    putInt32(h, F::LocalRank, toInt(x.localRank));
    putInt32(h, F::WorldSize, x.worldSize);
    putBytes(h, F::JobId, x.jobId);
    putBytes(h, F::ClockDomain, x.clockDomain);
    putInt64(h, F::WallClockAnchorNs, x.wallClockAnchorNs);
    putInt64(h, F::AnchorTraceNs, x.anchorTraceNs);
    for (const DeviceInfo& d : x.devices) {
        putMessage<DeviceField>(h, buf, F::Devices, [&](Builder<DeviceField>& m) {
            putInt32(m, DeviceField::Index, toInt(d.index));
            putBytes(m, DeviceField::Uuid, d.uuid);
            putBytes(m, DeviceField::Name, d.name);
            putUint64(m, DeviceField::TotalMemoryBytes, d.totalMemoryBytes);
        });
    }
    // No structured binding here: clang 14 cannot capture one in a lambda.
    for (const auto& setting : x.captureSettings) {
        putMessage<KeyValueField>(h, buf, F::CaptureSettings, [&](Builder<KeyValueField>& m) {
            putBytes(m, KeyValueField::Key, setting.first);
            putBytes(m, KeyValueField::Value, setting.second);
        });
    }
}

void putEnvelope(Builder<EnvelopeField>& m, const MemoryEnvelope& x) {
    using F = EnvelopeField;
    putSint32(m, F::Device, toInt(x.device));
    putUint32(m, F::Level, static_cast<uint32_t>(x.level));
    putUint32(m, F::Origin, static_cast<uint32_t>(x.origin));
    const auto& blocks = x.blocks;
    const size_t n = blocks.size();
    // Block starts as deltas to the previous block's start, modulo 2^64 like the event columns.
    putPacked<PackedS64>(m, F::StartNsDelta, 0, n, [&](size_t i) {
        const TimestampNs previous = i == 0 ? 0 : blocks[i - 1].startNs;
        return wrappingDelta(static_cast<uint64_t>(blocks[i].startNs),
                             static_cast<uint64_t>(previous));
    });
    putPacked<PackedU64>(m, F::DurationNs, 0, n, [&](size_t i) {
        return detail::duration(blocks[i].startNs, blocks[i].endNs);
    });
    putPacked<PackedS64>(m, F::MinBytes, 0, n, [&](size_t i) { return blocks[i].minBytes; });
    putPacked<PackedS64>(m, F::MaxBytes, 0, n, [&](size_t i) { return blocks[i].maxBytes; });
    putPacked<PackedS64>(m, F::FirstBytes, 0, n, [&](size_t i) { return blocks[i].firstBytes; });
    putPacked<PackedS64>(m, F::LastBytes, 0, n, [&](size_t i) { return blocks[i].lastBytes; });
    putPacked<PackedU32>(m, F::Steps, 0, n, [&](size_t i) { return blocks[i].steps; });
    putUint64(m, F::TotalSteps, x.totalSteps);
    putUint64(m, F::Events, x.events);
    putSint64(m, F::PeakBytes, x.peakBytes);
    putInt64(m, F::PeakTimeNs, x.peakTimeNs);
    putSint64(m, F::LowestBytes, x.lowestBytes);
    putUint64(m, F::UnmatchedFrees, x.unmatchedFrees);
    putUint64(m, F::OutOfOrder, x.outOfOrder);
}

void putHistogram(Builder<HistogramField>& m, const KernelHistogram& k) {
    using F = HistogramField;
    putSint32(m, F::Device, toInt(k.device));
    putUint32(m, F::Category, static_cast<uint32_t>(k.category));
    putUint64(m, F::Count, k.count);
    putUint64(m, F::BusyNs, k.busyNs);
    putPacked<PackedU64>(m, F::Log2Counts, 0, detail::usedBuckets(k.log2Counts),
                         [&](size_t i) { return k.log2Counts[i]; });
    putInt64(m, F::FirstStartNs, k.firstStartNs);
    putInt64(m, F::LastEndNs, k.lastEndNs);
}

void putFrameIndex(Builder<FrameIndexField>& m, const std::vector<FrameIndexEntry>& f) {
    using F = FrameIndexField;
    const size_t n = f.size();
    putPacked<PackedU64>(m, F::FrameNumber, 0, n, [&](size_t i) { return f[i].frameNumber; });
    putPacked<PackedU64>(m, F::Offset, 0, n, [&](size_t i) { return f[i].offset; });
    putPacked<PackedU32>(m, F::FrameBytes, 0, n, [&](size_t i) { return f[i].frameBytes; });
    putPacked<PackedS64>(m, F::MinNs, 0, n, [&](size_t i) { return f[i].minNs; });
    putPacked<PackedS64>(m, F::MaxNs, 0, n, [&](size_t i) { return f[i].maxNs; });
    putPacked<PackedU32>(m, F::Contents, 0, n, [&](size_t i) { return f[i].contents; });
}

void putAnalysis(Builder<AnalysisField>& m, const DeviceAnalysisSummary& a) {
    using F = AnalysisField;
    putSint32(m, F::Device, toInt(a.device));
    putBytes(m, F::IterationSource, a.iterationSource);
    putBytes(m, F::IterationReason, a.iterationReason);
    putAll<PackedI64>(m, F::IterationStartNs, a.iterationStartNs);
    putAll<PackedI64>(m, F::IterationEndNs, a.iterationEndNs);
    putAll<PackedS64>(m, F::BaselineBytes, a.baselineBytes);
    putAll<PackedS64>(m, F::IterationPeakBytes, a.iterationPeakBytes);
    putBytes(m, F::LeakVerdict, a.leakVerdict);
    putDouble(m, F::SlopeBytesPerIteration, a.slopeBytesPerIteration);
    putSint64(m, F::GrowthBytes, a.growthBytes);
    putBytes(m, F::LeakReason, a.leakReason);
    putBytes(m, F::AnalysedBy, a.analysedBy);
}

void putSummary(Builder<SummaryField>& m, std::string& buf, const TraceSummary& s,
                uint32_t sequence) {
    using F = SummaryField;
    putUint32(m, F::Sequence, sequence);
    putBool(m, F::Final, s.final);
    putInt64(m, F::FirstNs, s.firstNs);
    putInt64(m, F::LastNs, s.lastNs);
    putPacked<PackedU64>(m, F::TableRows, 0, s.tableRows.size(),
                         [&](size_t i) { return s.tableRows[i]; });
    for (const MemoryEnvelope& e : s.memory) {
        putMessage<EnvelopeField>(m, buf, F::Memory,
                                  [&](Builder<EnvelopeField>& x) { putEnvelope(x, e); });
    }
    for (const KernelHistogram& k : s.kernels) {
        putMessage<HistogramField>(m, buf, F::Kernels,
                                   [&](Builder<HistogramField>& x) { putHistogram(x, k); });
    }
    if (!s.frames.empty()) {
        putMessage<FrameIndexField>(
            m, buf, F::Frames, [&](Builder<FrameIndexField>& x) { putFrameIndex(x, s.frames); });
    }
    for (const DeviceAnalysisSummary& a : s.analysis) {
        putMessage<AnalysisField>(m, buf, F::Analysis,
                                  [&](Builder<AnalysisField>& x) { putAnalysis(x, a); });
    }
}

class ProtozeroChunkEncoder final : public ChunkEncoder {
public:
    size_t encodeHeader(const FileHeader& header, std::string& out) override {
        out.clear();
        Builder<ChunkField> chunk{out};
        putMessage<HeaderField>(chunk, out, ChunkField::Header,
                                [&](Builder<HeaderField>& h) { putHeader(h, out, header); });
        return out.size();
    }

    size_t encodeEvents(const TraceData& d, const ChunkContents& c, std::string& out) override {
        out.clear();
        Builder<ChunkField> chunk{out};
        putTables(chunk, out, d, c);
        if (!c.memory.empty()) {
            putMessage<MemoryField>(chunk, out, ChunkField::Memory, [&](Builder<MemoryField>& b) {
                putMemory(b, d.memory, c.memory);
            });
        }
        if (!c.kernels.empty()) {
            putMessage<KernelField>(chunk, out, ChunkField::Kernels, [&](Builder<KernelField>& b) {
                putKernels(b, d.kernels, c.kernels);
            });
        }
        if (!c.collectives.empty()) {
            putMessage<CollectiveField>(chunk, out, ChunkField::Collectives,
                                        [&](Builder<CollectiveField>& b) {
                                            putCollectives(b, d.collectives, c.collectives);
                                        });
        }
        if (!c.ranges.empty()) {
            putMessage<RangeField>(chunk, out, ChunkField::Ranges, [&](Builder<RangeField>& b) {
                putRanges(b, d.ranges, c.ranges);
            });
        }
        if (!c.counters.empty()) {
            putMessage<CounterField>(
                chunk, out, ChunkField::Counters,
                [&](Builder<CounterField>& b) { putCounters(b, d.counters, c.counters); });
        }
        putLists(chunk, out, d, c);
        return out.size();
    }

    size_t encodeSummary(const TraceSummary& summary, uint32_t sequence,
                         std::string& out) override {
        out.clear();
        Builder<ChunkField> chunk{out};
        putMessage<SummaryField>(chunk, out, ChunkField::Summary, [&](Builder<SummaryField>& m) {
            putSummary(m, out, summary, sequence);
        });
        return out.size();
    }
};

}  // namespace

std::unique_ptr<ChunkEncoder> makeProtozeroChunkEncoder() {
    return std::make_unique<ProtozeroChunkEncoder>();
}

}  // namespace vramscope::trace
