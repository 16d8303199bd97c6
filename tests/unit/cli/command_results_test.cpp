// The result values of the commands whose result is data (info, segments, flame, batch-fit,
// summarize), checked as values, without their printed text, on hand-built traces whose figures
// are worked out in the comments; and their command lines parsed into options structs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli_refusal.h"
#include "cli_run.h"
#include "command_batch_fit.h"
#include "command_flame.h"
#include "command_info.h"
#include "command_segments.h"
#include "command_summarize.h"
#include "test_units.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {
namespace {

namespace fs = std::filesystem;

using testdata::kGiB;
using testdata::kKiB;
using testdata::kMiB;
using testdata::kMs;

/// A context as runCli makes it for `command`, writing into the given streams.
CommandContext contextFor(const std::string& command, std::ostream& out, std::ostream& err) {
    return CommandContext{
        command, {}, out, err, trace::kDefaultMaxInputBytes, findCommand(command)};
}

void add(trace::TraceData& d, int64_t t, uint64_t address, int64_t size, trace::MemoryAction action,
         trace::MemoryLevel level) {
    trace::MemoryEvent e;
    e.timestampNs = t;
    e.address = address;
    e.sizeBytes = uint64_t(size);
    e.action = action;
    e.level = level;
    e.kind = trace::MemoryKind::Device;
    d.memory.append(e);
}

/// GPU 0: segment S1 [0x100000, +1 MiB) and S2 [0x400000, +2 MiB) from 1 ms; blocks A
/// [0x100000, +256 KiB) and B [0x180000, +256 KiB) from 2 ms; A freed at 6 ms, B at 9 ms. OOMs at
/// 5 ms (3 MiB asked) and 8 ms (2.5 MiB asked). 6 memory events: 4 allocs, 2 frees; 4 at the
/// allocated level, 2 at the reserved level; the span is 1 ms .. 9 ms.
std::string writeTrace(const fs::path& dir) {
    trace::TraceData d;
    const auto R = trace::MemoryLevel::Reserved, A = trace::MemoryLevel::Allocated;
    const auto alloc = trace::MemoryAction::Alloc, free = trace::MemoryAction::Free;
    add(d, 1 * kMs, 0x100000, kMiB, alloc, R);
    add(d, 1 * kMs, 0x400000, 2 * kMiB, alloc, R);
    add(d, 2 * kMs, 0x100000, 256 * kKiB, alloc, A);
    add(d, 2 * kMs, 0x180000, 256 * kKiB, alloc, A);
    add(d, 6 * kMs, 0x100000, 256 * kKiB, free, A);
    add(d, 9 * kMs, 0x180000, 256 * kKiB, free, A);
    d.ooms.push_back({5 * kMs, trace::DeviceIndex{0}, 0, uint64_t(3 * kMiB), 0});
    d.ooms.push_back({8 * kMs, trace::DeviceIndex{0}, 0, uint64_t(5 * kMiB / 2), 0});
    const std::string file = (dir / "seg.vscope").string();
    EXPECT_TRUE(trace::writeTraceFile(file, d).ok());
    return file;
}

std::optional<trace::Job> open(const std::string& file) {
    auto job = trace::openJob({file});
    if (!job.ok()) {
        ADD_FAILURE() << job.error().describe();
        return std::nullopt;
    }
    return std::move(job).value();
}

TEST(CommandResults, InfoCountsTheEventsOfEachTrace) {
    const fs::path dir = test::tempDir();
    const std::optional<trace::Job> job = open(writeTrace(dir));
    ASSERT_TRUE(job);
    const InfoResult info = describeTraces(*job);
    ASSERT_EQ(info.traces.size(), 1u);
    const Json& t = info.traces[0];
    EXPECT_EQ(t["format"], "vscope");
    EXPECT_EQ(t["events"]["memory"]["total"], 6);
    EXPECT_EQ(t["events"]["memory"]["alloc"], 4);
    EXPECT_EQ(t["events"]["memory"]["free"], 2);
    EXPECT_EQ(t["events"]["memory"]["allocated_level"], 4);
    EXPECT_EQ(t["events"]["memory"]["reserved_level"], 2);
    EXPECT_EQ(t["events"]["ooms"], 2);
    EXPECT_EQ(t["events"]["kernels"]["total"], 0);
    EXPECT_EQ(t["time_span"]["first_ns"], 1 * kMs);
    EXPECT_EQ(t["time_span"]["last_ns"], 9 * kMs);
    EXPECT_EQ(t["time_span"]["duration_ns"], 8 * kMs);
    EXPECT_TRUE(t["read"]["complete"].get<bool>());
    fs::remove_all(dir);
}

TEST(CommandResults, SegmentsAtTheSecondOom) {
    const fs::path dir = test::tempDir();
    const std::string file = writeTrace(dir);
    const std::optional<trace::Job> job = open(file);
    ASSERT_TRUE(job);
    std::ostringstream out, err;
    CommandContext ctx = contextFor("segments", out, err);
    SegmentsOptions options;
    options.inputs.paths = {file};
    options.atOom = 2;
    int code = -1;
    const std::optional<SegmentsResult> r = segmentsAt(ctx, *job, options, code);
    ASSERT_TRUE(r) << err.str();
    EXPECT_EQ(code, kExitSuccess);
    EXPECT_EQ(r->moment.timeNs, 8 * kMs);
    EXPECT_EQ(r->moment.what, "OOM 2 of 2");
    EXPECT_EQ(r->moment.requestBytes, uint64_t(5 * kMiB / 2));
    EXPECT_EQ(r->startNs, 1 * kMs);
    EXPECT_EQ(toInt(r->device), 0);
    // At 8 ms only B is alive: S1 holds 256 KiB of its 1 MiB, with gaps of 512 KiB (where A
    // was) and 256 KiB (after B); S2 is one 2 MiB gap. Free 0.75 + 2 = 2.75 MiB, the largest
    // block 2 MiB: fragmentation 1 - 2 / 2.75 = 3 / 11.
    const analysis::SegmentTotals& t = r->layout.totals;
    EXPECT_EQ(t.segments, 2u);
    EXPECT_EQ(t.blocks, 1u);
    EXPECT_EQ(t.reservedBytes, 3 * kMiB);
    EXPECT_EQ(t.allocatedBytes, 256 * kKiB);
    EXPECT_EQ(t.freeBytes, 3 * kMiB - 256 * kKiB);
    EXPECT_EQ(t.largestFreeBlockBytes, 2 * kMiB);
    EXPECT_NEAR(t.fragmentation, 3.0 / 11.0, 1e-12);
    ASSERT_EQ(r->layout.segments.size(), 2u);
    for (const analysis::Segment& s : r->layout.segments) {
        if (s.address == 0x100000) {
            EXPECT_EQ(s.largestFreeBytes, 512 * kKiB);
            ASSERT_EQ(s.gaps.size(), 2u);
        }
    }
    EXPECT_TRUE(out.str().empty());  // the function prints nothing; printSegments does
    fs::remove_all(dir);
}

TEST(CommandResults, SegmentsRefuseAGpuTheTraceLacks) {
    const fs::path dir = test::tempDir();
    const std::string file = writeTrace(dir);
    const std::optional<trace::Job> job = open(file);
    ASSERT_TRUE(job);
    std::ostringstream out, err;
    CommandContext ctx = contextFor("segments", out, err);
    SegmentsOptions options;
    options.inputs.paths = {file};
    options.device = 3;
    int code = -1;
    EXPECT_FALSE(segmentsAt(ctx, *job, options, code));
    EXPECT_EQ(code, kExitUsage);
    EXPECT_NE(err.str().find("no GPU 3 with memory events in the input (GPUs: 0)"),
              std::string::npos)
        << err.str();
    fs::remove_all(dir);
}

TEST(CommandResults, FlameAtThePeakAndItsDifference) {
    const fs::path dir = test::tempDir();
    const std::string file = writeTrace(dir);
    const std::optional<trace::Job> job = open(file);
    ASSERT_TRUE(job);
    std::ostringstream out, err;
    CommandContext ctx = contextFor("flame", out, err);
    FlameOptions options;
    options.inputs.paths = {file};
    int code = -1;
    // The allocated peak is A + B = 512 KiB in 2 allocations, from 2 ms to 6 ms.
    const std::optional<FlameResult> peak = flameOf(ctx, *job, options, code);
    ASSERT_TRUE(peak) << err.str();
    EXPECT_EQ(peak->level, trace::MemoryLevel::Allocated);
    EXPECT_FALSE(peak->tree.isDiff);
    EXPECT_EQ(peak->tree.root().bytes, 512 * kKiB);
    EXPECT_EQ(peak->tree.root().count, 2);
    // Times with a unit count from the first event of the level shown (allocated: A at 2 ms):
    // 2ms is 4 ms (A and B alive), 6ms is 8 ms (A freed at 6 ms, B alive).
    options.request.atText = "2ms";
    options.diffText = "6ms";
    const std::optional<FlameResult> diff = flameOf(ctx, *job, options, code);
    ASSERT_TRUE(diff) << err.str();
    EXPECT_TRUE(diff->tree.isDiff);
    EXPECT_EQ(diff->tree.beforeTimeNs, 4 * kMs);
    EXPECT_EQ(diff->tree.timeNs, 8 * kMs);
    EXPECT_EQ(diff->tree.root().beforeBytes, 512 * kKiB);
    EXPECT_EQ(diff->tree.root().afterBytes, 256 * kKiB);
    fs::remove_all(dir);
}

/// One run whose allocated peak is `peakBytes`: one allocation alive from 1 ms to 2 ms.
std::string writeRun(const fs::path& dir, const std::string& name, int64_t peakBytes) {
    trace::TraceData d;
    add(d, 1 * kMs, 0x1000, peakBytes, trace::MemoryAction::Alloc, trace::MemoryLevel::Allocated);
    add(d, 2 * kMs, 0x1000, peakBytes, trace::MemoryAction::Free, trace::MemoryLevel::Allocated);
    const std::string file = (dir / name).string();
    EXPECT_TRUE(trace::writeTraceFile(file, d).ok());
    return file;
}

TEST(CommandResults, BatchFitOfThreeRunsOnALine) {
    const fs::path dir = test::tempDir();
    // Peaks 1 GiB + 256 MiB x batch at batches 1, 2, 4: the fit is that line exactly (R^2 = 1).
    BatchFitOptions options;
    for (int b : {1, 2, 4}) {
        options.runs.push_back(
            {writeRun(dir, "b" + std::to_string(b) + ".vscope", kGiB + b * 256 * kMiB), double(b)});
    }
    // Capacity 8 GiB + 100 MiB = 8292 MiB: under 100 %, 1024 + 256 b <= 8292 gives b <= 28.4, so
    // 28; under 80 %, 1024 + 256 b <= 6633.6 gives b <= 21.9, so 21.
    options.capacity = uint64_t(8 * kGiB + 100 * kMiB);
    std::ostringstream out, err;
    CommandContext ctx = contextFor("batch-fit", out, err);
    int code = -1;
    const std::optional<analysis::BatchFit> fit = fitBatchRuns(ctx, options, code);
    ASSERT_TRUE(fit) << err.str();
    EXPECT_EQ(code, kExitSuccess);
    EXPECT_NEAR(fit->slopeBytesPerSample, double(256 * kMiB), 1.0);
    EXPECT_NEAR(fit->interceptBytes, double(kGiB), 1.0);
    EXPECT_NEAR(fit->rSquared, 1.0, 1e-9);
    EXPECT_EQ(fit->largestBatchUnder100, 28);
    EXPECT_EQ(fit->largestBatchUnder80, 21);
    EXPECT_EQ(fit->distinctBatchSizes, 3u);
    EXPECT_EQ(batchFitExitCode(*fit), kExitSuccess);
    fs::remove_all(dir);
}

TEST(CommandResults, BatchFitWarnsFirstAboutOneRunGivenTwice) {
    const fs::path dir = test::tempDir();
    const std::string a = writeRun(dir, "a.vscope", kGiB + 256 * kMiB);
    BatchFitOptions options;
    options.runs = {{a, 1},
                    {a, 2},
                    {writeRun(dir, "c.vscope", kGiB + 4 * 256 * kMiB), 4},
                    {writeRun(dir, "d.vscope", kGiB + 8 * 256 * kMiB), 8}};
    options.capacity = uint64_t(80 * kGiB);
    std::ostringstream out, err;
    CommandContext ctx = contextFor("batch-fit", out, err);
    int code = -1;
    const std::optional<analysis::BatchFit> fit = fitBatchRuns(ctx, options, code);
    ASSERT_TRUE(fit) << err.str();
    ASSERT_FALSE(fit->warnings.empty());
    EXPECT_EQ(
        fit->warnings.front().rfind(
            "the same run twice: " + a + " (batch 1) and " + a + " (batch 2) are one file", 0),
        0u)
        << fit->warnings.front();
    fs::remove_all(dir);
}

TEST(CommandResults, SummarizeListsEveryRankFileAndTheUnreadableOne) {
    const fs::path dir = test::tempDir();
    writeRun(dir, "rank0.vscope", kMiB);
    writeRun(dir, "rank1.vscope", 2 * kMiB);
    std::ofstream(dir / "rank2.vscope") << "not a trace";
    SummarizeOptions options;
    options.inputs = {dir.string()};
    options.output = (dir / "job.vscope-index").string();
    std::ostringstream out, err;
    CommandContext ctx = contextFor("summarize", out, err);
    std::vector<double> steps;
    const SummarizeResult r =
        summarizeInputs(ctx, options, [&](double done, std::string_view stage) {
            steps.push_back(done);
            EXPECT_NE(stage.find("/3 "), std::string_view::npos) << stage;
            return true;
        });
    EXPECT_TRUE(r.problems);
    ASSERT_EQ(r.index.ranks.size(), 3u);
    std::set<int> summarised;
    size_t unreadable = 0;
    for (const trace::JobIndexEntry& e : r.index.ranks) {
        if (e.problem.empty()) {
            summarised.insert(toInt(e.summary.header.rank));  // from the names: rank0, rank1
        } else {
            ++unreadable;
        }
    }
    EXPECT_EQ(summarised, (std::set<int>{0, 1}));
    EXPECT_EQ(unreadable, 1u);
    EXPECT_EQ(steps, (std::vector<double>{1.0 / 3, 2.0 / 3, 1.0}));
    EXPECT_FALSE(fs::exists(options.output));  // the result is a value: runSummarize writes it
    fs::remove_all(dir);
}

TEST(CommandOptions, SegmentsReadABareAtAsSeconds) {
    std::ostringstream out, err;
    CommandContext ctx = contextFor("segments", out, err);
    ctx.args = {"f.vscope", "--at", "2.5", "--device=1", "--json"};
    int code = -1;
    const std::optional<SegmentsOptions> o = parseSegmentsOptions(ctx, code);
    ASSERT_TRUE(o) << err.str();
    EXPECT_EQ(code, kExitSuccess);
    EXPECT_EQ(o->inputs.paths, std::vector<std::string>{"f.vscope"});
    EXPECT_EQ(o->atNs, 2'500'000'000);
    EXPECT_EQ(o->device, 1);
    EXPECT_FALSE(o->atOom);
    EXPECT_TRUE(o->json);
}

TEST(CommandOptions, BatchFitSplitsEachRunAtItsLastColon) {
    std::ostringstream out, err;
    CommandContext ctx = contextFor("batch-fit", out, err);
    ctx.args = {"runs/a:b.vscope:4", "c.vscope:0.5", "--capacity", "80GB"};
    int code = -1;
    const std::optional<BatchFitOptions> o = parseBatchFitOptions(ctx, code);
    ASSERT_TRUE(o) << err.str();
    ASSERT_EQ(o->runs.size(), 2u);
    EXPECT_EQ(o->runs[0].file, "runs/a:b.vscope");
    EXPECT_EQ(o->runs[0].batch, 4.0);
    EXPECT_EQ(o->runs[1].file, "c.vscope");
    EXPECT_EQ(o->runs[1].batch, 0.5);
    EXPECT_EQ(o->capacity, uint64_t{80'000'000'000});  // GB: powers of 1000
}

TEST(CommandOptions, HelpEndsTheParseWithSuccessAndTheRowsHelp) {
    std::ostringstream out, err;
    CommandContext ctx = contextFor("flame", out, err);
    ctx.args = {"--help"};
    int code = -1;
    EXPECT_FALSE(parseFlameOptions(ctx, code));
    EXPECT_EQ(code, kExitSuccess);
    EXPECT_EQ(out.str(), commandHelp(*findCommand("flame")));
    EXPECT_TRUE(err.str().empty());
}

TEST(CommandOptions, TheInputRuleCountsInputsAndTakesTheBundledSampleWhenAsked) {
    std::ostringstream out, err;
    CommandContext ctx = contextFor("report", out, err);
    ParsedArgs none;
    const std::optional<InputOptions> bundled = parseInputs(ctx, none, {0, SIZE_MAX, true});
    ASSERT_TRUE(bundled);
    EXPECT_TRUE(bundled->bundled);
    ParsedArgs two;
    two.positional = {"a", "b"};
    two.values["--keep-going"] = "";
    const std::optional<InputOptions> kept = parseInputs(ctx, two, {});
    ASSERT_TRUE(kept);
    EXPECT_TRUE(kept->keepGoing);
    EXPECT_FALSE(kept->bundled);
    EXPECT_FALSE(parseInputs(ctx, two, {1, 1, false, "report takes one input"}));
    EXPECT_EQ(err.str().rfind("vramscope-cli report: report takes one input\n\nusage: ", 0), 0u)
        << err.str();
    err.str("");
    EXPECT_FALSE(parseInputs(ctx, none, {}));
    EXPECT_EQ(err.str().rfind("vramscope-cli report: no input given\n", 0), 0u) << err.str();
}

TEST(CommandOptions, AMalformedTimeIsRefusedBeforeAnyInputIsRead) {
    // The input does not exist: a refusal for the option (exit 2, naming it) shows that the
    // option was judged before the input was opened (which would exit 3 naming the file).
    // render's --range and --gpu: RenderCli.AMalformedRangeOrGpuIsRefusedBeforeAnyInputIsRead.
    const std::string missing = "/nonexistent/vramscope-no-such-trace.vscope";
    EXPECT_TRUE(test::refusedRun({"flame", missing, "--at", "never"}, kExitUsage,
                                 {"TIME must be peak, oom", "'never'"}));
    EXPECT_TRUE(test::refusedRun({"flame", missing, "--diff", "soon"}, kExitUsage,
                                 {"TIME must be peak, oom", "'soon'"}));
    EXPECT_TRUE(test::refusedRun(
        {"export", missing, "--format", "speedscope", "--at", "never", "-o", "/tmp/unused.json"},
        kExitUsage, {"TIME must be peak, oom", "'never'"}));
    // A well-formed option lets the command go on to the input, which it then cannot read.
    EXPECT_TRUE(test::refusedRun({"flame", missing, "--at", "1.5s"}, kExitUnreadable, {missing}));
}

}  // namespace
}  // namespace vramscope::app
