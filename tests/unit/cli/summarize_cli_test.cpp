// vramscope-cli summarize on a small multi-rank synthetic job: exit codes, the index's contents,
// a corrupt rank file listed with its problem while the rest is summarised, and --merge.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_refusal.h"
#include "cli_run.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/job_index.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {
namespace {

namespace fs = std::filesystem;
using test::run;

/// synth --ranks 3 into `dir`; the files come with stored summaries and analyses.
void synthJob(const fs::path& dir) {
    const auto r = run({"synth", "--ranks", "3", "--iterations", "6", "--leak-rank", "2",
                        "--leak-bytes-per-iteration", "64MiB", "-o", dir.string()});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
}

TEST(SummarizeCli, IndexListsEveryRankAndTheCorruptFileWithItsProblem) {
    const fs::path dir = test::tempDir();
    synthJob(dir / "run");
    // A rank file without summaries (format 1.0 style): summarize computes them from the events.
    analysis::SyntheticJobSpec spec;
    spec.ranks = 4;
    spec.iterations = 6;
    trace::WriterOptions old;
    old.summaries = false;
    ASSERT_TRUE(trace::writeTraceFile((dir / "run" / "rank3.vscope").string(),
                                      analysis::generateSyntheticRank(spec, 3), old)
                    .ok());
    std::ofstream(dir / "run" / "rank4.vscope", std::ios::binary) << "\x89VSCOPE\ngarbage";
    const std::string index = (dir / "job.vscope-index").string();
    const auto r = run({"summarize", (dir / "run").string(), "-o", index});
    EXPECT_EQ(r.code, kExitUnreadable) << r.err;  // one file could not be read
    EXPECT_NE(r.err.find("rank4.vscope"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("5/5"), std::string::npos) << r.err;  // progress reached the end
    EXPECT_EQ(r.out, index + "\n");

    auto read = trace::readJobIndex(index);
    ASSERT_TRUE(read.ok()) << read.error().describe();
    const auto& ranks = read->index.ranks;
    ASSERT_EQ(ranks.size(), 5u);
    for (int i = 0; i < 4; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(ranks[i].summary.header.rank, trace::RankId{i});
        EXPECT_EQ(ranks[i].path, "run/rank" + std::to_string(i) + ".vscope");
        EXPECT_TRUE(ranks[i].problem.empty()) << ranks[i].problem;
        EXPECT_EQ(ranks[i].fileBytes, fs::file_size(dir / ranks[i].path));
        EXPECT_FALSE(ranks[i].summary.memory.empty());
        ASSERT_EQ(ranks[i].summary.analysis.size(), 1u);
        // synth stored the analyses; for rank 3 summarize ran them.
        EXPECT_NE(ranks[i].summary.analysis[0].analysedBy.find(i == 3 ? "summarize" : "synth"),
                  std::string::npos);
        EXPECT_EQ(ranks[i].summary.analysis[0].leakVerdict, i == 2 ? "staircase" : "sawtooth");
    }
    EXPECT_EQ(ranks[4].path, "run/rank4.vscope");  // rank from the file name
    EXPECT_EQ(ranks[4].summary.header.rank, trace::RankId{4});
    EXPECT_NE(ranks[4].problem.find("rank4.vscope"), std::string::npos);
    EXPECT_TRUE(ranks[4].summary.memory.empty());
    fs::remove_all(dir);
}

TEST(SummarizeCli, PerFileIndexesMergeIntoTheWholeJob) {
    const fs::path dir = test::tempDir();
    synthJob(dir / "run");
    std::vector<std::string> parts;
    for (int i = 0; i < 3; ++i) {
        const std::string file = (dir / "run" / ("rank" + std::to_string(i) + ".vscope")).string();
        parts.push_back(file + ".vscope-index");
        const auto r = run({"summarize", "--quiet", file, "-o", parts.back()});
        ASSERT_EQ(r.code, kExitSuccess) << r.err;
        EXPECT_EQ(r.err, "");
    }
    const std::string job = (dir / "job.vscope-index").string();
    std::vector<std::string> args = {"summarize", "--merge"};
    args.insert(args.end(), parts.begin(), parts.end());
    args.insert(args.end(), {"-o", job});
    const auto r = run(args);
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    auto read = trace::readJobIndex(job);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read->index.ranks.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(read->index.ranks[i].path, "run/rank" + std::to_string(i) + ".vscope");
        EXPECT_EQ(read->index.ranks[i].summary.header.rank, trace::RankId{i});
    }
    // A rank file is no index: --merge says which input it could not read, and exits 3.
    const auto bad =
        run({"summarize", "--merge", parts[0], (dir / "run" / "rank1.vscope").string(), "-o", job});
    EXPECT_EQ(bad.code, kExitUnreadable);
    EXPECT_NE(bad.err.find("not a job index"), std::string::npos) << bad.err;
    fs::remove_all(dir);
}

TEST(SummarizeCli, UsageErrors) {
    EXPECT_TRUE(test::refusedRun({"summarize"}, kExitUsage, {"no input given"}));
    EXPECT_TRUE(test::refusedRun({"summarize", "x.vscope"}, kExitUsage, {"-o INDEX is required"}));
    EXPECT_TRUE(test::refusedRun({"summarize", "--frobnicate", "x", "-o", "y"}, kExitUsage,
                                 {"unknown option '--frobnicate'"}));
    EXPECT_EQ(run({"summarize", "--help"}).code, kExitSuccess);
}

TEST(SummarizeCli, MergeOfUnreadableInputsLeavesTheOutputAlone) {
    const fs::path dir = test::tempDir();
    synthJob(dir / "run");
    const std::string index = (dir / "job.vscope-index").string();
    ASSERT_EQ(run({"summarize", "--quiet", (dir / "run").string(), "-o", index}).code,
              kExitSuccess);
    const auto before = fs::file_size(index);
    const auto r = run({"summarize", "--merge", (dir / "missing.vscope-index").string(),
                        (dir / "run" / "rank0.vscope").string(), "-o", index});
    EXPECT_EQ(r.code, kExitUnreadable) << r.err;
    EXPECT_NE(r.err.find("was not written"), std::string::npos) << r.err;
    EXPECT_EQ(fs::file_size(index), before);  // the good index is still there
    fs::remove_all(dir);
}

TEST(SummarizeCli, ADamagedSummaryFrameIsSummarisedFromTheEvents) {
    const fs::path dir = test::tempDir();
    synthJob(dir / "run");
    const fs::path file = dir / "run" / "rank2.vscope";
    // The last frame is the closing summary frame: damage its payload (the CRC then fails).
    std::string bytes;
    {
        std::ifstream in(file, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    ASSERT_GT(bytes.size(), 64u);
    bytes[bytes.size() - 12] = static_cast<char>(bytes[bytes.size() - 12] ^ 0x5A);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    const std::string index = (dir / "job.vscope-index").string();
    const auto r = run({"summarize", "--quiet", file.string(), "-o", index});
    EXPECT_EQ(r.code, kExitSuccess) << r.err;
    EXPECT_NE(r.err.find("warning"), std::string::npos) << r.err;  // reported even with --quiet
    auto read = trace::readJobIndex(index);
    ASSERT_TRUE(read.ok()) << read.error().describe();
    ASSERT_EQ(read->index.ranks.size(), 1u);
    const trace::TraceSummary& sum = read->index.ranks[0].summary;
    // The peak summarised from the events (they are intact) must be the generator's own formula
    // for the leaking rank (synthetic_job.h): W + O + A x a + N x L, with synth's defaults and
    // the command line's N = 6 iterations and L = 64 MiB. Not from buildMemoryTimelines, which
    // shares its running-sum rule with the summary writer.
    const analysis::SyntheticJobSpec d;
    const int64_t formulaPeak = int64_t(d.weightBytes + d.optimizerBytes) +
                                int64_t(d.activationsPerIteration) * int64_t(d.activationBytes) +
                                6 * (int64_t(64) << 20);
    ASSERT_EQ(formulaPeak, (int64_t(18) << 30) + (int64_t(384) << 20));  // 12 GiB + 6 GiB + 384 MiB
    // Rank 2's GPU is device 2 (local rank = device index = rank % gpusPerNode).
    const trace::MemoryEnvelope* env = sum.envelope(
        trace::DeviceIndex{2}, trace::MemoryLevel::Allocated, trace::SeriesOrigin::MemoryEvents);
    ASSERT_NE(env, nullptr);
    EXPECT_EQ(env->peakBytes, formulaPeak);
    ASSERT_EQ(sum.analysis.size(), 1u);
    EXPECT_EQ(sum.analysis[0].leakVerdict, "staircase");
    fs::remove_all(dir);
}

}  // namespace
}  // namespace vramscope::app
