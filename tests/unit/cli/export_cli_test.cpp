// vramscope-cli export --format csv|speedscope run in-process: speedscope follows flame's
// selection rules exactly (the same exits and messages), and the options of one format are
// refused for another. The files' contents are checked by tests/tools/export_check.py.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_command.h"
#include "cli_refusal.h"
#include "cli_run.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;
using test::tempDir;

namespace fs = std::filesystem;

/// One synthetic rank (rank 0, GPU 0, five iterations) written as .vscope.
std::string writeJob(const fs::path& dir) {
    analysis::SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 5;
    const std::string file = (dir / "r.vscope").string();
    EXPECT_TRUE(trace::writeTraceFile(file, analysis::generateSyntheticJob(spec)[0]).ok());
    return file;
}

/// The message after "vramscope-cli COMMAND: ", up to the end of its line.
std::string message(const std::string& err) {
    const size_t colon = err.find(": ");
    if (colon == std::string::npos) {
        return err;
    }
    return err.substr(colon + 2, err.find('\n') - colon - 2);
}

TEST(ExportCli, SpeedscopeChoosesTheTreeByTheRulesOfFlame) {
    const fs::path dir = tempDir();
    const std::string file = writeJob(dir);
    const std::vector<std::vector<std::string>> choices = {
        {"--at", "99999s"},
        {"--at", "0"},
        {"--device", "7"},
        {"--rank", "4"},
        {"--at", "oom"},
        {"--level", "cached"},
        {"--by", "module"},
        {"--at", "when"},
        {"--device", "x"},
        {"--level", "reserved"},
        {"--at", "3ms", "--by", "nvtx"},
    };
    for (const std::vector<std::string>& choice : choices) {
        std::vector<std::string> flame = {"flame", file, "--format", "speedscope"};
        std::vector<std::string> exported = {"export", file, "--format", "speedscope"};
        flame.insert(flame.end(), choice.begin(), choice.end());
        exported.insert(exported.end(), choice.begin(), choice.end());
        const CliRun a = run(flame);
        const CliRun b = run(exported);
        EXPECT_EQ(a.code, b.code) << choice[0] << " " << choice[1] << ": " << a.err << b.err;
        EXPECT_EQ(message(a.err), message(b.err)) << choice[0] << " " << choice[1];
        EXPECT_EQ(a.out, b.out) << choice[0] << " " << choice[1];
    }
    // The errors above are errors; the last two choices give a tree.
    EXPECT_TRUE(test::refusedRun({"export", file, "--format", "speedscope", "--at", "0"},
                                 kExitUsage, {"TIME '0' is outside the trace"}));
    EXPECT_EQ(run({"export", file, "--format", "speedscope", "--level", "reserved"}).code,
              kExitSuccess);
    fs::remove_all(dir);
}

TEST(ExportCli, OptionsOfOneFormatAreRefusedForAnother) {
    const fs::path dir = tempDir();
    const std::string file = writeJob(dir);
    CliRun r = run({"export", file, "--format", "csv"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("needs --table"), std::string::npos) << r.err;
    r = run({"export", file, "--format", "csv", "--table", "kernels"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("unknown --table 'kernels'"), std::string::npos) << r.err;
    r = run({"export", file, "--format", "csv", "--table", "gaps", "--points", "10"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("--points takes a positive N, for --table memory only"), std::string::npos)
        << r.err;
    r = run({"export", file, "--format", "csv", "--table", "memory", "--points", "0"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("--points takes a positive N"), std::string::npos) << r.err;
    r = run({"export", file, "--format", "speedscope", "--table", "memory"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("--table is for --format csv"), std::string::npos) << r.err;
    r = run({"export", file, "--format", "csv", "--table", "memory", "--at", "peak"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("--at is for --format speedscope"), std::string::npos) << r.err;
    // One rank has no collectives: said, exit 3, nothing on stdout.
    r = run({"export", file, "--format", "csv", "--table", "collectives"});
    EXPECT_EQ(r.code, kExitUnreadable);
    EXPECT_TRUE(r.out.empty());
    EXPECT_NE(r.err.find("no collective was matched"), std::string::npos) << r.err;
    // A table to stdout starts with its header.
    r = run({"export", file, "--format", "csv", "--table", "iterations"});
    EXPECT_EQ(r.code, kExitSuccess) << r.err;
    EXPECT_EQ(r.out.rfind("rank,device,index,number,name,", 0), 0u) << r.out.substr(0, 80);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace vramscope::app
