// `check --advice allocator-churn` in-process: FAIL on a trace that frees and reserves a segment
// in every iteration, PASS on the synthetic job (its reserved memory only grows, in the first
// iteration: synthetic_job.h), NOT CHECKED without iterations.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_command.h"
#include "cli_run.h"
#include "test_units.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

using testdata::kMs;

void segment(trace::TraceData& d, int64_t t, trace::MemoryAction action) {
    trace::MemoryEvent e;
    e.timestampNs = t;
    e.address = 0x10000000;
    e.sizeBytes = 20ull << 20;
    e.action = action;
    e.level = trace::MemoryLevel::Reserved;
    e.kind = trace::MemoryKind::Device;
    d.memory.append(e);
}

/// 6 iterations of 10 ms; the 20 MiB segment is reserved in the first, then freed and reserved
/// again in each of the 5 others: 5 of 5 churn.
trace::TraceData churning(bool withIterations) {
    trace::TraceData d;
    d.header.rank = trace::RankId{0};
    segment(d, 1 * kMs, trace::MemoryAction::Alloc);
    for (int i = 0; i < 6; ++i) {
        if (withIterations) {
            trace::RangeEvent r;
            r.startNs = i * 10 * kMs;
            r.endNs = (i + 1) * 10 * kMs;
            r.name = d.intern("iteration " + std::to_string(i));
            r.kind = trace::RangeKind::Iteration;
            d.ranges.append(r);
        }
        if (i > 0) {
            segment(d, i * 10 * kMs + kMs, trace::MemoryAction::Free);
            segment(d, i * 10 * kMs + 2 * kMs, trace::MemoryAction::Alloc);
        }
    }
    return d;
}

TEST(AllocatorChurnCli, CheckFailsPassesOrCannotCheck) {
    const fs::path dir = tempDir();
    const std::string bad = (dir / "churn.vscope").string();
    const std::string none = (dir / "no_iterations.vscope").string();
    const std::string ok = (dir / "synth.vscope").string();
    ASSERT_TRUE(trace::writeTraceFile(bad, churning(true)).ok());
    ASSERT_TRUE(trace::writeTraceFile(none, churning(false)).ok());
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 6;
    ASSERT_TRUE(trace::writeTraceFile(ok, analysis::generateSyntheticJob(spec)[0]).ok());

    CliRun r = run({"check", "--advice", "allocator-churn", bad});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
    EXPECT_NE(
        r.out.find("FAIL allocator-churn: rank 0 GPU 0: segments freed and allocated again inside "
                   "5 of 5 iterations after the warm-up (100.0 %) > 50.0 %"),
        std::string::npos)
        << r.out;

    r = run({"check", "--advice", "allocator-churn", ok});
    EXPECT_EQ(r.code, kExitSuccess) << r.out;
    EXPECT_NE(r.out.find("PASS allocator-churn"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0 of 5 iterations after the warm-up (0.0 %) <= 50.0 %"),
              std::string::npos)
        << r.out;

    r = run({"check", "--advice", "allocator-churn", none});
    EXPECT_EQ(r.code, kExitCheckFailed) << r.out;  // named on the command line and not checked
    EXPECT_NE(r.out.find("NOT CHECKED allocator-churn"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("no iterations"), std::string::npos) << r.out;
    EXPECT_EQ(run({"check", "--advice", "allocator-churn", "--allow-unchecked", none}).code,
              kExitSuccess);

    // report says the same in its advice section.
    r = run({"report", bad});
    EXPECT_EQ(r.code, kExitSuccess);
    EXPECT_NE(r.out.find("allocator-churn"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("expandable_segments:True"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace vramscope::app
