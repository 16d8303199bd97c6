// Bad .vscope input: each case gives a clear error or a clear data-loss report, never a crash,
// a hang or a huge allocation.

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "refusal.h"
#include "trace_file_test_support.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"

using namespace vramscope::trace;
using namespace vramscope::trace::testing;
using vramscope::test::refused;

namespace {

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

/// A small uncompressed file of 1 header frame + 4 event frames (5 kernels each, 20 in all),
/// and where each frame starts (no summary frames: the event framing alone).
struct FiveFrames {
    std::string bytes;
    std::vector<size_t> starts;  // frame i starts at starts[i]; starts[5] == end of file
};

FiveFrames fiveFrames() {
    TraceData d;
    d.header.producer = "test";
    const StringId k = d.intern("k");
    for (int i = 0; i < 20; ++i) {
        d.kernels.append(
            {i * 100, i * 100 + 50, DeviceIndex{0}, 0, k, KernelCategory::Compute, -1, 0, 0});
    }
    FiveFrames f;
    std::vector<size_t> ends;
    TraceWriter w(std::make_unique<RecordingSink>(f.bytes, ends),
                  WriterOptions{false, 3, 5, false});
    EXPECT_TRUE(w.writeHeader(d.header).ok());
    EXPECT_TRUE(w.writeEvents(d).ok());
    f.starts = ends;  // ends[0] is the preamble end == start of frame 0
    EXPECT_EQ(f.starts.size(), 6u);
    return f;
}

std::string headerPayload() {
    v1::Chunk c;
    c.mutable_header()->set_producer("hand-made");
    return c.SerializeAsString();
}

Result<LoadedTrace> read(const std::string& bytes) {
    return readTraceBytes(bytes, "bad.vscope");
}

}  // namespace

TEST(MalformedInput, EmptyFileIsAnErrorNamingTheFile) {
    auto r = read("");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().file, "bad.vscope");
    EXPECT_EQ(r.error().byteOffset, 0);
    EXPECT_TRUE(contains(r.error().message, "empty"));
}

TEST(MalformedInput, WrongMagicIsAnError) {
    auto r = read("{\"traceEvents\": [1, 2, 3]}");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message, "not a .vscope file")) << r.error().message;
    auto almost = read(std::string("\x89VSCOPX\n", 8) + std::string(20, '\0'));
    EXPECT_TRUE(refused(almost, ErrorCode::Unsupported, {"bad.vscope", "not a .vscope file"}, 0));
}

TEST(MalformedInput, NewerMajorVersionIsRefusedSayingWhichVersionsAreRead) {
    std::string bytes = writeTraceBytes(makeFullTrace(3));
    bytes[8] = 2;  // major, little-endian u16
    bytes[10] = 5;
    auto r = read(bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().byteOffset, 8);
    EXPECT_TRUE(contains(r.error().message, "2.5")) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "1.0 to 1.x")) << r.error().message;
}

TEST(MalformedInput, NewerMinorVersionOfTheSameMajorIsRead) {
    std::string bytes = writeTraceBytes(makeFullTrace(3));
    bytes[10] = 9;
    auto r = read(bytes);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->data.header.formatMinor, 9u);
}

TEST(MalformedInput, PreambleOnlyOrCutPreambleIsAnError) {
    // The preamble is 12 bytes (magic, u16 major, u16 minor); the header frame follows it.
    EXPECT_TRUE(
        refused(read(preamble()), ErrorCode::Truncated, {"the file has no header frame"}, 12));
    EXPECT_TRUE(refused(read(preamble().substr(0, 10)), ErrorCode::Truncated,
                        {"bad.vscope", "ends inside its 12-byte preamble"}, 10));
    EXPECT_TRUE(refused(read(preamble().substr(0, 3)), ErrorCode::Truncated,
                        {"ends inside its 12-byte preamble"}, 3));
}

TEST(MalformedInput, RandomBytesNeverCrash) {
    std::mt19937_64 rng(12345);
    for (int trial = 0; trial < 300; ++trial) {
        std::string junk(rng() % 2000, '\0');
        for (auto& c : junk) {
            c = static_cast<char>(rng());
        }
        // No magic (an empty draw is an empty file).
        EXPECT_TRUE(junk.empty()
                        ? refused(read(junk), ErrorCode::Truncated, {"the file is empty"}, 0)
                        : refused(read(junk), ErrorCode::Unsupported, {"not a .vscope file"}, 0));
        // The same junk after a valid preamble and header frame: loads or reports, never crashes.
        const std::string bytes = preamble() + frame(headerPayload()) + junk;
        auto r = read(bytes);
        ASSERT_TRUE(r.ok());
        EXPECT_GE(r->report.framesLoaded, 1u);
        if (!junk.empty()) {
            EXPECT_FALSE(r->report.complete);
            EXPECT_FALSE(r->report.problems.empty());
        }
    }
}

TEST(MalformedInput, FrameLengthBeyondTheEndIsReportedAsACutFile) {
    FiveFrames f = fiveFrames();
    const size_t at = f.starts[2];
    const auto huge = static_cast<uint32_t>(f.bytes.size() * 3);
    for (int i = 0; i < 4; ++i) {
        f.bytes[at + i] = static_cast<char>((huge >> (8 * i)) & 0xFF);
    }
    auto r = read(f.bytes);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesLoaded, 2u);
    EXPECT_TRUE(r->report.truncated);
    EXPECT_EQ(r->report.truncatedAtByte, static_cast<int64_t>(at));
    EXPECT_EQ(r->report.truncatedFrame, 2u);
    EXPECT_EQ(r->data.kernels.size(), 5u);
    ASSERT_EQ(r->report.problems.size(), 1u);
    EXPECT_EQ(r->report.problems[0].byteOffset, static_cast<int64_t>(at));
    EXPECT_EQ(r->report.problems[0].recordIndex, 2);
}

TEST(MalformedInput, HugeFrameLengthStopsWithoutAllocatingIt) {
    FiveFrames f = fiveFrames();
    const size_t at = f.starts[3];
    for (int i = 0; i < 4; ++i) {
        f.bytes[at + i] = '\xFF';
    }
    auto r = read(f.bytes);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesLoaded, 3u);
    EXPECT_EQ(r->data.kernels.size(), 10u);
    ASSERT_FALSE(r->report.problems.empty());
    EXPECT_TRUE(contains(r->report.problems[0].message, "more than the limit"));
    EXPECT_EQ(r->report.problems[0].recordIndex, 3);

    // The same in the header frame is fatal.
    std::string head = preamble() + "\xFF\xFF\xFF\x7F" + std::string(1, '\0') + "abc";
    auto h = read(head);
    EXPECT_TRUE(refused(h, ErrorCode::Limit, {"bad.vscope", "more than the limit"}));
    ASSERT_FALSE(h.ok());
    EXPECT_EQ(h.error().recordIndex, 0);
}

TEST(MalformedInput, CrcMismatchInTheMiddleFrameSkipsOnlyThatFrame) {
    FiveFrames f = fiveFrames();
    const size_t at = f.starts[2];
    f.bytes[at + kFrameHeadBytes + 3] ^= 0x40;  // a payload byte of frame 2
    auto r = read(f.bytes);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesLoaded, 4u);
    EXPECT_EQ(r->report.framesSkipped, 1u);
    EXPECT_FALSE(r->report.complete);
    EXPECT_FALSE(r->report.truncated);
    // Frames 1, 3 and 4 hold kernels 0-4, 10-14 and 15-19 (5 per frame, written in order).
    ASSERT_EQ(r->data.kernels.size(), 15u);
    EXPECT_EQ(r->data.kernels.startNs[4], 400);
    EXPECT_EQ(r->data.kernels.startNs[5], 1000);
    ASSERT_EQ(r->report.problems.size(), 1u);
    EXPECT_EQ(r->report.problems[0].byteOffset, static_cast<int64_t>(at));
    EXPECT_EQ(r->report.problems[0].recordIndex, 2);
    EXPECT_TRUE(contains(r->report.problems[0].message, "CRC"));
    ASSERT_EQ(r->data.dataLoss.size(), 1u);
    EXPECT_EQ(r->data.dataLoss[0].counter, LossCounter::FramesSkipped);
    EXPECT_EQ(r->data.dataLoss[0].count, 1u);
    EXPECT_TRUE(contains(r->report.summary(), "1 damaged frame was skipped"));
}

TEST(MalformedInput, DamagedHeaderFrameIsFatal) {
    FiveFrames f = fiveFrames();
    f.bytes[f.starts[0] + kFrameHeadBytes + 1] ^= 0x01;
    auto r = read(f.bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().recordIndex, 0);
    EXPECT_EQ(r.error().byteOffset, static_cast<int64_t>(kPreambleBytes));
    EXPECT_TRUE(contains(r.error().message, "header"));
}

TEST(MalformedInput, FirstFrameWithoutHeaderIsFatal) {
    v1::Chunk c;
    c.mutable_kernels()->add_start_ns_delta(5);
    auto r = read(preamble() + frame(c.SerializeAsString()));
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message, "no file header"));
}

TEST(MalformedInput, UndecodablePayloadWithAValidCrcIsSkipped) {
    const std::string bytes = preamble() + frame(headerPayload()) +
                              frame(std::string("\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 7)) +
                              frame(headerPayload());
    auto r = read(bytes);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesLoaded, 2u);
    EXPECT_EQ(r->report.framesSkipped, 1u);
    ASSERT_EQ(r->report.problems.size(), 1u);
    EXPECT_EQ(r->report.problems[0].recordIndex, 1);
    EXPECT_TRUE(contains(r->report.problems[0].message, "not a valid Chunk"));
}

TEST(MalformedInput, ZstdGarbageIsSkipped) {
    const std::string bytes = preamble() + frame(headerPayload()) +
                              frame("this is not zstd at all", kEncodingZstd) +
                              frame(headerPayload());
    auto r = read(bytes);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesSkipped, 1u);
    EXPECT_EQ(r->report.framesLoaded, 2u);
}

TEST(MalformedInput, ZstdFrameClaimingAHugeSizeIsSkippedBeforeAllocating) {
    // A zstd frame header (RFC 8878 3.1.1): magic 0xFD2FB528, descriptor 0xE0 (single segment,
    // 8-byte content size), content size 2^40.
    std::string z("\x28\xB5\x2F\xFD\xE0", 5);
    const uint64_t size = 1ull << 40;
    for (int i = 0; i < 8; ++i) {
        z.push_back(static_cast<char>((size >> (8 * i)) & 0xFF));
    }
    z += "garbage";
    auto r = read(preamble() + frame(headerPayload()) + frame(z, kEncodingZstd));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesSkipped, 1u);
    ASSERT_EQ(r->report.problems.size(), 1u);
    EXPECT_TRUE(contains(r->report.problems[0].message, "1099511627776"))
        << r->report.problems[0].message;
}

TEST(MalformedInput, UnknownEncodingIsSkipped) {
    auto r = read(preamble() + frame(headerPayload()) + frame(headerPayload(), 7));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesSkipped, 1u);
}

TEST(MalformedInput, ColumnLengthsThatDisagreeSkipTheFrame) {
    v1::Chunk bad;
    bad.mutable_memory()->add_timestamp_ns_delta(1);
    bad.mutable_memory()->add_timestamp_ns_delta(2);
    bad.mutable_memory()->add_size_bytes(64);  // 1 entry for 2 rows
    v1::Chunk good;
    good.mutable_kernels()->add_start_ns_delta(7);
    auto r = read(preamble() + frame(headerPayload()) + frame(bad.SerializeAsString()) +
                  frame(good.SerializeAsString()));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesSkipped, 1u);
    EXPECT_EQ(r->data.memory.size(), 0u);
    EXPECT_EQ(r->data.kernels.size(), 1u);
    ASSERT_EQ(r->report.problems.size(), 1u);
    EXPECT_TRUE(contains(r->report.problems[0].message, "size_bytes"));

    v1::Chunk stacks;  // lengths add up to 3 frames, 1 given
    stacks.mutable_stacks()->set_first_id(1);
    stacks.mutable_stacks()->add_length(3);
    stacks.mutable_stacks()->add_frames(0);
    auto s = read(preamble() + frame(headerPayload()) + frame(stacks.SerializeAsString()));
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->report.framesSkipped, 1u);
}

TEST(MalformedInput, OutOfRangeIdsAreResetToZeroAndCounted) {
    v1::Chunk c;
    c.mutable_strings()->set_first_id(1);
    c.mutable_strings()->add_values("gemm");  // string ids 0..1
    c.mutable_frames()->add_name(1);
    c.mutable_frames()->add_name(9);  // bad string id
    c.mutable_stacks()->set_first_id(1);
    c.mutable_stacks()->add_length(3);  // frames 0, 1 exist; 5 does not
    c.mutable_stacks()->add_frames(0);
    c.mutable_stacks()->add_frames(5);
    c.mutable_stacks()->add_frames(1);
    auto* k = c.mutable_kernels();
    for (uint32_t name : {1u, 2u, 1000u}) {
        k->add_start_ns_delta(10);
        k->add_name(name);
        k->add_category(name == 2u ? 9u : 0u);  // 9 is no category
    }
    auto* m = c.mutable_memory();
    for (uint32_t stack : {0u, 1u, 2u}) {
        m->add_timestamp_ns_delta(1);
        m->add_stack(stack);
        m->add_nvtx_range(stack);  // no ranges: only 0 is valid
    }
    auto r = read(preamble() + frame(headerPayload()) + frame(c.SerializeAsString()));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->data.kernels.name, (std::vector<StringId>{1, 0, 0}));
    EXPECT_EQ(r->data.kernels.category[1], KernelCategory::Compute);
    EXPECT_EQ(r->data.memory.stack, (std::vector<StackId>{StackId{0}, StackId{1}, StackId{0}}));
    EXPECT_EQ(r->data.memory.nvtxRange, (std::vector<uint32_t>{0, 0, 0}));
    ASSERT_EQ(r->data.frames.size(), 2u);
    EXPECT_EQ(r->data.frames[1].name, 0u);
    ASSERT_EQ(r->data.stacks.size(), 2u);
    EXPECT_EQ(r->data.stacks[1], (std::vector<FrameId>{FrameId{0}, FrameId{1}}));
    // 2 kernel names, 1 category, 1 stack id, 2 range ids, 1 frame name, 1 stack entry
    EXPECT_EQ(r->report.idsReset, 8u);
    EXPECT_FALSE(r->report.complete);
    EXPECT_FALSE(r->report.problems.empty());
}

TEST(MalformedInput, TableIdsThatOverlapSkipTheFrame) {
    v1::Chunk c;
    c.mutable_strings()->set_first_id(0);  // id 0 is the implicit empty string
    c.mutable_strings()->add_values("x");
    auto r = read(preamble() + frame(headerPayload()) + frame(c.SerializeAsString()));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->report.framesSkipped, 1u);
    EXPECT_EQ(r->data.strings.size(), 1u);
}

TEST(MalformedInput, TableIdsAfterAGapAreKeptAndTheGapReported) {
    v1::Chunk c;
    c.mutable_strings()->set_first_id(4);
    c.mutable_strings()->add_values("late");
    auto r = read(preamble() + frame(headerPayload()) + frame(c.SerializeAsString()));
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->data.strings.size(), 5u);
    EXPECT_EQ(r->data.strings[4], "late");
    EXPECT_EQ(r->data.strings[2], "");
    EXPECT_EQ(r->report.problems.size(), 1u);

    c.mutable_strings()->set_first_id(0xFFFFFFF0u);  // a gap too large to fill
    auto far = read(preamble() + frame(headerPayload()) + frame(c.SerializeAsString()));
    ASSERT_TRUE(far.ok());
    EXPECT_EQ(far->report.framesSkipped, 1u);
    EXPECT_EQ(far->data.strings.size(), 1u);
}

TEST(MalformedInput, UnreadableFileIsAnErrorNamingThePath) {
    auto r = readTraceFile("/nonexistent-vscope-dir/run.vscope");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().file, "/nonexistent-vscope-dir/run.vscope");
    EXPECT_TRUE(contains(r.error().message, "cannot open"));
    const std::string tmp = std::filesystem::temp_directory_path().string();
    EXPECT_TRUE(refused(readTraceFile(tmp), ErrorCode::Io, {tmp, "cannot read: Is a directory"}));
}

TEST(MalformedInput, MutatedPayloadsWithValidCrcsNeverCrash) {
    // Real chunks with a few bytes changed, re-framed with a matching CRC, so that the damage
    // reaches the chunk decoder instead of being caught by the CRC.
    WriterOptions opt;
    opt.compress = false;
    opt.eventsPerChunk = 16;
    const std::string good = writeTraceBytes(makeFullTrace(40), opt);
    std::vector<std::string> payloads;
    for (size_t off = kPreambleBytes; off < good.size();) {
        uint32_t len = 0;
        for (int i = 0; i < 4; ++i) {
            len |= uint32_t{static_cast<unsigned char>(good[off + i])} << (8 * i);
        }
        payloads.push_back(good.substr(off + kFrameHeadBytes, len));
        off += kFrameHeadBytes + len + kFrameTailBytes;
    }
    ASSERT_GE(payloads.size(), 3u);
    std::mt19937_64 rng(99);
    for (int trial = 0; trial < 2000; ++trial) {
        std::string bytes = preamble() + frame(payloads[0]);
        for (size_t i = 1; i < payloads.size(); ++i) {
            std::string p = payloads[i];
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int e = 0; e < edits && !p.empty(); ++e) {
                const size_t at = rng() % p.size();
                switch (rng() % 3) {
                    case 0:
                        p[at] = static_cast<char>(rng());
                        break;
                    case 1:
                        p.erase(at, 1 + rng() % 8);
                        break;
                    default:
                        p.insert(at, 1, static_cast<char>(rng() | 0x80));
                }
            }
            bytes += frame(p);
        }
        auto r = read(bytes);
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r->report.framesLoaded + r->report.framesSkipped, payloads.size());
        for (StringId id : r->data.kernels.name) {
            ASSERT_LT(id, r->data.strings.size());
        }
        for (StackId id : r->data.memory.stack) {
            ASSERT_LT(toInt(id), r->data.stacks.size());
        }
        ASSERT_EQ(r->data.memory.address.size(), r->data.memory.size());
        ASSERT_EQ(r->data.kernels.endNs.size(), r->data.kernels.size());
        ASSERT_EQ(r->data.counters.value.size(), r->data.counters.size());
    }
}
