// The job index: round trip, bounded frames, a cut or damaged index loading what is sound, a
// trace refused, and the merge of per-file indexes (newest entry wins, paths rebased).

#include "vramscope/trace/job_index.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "refusal.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;
using ::vramscope::test::refused;

fs::path tempDir(const std::string& tag) {
    const fs::path d =
        fs::temp_directory_path() / ("vramscope-jobindex-" + std::to_string(::getpid()) + tag);
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
}

/// An entry for rank `r` of a small synthetic job (a real summary: envelopes, kernels, header).
JobIndexEntry syntheticEntry(int r, int iterations = 6) {
    analysis::SyntheticJobSpec spec;
    spec.ranks = r + 1;
    spec.iterations = iterations;
    JobIndexEntry e;
    e.summary = summarizeTrace(analysis::generateSyntheticRank(spec, r));
    e.path = "rank" + std::to_string(r) + ".vscope";
    e.fileBytes = 1000 + static_cast<uint64_t>(r);
    e.modifiedUnixNs = 1'700'000'000'000'000'000 + r;
    return e;
}

/// What must survive a round trip, compared field by field.
void expectSameEntry(const JobIndexEntry& got, const JobIndexEntry& want) {
    EXPECT_EQ(got.path, want.path);
    EXPECT_EQ(got.fileBytes, want.fileBytes);
    EXPECT_EQ(got.modifiedUnixNs, want.modifiedUnixNs);
    EXPECT_EQ(got.problem, want.problem);
    EXPECT_EQ(got.summary.header.rank, want.summary.header.rank);
    EXPECT_EQ(got.summary.header.host, want.summary.header.host);
    EXPECT_EQ(got.summary.header.devices.size(), want.summary.header.devices.size());
    ASSERT_EQ(got.summary.memory.size(), want.summary.memory.size());
    for (size_t i = 0; i < want.summary.memory.size(); ++i) {
        const auto& g = got.summary.memory[i];
        const auto& w = want.summary.memory[i];
        EXPECT_EQ(g.device, w.device);
        EXPECT_EQ(g.level, w.level);
        EXPECT_EQ(g.peakBytes, w.peakBytes);
        EXPECT_EQ(g.peakTimeNs, w.peakTimeNs);
        ASSERT_EQ(g.blocks.size(), w.blocks.size());
        for (size_t b = 0; b < w.blocks.size(); ++b) {
            EXPECT_EQ(g.blocks[b].startNs, w.blocks[b].startNs);
            EXPECT_EQ(g.blocks[b].endNs, w.blocks[b].endNs);
            EXPECT_EQ(g.blocks[b].minBytes, w.blocks[b].minBytes);
            EXPECT_EQ(g.blocks[b].maxBytes, w.blocks[b].maxBytes);
            EXPECT_EQ(g.blocks[b].lastBytes, w.blocks[b].lastBytes);
        }
    }
    EXPECT_EQ(got.summary.kernels.size(), want.summary.kernels.size());
    EXPECT_EQ(got.summary.tableRows, want.summary.tableRows);
}

TEST(JobIndex, RoundTripKeepsEveryEntrySortedByRank) {
    const fs::path dir = tempDir("rt");
    JobIndex index;
    index.ranks = {syntheticEntry(2), syntheticEntry(0), syntheticEntry(1)};
    JobIndexEntry bad;
    bad.path = "rank7.vscope";
    bad.problem = "rank7.vscope: byte 12: the header frame is damaged";
    index.ranks.push_back(bad);
    const fs::path path = dir / "job.vscope-index";
    ASSERT_TRUE(writeJobIndex(path.string(), index).ok());
    EXPECT_TRUE(looksLikeJobIndex(readAll(path)));
    auto read = readJobIndex(path.string());
    ASSERT_TRUE(read.ok()) << read.error().describe();
    EXPECT_TRUE(read->report.complete);
    ASSERT_EQ(read->index.ranks.size(), 4u);
    expectSameEntry(read->index.ranks[0], index.ranks[1]);
    expectSameEntry(read->index.ranks[1], index.ranks[2]);
    expectSameEntry(read->index.ranks[2], index.ranks[0]);
    expectSameEntry(read->index.ranks[3], bad);  // unknown rank: last
    fs::remove_all(dir);
}

/// An index large enough for several entry frames, and the entries in it.
std::pair<fs::path, JobIndex> bigIndex(const fs::path& dir) {
    JobIndex index;
    const JobIndexEntry model = syntheticEntry(0, 1000);  // ~10 KB of summary per entry
    for (int r = 0; r < 300; ++r) {
        JobIndexEntry e = model;
        e.summary.header.rank = RankId{r};
        e.path = "rank" + std::to_string(r) + ".vscope";
        index.ranks.push_back(std::move(e));
    }
    const fs::path path = dir / "big.vscope-index";
    EXPECT_TRUE(writeJobIndex(path.string(), index).ok());
    return {path, index};
}

TEST(JobIndex, CutIndexLoadsTheWholeFramesBeforeTheCut) {
    const fs::path dir = tempDir("cut");
    auto [path, index] = bigIndex(dir);
    const std::string bytes = readAll(path);
    auto whole = readJobIndex(path.string());
    ASSERT_TRUE(whole.ok());
    ASSERT_GE(whole->report.framesLoaded, 3u) << "entries should span several frames";
    ASSERT_EQ(whole->index.ranks.size(), 300u);
    writeAll(path, bytes.substr(0, bytes.size() - 100));
    auto cut = readJobIndex(path.string());
    ASSERT_TRUE(cut.ok()) << cut.error().describe();
    EXPECT_TRUE(cut->report.truncated);
    EXPECT_FALSE(cut->report.complete);
    ASSERT_FALSE(cut->report.problems.empty());
    EXPECT_NE(cut->report.problems[0].message.find("ends inside frame"), std::string::npos);
    EXPECT_GT(cut->index.ranks.size(), 0u);
    EXPECT_LT(cut->index.ranks.size(), 300u);
    for (size_t i = 0; i < cut->index.ranks.size(); ++i) {
        expectSameEntry(cut->index.ranks[i], index.ranks[i]);  // the first frames, in rank order
    }
    // Cut inside the header frame: nothing to read.
    writeAll(path, bytes.substr(0, 20));
    auto none = readJobIndex(path.string());
    EXPECT_TRUE(refused(none, ErrorCode::Truncated, {"the header frame cannot be read"}, 12));
    fs::remove_all(dir);
}

TEST(JobIndex, DamagedFrameIsSkippedAndReported) {
    const fs::path dir = tempDir("crc");
    auto [path, index] = bigIndex(dir);
    std::string bytes = readAll(path);
    // The first entry frame starts after the preamble and the header frame.
    const auto headerPayload = static_cast<uint8_t>(bytes[12]) |
                               static_cast<uint32_t>(static_cast<uint8_t>(bytes[13])) << 8;
    const size_t frame1 = 12 + kFrameHeadBytes + headerPayload + kFrameTailBytes;
    bytes[frame1 + kFrameHeadBytes + 50] ^= 0x5A;
    writeAll(path, bytes);
    auto read = readJobIndex(path.string());
    ASSERT_TRUE(read.ok()) << read.error().describe();
    EXPECT_EQ(read->report.framesSkipped, 1u);
    ASSERT_FALSE(read->report.problems.empty());
    EXPECT_EQ(read->report.problems[0].recordIndex, 1);
    EXPECT_EQ(read->report.problems[0].byteOffset, static_cast<int64_t>(frame1));
    EXPECT_GT(read->index.ranks.size(), 0u);
    EXPECT_LT(read->index.ranks.size(), 300u);
    // The ranks of the later frames are there, the first frame's are not.
    EXPECT_NE(read->index.ranks.front().summary.header.rank, RankId{0});
    EXPECT_EQ(read->index.ranks.back().summary.header.rank, RankId{299});
    fs::remove_all(dir);
}

TEST(JobIndex, TraceFileIsRefusedAsUnsupported) {
    const fs::path dir = tempDir("trace");
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 2;
    const fs::path trace = dir / "rank0.vscope";
    ASSERT_TRUE(writeTraceFile(trace.string(), analysis::generateSyntheticRank(spec, 0)).ok());
    EXPECT_FALSE(looksLikeJobIndex(readAll(trace)));
    auto read = readJobIndex(trace.string());
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().code, ErrorCode::Unsupported);
    EXPECT_NE(read.error().message.find("not a job index"), std::string::npos);
    writeAll(dir / "junk", "hello");
    EXPECT_EQ(readJobIndex((dir / "junk").string()).error().code, ErrorCode::Unsupported);
    fs::remove_all(dir);
}

TEST(JobIndex, OpeningAnIndexAsATraceIsRefused) {
    // report, info, check ... read traces through openTrace: an index holds no events, and
    // reading it as a trace would say "no GPU" of a job that has many.
    const fs::path dir = tempDir("as-trace");
    JobIndex index;
    index.ranks.push_back(syntheticEntry(0));
    const fs::path path = dir / "job.vscope-index";
    ASSERT_TRUE(writeJobIndex(path.string(), index).ok());
    auto opened = openTrace(path.string());
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.error().code, ErrorCode::Unsupported);
    EXPECT_NE(opened.error().describe().find("job index"), std::string::npos);
    EXPECT_NE(opened.error().describe().find("job.vscope-index"), std::string::npos);
    fs::remove_all(dir);
}

TEST(JobIndex, MergeKeepsNewestEntryPerFileAndRebasesPaths) {
    JobIndexEntry old0 = syntheticEntry(0);
    old0.path = "../../run/rank0.vscope";
    old0.modifiedUnixNs = 100;
    JobIndexEntry new0 = syntheticEntry(0);
    new0.path = "/job/run/rank0.vscope";  // the same file, named absolutely
    new0.modifiedUnixNs = 200;
    new0.fileBytes = 4242;
    JobIndexEntry r1 = syntheticEntry(1);
    r1.path = "rank1.vscope";
    JobIndex a;
    a.ranks = {old0, r1};
    JobIndex b;
    b.ranks = {new0};
    const JobIndex merged = mergeJobIndexes({{"/job/parts/a", a}, {"/job/run", b}}, "/job");
    ASSERT_EQ(merged.ranks.size(), 2u);
    // /job/parts/a/../../run/rank0.vscope is /job/run/rank0.vscope: one file, the newer entry.
    EXPECT_EQ(merged.ranks[0].path, "run/rank0.vscope");
    EXPECT_EQ(merged.ranks[0].fileBytes, 4242u);
    EXPECT_EQ(merged.ranks[0].modifiedUnixNs, 200);
    EXPECT_EQ(merged.ranks[1].path, "parts/a/rank1.vscope");
    EXPECT_EQ(merged.ranks[1].summary.header.rank, RankId{1});
}

}  // namespace
}  // namespace vramscope::trace
