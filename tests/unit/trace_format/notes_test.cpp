#include "vramscope/trace/notes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "refusal.h"
#include "test_files.h"

// Notes sidecars: identity by SHA-256, the JSON round trip, and what a bad sidecar gives.
namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

using testdata::ScratchDir;
using ::vramscope::test::refused;

Note fullNote() {
    Note n;
    n.id = "n1";
    n.title = "peak here";
    n.text = "two lines\nof text, with \"quotes\" and ü";
    n.color = "#ff8800";
    n.author = "alice";
    n.createdUnixMs = 1764547200123;
    n.startNs = 12'000'000;
    n.endNs = 15'500'000;
    n.rankIndex = 1;
    n.device = 3;
    n.allocationAddress = 0x7f013dc00000ull;  // above 2^53: must survive as hex text
    n.allocationTimeNs = 11'999'000;
    n.flameFrame = "all;main (train.py:88);forward (model.py:57)";
    return n;
}

TEST(Notes, IdentityIsTheSha256OfTheFileWhenHashingKnownBytes) {
    const ScratchDir dir{"vscope-notes"};
    // FIPS 180-2, appendix B.1: SHA-256("abc").
    const auto id = identifyTrace(dir.write("abc.vscope", "abc"));
    ASSERT_TRUE(id.ok()) << id.error().describe();
    EXPECT_EQ(id->sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(id->sizeBytes, 3u);
    EXPECT_EQ(id->name, "abc.vscope");
    // FIPS 180-2 B.2 spans two blocks of the compression function.
    const auto two =
        identifyTrace(dir.write("b2", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"));
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(two->sha256, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Notes, IdentityAgreesWithSha256sumWhenHashingALargerFile) {
    const ScratchDir dir{"vscope-notes"};
    std::string bytes(3 * (1 << 20) + 17, '\0');  // several of the reader's 1 MiB blocks
    for (size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
    }
    const std::string path = dir.write("big.bin", bytes);
    const std::string command = "sha256sum '" + path + "' 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), &::pclose);
    char out[65] = {};
    if (!pipe || std::fread(out, 1, 64, pipe.get()) != 64) {
        GTEST_SKIP() << "sha256sum is not available";
    }
    const auto id = identifyTrace(path);
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(id->sha256, std::string(out, 64));
    EXPECT_EQ(id->sizeBytes, bytes.size());
}

TEST(Notes, IdentifyingAMissingFileNamesIt) {
    const auto id = identifyTrace("/nonexistent/run.vscope");
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.error().code, ErrorCode::Io);
    EXPECT_NE(id.error().describe().find("/nonexistent/run.vscope"), std::string::npos);
}

TEST(Notes, ArchiveMembersAndStandardInputMapToTheFilesOnDisk) {
    const ScratchDir dir{"vscope-notes"};
    const std::string tar = dir.write("job.tar", "abc");
    const std::string plain = dir.write("rank1.vscope", "abc");
    auto ids = identifyTraces({tar + ":rank0.vscope", tar + ":rank2.vscope", "-", plain});
    ASSERT_TRUE(ids.ok()) << ids.error().describe();
    ASSERT_EQ(ids->size(), 2u);  // the archive once, the plain file, nothing for stdin
    EXPECT_EQ((*ids)[0].name, "job.tar");
    EXPECT_EQ((*ids)[1].name, "rank1.vscope");
}

TEST(Notes, RoundTripKeepsEveryFieldWhenWrittenAndReadBack) {
    const ScratchDir dir{"vscope-notes"};
    NotesDocument doc;
    doc.traces.push_back({"run.vscope", 3, std::string(64, 'a')});
    doc.notes.push_back(fullNote());
    Note point;
    point.id = "n2";
    point.startNs = point.endNs = 7;
    point.generated = true;
    point.kind = "oom";
    doc.notes.push_back(point);
    const std::string path = (dir.path() / "run.vscope.vscope-notes.json").string();
    ASSERT_TRUE(writeNotesFile(path, doc).ok());
    size_t skipped = 99;
    const auto back = readNotesFile(path, &skipped);
    ASSERT_TRUE(back.ok()) << back.error().describe();
    EXPECT_EQ(skipped, 0u);
    EXPECT_EQ(back->version, kNotesFormatVersion);
    EXPECT_EQ(back->traces, doc.traces);
    ASSERT_EQ(back->notes.size(), 2u);
    EXPECT_EQ(back->notes[0], doc.notes[0]);
    EXPECT_EQ(back->notes[1], doc.notes[1]);
    // Nothing but the sidecar is left in the directory (the temporary file was renamed).
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
    // The address is written as hex text (JSON numbers past 2^53 lose digits elsewhere).
    EXPECT_NE(formatNotes(doc).find("\"0x7f013dc00000\""), std::string::npos);
}

TEST(Notes, ASidecarOfAnotherTraceIsRefusedWithBothHashes) {
    NotesDocument doc;
    doc.traces.push_back({"run.vscope", 10, std::string(64, 'a')});
    const std::vector<TraceIdentity> same = {{"renamed.vscope", 10, std::string(64, 'a')}};
    EXPECT_TRUE(checkNotesBelongTo(doc, same, "run.vscope.vscope-notes.json").ok());
    const std::vector<TraceIdentity> other = {{"other.vscope", 10, std::string(64, 'b')}};
    const Status s = checkNotesBelongTo(doc, other, "run.vscope.vscope-notes.json");
    ASSERT_FALSE(s.ok());
    const std::string m = s.error().describe();
    EXPECT_NE(m.find("run.vscope.vscope-notes.json"), std::string::npos) << m;
    EXPECT_NE(m.find("aaaaaaaaaaaa"), std::string::npos) << m;
    EXPECT_NE(m.find("bbbbbbbbbbbb"), std::string::npos) << m;
    EXPECT_NE(m.find("other.vscope"), std::string::npos) << m;
    // A job with one more trace than the sidecar names is not the same job either.
    std::vector<TraceIdentity> more = same;
    more.push_back({"rank1.vscope", 4, std::string(64, 'c')});
    EXPECT_TRUE(refused(checkNotesBelongTo(doc, more, "x"), ErrorCode::Invalid,
                        {"was written for 1 trace(s), this job has 2", "rank1.vscope"}));
}

TEST(Notes, MalformedJsonGivesItsBytePosition) {
    // The stray '}' after "[1, " is byte 58 (0-based) of this text, counted by hand.
    const std::string text = R"({"format": "vramscope-notes", "version": 1, "traces": [1, }]})";
    ASSERT_EQ(text.substr(54, 5), "[1, }");
    const auto doc = parseNotes(text, "bad.json");
    ASSERT_FALSE(doc.ok());
    EXPECT_EQ(doc.error().code, ErrorCode::Corrupt);
    EXPECT_EQ(doc.error().byteOffset, 58);
    EXPECT_NE(doc.error().describe().find("bad.json"), std::string::npos);
}

TEST(Notes, ANewerVersionOrAnotherJsonIsRefusedWithAMessage) {
    const auto newer = parseNotes(
        R"({"format": "vramscope-notes", "version": 2, "traces": [], "notes": []})", "n.json");
    ASSERT_FALSE(newer.ok());
    EXPECT_EQ(newer.error().code, ErrorCode::Unsupported);
    EXPECT_NE(newer.error().message.find("version 2"), std::string::npos);
    const auto other = parseNotes(R"({"traceEvents": []})", "trace.json");
    ASSERT_FALSE(other.ok());
    EXPECT_EQ(other.error().code, ErrorCode::Unsupported);
    EXPECT_NE(other.error().message.find("not a vramscope notes file"), std::string::npos);
    const auto badHash = parseNotes(
        R"({"format": "vramscope-notes", "version": 1, "traces": [{"sha256": "xyz"}]})", "h");
    EXPECT_TRUE(refused(badHash, ErrorCode::Corrupt,
                        {"trace 0 has no valid \"sha256\" (64 lower-case hex digits)"}));
    ASSERT_FALSE(badHash.ok());
    EXPECT_EQ(badHash.error().recordIndex, 0);
}

TEST(Notes, NotesWithBadFieldsAreSkippedAndCountedWhileTheRestLoad) {
    const std::string text = R"({"format": "vramscope-notes", "version": 1, "traces": [],
      "notes": [
        {"id": "a", "start_ns": 5, "end_ns": 9, "title": "good"},
        {"id": "b", "start_ns": "5"},
        {"id": "c", "start_ns": 9, "end_ns": 5},
        {"id": "d", "start_ns": 1, "color": "orange"},
        {"id": "e", "start_ns": 1, "rank_index": 0},
        {"id": "f", "start_ns": 99999999999999999999},
        {"id": "a", "start_ns": 3, "future_field": [1, 2]},
        {"start_ns": 4}
      ]})";
    size_t skipped = 0;
    const auto doc = parseNotes(text, "n.json", &skipped);
    ASSERT_TRUE(doc.ok()) << doc.error().describe();
    // b: wrong type; c: ends before it starts; d: not #rrggbb; e: a rank without a device;
    // f: past int64.
    EXPECT_EQ(skipped, 5u);
    ASSERT_EQ(doc->notes.size(), 3u);
    EXPECT_EQ(doc->notes[0].title, "good");
    EXPECT_EQ(doc->notes[0].id, "a");
    // The repeated id and the missing one get fresh, unique ids; the notes are kept.
    EXPECT_NE(doc->notes[1].id, "a");
    EXPECT_FALSE(doc->notes[2].id.empty());
    EXPECT_NE(doc->notes[1].id, doc->notes[2].id);
    EXPECT_EQ(doc->notes[1].startNs, 3);
    EXPECT_EQ(doc->notes[1].endNs, 3);  // no end: a point
}

TEST(Notes, AHugeFileIsRefusedBeforeItIsRead) {
    const ScratchDir dir{"vscope-notes"};
    const std::string path = dir.write("huge.json", "");
    fs::resize_file(path, 65ull << 20);  // sparse: no disk used
    const auto doc = readNotesFile(path);
    ASSERT_FALSE(doc.ok());
    EXPECT_EQ(doc.error().code, ErrorCode::Limit);
    EXPECT_NE(doc.error().describe().find("huge.json"), std::string::npos);
}

TEST(Notes, WritingWhereNoDirectoryIsNamesThePath) {
    const Status s = writeNotesFile("/nonexistent/dir/x.vscope-notes.json", NotesDocument{});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::Io);
    EXPECT_NE(s.error().describe().find("/nonexistent/dir/x.vscope-notes.json"), std::string::npos);
}

TEST(Notes, SidecarPathIsBesideTheFirstInputInSortedOrder) {
    const ScratchDir dir{"vscope-notes"};
    EXPECT_EQ(notesSidecarPath({"/d/run.vscope"}), "/d/run.vscope.vscope-notes.json");
    EXPECT_EQ(notesSidecarPath({"/d/rank1.vscope", "/d/rank0.vscope"}),
              "/d/rank0.vscope.vscope-notes.json");
    EXPECT_EQ(notesSidecarPath({dir.path().string()}), (dir.path() / "vscope-notes.json").string());
    EXPECT_EQ(notesSidecarPath({"-"}), "");
    EXPECT_EQ(notesSidecarPath({}), "");
}

}  // namespace
}  // namespace vramscope::trace
