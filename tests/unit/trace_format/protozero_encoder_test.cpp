// The protozero chunk encoder, which the capture agent writes with (no libprotobuf), against
// libprotobuf: every message it writes parses with the libprotobuf-generated parser and equals,
// byte for byte, what libprotobuf writes for the same input. The expected bytes come from
// libprotobuf: from generated classes this test fills by hand, and from TraceWriter's encoder
// (makeProtobufChunkEncoder, the generated classes filled by the tools' writer).

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "trace_file_test_support.h"
#include "vramscope/trace/chunk_encoder.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"

using namespace vramscope::trace;
using namespace vramscope::trace::testing;

namespace {

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();

std::string hex(std::string_view bytes) {
    std::string out;
    char b[4];
    for (unsigned char c : bytes) {
        std::snprintf(b, sizeof b, "%02x ", c);
        out += b;
    }
    return out;
}

/// Equal bytes, or where they first differ.
::testing::AssertionResult sameBytes(std::string_view expected, std::string_view actual) {
    if (expected == actual) {
        return ::testing::AssertionSuccess();
    }
    size_t i = 0;
    while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) {
        ++i;
    }
    return ::testing::AssertionFailure()
           << expected.size() << " bytes from libprotobuf, " << actual.size()
           << " from protozero; first difference at byte " << i << ":\n  libprotobuf "
           << hex(expected.substr(i, 24)) << "\n  protozero   " << hex(actual.substr(i, 24));
}

/// makeFullTrace plus rows and entries at the edges of every field's range: 0, the largest
/// uint64, the most negative ints, empty, long and non-ASCII text, text that is not UTF-8 in
/// bytes fields, messages whose every field holds the default. Ids stay inside their tables so
/// that the reader keeps them.
TraceData edgeTrace() {
    TraceData d = makeFullTrace(20);
    FileHeader& h = d.header;
    h.formatMajor = 1;
    h.formatMinor = 2;
    h.producer = "vramscope-capture 0.1.0 — Größe 日本語 🚀";
    h.pid = kI64Min;
    h.rank = RankId{kI32Min};
    h.localRank = RankId{-1};
    h.worldSize = kI32Max;
    h.wallClockAnchorNs = kI64Max;
    h.anchorTraceNs = kI64Min;
    h.jobId = std::string(70'000, 'j') + "é";
    h.devices.push_back({DeviceIndex{0}, "", "", 0});  // every field default: an empty message
    h.devices.push_back({kHostDevice, "GPU-\xff\xfe",
                         std::string("H\0"
                                     "200",
                                     4),
                         kU64Max});
    h.captureSettings.emplace_back("", "");
    h.captureSettings.emplace_back("cupti_library", std::string(5'000, '/') + "libcupti.so.13");

    const StringId empty = d.intern("");
    const StringId longName = d.intern(std::string(100'000, 'k') + "_kernel");
    const StringId unicode = d.intern("Größe — 日本語 — 🚀");
    const StringId notUtf8 = d.intern(std::string("\xff\xfe\x00z\xc3", 5));
    EXPECT_EQ(empty, 0u);
    const FrameId low = d.internFrame({unicode, notUtf8, kI32Min});
    const FrameId high = d.internFrame({longName, 0, kI32Max});
    std::vector<FrameId> deep;
    for (int i = 0; i < 1'000; ++i) {
        deep.push_back(i % 2 ? low : high);
    }
    const StackId deepStack = d.internStack(deep);

    d.memory.append({kI64Min, kU64Max, kU64Max, MemoryAction::Free, MemoryLevel::Allocated,
                     MemoryKind::PreExisting, DeviceIndex{kI32Min}, kU64Max, deepStack, 1});
    d.memory.append({kI64Max, 0, 0, MemoryAction::Alloc, MemoryLevel::Reserved, MemoryKind::Unknown,
                     DeviceIndex{kI32Max}, 0, StackId{0}, 0});
    d.memory.append({0, 1, 1, MemoryAction::Alloc, MemoryLevel::Reserved, MemoryKind::Device,
                     DeviceIndex{0}, 1, StackId{0}, static_cast<uint32_t>(d.ranges.size())});

    d.kernels.append({kI64Max, kI64Min, DeviceIndex{kI32Min}, kU64Max, longName,
                      KernelCategory::Memset, kI64Min, kU64Max, kU64Max, unicode});
    d.kernels.append({0, 0, DeviceIndex{0}, 0, 0, KernelCategory::Compute, -1, 0, 0, 0});
    d.kernels.append({-7, kI64Max, DeviceIndex{-1}, 1, notUtf8, KernelCategory::Communication,
                      kI64Max, 1, 1, notUtf8});

    CollectiveEvent c;
    c.startNs = kI64Min;
    c.endNs = kI64Max;
    c.device = DeviceIndex{kI32Min};
    c.stream = kU64Max;
    c.communicatorHash = kU64Max;
    c.rank = RankId{kI32Min};
    c.nranks = kI32Min;  // int32, not sint32: ten bytes on the wire
    c.function = unicode;
    c.seqNumber = kI64Min;
    c.bytes = kU64Max;
    c.datatype = longName;
    c.algorithm = notUtf8;
    c.protocol = unicode;
    c.channels = kU32Max;
    c.enqueueLeadNs = kI64Min;
    c.peer = kI32Max;
    c.timing = CollectiveTiming::Host;
    d.collectives.append(c);
    d.collectives.append(CollectiveEvent{});

    d.ranges.append(
        {kI64Min, kI64Max, unicode, kU32Max, kU64Max, DeviceIndex{kI32Min}, RangeKind::Iteration});
    d.ranges.append({0, 0, 0, 0, 0, kHostDevice, RangeKind::Nvtx});

    for (double v :
         {-0.0, std::numeric_limits<double>::quiet_NaN(),
          std::bit_cast<double>(0x7FF0'0000'0000'0ABCull),  // a NaN with a payload
          std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(), 0.0}) {
        d.counters.append(
            {kI64Max, longName, DeviceIndex{kI32Max}, CounterKind::HostAllocatedBytes, v});
    }

    d.ooms.push_back({0, DeviceIndex{0}, 0, 0, 0});  // every field default: an empty message
    d.ooms.push_back({kI64Min, DeviceIndex{kI32Min}, kU64Max, kU64Max, kU64Max});
    d.dataLoss.push_back({LossCounter::Other, kU64Max, "Größe 🚀 \xff", kI64Min, kI64Max});
    d.dataLoss.push_back({LossCounter::CuptiRecordsWithoutTime, 0, "", 0, 0});

    Annotation full;
    full.startNs = kI64Min;
    full.endNs = kI64Max;
    full.device = DeviceIndex{kI32Min};
    full.text = "leak — 日本語 \xff";
    full.author = std::string(3'000, 'a');
    full.title = "peak";
    full.color = "#ff00aa";
    full.createdUnixMs = kI64Min;
    full.allocationAddress = kU64Max;
    full.allocationTimeNs = kI64Max;
    full.flameFrame = "main;forward;Größe";
    full.generated = true;
    full.kind = "staircase";
    full.id = "n-🚀";
    full.allRanks = true;
    d.annotations.push_back(full);
    Annotation blank;
    blank.device = DeviceIndex{0};  // every field default: an empty message
    d.annotations.push_back(blank);

    d.communicators.push_back({0, RankId{0}, 0, 0, "", 0, DeviceIndex{0}});  // empty message
    d.communicators.push_back({kU64Max, RankId{kI32Min}, kI32Min, kI32Max, "dp — 日本語 🚀", kI64Min,
                               DeviceIndex{kI32Max}});
    return d;
}

/// Every row of every table of `d`; string and stack entries from id `firstEntry` (1 as the
/// writer sends them, 0 to include the implicit entry), frame entries from 1 - firstEntry (frame
/// ids start at 0), so that first_id is 0 (left out) for one table or another.
ChunkContents everything(const TraceData& d, size_t firstEntry = 1) {
    ChunkContents c;
    c.strings = {firstEntry, d.strings.size()};
    c.frames = {1 - firstEntry, d.frames.size()};
    c.stacks = {firstEntry, d.stacks.size()};
    c.memory = {0, d.memory.size()};
    c.kernels = {0, d.kernels.size()};
    c.collectives = {0, d.collectives.size()};
    c.ranges = {0, d.ranges.size()};
    c.counters = {0, d.counters.size()};
    c.ooms = {0, d.ooms.size()};
    c.dataLoss = {0, d.dataLoss.size()};
    c.annotations = {0, d.annotations.size()};
    c.communicators = {0, d.communicators.size()};
    return c;
}

std::string libprotobufEvents(const TraceData& d, const ChunkContents& c) {
    std::string out;
    const size_t size = makeProtobufChunkEncoder()->encodeEvents(d, c, out);
    EXPECT_EQ(size, out.size());
    return out;
}

std::string protozeroEvents(const TraceData& d, const ChunkContents& c) {
    std::string out;
    const size_t size = makeProtozeroChunkEncoder()->encodeEvents(d, c, out);
    EXPECT_EQ(size, out.size());
    return out;
}

/// Parses `bytes` with the generated parser; the parsed message serialises back to `bytes`.
v1::Chunk parseExactly(const std::string& bytes) {
    v1::Chunk chunk;
    EXPECT_TRUE(chunk.ParseFromString(bytes)) << "libprotobuf cannot parse the chunk";
    EXPECT_TRUE(sameBytes(chunk.SerializeAsString(), bytes));
    return chunk;
}

}  // namespace

TEST(ProtozeroEncoder, EventChunkWithEveryTableAndEdgeValuesEqualsLibprotobufByteForByte) {
    const TraceData d = edgeTrace();
    for (size_t firstEntry : {size_t{1}, size_t{0}}) {
        const ChunkContents c = everything(d, firstEntry);
        const std::string ours = protozeroEvents(d, c);
        EXPECT_TRUE(sameBytes(libprotobufEvents(d, c), ours)) << "entries from " << firstEntry;
        const v1::Chunk chunk = parseExactly(ours);

        // What the parser found is the input (expected values from the test's own data).
        ASSERT_EQ(chunk.strings().values_size(), static_cast<int>(d.strings.size() - firstEntry));
        EXPECT_EQ(chunk.strings().first_id(), firstEntry);
        for (int i = 0; i < chunk.strings().values_size(); ++i) {
            EXPECT_EQ(chunk.strings().values(i), d.strings[firstEntry + static_cast<size_t>(i)]);
        }
        EXPECT_EQ(chunk.stacks().frames_size(), 2 + 3 + 1'000);  // makeFullTrace's, then deep
        ASSERT_EQ(chunk.frames().line_size(), static_cast<int>(d.frames.size() + firstEntry - 1));
        EXPECT_EQ(chunk.frames().line(chunk.frames().line_size() - 2), kI32Min);
        ASSERT_EQ(chunk.memory().timestamp_ns_delta_size(), static_cast<int>(d.memory.size()));
        EXPECT_EQ(chunk.memory().timestamp_ns_delta(0), d.memory.timestampNs[0]);
        EXPECT_EQ(chunk.kernels().launch_unknown_size(), static_cast<int>(d.kernels.size()));
        ASSERT_EQ(chunk.collectives().nranks_size(), static_cast<int>(d.collectives.size()));
        EXPECT_EQ(chunk.collectives().nranks(static_cast<int>(d.collectives.size()) - 2), kI32Min);
        const int values = chunk.counters().value_size();
        ASSERT_EQ(values, static_cast<int>(d.counters.size()));
        EXPECT_EQ(std::bit_cast<uint64_t>(chunk.counters().value(values - 8)),
                  std::bit_cast<uint64_t>(-0.0));
        EXPECT_EQ(std::bit_cast<uint64_t>(chunk.counters().value(values - 6)),
                  0x7FF0'0000'0000'0ABCull);
        ASSERT_EQ(chunk.ooms_size(), 4);
        EXPECT_EQ(chunk.ooms(2).ByteSizeLong(), 0u);  // present though empty
        EXPECT_EQ(chunk.ooms(3).requested_bytes(), kU64Max);
        ASSERT_EQ(chunk.data_loss_size(), 4);
        EXPECT_EQ(chunk.data_loss(3).what(), "cupti_records_without_time");
        EXPECT_EQ(chunk.data_loss(2).count(), kU64Max);
        ASSERT_EQ(chunk.annotations_size(), 4);
        EXPECT_EQ(chunk.annotations(2).id(), "n-🚀");
        EXPECT_TRUE(chunk.annotations(2).all_ranks());
        EXPECT_EQ(chunk.annotations(3).ByteSizeLong(), 0u);
        ASSERT_EQ(chunk.communicators_size(), 4);
        EXPECT_EQ(chunk.communicators(2).ByteSizeLong(), 0u);
        EXPECT_EQ(chunk.communicators(3).name(), "dp — 日本語 🚀");
        EXPECT_EQ(chunk.communicators(3).nranks(), kI32Min);
    }
}

TEST(ProtozeroEncoder, EverySmallSliceOfEachTableEqualsLibprotobuf) {
    // Slices of 1-3 rows hit the column rules at their edges: a column whose few rows all hold
    // the default is left out, a single row of defaults, a lone unknown launch time.
    const TraceData d = edgeTrace();
    const ChunkContents all = everything(d);
    RowRange ChunkContents::*tables[] = {
        &ChunkContents::strings,  &ChunkContents::frames,      &ChunkContents::stacks,
        &ChunkContents::memory,   &ChunkContents::kernels,     &ChunkContents::collectives,
        &ChunkContents::ranges,   &ChunkContents::counters,    &ChunkContents::ooms,
        &ChunkContents::dataLoss, &ChunkContents::annotations, &ChunkContents::communicators};
    int compared = 0;
    for (auto table : tables) {
        const RowRange whole = all.*table;
        for (size_t width = 1; width <= 3; ++width) {
            for (size_t b = whole.begin; b + width <= whole.end; ++b) {
                ChunkContents c;  // this table's slice only
                c.*table = {b, b + width};
                const std::string ours = protozeroEvents(d, c);
                ASSERT_TRUE(sameBytes(libprotobufEvents(d, c), ours))
                    << "table " << compared << " rows [" << b << ", " << b + width << ")";
                parseExactly(ours);
                ++compared;
            }
        }
    }
    EXPECT_GT(compared, 400);
}

TEST(ProtozeroEncoder, ColumnsOfDefaultsAreLeftOutAsLibprotobufLeavesThem) {
    TraceData d;
    for (int i = 0; i < 3; ++i) {
        // Only the time: every other memory column and the flags are left out.
        d.memory.append({i * 10, 0, 0, MemoryAction::Alloc, MemoryLevel::Reserved,
                         MemoryKind::Unknown, DeviceIndex{0}, 0, StackId{0}, 0});
        // Launch times all known: launch_lead_ns written, launch_unknown left out.
        d.kernels.append(
            {i, i + 5, DeviceIndex{0}, 0, 0, KernelCategory::Compute, 100 + i, 0, 0, 0});
        d.ranges.append({i, i, 0, 0, 0, kHostDevice, RangeKind::Nvtx});
        d.counters.append({i, 0, kHostDevice, CounterKind::Generic, 0.0});
        d.collectives.append(CollectiveEvent{});
    }
    const ChunkContents c = everything(d);
    const std::string ours = protozeroEvents(d, c);
    EXPECT_TRUE(sameBytes(libprotobufEvents(d, c), ours));
    const v1::Chunk chunk = parseExactly(ours);
    EXPECT_EQ(chunk.memory().address_delta_size(), 0);
    EXPECT_EQ(chunk.memory().flags_size(), 0);
    EXPECT_EQ(chunk.memory().device_size(), 0);
    EXPECT_EQ(chunk.kernels().launch_lead_ns_size(), 3);
    EXPECT_EQ(chunk.kernels().launch_unknown_size(), 0);
    EXPECT_EQ(chunk.ranges().duration_ns_size(), 0);
    EXPECT_EQ(chunk.ranges().device_size(), 0);  // -1 is the range device's default
    EXPECT_EQ(chunk.counters().value_size(), 0);
    EXPECT_EQ(chunk.collectives().rank_size(), 0);  // -1 is the default rank
    EXPECT_EQ(chunk.collectives().start_ns_delta_size(), 3);

    // No launch time known: neither launch column.
    for (auto& t : d.kernels.launchNs) {
        t = -1;
    }
    const std::string none = protozeroEvents(d, c);
    EXPECT_TRUE(sameBytes(libprotobufEvents(d, c), none));
    EXPECT_EQ(parseExactly(none).kernels().launch_lead_ns_size(), 0);
}

TEST(ProtozeroEncoder, HeaderEqualsGeneratedClassesFilledByHand) {
    const FileHeader x = edgeTrace().header;
    v1::Chunk expected;
    v1::FileHeader* h = expected.mutable_header();
    h->set_format_major(x.formatMajor);
    h->set_format_minor(x.formatMinor);
    h->set_producer(x.producer);
    h->set_host(x.host);
    h->set_pid(x.pid);
    h->set_rank(toInt(x.rank));
    h->set_local_rank(toInt(x.localRank));
    h->set_world_size(x.worldSize);
    h->set_job_id(x.jobId);
    h->set_clock_domain(x.clockDomain);
    h->set_wall_clock_anchor_ns(x.wallClockAnchorNs);
    h->set_anchor_trace_ns(x.anchorTraceNs);
    for (const DeviceInfo& d : x.devices) {
        v1::DeviceInfo* p = h->add_devices();
        p->set_index(toInt(d.index));
        p->set_uuid(d.uuid);
        p->set_name(d.name);
        p->set_total_memory_bytes(d.totalMemoryBytes);
    }
    for (const auto& [key, value] : x.captureSettings) {
        v1::KeyValue* kv = h->add_capture_settings();
        kv->set_key(key);
        kv->set_value(value);
    }
    std::string ours;
    const size_t size = makeProtozeroChunkEncoder()->encodeHeader(x, ours);
    EXPECT_EQ(size, ours.size());
    EXPECT_TRUE(sameBytes(expected.SerializeAsString(), ours));
    std::string theirs;
    (void)makeProtobufChunkEncoder()->encodeHeader(x, theirs);
    EXPECT_TRUE(sameBytes(theirs, ours));
    EXPECT_EQ(parseExactly(ours).header().devices(2).ByteSizeLong(), 0u);

    // A header of defaults only is still a present (empty) field 1: tag 0x0a, length 0.
    FileHeader defaults;
    defaults.rank = RankId{0};  // FileHeader's own default is -1 (unknown), not proto3's 0
    defaults.localRank = RankId{0};
    std::string blank;
    (void)makeProtozeroChunkEncoder()->encodeHeader(defaults, blank);
    v1::Chunk empty;
    empty.mutable_header();
    EXPECT_TRUE(sameBytes(empty.SerializeAsString(), blank));
    EXPECT_EQ(blank, std::string("\x0a\x00", 2));
}

TEST(ProtozeroEncoder, ListMessagesEqualGeneratedClassesFilledByHand) {
    const TraceData d = edgeTrace();
    v1::Chunk expected;
    for (const OomEvent& o : d.ooms) {
        v1::OomEvent* p = expected.add_ooms();
        p->set_timestamp_ns(o.timestampNs);
        p->set_device(toInt(o.device));
        p->set_stream(o.stream);
        p->set_requested_bytes(o.requestedBytes);
        p->set_free_bytes(o.freeBytes);
    }
    for (const DataLoss& x : d.dataLoss) {
        v1::DataLoss* p = expected.add_data_loss();
        p->set_what(std::string(lossCounterInfo(x.counter).name));
        p->set_count(x.count);
        p->set_reason(x.reason);
        p->set_start_ns(x.startNs);
        p->set_end_ns(x.endNs);
    }
    for (const Annotation& a : d.annotations) {
        v1::Annotation* p = expected.add_annotations();
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
    for (const Communicator& m : d.communicators) {
        v1::Communicator* p = expected.add_communicators();
        p->set_hash(m.hash);
        p->set_rank(toInt(m.rank));
        p->set_nranks(m.nranks);
        p->set_nodes(m.nodes);
        p->set_name(m.name);
        p->set_init_ns(m.initNs);
        p->set_device(toInt(m.device));
    }
    ChunkContents c;
    c.ooms = {0, d.ooms.size()};
    c.dataLoss = {0, d.dataLoss.size()};
    c.annotations = {0, d.annotations.size()};
    c.communicators = {0, d.communicators.size()};
    EXPECT_TRUE(sameBytes(expected.SerializeAsString(), protozeroEvents(d, c)));
}

namespace {

/// A summary with every field set somewhere, edge values, and messages of defaults only.
TraceSummary edgeSummary() {
    TraceSummary s = summarizeTrace(makeFullTrace(40));
    s.final = true;
    s.firstNs = kI64Min;
    s.lastNs = kI64Max;
    s.tableRows = {0, kU64Max, 1, 2, 3};
    MemoryEnvelope edge;
    edge.device = DeviceIndex{kI32Min};
    edge.level = MemoryLevel::Reserved;
    edge.origin = SeriesOrigin::ProducerCounter;
    edge.blocks = {{kI64Max, kI64Min, kI64Min, kI64Max, 0, -1, kSummaryBlockSteps},
                   {kI64Min, kI64Max, 0, 0, kI64Max, kI64Min, 1},
                   {0, 0, 0, 0, 0, 0, 0}};
    edge.totalSteps = kU64Max;
    edge.events = kU64Max;
    edge.peakBytes = kI64Min;
    edge.peakTimeNs = kI64Min;
    edge.lowestBytes = kI64Min;
    edge.unmatchedFrees = kU64Max;
    edge.outOfOrder = 1;
    s.memory.push_back(edge);
    MemoryEnvelope blank;  // device 0, level 0, origin 0 (no such origin), no blocks: empty
    blank.level = MemoryLevel::Reserved;
    blank.origin = static_cast<SeriesOrigin>(0);
    s.memory.push_back(blank);
    KernelHistogram full;
    full.device = DeviceIndex{-1};
    full.category = KernelCategory::Memset;
    full.count = kU64Max;
    full.busyNs = kU64Max;
    for (size_t i = 0; i < kKernelHistogramBuckets; ++i) {
        full.log2Counts[i] = i % 2 ? kU64Max : i;  // bucket 63 not empty: all 64 written
    }
    full.firstStartNs = kI64Min;
    full.lastEndNs = kI64Max;
    s.kernels.push_back(full);
    KernelHistogram trailing;
    trailing.log2Counts[3] = 9;  // buckets 4-63 empty: left out
    s.kernels.push_back(trailing);
    s.kernels.push_back(KernelHistogram{});  // every field default: an empty message
    s.frames = {{0, 12, kU32Max, kI64Min, kI64Max, 127}, {kU64Max, kU64Max, 0, 0, 0, 0}};
    DeviceAnalysisSummary a;
    a.device = DeviceIndex{kI32Max};
    a.iterationSource = "nvtx ranges — 🚀";
    a.iterationReason = "";
    a.iterationStartNs = {kI64Min, 0, kI64Max};
    a.iterationEndNs = {-1, 1, kI64Max};
    a.baselineBytes = {kI64Min, kI64Max, 0};
    a.iterationPeakBytes = {-5, 5, 0};
    a.leakVerdict = "staircase";
    a.slopeBytesPerIteration = -0.0;
    a.growthBytes = kI64Min;
    a.leakReason = std::string(10'000, 'r');
    a.analysedBy = "vramscope-cli test";
    s.analysis.push_back(a);
    DeviceAnalysisSummary nan;
    nan.slopeBytesPerIteration = std::numeric_limits<double>::quiet_NaN();
    s.analysis.push_back(nan);
    s.analysis.push_back(DeviceAnalysisSummary{});  // an empty message
    return s;
}

}  // namespace

TEST(ProtozeroEncoder, SummaryEqualsLibprotobufByteForByte) {
    const TraceSummary s = edgeSummary();
    for (uint32_t sequence : {0u, 1u, kU32Max}) {
        std::string ours;
        std::string theirs;
        const size_t size = makeProtozeroChunkEncoder()->encodeSummary(s, sequence, ours);
        EXPECT_EQ(size, ours.size());
        (void)makeProtobufChunkEncoder()->encodeSummary(s, sequence, theirs);
        EXPECT_TRUE(sameBytes(theirs, ours)) << "sequence " << sequence;
        const v1::Chunk chunk = parseExactly(ours);
        // A summary frame opens with Chunk field 13 (0x6A): how readers find summary frames.
        ASSERT_FALSE(ours.empty());
        EXPECT_EQ(static_cast<uint8_t>(ours[0]), 0x6A);
        EXPECT_EQ(chunk.summary().sequence(), sequence);
        EXPECT_TRUE(chunk.summary().final());
        const int n = chunk.summary().memory_size();
        ASSERT_EQ(n, static_cast<int>(s.memory.size()));
        EXPECT_EQ(chunk.summary().memory(n - 1).ByteSizeLong(), 0u);
        EXPECT_EQ(chunk.summary().memory(n - 2).lowest_bytes(), kI64Min);
        const int k = chunk.summary().kernels_size();
        EXPECT_EQ(chunk.summary().kernels(k - 3).log2_counts_size(), 64);
        EXPECT_EQ(chunk.summary().kernels(k - 2).log2_counts_size(), 4);
        EXPECT_EQ(chunk.summary().kernels(k - 1).ByteSizeLong(), 0u);
        ASSERT_EQ(chunk.summary().analysis_size(), 3);
        EXPECT_EQ(std::bit_cast<uint64_t>(chunk.summary().analysis(0).slope_bytes_per_iteration()),
                  std::bit_cast<uint64_t>(-0.0));
        EXPECT_EQ(chunk.summary().analysis(2).ByteSizeLong(), 0u);
    }
    // An empty summary is still a present field 13.
    std::string blank;
    (void)makeProtozeroChunkEncoder()->encodeSummary(TraceSummary{}, 0, blank);
    std::string theirs;
    (void)makeProtobufChunkEncoder()->encodeSummary(TraceSummary{}, 0, theirs);
    EXPECT_TRUE(sameBytes(theirs, blank));
}

namespace {

/// Two rounds of writeEvents (the second adds strings, frames, stacks and events), then finish
/// with an analysis: what the agent does, plus what the tools add.
template <class MakeWriter>
std::string writeInRounds(const WriterOptions& options, MakeWriter&& make) {
    std::string bytes;
    auto writer = make(makeStringSink(bytes), options);
    TraceData d = edgeTrace();
    EXPECT_TRUE(writer->writeHeader(d.header).ok());
    EXPECT_TRUE(writer->writeEvents(d).ok());
    clearEventTables(d);
    const StringId later = d.intern("a string of the second round");
    const FrameId f = d.internFrame({later, later, 3});
    const StackId s = d.internStack({f, FrameId{0}});
    d.memory.append({5, 0x1000, 64, MemoryAction::Alloc, MemoryLevel::Allocated, MemoryKind::Pool,
                     DeviceIndex{1}, 3, s, 0});
    d.kernels.append({9, 12, DeviceIndex{1}, 3, later, KernelCategory::Compute, -1, 0, 77, 0});
    d.dataLoss.push_back({LossCounter::WriterQueueOverflow, 12, "memory", 0, 0});
    EXPECT_TRUE(writer->writeEvents(d).ok());
    EXPECT_TRUE(writer->finish(edgeSummary().analysis).ok());
    return bytes;
}

std::string writeWithProtozero(const WriterOptions& options) {
    return writeInRounds(options, [](std::unique_ptr<ByteSink> sink, const WriterOptions& o) {
        return std::make_unique<TraceStreamWriter>(std::move(sink), o, makeProtozeroChunkEncoder());
    });
}

std::string writeWithLibprotobuf(const WriterOptions& options) {
    return writeInRounds(options, [](std::unique_ptr<ByteSink> sink, const WriterOptions& o) {
        return std::make_unique<TraceWriter>(std::move(sink), o);
    });
}

}  // namespace

TEST(ProtozeroEncoder, WholeFileEqualsTraceWriterCompressedOrRawInSmallOrLargeChunks) {
    for (bool compress : {false, true}) {
        for (size_t perChunk : {size_t{1}, size_t{7}, size_t{65536}}) {
            WriterOptions o;
            o.compress = compress;
            o.eventsPerChunk = perChunk;
            const std::string ours = writeWithProtozero(o);
            EXPECT_GT(ours.size(), compress ? 10'000u : 170'000u);  // the long texts
            EXPECT_TRUE(sameBytes(writeWithLibprotobuf(o), ours))
                << (compress ? "zstd" : "raw") << ", " << perChunk << " rows per chunk";
        }
    }
}

TEST(ProtozeroEncoder, EveryFrameOfAFileParsesWithTheGeneratedParser) {
    WriterOptions o;
    o.compress = false;
    o.eventsPerChunk = 2;
    const std::string bytes = writeWithProtozero(o);
    size_t at = kPreambleBytes;
    int frames = 0;
    int summaries = 0;
    while (at + kFrameHeadBytes <= bytes.size()) {
        uint32_t length = 0;
        for (int i = 0; i < 4; ++i) {
            length |= uint32_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
        }
        ASSERT_EQ(bytes[at + 4], 0) << "frame " << frames << " is not raw";
        ASSERT_LE(at + kFrameHeadBytes + length + kFrameTailBytes, bytes.size());
        const v1::Chunk chunk = parseExactly(bytes.substr(at + kFrameHeadBytes, length));
        summaries += chunk.has_summary() ? 1 : 0;
        at += kFrameHeadBytes + length + kFrameTailBytes;
        ++frames;
    }
    EXPECT_EQ(at, bytes.size());
    EXPECT_GT(frames, 20);
    EXPECT_EQ(summaries, 3);  // one per round, one at finish
}

TEST(ProtozeroEncoder, FileWrittenThroughProtozeroReadsBackWithTheSameEvents) {
    const TraceData in = edgeTrace();
    WriterOptions o;
    o.eventsPerChunk = 6;
    std::string bytes;
    {
        TraceStreamWriter writer(makeStringSink(bytes), o, makeProtozeroChunkEncoder());
        ASSERT_TRUE(writer.writeHeader(in.header).ok());
        ASSERT_TRUE(writer.writeEvents(in).ok());
        ASSERT_TRUE(writer.finish().ok());
    }
    auto read = readTraceBytes(bytes, "protozero.vscope");
    ASSERT_TRUE(read.ok()) << read.error().describe();
    const LoadedTrace& out = read.value();
    EXPECT_TRUE(out.report.complete) << out.report.summary();
    EXPECT_TRUE(out.report.problems.empty()) << out.report.summary();
    EXPECT_EQ(out.report.idsReset, 0u);
    expectSameTrace(in, out.data);
    ASSERT_EQ(out.data.annotations.size(), in.annotations.size());
    for (size_t i = 0; i < in.annotations.size(); ++i) {
        const Annotation& a = in.annotations[i];
        const Annotation& b = out.data.annotations[i];
        EXPECT_EQ(a.title, b.title);
        EXPECT_EQ(a.color, b.color);
        EXPECT_EQ(a.createdUnixMs, b.createdUnixMs);
        EXPECT_EQ(a.allocationAddress, b.allocationAddress);
        EXPECT_EQ(a.allocationTimeNs, b.allocationTimeNs);
        EXPECT_EQ(a.flameFrame, b.flameFrame);
        EXPECT_EQ(a.generated, b.generated);
        EXPECT_EQ(a.kind, b.kind);
        EXPECT_EQ(a.id, b.id);
        EXPECT_EQ(a.allRanks, b.allRanks);
    }

    // The summary frames read back as the summary of the events.
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("protozero-" + std::to_string(::getpid()) + ".vscope"))
                                 .string();
    {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
        std::fclose(f);
    }
    auto summary = readTraceSummary(path);
    std::filesystem::remove(path);
    ASSERT_TRUE(summary.ok()) << summary.error().describe();
    ASSERT_TRUE(summary.value().found);
    const TraceSummary& stored = summary.value().summary;
    const TraceSummary computed = summarizeTrace(in);
    EXPECT_TRUE(stored.final);
    EXPECT_EQ(stored.tableRows, computed.tableRows);
    EXPECT_EQ(stored.firstNs, computed.firstNs);
    EXPECT_EQ(stored.lastNs, computed.lastNs);
    EXPECT_EQ(stored.memory.size(), computed.memory.size());
    EXPECT_EQ(stored.kernels.size(), computed.kernels.size());
}
