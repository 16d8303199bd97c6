// `vramscope-cli export --format perfetto|chrome-json`, in-process: the files it writes parse
// (Perfetto with the generated classes of the schema subset, Chrome JSON with nlohmann-json) and
// hold every kernel and every rank of the job the synth command wrote, counted here from the
// written .vscope files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_refusal.h"
#include "cli_run.h"
#include "test_files.h"
#include "unit/analysis/perfetto_trace_reader.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::app {
namespace {

namespace fs = std::filesystem;
using test::run;

using testdata::readFile;

/// Kernels, copies and memsets of every rank of the job in `dir`.
size_t kernelsIn(const fs::path& dir) {
    auto job = trace::openJob({dir.string()});
    EXPECT_TRUE(job.ok());
    size_t n = 0;
    for (const trace::RankTrace& r : job->ranks) {
        n += r.trace.data.kernels.size();
    }
    return n;
}

TEST(ExportTraceCli, PerfettoFileParsesWithEveryRankAndKernel) {
    const fs::path dir = test::tempDir();
    ASSERT_EQ(
        run({"synth", "--ranks", "3", "--iterations", "4", "-o", (dir / "job/").string()}).code,
        kExitSuccess);
    const fs::path out = dir / "job.pftrace";
    const auto r =
        run({"export", (dir / "job").string(), "--format", "perfetto", "-o", out.string()});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    for (const auto& e : fs::directory_iterator(out.parent_path())) {
        EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos)
            << "a temporary was left: " << e.path();
    }
    const testdata::PfTrace pf = testdata::replayPerfetto(readFile(out));
    ASSERT_TRUE(pf.problems.empty()) << pf.problems.front();
    // One process per rank, named by its rank ("rank 1 · HOST").
    std::set<std::string> ranks;
    for (const auto& [uuid, t] : pf.tracks) {
        if (t.has_process()) {
            const std::string& name = t.process().process_name();
            ranks.insert(name.substr(0, name.find(" · ")));
        }
    }
    EXPECT_EQ(ranks, (std::set<std::string>{"rank 0", "rank 1", "rank 2"}));
    size_t kernels = 0;
    for (const testdata::PfSlice& s : pf.slices) {
        kernels +=
            s.category == "kernel" || s.category == "gpu_memcpy" || s.category == "gpu_memset";
    }
    EXPECT_EQ(kernels, kernelsIn(dir / "job"));
    fs::remove_all(dir);
}

TEST(ExportTraceCli, ChromeJsonGoesToStandardOutputAndPerfettoNeedsAFile) {
    const fs::path dir = test::tempDir();
    ASSERT_EQ(
        run({"synth", "--ranks", "2", "--iterations", "3", "-o", (dir / "job/").string()}).code,
        kExitSuccess);
    const auto r = run({"export", (dir / "job").string(), "--format", "chrome-json"});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    size_t kernels = 0;
    std::set<int> pids;
    for (const auto& e : doc["traceEvents"]) {
        pids.insert(e["pid"].get<int>());
        kernels += e["ph"] == "X" &&
                   (e["cat"] == "kernel" || e["cat"] == "gpu_memcpy" || e["cat"] == "gpu_memset");
    }
    EXPECT_EQ(pids, (std::set<int>{1, 2}));
    EXPECT_EQ(kernels, kernelsIn(dir / "job"));
    EXPECT_TRUE(test::refusedRun({"export", (dir / "job").string(), "--format", "perfetto"},
                                 kExitUsage, {"perfetto is binary: give -o FILE"}));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace vramscope::app
