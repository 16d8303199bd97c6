#include "vramscope/trace/trace_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "refusal.h"
#include "trace_file_test_support.h"
#include "vramscope/trace/v1/trace.pb.h"

using namespace vramscope::trace;
using namespace vramscope::trace::testing;
using ::vramscope::test::refused;

namespace {

LoadedTrace readOk(const std::string& bytes) {
    auto r = readTraceBytes(bytes, "test.vscope");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
    return r.ok() ? std::move(r).value() : LoadedTrace{};
}

/// Chunks of the frames of an uncompressed file, parsed with the generated protobuf code.
std::vector<v1::Chunk> rawChunks(const std::string& bytes) {
    std::vector<v1::Chunk> out;
    size_t off = kPreambleBytes;
    while (off + kFrameHeadBytes <= bytes.size()) {
        uint32_t len = 0;
        for (int i = 0; i < 4; ++i) {
            len |= uint32_t{static_cast<unsigned char>(bytes[off + i])} << (8 * i);
        }
        EXPECT_EQ(bytes[off + 4], 0) << "expected a raw frame";
        out.emplace_back();
        EXPECT_TRUE(
            out.back().ParseFromArray(bytes.data() + off + kFrameHeadBytes, static_cast<int>(len)));
        off += kFrameHeadBytes + len + kFrameTailBytes;
    }
    EXPECT_EQ(off, bytes.size());
    return out;
}

}  // namespace

TEST(TraceFile, RoundTripsEveryFieldUncompressedInSeveralChunks) {
    const TraceData in = makeFullTrace(50);
    WriterOptions opt;
    opt.compress = false;
    opt.eventsPerChunk = 7;
    const std::string bytes = writeTraceBytes(in, opt);
    const LoadedTrace out = readOk(bytes);
    expectSameTrace(in, out.data);
    // Header frame, then chunks of 7: the 12 new strings take chunks 0-1 and the events start in
    // the last strings chunk: ceil(50 / 7) = 8 chunks from chunk 1, so chunks 0-8. Then the
    // summary frame of the batch and the closing one, which count as loaded frames too.
    EXPECT_EQ(out.report.framesLoaded, 1u + 9u + 2u);
    EXPECT_EQ(out.report.framesSkipped, 0u);
    EXPECT_TRUE(out.report.complete);
    EXPECT_TRUE(out.report.problems.empty());
    EXPECT_EQ(out.report.summary(), "");
    EXPECT_EQ(out.report.bytesLoaded, bytes.size());
    EXPECT_EQ(out.data.header.formatMajor, kFormatMajor);
    EXPECT_EQ(out.data.header.formatMinor, kFormatMinor);
}

TEST(TraceFile, RoundTripsEveryFieldCompressed) {
    const TraceData in = makeFullTrace(200);
    WriterOptions opt;
    opt.compress = true;
    opt.eventsPerChunk = 64;
    const std::string bytes = writeTraceBytes(in, opt);
    const LoadedTrace out = readOk(bytes);
    expectSameTrace(in, out.data);
    EXPECT_EQ(out.report.framesLoaded, 1u + 4u + 2u);  // + 2 summary frames
    EXPECT_TRUE(out.report.problems.empty());
}

TEST(TraceFile, RoundTripsInOneChunkWithDefaultOptions) {
    const TraceData in = makeFullTrace(30);
    const LoadedTrace out = readOk(writeTraceBytes(in));
    expectSameTrace(in, out.data);
    EXPECT_EQ(out.report.framesLoaded, 2u + 2u);  // + the batch's and the closing summary frame
}

TEST(TraceFile, RoundTripsColumnsLongerThanTheDecoderBlock) {
    // The reader decodes columns in blocks of 512 rows: 1,300 rows in one chunk span two whole
    // blocks and a partial one, and chunks of 700 start a chunk's rows in the middle of a block.
    const TraceData in = makeFullTrace(1300);
    for (const size_t perChunk : {size_t{100'000}, size_t{700}}) {
        WriterOptions opt;
        opt.eventsPerChunk = perChunk;
        const LoadedTrace out = readOk(writeTraceBytes(in, opt));
        expectSameTrace(in, out.data);
        ASSERT_EQ(out.data.kernels.size(), 1300u);
        // Every third kernel has no launch time (written as unknown): -1 in memory.
        EXPECT_EQ(std::count(out.data.kernels.launchNs.begin(), out.data.kernels.launchNs.end(),
                             TimestampNs{-1}),
                  1300 / 3);
    }
}

TEST(TraceFile, CompressedFramesAreZstdAndSmaller) {
    TraceData in = makeFullTrace(3);
    const StringId name = in.intern("sm90_xmma_gemm_bf16");
    for (int i = 0; i < 20000; ++i) {
        in.kernels.append(
            {i * 1000, i * 1000 + 400, DeviceIndex{0}, 7, name, KernelCategory::Compute, -1, 0, 0});
    }
    WriterOptions raw;
    raw.compress = false;
    const std::string plain = writeTraceBytes(in, raw);
    const std::string packed = writeTraceBytes(in, WriterOptions{});
    EXPECT_LT(packed.size() * 4, plain.size());
    // The event frame (second frame) is stored with encoding 1.
    uint32_t headerLen = 0;
    for (int i = 0; i < 4; ++i) {
        headerLen |= uint32_t{static_cast<unsigned char>(packed[kPreambleBytes + i])} << (8 * i);
    }
    const size_t second = kPreambleBytes + kFrameHeadBytes + headerLen + kFrameTailBytes;
    EXPECT_EQ(packed[second + 4], static_cast<char>(kEncodingZstd));
    expectSameTrace(in, readOk(packed).data);
}

TEST(TraceFile, HeaderOnlyTraceRoundTrips) {
    TraceData in;
    in.header.producer = "p";
    in.header.devices = {{DeviceIndex{3}, "u", "n", 7}};
    const std::string bytes = writeTraceBytes(in);
    const LoadedTrace out = readOk(bytes);
    expectSameTrace(in, out.data);
    // No event frame, so no batch summary: the header and the closing summary frame.
    EXPECT_EQ(out.report.framesLoaded, 2u);
}

TEST(TraceFile, WriteEventsSeveralTimesSendsOnlyNewTableEntries) {
    TraceData live;  // what a capture agent keeps: tables grow, events are cleared after writes
    TraceData expected;
    live.header.producer = expected.header.producer = "agent";
    std::string bytes;
    std::vector<size_t> ends;
    TraceWriter writer(std::make_unique<RecordingSink>(bytes, ends), WriterOptions{false, 3, 5});
    ASSERT_TRUE(writer.writeHeader(live.header).ok());
    for (int round = 0; round < 4; ++round) {
        for (int j = 0; j < 3 + round; ++j) {
            const std::string nm = "kernel_" + std::to_string(round) + "_" + std::to_string(j);
            const FrameId f =
                live.internFrame({live.intern("fn" + nm), live.intern("file.py"), round * 10 + j});
            const StackId s = live.internStack({f});
            const StringId id = live.intern(nm);
            const TimestampNs t = round * 1'000'000 + j * 1000;
            const KernelEvent k{t,      t + 500, DeviceIndex{0},
                                1,      id,      KernelCategory::Compute,
                                t - 10, 0,       static_cast<uint64_t>(round * 100 + j)};
            const MemoryEvent m{t,
                                0x1000u * static_cast<uint64_t>(j + 1),
                                512,
                                MemoryAction::Alloc,
                                MemoryLevel::Allocated,
                                MemoryKind::Pool,
                                DeviceIndex{0},
                                1,
                                s,
                                0};
            live.kernels.append(k);
            live.memory.append(m);
            expected.kernels.append(k);
            expected.memory.append(m);
        }
        ASSERT_TRUE(writer.writeEvents(live).ok());
        live.kernels = {};
        live.memory = {};
    }
    expected.strings = live.strings;
    expected.frames = live.frames;
    expected.stacks = live.stacks;
    const LoadedTrace out = readOk(bytes);
    expectSameTrace(expected, out.data);
    EXPECT_EQ(out.report.framesLoaded, writer.framesWritten());
    EXPECT_EQ(bytes.size(), writer.bytesWritten());

    // Each string is sent exactly once: the string tables of all chunks, in order, are the
    // table itself without its implicit empty string 0.
    std::vector<std::string> sent;
    for (const auto& c : rawChunks(bytes)) {
        if (c.strings().values_size() > 0) {
            EXPECT_EQ(c.strings().first_id(), sent.size() + 1);
        }
        sent.insert(sent.end(), c.strings().values().begin(), c.strings().values().end());
    }
    EXPECT_EQ(sent, std::vector<std::string>(live.strings.begin() + 1, live.strings.end()));
}

TEST(TraceFile, TimesAndAddressesAreZigzagDeltasWithTheFirstRowAbsolute) {
    TraceData in;
    in.memory.append({1000, 0x7000, 256, MemoryAction::Alloc, MemoryLevel::Allocated,
                      MemoryKind::Pool, DeviceIndex{0}, 0, StackId{0}, 0});
    in.memory.append({1010, 0x6F00, 256, MemoryAction::Free, MemoryLevel::Allocated,
                      MemoryKind::Pool, DeviceIndex{0}, 0, StackId{0}, 0});
    in.memory.append({1005, 0x7100, 512, MemoryAction::Alloc, MemoryLevel::Reserved,
                      MemoryKind::Device, DeviceIndex{0}, 0, StackId{0}, 0});
    in.kernels.append({50, 80, DeviceIndex{0}, 0, 0, KernelCategory::Compute, -1, 0, 0});
    in.kernels.append({40, 45, DeviceIndex{0}, 0, 0, KernelCategory::Compute, -1, 0, 0});
    WriterOptions opt;
    opt.compress = false;
    opt.summaries = false;  // the event frames alone
    const auto chunks = rawChunks(writeTraceBytes(in, opt));
    ASSERT_EQ(chunks.size(), 2u);
    EXPECT_TRUE(chunks[0].has_header());
    const auto& m = chunks[1].memory();
    EXPECT_EQ(std::vector<int64_t>(m.timestamp_ns_delta().begin(), m.timestamp_ns_delta().end()),
              (std::vector<int64_t>{1000, 10, -5}));
    EXPECT_EQ(std::vector<int64_t>(m.address_delta().begin(), m.address_delta().end()),
              (std::vector<int64_t>{0x7000, -0x100, 0x200}));
    // action | level << 1 | kind << 2, MemoryKind::Pool == 3, Device == 1
    EXPECT_EQ(std::vector<uint32_t>(m.flags().begin(), m.flags().end()),
              (std::vector<uint32_t>{0 | 2 | 12, 1 | 2 | 12, 0 | 0 | 4}));
    const auto& k = chunks[1].kernels();
    EXPECT_EQ(std::vector<int64_t>(k.start_ns_delta().begin(), k.start_ns_delta().end()),
              (std::vector<int64_t>{50, -10}));
    EXPECT_EQ(std::vector<uint64_t>(k.duration_ns().begin(), k.duration_ns().end()),
              (std::vector<uint64_t>{30, 5}));
}

TEST(TraceFile, ColumnsWhereEveryRowHasTheDefaultAreLeftEmptyAndReadBackAsDefaults) {
    TraceData in;
    for (int i = 0; i < 10; ++i) {
        in.memory.append({i * 10, 0x1000u, 64, MemoryAction::Alloc, MemoryLevel::Reserved,
                          MemoryKind::Unknown, DeviceIndex{0}, 0, StackId{0}, 0});
        in.ranges.append({i, i + 5, 0, 0, 0, kHostDevice, RangeKind::Nvtx});
        in.collectives.append({i, i, DeviceIndex{0}, 0, 0, kUnknownRank, 0, 0, -1, 0, 0, 0, 0});
        in.kernels.append({i, i + 1, DeviceIndex{0}, 0, 0, KernelCategory::Compute, -1, 0, 0});
        in.counters.append({i, 0, kHostDevice, CounterKind::Generic, 0.0});
    }
    WriterOptions opt;
    opt.compress = false;
    opt.summaries = false;  // the event frames alone
    const std::string bytes = writeTraceBytes(in, opt);
    const auto chunks = rawChunks(bytes);
    ASSERT_EQ(chunks.size(), 2u);
    const auto& c = chunks[1];
    EXPECT_EQ(c.memory().timestamp_ns_delta_size(), 10);
    EXPECT_EQ(c.memory().flags_size(), 0);
    EXPECT_EQ(c.memory().device_size(), 0);
    EXPECT_EQ(c.memory().stream_size(), 0);
    EXPECT_EQ(c.memory().stack_size(), 0);
    EXPECT_EQ(c.memory().nvtx_range_size(), 0);
    EXPECT_EQ(c.ranges().device_size(), 0);
    EXPECT_EQ(c.ranges().kind_size(), 0);
    EXPECT_EQ(c.collectives().rank_size(), 0);
    EXPECT_EQ(c.collectives().seq_number_size(), 0);
    EXPECT_EQ(c.collectives().duration_ns_size(), 0);
    EXPECT_EQ(c.kernels().launch_lead_ns_size(), 0);
    EXPECT_EQ(c.kernels().launch_unknown_size(), 0);
    EXPECT_EQ(c.kernels().correlation_id_delta_size(), 0);
    EXPECT_EQ(c.counters().value_size(), 0);
    EXPECT_EQ(c.counters().device_size(), 0);
    expectSameTrace(in, readOk(bytes).data);
}

TEST(TraceFile, WritesAndReadsAFile) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("vscope_rt_" + std::to_string(::getpid()) + ".vscope");
    const TraceData in = makeFullTrace(20);
    ASSERT_TRUE(writeTraceFile(path.string(), in).ok());
    auto r = readTraceFile(path.string());
    ASSERT_TRUE(r.ok()) << r.error().describe();
    expectSameTrace(in, r->data);
    std::filesystem::remove(path);
}

TEST(TraceFile, WriteTraceFileNamesThePathWhenItCannotCreateIt) {
    const Status s = writeTraceFile("/nonexistent-dir-vscope/x.vscope", makeFullTrace(3));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().file, "/nonexistent-dir-vscope/x.vscope");
}

TEST(TraceFile, WriterRefusesEventsBeforeTheHeader) {
    std::string out;
    TraceWriter w(makeStringSink(out));
    EXPECT_TRUE(refused(w.writeEvents(makeFullTrace(3)), ErrorCode::Invalid,
                        {"writeHeader() must be called before writeEvents()"}));
}

TEST(TraceFile, WriterRefusesShrinkingTablesAndRaggedColumns) {
    std::string out;
    TraceWriter w(makeStringSink(out));
    ASSERT_TRUE(w.writeHeader({}).ok());
    TraceData d = makeFullTrace(3);
    ASSERT_TRUE(w.writeEvents(d).ok());
    TraceData smaller;
    EXPECT_TRUE(refused(w.writeEvents(smaller), ErrorCode::Invalid,
                        {"the string, frame or stack table shrank between writes"}));
    d.kernels.name.pop_back();
    EXPECT_TRUE(refused(w.writeEvents(d), ErrorCode::Invalid,
                        {"an event table has columns of different lengths"}));
}

TEST(TraceFile, ProgressReachesTheTotalAndCanCancel) {
    TraceData in;
    for (int i = 0; i < 1'000'000; ++i) {
        in.memory.append({i * 1000LL, 0x100000u * static_cast<uint64_t>(i), 1u + i,
                          MemoryAction::Alloc, MemoryLevel::Allocated, MemoryKind::Pool,
                          DeviceIndex{1}, 5, StackId{0}, 0});
    }
    WriterOptions opt;
    opt.compress = false;
    const std::string bytes = writeTraceBytes(in, opt);
    ASSERT_GT(bytes.size(), 8u << 20);  // at least two 4 MiB progress steps
    std::vector<std::pair<double, std::string>> calls;
    ReadOptions ro;
    ro.progress = [&](double done, std::string_view stage) {
        calls.emplace_back(done, std::string(stage));
        return true;
    };
    auto r = readTraceBytes(bytes, "big.vscope", ro);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->data.memory.size(), 1'000'000u);
    ASSERT_GE(calls.size(), 3u);
    for (size_t i = 1; i < calls.size(); ++i) {
        EXPECT_LE(calls[i - 1].first, calls[i].first);
    }
    EXPECT_GT(calls.front().first, 0.0);  // the first call comes after 4 MiB
    EXPECT_EQ(calls.back().first, 1.0);   // the whole input read
    EXPECT_EQ(calls.back().second, "Reading big.vscope");

    ro.progress = [](double, std::string_view) { return false; };
    auto cancelled = readTraceBytes(bytes, "big.vscope", ro);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
    EXPECT_EQ(cancelled.error().message, kCancelledMessage);
    EXPECT_EQ(cancelled.error().file, "big.vscope");
}

TEST(TraceFile, LooksLikeVscopeChecksTheMagic) {
    EXPECT_TRUE(looksLikeVscope(writeTraceBytes(TraceData{})));
    EXPECT_FALSE(looksLikeVscope("{\"traceEvents\": []}"));
    EXPECT_FALSE(looksLikeVscope(""));
}

namespace {

void putVarint(std::string& s, uint64_t v) {
    while (v >= 0x80) {
        s.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    s.push_back(static_cast<char>(v));
}

std::string lengthDelimited(int field, const std::string& body) {
    std::string s;
    putVarint(s, (static_cast<uint64_t>(field) << 3) | 2);
    putVarint(s, body.size());
    return s + body;
}

}  // namespace

// Protobuf parsers must accept repeated scalars both packed and unpacked, and a message field
// given twice is merged (its repeated fields concatenated); the encoding guide at
// protobuf.dev/programming-guides/encoding says so. Our writer only packs, but other writers may
// not.
TEST(TraceFile, ReadsUnpackedAndRepeatedColumnsLikePackedOnes) {
    std::string memory;
    for (uint64_t zigzagDelta : {2000u, 20u}) {  // deltas +1000 (first row absolute), +10
        putVarint(memory, (1 << 3) | 0);         // timestamp_ns_delta, unpacked
        putVarint(memory, zigzagDelta);
    }
    std::string sizes;
    putVarint(sizes, 64);
    putVarint(sizes, 128);
    memory += lengthDelimited(3, sizes);  // size_bytes, packed
    std::string kernelsA;
    std::string kernelsB;
    std::string start;
    putVarint(start, 200);  // zigzag(100)
    kernelsA = lengthDelimited(1, start);
    putVarint(start, 10);  // a second packed run of the same column: +5
    kernelsB = lengthDelimited(1, start.substr(2));
    const std::string chunk =
        lengthDelimited(5, memory) + lengthDelimited(6, kernelsA) + lengthDelimited(6, kernelsB);
    const std::string header = lengthDelimited(1, lengthDelimited(3, "hand-made"));
    auto r = readTraceBytes(preamble() + frame(header) + frame(chunk), "mixed.vscope");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_TRUE(r->report.problems.empty());
    EXPECT_EQ(r->data.header.producer, "hand-made");
    EXPECT_EQ(r->data.memory.timestampNs, (std::vector<TimestampNs>{1000, 1010}));
    EXPECT_EQ(r->data.memory.sizeBytes, (std::vector<uint64_t>{64, 128}));
    EXPECT_EQ(r->data.kernels.startNs, (std::vector<TimestampNs>{100, 105}));
    EXPECT_EQ(r->data.kernels.endNs, (std::vector<TimestampNs>{100, 105}));
}

TEST(TraceFile, TextThatIsNotUtf8RoundTrips) {
    TraceData in;
    in.header.host = std::string("h\xE9te", 4);  // Latin-1, as some hosts name themselves
    const StringId id = in.intern(std::string("/home/j\xFCrgen/model.py", 22));
    in.kernels.append({1, 2, DeviceIndex{0}, 0, id, KernelCategory::Compute, -1, 0, 0});
    const LoadedTrace out = readOk(writeTraceBytes(in));
    expectSameTrace(in, out.data);
    EXPECT_TRUE(out.report.problems.empty());
}

// Host-memory counters (kinds 3 and 4) through the writer and both decoders: the fast path reads
// the writer's packed columns, the generic path takes a chunk whose kind column is unpacked (a
// form the fast path hands over). A kind newer than this reader (7) reads as generic.
TEST(TraceFile, HostMemoryCounterKindsRoundTripThroughBothDecoders) {
    TraceData in;
    in.header.producer = "host test";
    const StringId resident = in.intern("host resident bytes");
    const StringId cpu = in.intern("CPU Total Allocated");
    in.counters.append({100, resident, kHostDevice, CounterKind::HostResidentBytes, 5.0e9});
    in.counters.append({200, cpu, kHostDevice, CounterKind::HostAllocatedBytes, 4096.0});
    in.counters.append({300, resident, kHostDevice, CounterKind::HostResidentBytes, 5.5e9});
    const LoadedTrace fast = readOk(writeTraceBytes(in, WriterOptions{}));
    expectSameTrace(in, fast.data);

    std::string counters;
    std::string times;
    for (uint64_t zigzagDelta : {200u, 200u, 200u}) {  // 100, 200, 300 ns
        putVarint(times, zigzagDelta);
    }
    counters += lengthDelimited(1, times);
    for (uint64_t kind : {3u, 4u, 7u}) {
        putVarint(counters, (4 << 3) | 0);  // kind, unpacked
        putVarint(counters, kind);
    }
    const std::string header = lengthDelimited(1, lengthDelimited(3, "hand-made"));
    auto r = readTraceBytes(preamble() + frame(header) + frame(lengthDelimited(9, counters)),
                            "host.vscope");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const CounterSamples& c = r->data.counters;
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(c.timestampNs, (std::vector<TimestampNs>{100, 200, 300}));
    EXPECT_EQ(c.kind,
              (std::vector<CounterKind>{CounterKind::HostResidentBytes,
                                        CounterKind::HostAllocatedBytes, CounterKind::Generic}));
    EXPECT_EQ(c.device, (std::vector<DeviceIndex>(3, kHostDevice)));
    EXPECT_FALSE(r->report.problems.empty()) << "the unknown kind 7 is reported";
}

// The driver's view of GPU memory (kinds 5 and 6, NVML samples of the capture agent) per device,
// through the writer and both decoders, with their values in bytes unchanged.
TEST(TraceFile, NvmlGpuMemoryCounterKindsRoundTripThroughBothDecoders) {
    TraceData in;
    in.header.producer = "nvml test";
    const StringId own = in.intern("process GPU memory");
    const StringId all = in.intern("device GPU memory");
    in.counters.append(
        {100, own, DeviceIndex{0}, CounterKind::ProcessGpuUsedBytes, 5.0 * (1 << 30)});
    in.counters.append(
        {100, all, DeviceIndex{0}, CounterKind::DeviceGpuUsedBytes, 7.0 * (1 << 30)});
    in.counters.append(
        {100, own, DeviceIndex{1}, CounterKind::ProcessGpuUsedBytes, 534.0 * (1 << 20)});
    const LoadedTrace fast = readOk(writeTraceBytes(in, WriterOptions{}));
    expectSameTrace(in, fast.data);
    EXPECT_TRUE(fast.report.problems.empty());

    std::string counters;
    std::string times;
    for (uint64_t zigzagDelta : {200u, 0u}) {  // 100, 100 ns
        putVarint(times, zigzagDelta);
    }
    counters += lengthDelimited(1, times);
    for (uint64_t kind : {5u, 6u}) {
        putVarint(counters, (4 << 3) | 0);  // kind, unpacked
        putVarint(counters, kind);
    }
    const std::string header = lengthDelimited(1, lengthDelimited(3, "hand-made"));
    auto r = readTraceBytes(preamble() + frame(header) + frame(lengthDelimited(9, counters)),
                            "nvml.vscope");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->data.counters.kind, (std::vector<CounterKind>{CounterKind::ProcessGpuUsedBytes,
                                                               CounterKind::DeviceGpuUsedBytes}));
    EXPECT_TRUE(r->report.problems.empty()) << "kinds 5 and 6 are known";
}

// The operand type of the operator that launched a kernel (KernelBatch field 11) through the
// writer and both decoders; a kernel batch without the field (files written before it) reads
// every row as 0 = unknown.
TEST(TraceFile, KernelOperandTypeRoundTripsAndOldFilesReadUnknown) {
    TraceData in;
    const StringId gemm = in.intern("nvjet_tst_128x64");
    const StringId bf16 = in.intern("c10::BFloat16");
    in.kernels.append({10, 20, DeviceIndex{0}, 7, gemm, KernelCategory::Compute, -1, 0, 0, bf16});
    in.kernels.append({30, 40, DeviceIndex{0}, 7, gemm, KernelCategory::Compute, -1, 0, 0, 0});
    const LoadedTrace fast = readOk(writeTraceBytes(in, WriterOptions{}));
    expectSameTrace(in, fast.data);
    EXPECT_EQ(fast.data.kernels.operandType, (std::vector<StringId>{bf16, 0}));

    // Hand-made chunks: strings 1 = "k", 2 = "float"; two kernels at 100 and 300 ns.
    const std::string strings = lengthDelimited(
        2, std::string("\x08\x01") + lengthDelimited(2, "k") + lengthDelimited(2, "float"));
    std::string starts;
    for (uint64_t zigzagDelta : {200u, 400u}) {  // 100, 300 ns
        putVarint(starts, zigzagDelta);
    }
    const std::string header = lengthDelimited(1, lengthDelimited(3, "hand-made"));
    const std::string oldKernels = lengthDelimited(1, starts) + lengthDelimited(5, "\x01\x01");
    std::string newKernels = oldKernels;
    for (uint64_t type : {2u, 0u}) {
        putVarint(newKernels, (11 << 3) | 0);  // operand_type, unpacked: the generic decoder
        putVarint(newKernels, type);
    }
    auto old = readTraceBytes(preamble() + frame(header + strings + lengthDelimited(6, oldKernels)),
                              "old.vscope");
    ASSERT_TRUE(old.ok()) << old.error().describe();
    EXPECT_EQ(old->data.kernels.operandType, (std::vector<StringId>{0, 0}));
    auto now = readTraceBytes(preamble() + frame(header + strings + lengthDelimited(6, newKernels)),
                              "new.vscope");
    ASSERT_TRUE(now.ok()) << now.error().describe();
    ASSERT_EQ(now->data.kernels.size(), 2u);
    EXPECT_EQ(now->data.string(now->data.kernels.operandType[0]), "float");
    EXPECT_EQ(now->data.kernels.operandType[1], StringId{0});
}
