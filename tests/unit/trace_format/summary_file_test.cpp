// Summary frames in .vscope files: what the writer stores equals summarizeTrace of the same
// events, a cut file keeps the summaries before the cut, a damaged summary frame is skipped, a
// format 1.0 file has none, and the frame index points at the frames that hold the events.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "trace_file_test_support.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::trace {
namespace {

using testing::makeFullTrace;
using testing::RecordingSink;
namespace fs = std::filesystem;

std::string perTestPath(const std::string& name) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return (fs::temp_directory_path() /
            ("vramscope_summary_" + std::string(info->name()) + "_" + name))
        .string();
}

void writeBytes(const std::string& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A trace of memory events on two devices and both levels, with counters and kernels, sorted
/// by time, with more steps per series than one block holds.
TraceData memoryTrace(size_t rows) {
    TraceData d;
    d.header.producer = "summary-test";
    d.header.devices = {{DeviceIndex{0}, "u0", "GPU", 1000}, {DeviceIndex{1}, "u1", "GPU", 0}};
    const StringId k = d.intern("k");
    for (size_t i = 0; i < rows; ++i) {
        const auto t = static_cast<TimestampNs>(1000 + 10 * (i / 2));  // pairs share a time
        const bool alloc = (i / 4) % 3 != 2;
        d.memory.append({t, 0x1000 + 64 * (i % 37), 100 + i,
                         alloc ? MemoryAction::Alloc : MemoryAction::Free,
                         i % 3 ? MemoryLevel::Allocated : MemoryLevel::Reserved,
                         i % 11 == 0 ? MemoryKind::DeviceStatic : MemoryKind::Device,
                         DeviceIndex{static_cast<int32_t>(i % 2)}, 0, StackId{0}, 0});
        d.kernels.append({t, t + static_cast<TimestampNs>(i % 9), DeviceIndex{0}, 0, k,
                          static_cast<KernelCategory>(i % 4), -1, 0, 0});
        if (i % 5 == 0) {
            d.counters.append(
                {t, 0, DeviceIndex{1}, CounterKind::ReservedBytes, static_cast<double>(i * 1000)});
        }
    }
    return d;
}

void expectSameEnvelopes(const TraceSummary& a, const TraceSummary& b) {
    ASSERT_EQ(a.memory.size(), b.memory.size());
    for (size_t i = 0; i < a.memory.size(); ++i) {
        const MemoryEnvelope& x = a.memory[i];
        const MemoryEnvelope& y = b.memory[i];
        SCOPED_TRACE("envelope " + std::to_string(i));
        EXPECT_EQ(x.device, y.device);
        EXPECT_EQ(x.level, y.level);
        EXPECT_EQ(x.origin, y.origin);
        ASSERT_EQ(x.blocks.size(), y.blocks.size());
        for (size_t j = 0; j < x.blocks.size(); ++j) {
            EXPECT_EQ(x.blocks[j].startNs, y.blocks[j].startNs);
            EXPECT_EQ(x.blocks[j].endNs, y.blocks[j].endNs);
            EXPECT_EQ(x.blocks[j].minBytes, y.blocks[j].minBytes);
            EXPECT_EQ(x.blocks[j].maxBytes, y.blocks[j].maxBytes);
            EXPECT_EQ(x.blocks[j].firstBytes, y.blocks[j].firstBytes);
            EXPECT_EQ(x.blocks[j].lastBytes, y.blocks[j].lastBytes);
            EXPECT_EQ(x.blocks[j].steps, y.blocks[j].steps);
        }
        EXPECT_EQ(x.totalSteps, y.totalSteps);
        EXPECT_EQ(x.events, y.events);
        EXPECT_EQ(x.peakBytes, y.peakBytes);
        EXPECT_EQ(x.peakTimeNs, y.peakTimeNs);
        EXPECT_EQ(x.lowestBytes, y.lowestBytes);
        EXPECT_EQ(x.unmatchedFrees, y.unmatchedFrees);
        EXPECT_EQ(x.outOfOrder, y.outOfOrder);
    }
}

void expectSameKernels(const TraceSummary& a, const TraceSummary& b) {
    ASSERT_EQ(a.kernels.size(), b.kernels.size());
    for (size_t i = 0; i < a.kernels.size(); ++i) {
        EXPECT_EQ(a.kernels[i].device, b.kernels[i].device);
        EXPECT_EQ(a.kernels[i].category, b.kernels[i].category);
        EXPECT_EQ(a.kernels[i].count, b.kernels[i].count);
        EXPECT_EQ(a.kernels[i].busyNs, b.kernels[i].busyNs);
        EXPECT_EQ(a.kernels[i].log2Counts, b.kernels[i].log2Counts);
        EXPECT_EQ(a.kernels[i].firstStartNs, b.kernels[i].firstStartNs);
        EXPECT_EQ(a.kernels[i].lastEndNs, b.kernels[i].lastEndNs);
    }
}

TEST(SummaryFile, StoredSummaryEqualsSummarizeTraceOfTheSameEvents) {
    for (const TraceData& in : {memoryTrace(3000), makeFullTrace(200)}) {
        const std::string path = perTestPath("whole.vscope");
        WriterOptions opt;
        opt.eventsPerChunk = 500;
        std::vector<DeviceAnalysisSummary> analysis(1);
        analysis[0].device = DeviceIndex{1};
        analysis[0].leakVerdict = "staircase";
        analysis[0].iterationStartNs = {1, 5};
        analysis[0].iterationEndNs = {4, 9};
        ASSERT_TRUE(writeTraceFile(path, in, opt, analysis).ok());
        auto read = readTraceSummary(path);
        ASSERT_TRUE(read.ok()) << read.error().describe();
        ASSERT_TRUE(read->found);
        const TraceSummary& stored = read->summary;
        const TraceSummary expected = summarizeTrace(in);
        expectSameEnvelopes(stored, expected);
        expectSameKernels(stored, expected);
        EXPECT_EQ(stored.tableRows, expected.tableRows);
        EXPECT_EQ(stored.firstNs, expected.firstNs);
        EXPECT_EQ(stored.lastNs, expected.lastNs);
        EXPECT_EQ(stored.header.producer, in.header.producer);
        EXPECT_EQ(stored.summaryFrames, 2u);  // after the one batch, and at close
        EXPECT_TRUE(stored.final);
        ASSERT_EQ(stored.analysis.size(), 1u);
        EXPECT_EQ(stored.analysis[0].leakVerdict, "staircase");
        EXPECT_EQ(stored.analysis[0].iterationEndNs, (std::vector<TimestampNs>{4, 9}));
        EXPECT_TRUE(read->report.complete) << read->report.summary();
        // The full read agrees on frames and skips the summary frames without decoding them.
        auto full = readTraceFile(path);
        ASSERT_TRUE(full.ok());
        EXPECT_EQ(full->report.framesLoaded, read->report.framesLoaded);
        EXPECT_TRUE(full->report.complete);
        testing::expectSameTrace(in, full->data);
        fs::remove(path);
    }
}

TEST(SummaryFile, FormatOneZeroFileHasNoSummary) {
    const TraceData in = memoryTrace(100);
    const std::string path = perTestPath("old.vscope");
    WriterOptions opt;
    opt.summaries = false;
    ASSERT_TRUE(writeTraceFile(path, in, opt).ok());
    auto read = readTraceSummary(path);
    ASSERT_TRUE(read.ok()) << read.error().describe();
    EXPECT_FALSE(read->found);
    EXPECT_EQ(read->summary.header.producer, "summary-test");
    EXPECT_TRUE(read->summary.memory.empty());
    EXPECT_TRUE(read->report.complete);
    fs::remove(path);
}

/// The agent's way of writing: one header, then batches whose event tables are cleared after
/// each writeEvents(). Returns the bytes, the end of every write, and the frame count after
/// each batch (its summary frame is the last of them).
struct Batched {
    std::string bytes;
    std::vector<size_t> ends;
    std::vector<size_t> writesAfterBatch;  // ends.size() after each batch
};

Batched writeInBatches(const TraceData& whole, size_t batches, size_t eventsPerChunk) {
    Batched out;
    WriterOptions opt;
    opt.compress = false;
    opt.eventsPerChunk = eventsPerChunk;
    TraceWriter w(std::make_unique<RecordingSink>(out.bytes, out.ends), opt);
    EXPECT_TRUE(w.writeHeader(whole.header).ok());
    const size_t n = whole.memory.size();
    TraceData live;
    live.header = whole.header;
    live.strings = whole.strings;
    for (size_t b = 0; b < batches; ++b) {
        live.memory = {};
        live.kernels = {};
        live.counters = {};
        for (size_t i = b * n / batches; i < (b + 1) * n / batches; ++i) {
            live.memory.append(whole.memory.at(i));
            live.kernels.append(whole.kernels.at(i));
        }
        EXPECT_TRUE(w.writeEvents(live).ok());
        out.writesAfterBatch.push_back(out.ends.size());
    }
    EXPECT_TRUE(w.finish().ok());
    return out;
}

/// The rows [0, end) of the memory and kernel tables of `whole`, as one trace.
TraceData firstRows(const TraceData& whole, size_t end) {
    TraceData d;
    d.header = whole.header;
    d.strings = whole.strings;
    for (size_t i = 0; i < end; ++i) {
        d.memory.append(whole.memory.at(i));
        d.kernels.append(whole.kernels.at(i));
    }
    return d;
}

TEST(SummaryFile, CutFileKeepsTheSummariesBeforeTheCut) {
    TraceData whole = memoryTrace(4000);
    whole.counters = {};
    const Batched w = writeInBatches(whole, 4, 300);
    // Cut in the middle of the third batch's event frames.
    const size_t before = w.writesAfterBatch[1];  // writes up to the second summary frame
    const size_t cutFrameStart = w.ends[before];  // end of the first frame of batch 3
    const size_t cut = cutFrameStart + 7;
    ASSERT_LT(cut, w.ends[before + 1]);
    const std::string path = perTestPath("cut.vscope");
    writeBytes(path, std::string_view(w.bytes).substr(0, cut));
    auto read = readTraceSummary(path);
    ASSERT_TRUE(read.ok()) << read.error().describe();
    ASSERT_TRUE(read->found);
    const TraceSummary& s = read->summary;
    EXPECT_EQ(s.summaryFrames, 2u);
    EXPECT_FALSE(s.final);
    // Cumulative figures: those of the first two batches' events (2000 rows).
    const TraceSummary expected = summarizeTrace(firstRows(whole, 2000));
    EXPECT_EQ(s.tableRows, expected.tableRows);
    ASSERT_EQ(s.memory.size(), expected.memory.size());
    for (size_t i = 0; i < s.memory.size(); ++i) {
        EXPECT_EQ(s.memory[i].peakBytes, expected.memory[i].peakBytes);
        EXPECT_EQ(s.memory[i].peakTimeNs, expected.memory[i].peakTimeNs);
        EXPECT_EQ(s.memory[i].lowestBytes, expected.memory[i].lowestBytes);
        EXPECT_EQ(s.memory[i].totalSteps, expected.memory[i].totalSteps);
        uint64_t steps = 0;
        for (const SummaryBlock& b : s.memory[i].blocks) {
            steps += b.steps;
        }
        EXPECT_EQ(steps, s.memory[i].totalSteps);  // the blocks of both deltas were kept
    }
    expectSameKernels(s, expected);
    // The cut is reported as readTraceFile reports it: same frame, byte and sentence.
    const ReadReport& r = read->report;
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.truncatedAtByte, static_cast<int64_t>(cutFrameStart));
    auto full = readTraceFile(path);
    ASSERT_TRUE(full.ok());
    EXPECT_EQ(r.truncatedFrame, full->report.truncatedFrame);
    EXPECT_EQ(r.framesLoaded, full->report.framesLoaded);
    EXPECT_EQ(r.summary(), full->report.summary());
    EXPECT_NE(r.summary().find("byte " + std::to_string(cutFrameStart)), std::string::npos);
    fs::remove(path);
}

TEST(SummaryFile, DamagedSummaryFrameIsSkippedAndReported) {
    TraceData whole = memoryTrace(1200);
    whole.counters = {};  // writeInBatches writes memory and kernels
    const Batched w = writeInBatches(whole, 3, 400);
    // The first batch's summary frame is the last write of that batch.
    const size_t start = w.ends[w.writesAfterBatch[0] - 2];
    std::string bytes = w.bytes;
    ASSERT_EQ(static_cast<uint8_t>(bytes[start + kFrameHeadBytes]), 0x6A);
    bytes[start + kFrameHeadBytes + 3] ^= 0x40;  // inside the payload: the CRC no longer matches
    const std::string path = perTestPath("damaged.vscope");
    writeBytes(path, bytes);
    auto read = readTraceSummary(path);
    ASSERT_TRUE(read.ok()) << read.error().describe();
    EXPECT_TRUE(read->found);
    EXPECT_EQ(read->summary.summaryFrames, 3u);  // batches 2, 3 and the closing one
    EXPECT_TRUE(read->summary.final);
    EXPECT_EQ(read->report.framesSkipped, 1u);
    EXPECT_FALSE(read->report.complete);
    ASSERT_FALSE(read->report.problems.empty());
    EXPECT_EQ(read->report.problems[0].byteOffset, static_cast<int64_t>(start));
    EXPECT_NE(read->report.problems[0].message.find("summary frame"), std::string::npos);
    // Cumulative figures come from the later frames, so they still cover every event.
    EXPECT_EQ(read->summary.tableRows, summarizeTrace(whole).tableRows);
    fs::remove(path);
}

TEST(SummaryFile, FrameIndexPointsAtTheFramesAndTheirTimes) {
    const TraceData in = makeFullTrace(120);
    WriterOptions opt;
    opt.compress = false;
    opt.eventsPerChunk = 16;
    const std::string bytes = writeTraceBytes(in, opt);
    const std::string path = perTestPath("index.vscope");
    writeBytes(path, bytes);
    auto read = readTraceSummary(path);
    ASSERT_TRUE(read.ok());
    const auto& frames = read->summary.frames;
    ASSERT_GT(frames.size(), 5u);
    // Header frame bytes: the preamble plus frame 0, which the first indexed frame follows.
    const std::string head = bytes.substr(0, frames[0].offset);
    for (const FrameIndexEntry& f : frames) {
        SCOPED_TRACE("frame " + std::to_string(f.frameNumber));
        // Each frame read on its own (after the header) gives events whose times the index
        // states; recomputed here from what the reader decodes.
        auto one = readTraceBytes(head + bytes.substr(f.offset, f.frameBytes), "one");
        ASSERT_TRUE(one.ok());
        EXPECT_EQ(one->report.framesLoaded, 2u);
        const TraceData& d = one->data;
        TimestampNs lo = INT64_MAX;
        TimestampNs hi = INT64_MIN;
        auto span = [&](TimestampNs a, TimestampNs b) {
            lo = std::min(lo, a);
            hi = std::max({hi, a, b});
        };
        for (size_t i = 0; i < d.memory.size(); ++i)
            span(d.memory.timestampNs[i], d.memory.timestampNs[i]);
        for (size_t i = 0; i < d.kernels.size(); ++i)
            span(d.kernels.startNs[i], d.kernels.endNs[i]);
        for (size_t i = 0; i < d.collectives.size(); ++i)
            span(d.collectives.startNs[i], d.collectives.endNs[i]);
        for (size_t i = 0; i < d.ranges.size(); ++i)
            span(d.ranges.startNs[i], d.ranges.endNs[i]);
        for (size_t i = 0; i < d.counters.size(); ++i)
            span(d.counters.timestampNs[i], d.counters.timestampNs[i]);
        for (const auto& o : d.ooms)
            span(o.timestampNs, o.timestampNs);
        if (lo <= hi) {
            EXPECT_EQ(f.minNs, lo);
            EXPECT_EQ(f.maxNs, hi);
        }
        EXPECT_EQ((f.contents & kFrameMemory) != 0, d.memory.size() > 0);
        EXPECT_EQ((f.contents & kFrameKernels) != 0, d.kernels.size() > 0);
        EXPECT_EQ((f.contents & kFrameTables) != 0,
                  d.strings.size() > 1 || !d.frames.empty() || d.stacks.size() > 1);
    }
    fs::remove(path);
}

TEST(SummaryFile, FramesOverlappingReturnsOnlyFramesThatOverlap) {
    auto entry = [](TimestampNs lo, TimestampNs hi, uint32_t contents) {
        FrameIndexEntry f;
        f.minNs = lo;
        f.maxNs = hi;
        f.contents = contents;
        return f;
    };
    const FrameFilter in = framesOverlapping(100, 200);
    EXPECT_TRUE(in(entry(150, 160, kFrameKernels)));   // inside
    EXPECT_TRUE(in(entry(50, 100, kFrameMemory)));     // touches the start
    EXPECT_TRUE(in(entry(200, 300, kFrameRanges)));    // touches the end
    EXPECT_TRUE(in(entry(0, 1000, kFrameKernels)));    // spans the window
    EXPECT_FALSE(in(entry(0, 99, kFrameKernels)));     // before
    EXPECT_FALSE(in(entry(201, 300, kFrameKernels)));  // after
    EXPECT_FALSE(in(entry(150, 150, kFrameTables)));   // table entries only: no events
    const FrameFilter upTo = memoryFramesUpTo(100);
    EXPECT_TRUE(upTo(entry(100, 500, kFrameMemory)));
    EXPECT_FALSE(upTo(entry(101, 500, kFrameMemory)));
    EXPECT_FALSE(upTo(entry(0, 50, kFrameKernels)));  // no memory events

    // On a file: the kernels of the frames read are every kernel that overlaps the window, and
    // fewer frames than the file holds are read.
    const TraceData full = memoryTrace(2000);
    const std::string path = perTestPath("window.vscope");
    WriterOptions opt;
    opt.eventsPerChunk = 100;
    ASSERT_TRUE(writeTraceFile(path, full, opt).ok());
    auto sum = readTraceSummary(path);
    ASSERT_TRUE(sum.ok());
    const TimestampNs t0 = 3000;
    const TimestampNs t1 = 4000;
    auto part = readTraceFrames(path, sum->summary, framesOverlapping(t0, t1));
    ASSERT_TRUE(part.ok()) << part.error().describe();
    EXPECT_TRUE(part->report.complete) << part->report.summary();
    size_t overlapping = 0;
    for (size_t i = 0; i < full.kernels.size(); ++i) {
        overlapping += full.kernels.startNs[i] <= t1 && full.kernels.endNs[i] >= t0 ? 1 : 0;
    }
    size_t got = 0;
    for (size_t i = 0; i < part->data.kernels.size(); ++i) {
        got += part->data.kernels.startNs[i] <= t1 && part->data.kernels.endNs[i] >= t0 ? 1 : 0;
    }
    EXPECT_GT(overlapping, 0u);
    EXPECT_EQ(got, overlapping);
    EXPECT_LT(part->data.kernels.size(), full.kernels.size() / 2);
    fs::remove(path);
}

}  // namespace
}  // namespace vramscope::trace
