// vramscope-cli segments and report's segments at an OOM, in-process, on a hand-built trace whose
// figures are worked out in the comments.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "cli_refusal.h"
#include "cli_run.h"
#include "test_units.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

using testdata::kKiB;
using testdata::kMiB;
using testdata::kMs;

void add(trace::TraceData& d, int64_t t, uint64_t address, uint64_t size,
         trace::MemoryAction action, trace::MemoryLevel level) {
    trace::MemoryEvent e;
    e.timestampNs = t;
    e.address = address;
    e.sizeBytes = size;
    e.action = action;
    e.level = level;
    e.kind = trace::MemoryKind::Device;
    d.memory.append(e);
}

/// S1 [0x100000, +1 MiB) and S2 [0x400000, +2 MiB) from 1 ms; at 2 ms S1 gets blocks
/// [0x100000, +256 KiB) and [0x180000, +256 KiB). OOM 1 at 5 ms asks for 3 MiB: free is 256 KiB
/// (S1's middle) + 256 KiB (S1's end) + 2 MiB (S2) = 2.5 MiB, the largest 2 MiB, fragmentation
/// 1 - 2 / 2.5 = 0.2. At 6 ms the first block is freed (S1's free becomes 512 KiB + 256 KiB,
/// largest still 2 MiB); OOM 2 at 8 ms asks for 2.5 MiB: free 2.75 MiB >= 2.5 MiB > 2 MiB, so
/// fragmentation 1 - 2 / 2.75 = 0.2727.
std::string writeTrace(const fs::path& dir, bool withSegments = true) {
    trace::TraceData d;
    const auto R = trace::MemoryLevel::Reserved, A = trace::MemoryLevel::Allocated;
    const auto alloc = trace::MemoryAction::Alloc, free = trace::MemoryAction::Free;
    if (withSegments) {
        add(d, 1 * kMs, 0x100000, kMiB, alloc, R);
        add(d, 1 * kMs, 0x400000, 2 * kMiB, alloc, R);
    }
    add(d, 2 * kMs, 0x100000, 256 * kKiB, alloc, A);
    add(d, 2 * kMs, 0x180000, 256 * kKiB, alloc, A);
    add(d, 6 * kMs, 0x100000, 256 * kKiB, free, A);
    add(d, 9 * kMs, 0x180000, 256 * kKiB, free, A);
    d.ooms.push_back({5 * kMs, trace::DeviceIndex{0}, 0, 3 * kMiB, 0});
    d.ooms.push_back({8 * kMs, trace::DeviceIndex{0}, 0, 5 * kMiB / 2, 0});
    const std::string file = (dir / (withSegments ? "seg.vscope" : "noseg.vscope")).string();
    EXPECT_TRUE(trace::writeTraceFile(file, d).ok());
    return file;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(SegmentsCli, TextAtTheFirstOomByDefault) {
    const fs::path dir = tempDir();
    const CliRun r = run({"segments", writeTrace(dir)});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    // The OOM is 4 ms after the first event (1 ms).
    EXPECT_TRUE(has(r.out, "GPU 0 at 4.00 ms after the trace start (OOM 1 of 2), request 3.00 MiB"))
        << r.out;
    // Largest first: S2 (2 MiB, empty), then S1 (1 MiB, 512 KiB allocated, 2 blocks).
    const size_t s2 = r.out.find("0x400000");
    const size_t s1 = r.out.find("0x100000");
    ASSERT_NE(s2, std::string::npos) << r.out;
    ASSERT_NE(s1, std::string::npos) << r.out;
    EXPECT_LT(s2, s1);
    EXPECT_TRUE(has(r.out,
                    "reserved 3.00 MiB in 2 segments, allocated 512 KiB, free 2.50 MiB, "
                    "largest free block 2.00 MiB, fragmentation 0.200"))
        << r.out;
    EXPECT_TRUE(has(r.out,
                    "largest free block 2.00 MiB < request 3.00 MiB (3145728 B): only "
                    "2.50 MiB was free"))
        << r.out;
    fs::remove_all(dir);
}

TEST(SegmentsCli, JsonAtTheSecondOom) {
    const fs::path dir = tempDir();
    const CliRun r = run({"segments", writeTrace(dir), "--at-oom", "2", "--json"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["time_ns"], 8 * kMs);
    EXPECT_EQ(j["since_start_ns"], 7 * kMs);
    EXPECT_EQ(j["moment"], "OOM 2 of 2");
    const auto& t = j["totals"];
    EXPECT_EQ(t["segments"], 2);
    EXPECT_EQ(t["reserved_bytes"], 3 * kMiB);
    EXPECT_EQ(t["allocated_bytes"], 256 * kKiB);
    EXPECT_EQ(t["free_bytes"], 2 * kMiB + 768 * kKiB);
    EXPECT_EQ(t["largest_free_block_bytes"], 2 * kMiB);
    EXPECT_NEAR(t["fragmentation"].get<double>(), 1.0 - 2.0 / 2.75, 1e-12);
    EXPECT_EQ(t["request_bytes"], 5 * kMiB / 2);
    EXPECT_EQ(t["blocks_outside_segments"], 0);
    ASSERT_EQ(j["segments"].size(), 2u);
    const auto& s1 = j["segments"][0];  // by address
    EXPECT_EQ(s1["address"], 0x100000);
    ASSERT_EQ(s1["blocks"].size(), 1u);
    EXPECT_EQ(s1["blocks"][0]["address"], 0x180000);
    // Gaps: [0x100000, +512 KiB) before the block, [0x1c0000, +256 KiB) after it.
    ASSERT_EQ(s1["gaps"].size(), 2u);
    EXPECT_EQ(s1["gaps"][0]["size_bytes"], 512 * kKiB);
    EXPECT_EQ(s1["gaps"][1]["address"], 0x1c0000);
    EXPECT_TRUE(has(j["free_text"].get<std::string>(), "but in pieces")) << j["free_text"];
    fs::remove_all(dir);
}

TEST(SegmentsCli, AtATimeInSecondsFromTheStart) {
    const fs::path dir = tempDir();
    const std::string file = writeTrace(dir);
    // 0.001 s after the first event (1 ms) is 2 ms: both blocks alive, no request.
    CliRun r = run({"segments", file, "--at", "0.001", "--json"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["time_ns"], 2 * kMs);
    EXPECT_EQ(j["moment"], "the time asked for");
    EXPECT_EQ(j["totals"]["allocated_bytes"], 512 * kKiB);
    EXPECT_TRUE(j["totals"]["request_bytes"].is_null());
    // With a unit: 8 ms after the start is 9 ms, the last event, when the last block is freed.
    r = run({"segments", file, "--at", "8ms", "--json"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["time_ns"], 9 * kMs);
    EXPECT_EQ(j["totals"]["allocated_bytes"], 0);
    EXPECT_EQ(j["totals"]["fragmentation"], 1.0 - 2.0 / 3.0);
    fs::remove_all(dir);
}

TEST(SegmentsCli, NamesWhatIsWrongWithItsExitCode) {
    const fs::path dir = tempDir();
    const std::string file = writeTrace(dir);
    CliRun r = run({"segments", file, "--at-oom", "3"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_TRUE(has(r.err, "GPU 0 has 2 OOMs, not 3")) << r.err;
    EXPECT_TRUE(test::refusedRun({"segments", file, "--at", "1s", "--at-oom", "1"}, kExitUsage,
                                 {"give --at or --at-oom, not both"}));
    EXPECT_TRUE(test::refusedRun({"segments", file, "--at-oom", "0"}, kExitUsage,
                                 {"--at-oom needs a positive integer"}));
    EXPECT_TRUE(
        test::refusedRun({"segments", file, "--at", "soon"}, kExitUsage, {"--at needs seconds"}));
    r = run({"segments", file, "--at", "99s"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_TRUE(has(r.err, "past the end of the trace")) << r.err;
    r = run({"segments", file, "--device", "5"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_TRUE(has(r.err, "no GPU 5")) << r.err;
    // Blocks without segments (a trace of tensors only): the input cannot give them.
    r = run({"segments", writeTrace(dir, false)});
    EXPECT_EQ(r.code, kExitUnreadable);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(has(r.err, "no reserved segments")) << r.err;
    const std::string help = run({"segments", "--help"}).out;
    EXPECT_TRUE(has(help, "--at-oom N")) << help;
    EXPECT_TRUE(has(help, "exit codes:")) << help;
    EXPECT_TRUE(has(run({"--help"}).out, "segments")) << "not in the top-level help";
    fs::remove_all(dir);
}

TEST(SegmentsCli, ReportGivesTheSegmentsAtEachOom) {
    const fs::path dir = tempDir();
    const std::string file = writeTrace(dir);
    CliRun r = run({"report", "--json", file});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& ooms = j["devices"][0]["ooms"];
    ASSERT_EQ(ooms.size(), 2u);
    const auto& first = ooms[0]["segments"];
    ASSERT_TRUE(first.is_object()) << ooms[0];
    EXPECT_EQ(first["segments"], 2);
    EXPECT_EQ(first["free_bytes"], 5 * kMiB / 2);
    EXPECT_EQ(first["largest_free_block_bytes"], 2 * kMiB);
    EXPECT_NEAR(first["fragmentation"].get<double>(), 0.2, 1e-12);
    EXPECT_EQ(first["request_bytes"], 3 * kMiB);
    ASSERT_EQ(first["largest_segments"].size(), 2u);
    EXPECT_EQ(first["largest_segments"][0]["address"], 0x400000);
    EXPECT_EQ(first["largest_segments"][0]["largest_free_bytes"], 2 * kMiB);
    EXPECT_EQ(first["largest_segments"][1]["blocks"], 2);
    EXPECT_EQ(ooms[1]["segments"]["free_bytes"], 2 * kMiB + 768 * kKiB);
    r = run({"report", file});
    EXPECT_TRUE(has(r.out,
                    "    segments: largest free block 2.00 MiB < request 2.50 MiB "
                    "(2621440 B): 2.75 MiB was free inside the 2 segments but in pieces "
                    "(fragmentation 0.273), so no segment could hold it"))
        << r.out;
    // Without segments: null, and the reason.
    r = run({"report", "--json", writeTrace(dir, false)});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto k = nlohmann::json::parse(r.out);
    EXPECT_TRUE(k["devices"][0]["ooms"][0]["segments"].is_null());
    EXPECT_TRUE(has(k["devices"][0]["ooms"][0]["segments_unknown_reason"].get<std::string>(),
                    "no reserved segments"));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace vramscope::app
