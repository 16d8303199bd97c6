// vramscope-run --sweep as built, on the stand-in job tests/tools/sweep_standin.py (no GPU): the
// runs it makes, where it stops, the OOM run's request and batch-fit's prediction, against values
// worked out by hand from the stand-in's sizing formula.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "vramscope/trace/trace_file.h"

namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMiB = 1ull << 20;

struct Ran {
    int exitCode = -1;
    std::string out;
    std::string err;
};

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

class SweepRun : public ::testing::Test {
protected:
    void SetUp() override {
        if (std::system("python3 -c pass >/dev/null 2>&1") != 0) {
            GTEST_SKIP() << "python3 is needed to run the stand-in job";
        }
        char tmpl[] = "/tmp/vramscope-sweep-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        m_dir = tmpl;
    }
    void TearDown() override {
        if (!m_dir.empty() && !HasFailure()) {
            std::system(("rm -rf '" + m_dir + "'").c_str());
        }
    }

    /// Runs vramscope-run --sweep SPEC over the stand-in with `extra` stand-in arguments. Any
    /// readable file serves as the agent: nothing here starts CUDA.
    Ran sweep(const std::string& spec, const std::string& extra,
              const std::string& cli = VRAMSCOPE_CLI_PATH) {
        const std::string standin =
            std::string(VRAMSCOPE_SOURCE_DIR) + "/tests/tools/sweep_standin.py";
        const std::string cmd = "VRAMSCOPE_AGENT='" + standin + "' VRAMSCOPE_CLI='" + cli + "' '" +
                                VRAMSCOPE_RUN_PATH + "' --sweep " + spec + " -o '" + m_dir +
                                "/out' -- python3 '" + standin + "' --cli '" + VRAMSCOPE_CLI_PATH +
                                "' --batch '{BATCH}' " + extra + " >'" + m_dir + "/stdout' 2>'" +
                                m_dir + "/stderr'";
        Ran r;
        const int status = std::system(cmd.c_str());
        r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = readAll(m_dir + "/stdout");
        r.err = readAll(m_dir + "/stderr");
        return r;
    }

    std::string run(const std::string& value) const { return m_dir + "/out/BATCH-" + value; }

    std::string m_dir;
};

bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

}  // namespace

TEST_F(SweepRun, StopsAtTheFirstOomAndPredictsTheLargestBatch) {
    const Ran r = sweep("BATCH=8,16,32,64,128", "");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    // The stand-in: peak = 12 GiB + 24 x 32 MiB x batch on an 80 GiB GPU, so batch 128 (108 GiB)
    // is the first that does not fit; its failing allocation is one activation, 128 x 32 MiB.
    for (const char* v : {"8", "16", "32", "64"}) {
        EXPECT_TRUE(exists(run(v) + "/sweep_standin-rank0.vscope")) << v;
        EXPECT_TRUE(has(r.out, std::string("BATCH=") + v + ": finished, 1 trace file")) << r.out;
    }
    EXPECT_TRUE(exists(run("128")));
    EXPECT_FALSE(exists(run("128") + "/sweep_standin-rank0.vscope"));
    EXPECT_TRUE(has(r.out, "BATCH=128: out of memory (exit status 1), 0 trace files")) << r.out;
    EXPECT_TRUE(has(r.out, "largest stable BATCH measured: 64\n")) << r.out;
    const uint64_t request = 128 * 32 * kMiB;
    EXPECT_TRUE(has(r.out, "out of memory at BATCH=128: requested 4.00 GiB (about " +
                               std::to_string(request) + " bytes, from PyTorch's message"))
        << r.out;
    // The stand-in's stderr reached the user unchanged.
    EXPECT_TRUE(has(r.err,
                    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 "
                    "GiB. GPU 0 has a total capacity of 80.00 GiB of which 0 bytes is "
                    "free."))
        << r.err;

    // batch-fit over the four runs: the line through the stand-in's peaks, by hand.
    const double intercept = double(12 * kGiB);
    const double slope = double(24 * 32 * kMiB);
    const double capacity = double(80 * kGiB);
    const int64_t under80 = int64_t(std::floor((0.8 * capacity - intercept) / slope));  // 69
    const int64_t under100 = int64_t(std::floor((capacity - intercept) / slope));       // 90
    EXPECT_EQ(under80, 69);
    EXPECT_EQ(under100, 90);
    EXPECT_TRUE(has(r.out, "batch-fit over the 4 finished runs")) << r.out;
    EXPECT_TRUE(
        has(r.out, run("8") + ":8 " + run("16") + ":16 " + run("32") + ":32 " + run("64") + ":64"))
        << r.out;
    for (int b : {8, 16, 32, 64}) {  // peaks of whole GiB: 12 + 0.75 b
        char peak[64];
        std::snprintf(peak, sizeof peak, "batch %d: peak %.1f GiB", b,
                      (intercept + slope * b) / double(kGiB));
        EXPECT_TRUE(has(r.out, peak)) << peak << "\n" << r.out;
    }
    EXPECT_TRUE(has(r.out, "fit: peak = 12.0 GiB + 768 MiB x batch")) << r.out;
    EXPECT_TRUE(has(r.out, "R^2 = 1.00)")) << r.out;  // the peaks lie on one line
    EXPECT_TRUE(
        has(r.out, "largest batch under 80 % of capacity: " + std::to_string(under80) + " "))
        << r.out;
    EXPECT_TRUE(
        has(r.out, "largest batch under 100 % of capacity: " + std::to_string(under100) + " "))
        << r.out;
    EXPECT_FALSE(has(r.out, "warning:")) << r.out;
}

TEST_F(SweepRun, TakesTheRequestFromTheTracesOomEvent) {
    // A trace that holds one OOM event with a request no message would round to.
    vramscope::trace::TraceData data;
    data.header.devices.push_back(
        {vramscope::trace::DeviceIndex{0}, "GPU-x", "stand-in", 80 * kGiB});
    const uint64_t requested = 4 * kGiB + 12345;
    data.ooms.push_back({1'000'000, vramscope::trace::DeviceIndex{0}, 7, requested, 0});
    const std::string oomTrace = m_dir + "/oom.vscope";
    ASSERT_TRUE(vramscope::trace::writeTraceFile(oomTrace, data).ok());

    const Ran r = sweep("BATCH=8,128,256", "--oom-trace '" + oomTrace + "'");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "BATCH=128: out of memory (exit status 1), 1 trace file")) << r.out;
    EXPECT_TRUE(has(r.out, "BATCH=256: not run\n")) << r.out;
    EXPECT_FALSE(exists(run("256")));
    EXPECT_TRUE(has(r.out, "largest stable BATCH measured: 8\n")) << r.out;
    EXPECT_TRUE(has(r.out, "requested 4.00 GiB (" + std::to_string(requested) +
                               " bytes, from the trace's OOM event)"))
        << r.out;
    EXPECT_TRUE(has(r.out, "batch-fit: not run: it needs at least two finished runs")) << r.out;
}

TEST_F(SweepRun, StopsAtAnotherFailureWithItsExitStatus) {
    const Ran r = sweep("BATCH=8,16,32,64", "--fail-at 32");
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "BATCH=32: failed (exit status 3)")) << r.out;
    EXPECT_TRUE(has(r.out, "stopped at BATCH=32: the command failed with exit status 3")) << r.out;
    EXPECT_TRUE(has(r.out, "BATCH=64: not run\n")) << r.out;
    EXPECT_FALSE(exists(run("64")));  // made only when it runs
    EXPECT_TRUE(has(r.out, "largest stable BATCH measured: 16\n")) << r.out;
    EXPECT_TRUE(has(r.err, "ValueError: the stand-in was told to fail at BATCH=32")) << r.err;
}

TEST_F(SweepRun, RefusesBadSpecsAndTracesLeftFromAnEarlierSweep) {
    const Ran twice = sweep("BATCH=8,8", "");
    EXPECT_EQ(twice.exitCode, 2);
    EXPECT_TRUE(has(twice.err, "--sweep BATCH: the value 8 is given twice")) << twice.err;
    const Ran none = sweep("BATCH=", "");
    EXPECT_EQ(none.exitCode, 2);
    EXPECT_TRUE(has(none.err, "--sweep BATCH= has no values")) << none.err;
    const Ran badName = sweep("9LIVES=1", "");
    EXPECT_EQ(badName.exitCode, 2);
    EXPECT_TRUE(has(badName.err, "'9LIVES' is not an environment variable name")) << badName.err;
    ASSERT_EQ(sweep("BATCH=8", "").exitCode, 0);
    const Ran again = sweep("BATCH=8", "");
    EXPECT_EQ(again.exitCode, 2);
    EXPECT_TRUE(has(again.err, "already holds traces")) << again.err;
}

TEST_F(SweepRun, RefusesAnOutputThatIsAFileBeforeRunningAnything) {
    std::FILE* f = std::fopen((m_dir + "/out").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
    const Ran r = sweep("BATCH=8,16", "");
    EXPECT_EQ(r.exitCode, 2);  // usage: --help's "no output directory"
    EXPECT_TRUE(has(r.err, "is not a directory")) << r.err;
    EXPECT_FALSE(has(r.err, "[1/2]")) << r.err;  // no run was started
}

TEST_F(SweepRun, SaysWhatItKnowsWhenVramscopeCliIsMissing) {
    const Ran r = sweep("BATCH=8,16", "", m_dir + "/no-such-cli");
    EXPECT_EQ(r.exitCode, 4) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "largest stable BATCH measured: 16\n")) << r.out;
    EXPECT_TRUE(has(r.out, "no run ran out of memory: every value finished")) << r.out;
    EXPECT_TRUE(has(r.out, "batch-fit: not run: VRAMSCOPE_CLI=" + m_dir +
                               "/no-such-cli is not an executable file"))
        << r.out;
}
