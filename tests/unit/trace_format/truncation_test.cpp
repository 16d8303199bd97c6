// A .vscope file cut at any byte loads every whole frame and reports where it stopped.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "trace_file_test_support.h"
#include "vramscope/trace/trace_file.h"

using namespace vramscope::trace;
using namespace vramscope::trace::testing;

namespace {

struct Written {
    std::string bytes;
    std::vector<size_t> ends;  // end of the preamble, then the end of every frame
};

Written writeSmall(bool compress) {
    Written w;
    const TraceData d = makeFullTrace(9);
    TraceWriter writer(std::make_unique<RecordingSink>(w.bytes, w.ends),
                       WriterOptions{compress, 3, 4});
    EXPECT_TRUE(writer.writeHeader(d.header).ok());
    EXPECT_TRUE(writer.writeEvents(d).ok());
    // The encoding byte follows each frame's length; a compressed file must hold zstd frames.
    size_t zstdFrames = 0;
    for (size_t k = 0; k + 1 < w.ends.size(); ++k) {
        zstdFrames += w.bytes[w.ends[k] + 4] == static_cast<char>(kEncodingZstd) ? 1 : 0;
    }
    EXPECT_EQ(zstdFrames > 0, compress);
    return w;
}

void checkEveryCut(const Written& w) {
    const size_t headerEnd = w.ends.at(1);
    const size_t size = w.bytes.size();
    // The writer's documented layout with 4 rows per chunk: 12 new strings take chunks 0-2; the
    // 3 frames and 2 stacks start in the last strings chunk (2); the 9 event rows of each table
    // too, so chunks 2, 3, 4 hold rows 0-3, 4-7, 8. File frame k + 1 is chunk k; the batch's
    // summary frame follows (a cut inside it loses only it).
    ASSERT_EQ(w.ends.size(), 1u + 1u + 5u + 1u);
    ASSERT_EQ(w.ends.back(), size);
    for (size_t cut = 0; cut <= size; ++cut) {
        SCOPED_TRACE("cut at byte " + std::to_string(cut) + " of " + std::to_string(size));
        auto r = readTraceBytes(std::string_view(w.bytes).substr(0, cut), "run.vscope");
        if (cut < headerEnd) {
            ASSERT_FALSE(r.ok());
            EXPECT_EQ(r.error().file, "run.vscope");
            EXPECT_FALSE(r.error().message.empty());
            continue;
        }
        ASSERT_TRUE(r.ok()) << r.error().describe();
        const auto& report = r->report;
        // Whole frames before the cut: frame ends (w.ends[1..]) at or before it.
        const auto whole = static_cast<uint64_t>(
            std::count_if(w.ends.begin() + 1, w.ends.end(), [&](size_t e) { return e <= cut; }));
        const bool atBoundary = std::find(w.ends.begin(), w.ends.end(), cut) != w.ends.end();
        EXPECT_EQ(report.framesLoaded, whole);
        EXPECT_EQ(report.framesSkipped, 0u);
        EXPECT_EQ(report.truncated, !atBoundary);
        EXPECT_EQ(report.problems.empty(), atBoundary);
        EXPECT_EQ(report.complete, atBoundary);
        EXPECT_EQ(report.bytesLoaded, w.ends[whole]);
        // Whole frames 3, 4, 5 hold rows [0, 4), [4, 8), [8, 9) of each event table.
        const size_t rows = std::min<size_t>(9, 4 * (whole > 3 ? whole - 3 : 0));
        EXPECT_EQ(r->data.memory.size(), rows);
        EXPECT_EQ(r->data.kernels.size(), rows);
        EXPECT_EQ(r->data.counters.size(), rows);
        if (!atBoundary) {
            EXPECT_EQ(report.truncatedAtByte, static_cast<int64_t>(w.ends[whole]));
            EXPECT_EQ(report.truncatedFrame, whole);
            ASSERT_FALSE(report.problems.empty());
            EXPECT_EQ(report.problems[0].byteOffset, static_cast<int64_t>(w.ends[whole]));
            EXPECT_EQ(report.problems[0].recordIndex, static_cast<int64_t>(whole));
            const std::string expected =
                "run.vscope ends inside frame " + std::to_string(whole) + " (byte " +
                std::to_string(w.ends[whole]) + "); " + std::to_string(whole) +
                (whole == 1 ? " frame" : " frames") + " loaded. The job probably crashed.";
            EXPECT_EQ(report.summary().substr(0, expected.size()), expected);
            ASSERT_FALSE(r->data.dataLoss.empty());
            EXPECT_EQ(r->data.dataLoss.back().count, cut - w.ends[whole]);
        }
        // Every id left in the loaded data indexes its table.
        for (StringId id : r->data.kernels.name) {
            ASSERT_LT(id, r->data.strings.size());
        }
        for (StackId id : r->data.memory.stack) {
            ASSERT_LT(toInt(id), r->data.stacks.size());
        }
        for (const auto& stack : r->data.stacks) {
            for (FrameId f : stack) {
                ASSERT_LT(toInt(f), r->data.frames.size());
            }
        }
    }
}

}  // namespace

TEST(Truncation, EveryCutOfAnUncompressedFileLoadsTheWholeFramesBeforeIt) {
    checkEveryCut(writeSmall(false));
}

TEST(Truncation, EveryCutOfACompressedFileLoadsTheWholeFramesBeforeIt) {
    checkEveryCut(writeSmall(true));
}

TEST(Truncation, AWholeFileLoadsEverything) {
    const Written w = writeSmall(false);
    auto r = readTraceBytes(w.bytes, "run.vscope");
    ASSERT_TRUE(r.ok());
    expectSameTrace(makeFullTrace(9), r->data);
}
