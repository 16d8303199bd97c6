// ErrorCode as the real paths produce it: the reader, the importers and openTraceBytes, on inputs
// made by hand for each situation the code is documented for (error.h).

#include <gtest/gtest.h>

#include <string>

#include "trace_file_test_support.h"
#include "vramscope/trace/error.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/trace_file.h"
#include "vramscope/trace/v1/trace.pb.h"

using namespace vramscope::trace;
using namespace vramscope::trace::testing;

namespace {

/// A whole, valid .vscope file: preamble and a header frame, then one frame of 3 kernels.
std::string smallTrace() {
    TraceData d;
    d.header.producer = "error-code-test";
    const StringId k = d.intern("k");
    for (int i = 0; i < 3; ++i) {
        d.kernels.append(
            {i * 10, i * 10 + 5, DeviceIndex{0}, 0, k, KernelCategory::Compute, -1, 0, 0});
    }
    return writeTraceBytes(d, WriterOptions{false, 3, 65536});
}

ReadOptions refuseProgress() {
    ReadOptions o;
    o.progress = [](double, std::string_view) { return false; };
    return o;
}

ErrorCode codeOf(const Result<LoadedTrace>& r) {
    EXPECT_FALSE(r.ok());
    return r.ok() ? ErrorCode::Invalid : r.error().code;
}

}  // namespace

TEST(ErrorCode, MakeSetsCodeFilePositionAndDescribeIsUnchanged) {
    const Error e = Error::make(ErrorCode::Corrupt, "run.vscope", "frame 3 skipped: bad CRC")
                        .atByte(7340112)
                        .atRecord(3);
    EXPECT_EQ(e.code, ErrorCode::Corrupt);
    EXPECT_EQ(e.describe(), "run.vscope: byte 7340112, record 3: frame 3 skipped: bad CRC");
    const Error bare = Error::make(ErrorCode::Invalid, "", "no input to open");
    EXPECT_EQ(bare.byteOffset, -1);
    EXPECT_EQ(bare.recordIndex, -1);
    EXPECT_EQ(bare.describe(), "no input to open");
    EXPECT_STREQ(toString(ErrorCode::Limit), "limit");
}

TEST(ErrorCode, AFileCutInsideItsHeaderFrameIsTruncated) {
    const std::string whole = smallTrace();
    // Cut 3 bytes into the header frame's 5-byte head.
    const auto r = readTraceBytes(whole.substr(0, kPreambleBytes + 3), "cut.vscope");
    EXPECT_EQ(codeOf(r), ErrorCode::Truncated);
    EXPECT_EQ(r.error().byteOffset, static_cast<int64_t>(kPreambleBytes));
    EXPECT_EQ(codeOf(readTraceBytes(whole.substr(0, 7), "cut.vscope")), ErrorCode::Truncated);
    // A pickle without its STOP opcode: PROTO 2, EMPTY_LIST.
    EXPECT_EQ(codeOf(importPytorchSnapshot(std::string("\x80\x02]", 3), "cut.pickle")),
              ErrorCode::Truncated);
}

TEST(ErrorCode, ACutAfterTheHeaderIsATruncatedProblemNotAnError) {
    const std::string whole = smallTrace();
    const auto r = readTraceBytes(whole.substr(0, whole.size() - 2), "cut.vscope");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    ASSERT_FALSE(r->report.problems.empty());
    EXPECT_EQ(r->report.problems[0].code, ErrorCode::Truncated);
}

TEST(ErrorCode, ADamagedHeaderFrameOrGarbageIsCorrupt) {
    std::string bytes = preamble() + headerFrame();
    bytes[kPreambleBytes + kFrameHeadBytes] ^= 0x40;  // first payload byte: the CRC no longer fits
    const auto r = readTraceBytes(bytes, "bad.vscope");
    EXPECT_EQ(codeOf(r), ErrorCode::Corrupt);
    EXPECT_NE(r.error().message.find("CRC"), std::string::npos) << r.error().message;
    // A damaged later frame is skipped and reported as a Corrupt problem.
    std::string later = preamble() + headerFrame() + frame("\x01\x02\x03");
    later[later.size() - 1] ^= 0x01;
    const auto skipped = readTraceBytes(later, "bad.vscope");
    ASSERT_TRUE(skipped.ok()) << skipped.error().describe();
    ASSERT_EQ(skipped->report.problems.size(), 1u);
    EXPECT_EQ(skipped->report.problems[0].code, ErrorCode::Corrupt);
    // 0xff is no pickle opcode.
    EXPECT_EQ(codeOf(importPytorchSnapshot(std::string("\x80\x02\xff", 3), "bad.pickle")),
              ErrorCode::Corrupt);
    // JSON that cannot be read at all.
    EXPECT_EQ(codeOf(importKinetoJson("{\"traceEvents\" 12 ]]", "bad.json")), ErrorCode::Corrupt);
}

TEST(ErrorCode, AnotherFormatOrANewerVersionIsUnsupported) {
    EXPECT_EQ(codeOf(openTraceBytes("hello, this is plain text\n", "notes.txt")),
              ErrorCode::Unsupported);
    EXPECT_EQ(codeOf(readTraceBytes("PK\x03\x04 not a trace at all", "x.vscope")),
              ErrorCode::Unsupported);
    EXPECT_EQ(codeOf(readTraceBytes(preamble(kFormatMajor + 1, 0) + headerFrame(), "new.vscope")),
              ErrorCode::Unsupported);
    // PROTO 2, GLOBAL: an opcode that imports Python code is refused.
    EXPECT_EQ(codeOf(importPytorchSnapshot(std::string("\x80\x02"
                                                       "cos\nsystem\n",
                                                       13),
                                           "evil.pickle")),
              ErrorCode::Unsupported);
    EXPECT_EQ(codeOf(importKinetoJson("{\"schemaVersion\": 1}", "other.json")),
              ErrorCode::Unsupported);
}

TEST(ErrorCode, AFrameLengthAboveTheLimitIsLimit) {
    std::string bytes = preamble();
    putLe32(bytes, kMaxFramePayloadBytes + 1);
    bytes.push_back('\0');
    bytes.append(16, 'x');
    const auto r = readTraceBytes(bytes, "huge.vscope");
    EXPECT_EQ(codeOf(r), ErrorCode::Limit);
    EXPECT_EQ(r.error().recordIndex, 0);
    // In a later frame it is a Limit problem and the frames before it stay loaded.
    std::string later = preamble() + headerFrame();
    putLe32(later, kMaxFramePayloadBytes + 1);
    later.push_back('\0');
    const auto loaded = readTraceBytes(later, "huge.vscope");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    ASSERT_EQ(loaded->report.problems.size(), 1u);
    EXPECT_EQ(loaded->report.problems[0].code, ErrorCode::Limit);
}

TEST(ErrorCode, CancellingGivesCancelledWithOneMessageEverywhere) {
    const ReadOptions stop = refuseProgress();
    const auto vscope = readTraceBytes(smallTrace(), "a.vscope", stop);
    // PROTO 2, EMPTY_DICT, STOP: a pickle the importer would otherwise refuse as no snapshot.
    const auto snapshot = importPytorchSnapshot(std::string("\x80\x02}.", 4), "b.pickle", stop);
    const auto kineto = importKinetoJson(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
        "\"tid\": 0, \"ts\": 1, \"dur\": 1}]}",
        "c.json", stop);
    const auto opened = openTraceBytes(smallTrace(), "d.vscope", stop);
    for (const auto* r : {&vscope, &snapshot, &kineto, &opened}) {
        ASSERT_FALSE(r->ok());
        EXPECT_EQ(r->error().code, ErrorCode::Cancelled) << r->error().describe();
        EXPECT_EQ(r->error().message, kCancelledMessage);
        EXPECT_EQ(r->error().byteOffset, -1);
    }
    EXPECT_EQ(vscope.error().file, "a.vscope");
    EXPECT_EQ(snapshot.error().file, "b.pickle");
    EXPECT_EQ(kineto.error().file, "c.json");
    EXPECT_EQ(Error::cancelled("e.json").describe(), std::string("e.json: ") + kCancelledMessage);
}

TEST(ErrorCode, AnUnreadablePathIsIo) {
    const auto r = readTraceFile("/nonexistent-dir-for-vramscope-tests/x.vscope");
    EXPECT_EQ(codeOf(r), ErrorCode::Io);
    EXPECT_EQ(codeOf(openTrace("/nonexistent-dir-for-vramscope-tests/x.json")), ErrorCode::Io);
}
