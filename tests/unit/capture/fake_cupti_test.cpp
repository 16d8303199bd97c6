// The built capture agent, whole, over a fake CUPTI and a fake CUDA driver (no GPU):
// fake_cupti_harness loads tests/unit/capture/fake_cupti/'s libcupti.so.13 and libcuda.so.1, then
// the agent, calls InitializeInjection and plays one scenario in a child process. This test reads
// the .vscope file the agent wrote with the trace reader and what the fakes logged, and checks
// them against the plan the harness played (fake_cupti_plan.h), with expected values written out
// here: kernel names demangled by hand, times and sizes from the plan's formulas, the fake
// device's facts as the fake driver states them.

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fake_cupti/fake_cupti_plan.h"
#include "vramscope/trace/data_loss.h"
#include "vramscope/trace/trace_file.h"

namespace {

using namespace vramscope;
namespace plan = vramscope::test::fake_plan;

constexpr int kFlushForced = 1;            // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED (cupti_activity.h)
constexpr int kThreadIdSystem = 1;         // CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
constexpr int kKindKernel = 3;             // CUPTI_ACTIVITY_KIND_KERNEL
constexpr int kKindConcurrentKernel = 10;  // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
constexpr int kCbidCudaMalloc = 20;        // CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020

bool agentBuilt() {
    struct stat st {};
    return std::string(VRAMSCOPE_AGENT_PATH).size() > 0 && stat(VRAMSCOPE_AGENT_PATH, &st) == 0;
}

/// One line of $FAKECUPTI_LOG: "event key=value ...".
struct LogEntry {
    std::string event;
    std::map<std::string, std::string> fields;

    bool has(const std::string& key) const { return fields.count(key) != 0; }
    long long num(const std::string& key) const {
        auto it = fields.find(key);
        return it == fields.end() ? -1 : std::stoll(it->second);
    }
};

struct HarnessRun {
    std::string dir;
    bool exited = false;
    int exitCode = -1;
    int signal = 0;
    bool timedOut = false;
    std::string stderrText;
    std::vector<LogEntry> log;

    std::vector<LogEntry> events(const std::string& event) const {
        std::vector<LogEntry> out;
        for (const LogEntry& e : log) {
            if (e.event == event) {
                out.push_back(e);
            }
        }
        return out;
    }
    /// The first "harness KEY=..." value, -1 when absent.
    long long harness(const std::string& key) const {
        for (const LogEntry& e : log) {
            if (e.event == "harness" && e.has(key)) {
                return e.num(key);
            }
        }
        return -1;
    }
    std::vector<std::string> stderrLines() const {
        std::vector<std::string> lines;
        std::istringstream in(stderrText);
        for (std::string line; std::getline(in, line);) {
            lines.push_back(line);
        }
        return lines;
    }
    /// Lines the agent wrote ("vramscope: ...") that contain `text`.
    int agentLinesWith(const std::string& text) const {
        int n = 0;
        for (const std::string& line : stderrLines()) {
            if (line.rfind("vramscope: ", 0) == 0 && line.find(text) != std::string::npos) {
                ++n;
            }
        }
        return n;
    }
    std::vector<std::string> traceFiles() const {
        std::vector<std::string> out;
        if (DIR* d = opendir(dir.c_str())) {
            while (dirent* e = readdir(d)) {
                const std::string name = e->d_name;
                if (name.size() > 7 && name.compare(name.size() - 7, 7, ".vscope") == 0 &&
                    name.find("-ring-") == std::string::npos) {
                    out.push_back(dir + "/" + name);
                }
            }
            closedir(d);
        }
        return out;
    }
};

std::string makeTempDir() {
    std::string pattern = ::testing::TempDir() + "vramscope-fakecupti-XXXXXX";
    char* dir = mkdtemp(pattern.data());
    return dir != nullptr ? std::string(dir) : std::string();
}

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<LogEntry> parseLog(const std::string& text) {
    std::vector<LogEntry> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        LogEntry e;
        words >> e.event;
        for (std::string w; words >> w;) {
            const size_t eq = w.find('=');
            if (eq != std::string::npos) {
                e.fields[w.substr(0, eq)] = w.substr(eq + 1);
            }
        }
        if (!e.event.empty()) {
            out.push_back(std::move(e));
        }
    }
    return out;
}

/// Runs the harness on `scenario` in a fresh directory with a clean capture environment plus
/// `env`; kills it after `timeoutS` seconds.
HarnessRun runHarness(const std::string& scenario, const std::string& arg,
                      const std::map<std::string, std::string>& env = {}, int timeoutS = 60) {
    HarnessRun run;
    run.dir = makeTempDir();
    const std::string logPath = run.dir + "/fake.log";
    const std::string errPath = run.dir + "/stderr.txt";
    const pid_t pid = fork();
    if (pid == 0) {
        for (const char* name : {"RANK",
                                 "SLURM_PROCID",
                                 "OMPI_COMM_WORLD_RANK",
                                 "PMI_RANK",
                                 "LOCAL_RANK",
                                 "SLURM_LOCALID",
                                 "OMPI_COMM_WORLD_LOCAL_RANK",
                                 "MPI_LOCALRANKID",
                                 "WORLD_SIZE",
                                 "SLURM_NTASKS",
                                 "OMPI_COMM_WORLD_SIZE",
                                 "PMI_SIZE",
                                 "VRAMSCOPE_NCCL",
                                 "VRAMSCOPE_NCCL_EVENTS",
                                 "VRAMSCOPE_JOB",
                                 "VRAMSCOPE_ROOT_PID",
                                 "VRAMSCOPE_FLUSH_MS",
                                 "VRAMSCOPE_OOM_CALLBACKS",
                                 "VRAMSCOPE_VERBOSE",
                                 "VRAMSCOPE_FILE",
                                 "VRAMSCOPE_RING_MIB",
                                 "VRAMSCOPE_LIVE_DIR",
                                 "CUDA_INJECTION64_PATH",
                                 "NVTX_INJECTION64_PATH",
                                 "NCCL_PROFILER_PLUGIN",
                                 "SLURM_JOB_ID",
                                 "TORCHELASTIC_RUN_ID"}) {
            unsetenv(name);
        }
        setenv("VRAMSCOPE_LIVE", "0", 1);
        setenv("VRAMSCOPE_OUTPUT", run.dir.c_str(), 1);
        setenv("VRAMSCOPE_JOB", "fake", 1);
        setenv("FAKECUPTI_LOG", logPath.c_str(), 1);
        for (const auto& [k, v] : env) {
            setenv(k.c_str(), v.c_str(), 1);
        }
        const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (err >= 0) {
            dup2(err, STDERR_FILENO);
            dup2(err, STDOUT_FILENO);
        }
        std::vector<std::string> args = {VRAMSCOPE_FAKE_CUPTI_HARNESS_PATH, VRAMSCOPE_AGENT_PATH,
                                         VRAMSCOPE_FAKE_CUPTI_PATH, VRAMSCOPE_FAKE_CUDA_PATH,
                                         scenario};
        if (!arg.empty()) {
            args.push_back(arg);
        }
        std::vector<char*> argv;
        for (std::string& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    for (int waited = 0;; waited += 20) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) {
            break;
        }
        if (waited > timeoutS * 1000) {
            run.timedOut = true;
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        timespec ts{0, 20'000'000};
        nanosleep(&ts, nullptr);
    }
    run.exited = WIFEXITED(status);
    run.exitCode = run.exited ? WEXITSTATUS(status) : -1;
    run.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    run.stderrText = readAll(errPath);
    run.log = parseLog(readAll(logPath));
    return run;
}

std::string describe(const HarnessRun& run) {
    return "exit " + std::to_string(run.exitCode) + ", signal " + std::to_string(run.signal) +
           (run.timedOut ? ", timed out" : "") + "; stderr:\n" + run.stderrText;
}

/// The one trace file of `run`, read; nullopt (with a test failure) when there is none.
std::optional<trace::LoadedTrace> loadTrace(const HarnessRun& run) {
    const std::vector<std::string> files = run.traceFiles();
    EXPECT_EQ(files.size(), 1u) << describe(run);
    if (files.size() != 1) {
        return std::nullopt;
    }
    auto loaded = trace::readTraceFile(files[0]);
    EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.error().describe());
    if (!loaded.ok()) {
        return std::nullopt;
    }
    return std::move(loaded.value());
}

/// Kernel rows by correlation id.
std::map<uint64_t, trace::KernelEvent> kernelsByCorrelation(const trace::TraceData& d) {
    std::map<uint64_t, trace::KernelEvent> out;
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        trace::KernelEvent e;
        e.startNs = d.kernels.startNs[i];
        e.endNs = d.kernels.endNs[i];
        e.stream = d.kernels.stream[i];
        e.name = d.kernels.name[i];
        e.category = d.kernels.category[i];
        e.launchNs = d.kernels.launchNs[i];
        e.correlationId = d.kernels.correlationId[i];
        e.device = d.kernels.device[i];
        out[e.correlationId] = e;
    }
    return out;
}

/// The trace holds kernels [from, to) of the plan (by correlation id), with the plan's times.
void expectPlannedKernels(const trace::TraceData& d, int from, int to) {
    const auto byId = kernelsByCorrelation(d);
    for (int i = from; i < to; ++i) {
        auto it = byId.find(plan::kernelCorrelation(i));
        ASSERT_NE(it, byId.end()) << "kernel " << i << " is missing";
        EXPECT_EQ(it->second.startNs, static_cast<trace::TimestampNs>(plan::kernelStartNs(i)));
        EXPECT_EQ(it->second.endNs, static_cast<trace::TimestampNs>(plan::kernelEndNs(i)));
    }
}

size_t lossRows(const trace::TraceData& d, trace::LossCounter counter) {
    return static_cast<size_t>(std::count_if(d.dataLoss.begin(), d.dataLoss.end(),
                                             [&](const auto& l) { return l.counter == counter; }));
}

/// Runs harness scenarios; removes their directories after a test that passed (a failed test's
/// stay, with the trace, the fakes' log and the harness's stderr).
class FakeCupti : public ::testing::Test {
protected:
    HarnessRun play(const std::string& scenario, const std::string& arg,
                    const std::map<std::string, std::string>& env = {}) {
        HarnessRun run = runHarness(scenario, arg, env);
        m_dirs.push_back(run.dir);
        return run;
    }
    void TearDown() override {
        if (HasFailure()) {
            for (const std::string& dir : m_dirs) {
                std::printf("kept %s\n", dir.c_str());
            }
            return;
        }
        for (const std::string& dir : m_dirs) {
            std::error_code ignored;
            std::filesystem::remove_all(dir, ignored);
        }
    }

private:
    std::vector<std::string> m_dirs;
};

#define SKIP_WITHOUT_AGENT()                                                            \
    if (!agentBuilt()) {                                                                \
        GTEST_SKIP() << "the capture agent was not built (no CUDA toolkit with CUPTI)"; \
    }

}  // namespace

// --- 1. round trip ---
// Tests named DISABLED_ state the agent's contract it does not meet yet; run them with
// --gtest_also_run_disabled_tests.
TEST_F(FakeCupti, KernelsAllocationsAndNvtxRangesArriveAsDelivered) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("roundtrip", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    EXPECT_TRUE(loaded->report.complete) << loaded->report.summary();

    // The fake driver's one device, as fake_cuda.cpp states it (uuid bytes 0xa0..0xaf).
    ASSERT_EQ(d.header.devices.size(), 1u);
    EXPECT_EQ(d.header.devices[0].name, "Fake GPU");
    EXPECT_EQ(d.header.devices[0].totalMemoryBytes, uint64_t{80} << 30);
    EXPECT_EQ(d.header.devices[0].uuid, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");

    // Kernels: every one, once, with its times, stream, queue time and demangled name.
    static const char* const kDemangled[] = {"matmul(float*, float*, float*, int)",
                                             "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                             "elementwise_add"};
    ASSERT_EQ(d.kernels.size(), static_cast<size_t>(plan::kKernels));
    const auto byId = kernelsByCorrelation(d);
    ASSERT_EQ(byId.size(), static_cast<size_t>(plan::kKernels)) << "duplicate kernels";
    for (int i = 0; i < plan::kKernels; ++i) {
        SCOPED_TRACE("kernel " + std::to_string(i));
        auto it = byId.find(plan::kernelCorrelation(i));
        ASSERT_NE(it, byId.end());
        const trace::KernelEvent& k = it->second;
        EXPECT_EQ(k.startNs, static_cast<trace::TimestampNs>(plan::kernelStartNs(i)));
        EXPECT_EQ(k.endNs, static_cast<trace::TimestampNs>(plan::kernelEndNs(i)));
        EXPECT_EQ(k.launchNs, static_cast<trace::TimestampNs>(plan::kernelQueuedNs(i)));
        EXPECT_EQ(k.stream, plan::kernelStream(i));
        EXPECT_EQ(k.device, trace::DeviceIndex{0});
        EXPECT_EQ(d.string(k.name), kDemangled[i % 3]);
        EXPECT_EQ(k.category, i % 3 == 1 ? trace::KernelCategory::Communication
                                         : trace::KernelCategory::Compute);
    }

    // Device memory: 5 cudaMalloc then 5 cudaFree, outside any pool (reserved, device).
    ASSERT_EQ(d.memory.size(), static_cast<size_t>(2 * plan::kAllocations));
    for (int k = 0; k < plan::kAllocations; ++k) {
        for (bool release : {false, true}) {
            SCOPED_TRACE("allocation " + std::to_string(k) + (release ? " free" : " alloc"));
            const auto t = static_cast<trace::TimestampNs>(release ? plan::releaseNs(k)
                                                                   : plan::allocationNs(k));
            size_t found = d.memory.size();
            for (size_t i = 0; i < d.memory.size(); ++i) {
                if (d.memory.timestampNs[i] == t) {
                    found = i;
                }
            }
            ASSERT_LT(found, d.memory.size());
            EXPECT_EQ(d.memory.address[found], plan::allocationAddress(k));
            EXPECT_EQ(d.memory.sizeBytes[found], plan::allocationBytes(k));
            EXPECT_EQ(d.memory.action[found],
                      release ? trace::MemoryAction::Free : trace::MemoryAction::Alloc);
            EXPECT_EQ(d.memory.kind[found], trace::MemoryKind::Device);
            EXPECT_EQ(d.memory.level[found], trace::MemoryLevel::Reserved);
            EXPECT_EQ(d.memory.device[found], trace::DeviceIndex{0});
        }
    }

    // NVTX: three ranges with their names, times, nesting and thread.
    ASSERT_EQ(d.ranges.size(), static_cast<size_t>(plan::kRangeCount));
    for (const plan::PlannedRange& r : plan::kRanges) {
        SCOPED_TRACE(r.name);
        size_t found = d.ranges.size();
        for (size_t i = 0; i < d.ranges.size(); ++i) {
            if (d.string(d.ranges.name[i]) == r.name) {
                found = i;
            }
        }
        ASSERT_LT(found, d.ranges.size());
        EXPECT_EQ(d.ranges.startNs[found], static_cast<trace::TimestampNs>(r.startNs));
        EXPECT_EQ(d.ranges.endNs[found], static_cast<trace::TimestampNs>(r.endNs));
        EXPECT_EQ(d.ranges.depth[found], r.depth);
        EXPECT_EQ(d.ranges.threadId[found], plan::kNvtxThread);
        EXPECT_EQ(d.ranges.kind[found], trace::RangeKind::Nvtx);
    }
    EXPECT_TRUE(d.dataLoss.empty())
        << d.dataLoss.size()
        << " data loss rows, first: " << (d.dataLoss.empty() ? "" : d.dataLoss[0].reason);
}

// --- 2. buffer sizes ---
TEST_F(FakeCupti, DISABLED_EveryActivityBufferIsBetween256KiBAnd1MiB) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("roundtrip", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    const auto requests = run.events("buffer_requested");
    ASSERT_FALSE(requests.empty()) << "the fake never asked the agent for a buffer";
    for (const LogEntry& r : requests) {
        EXPECT_GE(r.num("size"), 256 * 1024);
        EXPECT_LE(r.num("size"), 1024 * 1024);
    }
}

// --- 3. flushes ---
TEST_F(FakeCupti, DISABLED_ExitFlushesOnceThenForcedAfterThePeriodicOnesWithoutOverlap) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("exit_flushes", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto flushes = run.events("flush");
    EXPECT_EQ(run.events("flush_enter").size(), flushes.size())
        << "a flush was still running when the process ended";
    std::sort(flushes.begin(), flushes.end(), [](const LogEntry& a, const LogEntry& b) {
        return a.num("enter_ns") < b.num("enter_ns");
    });
    ASSERT_GE(flushes.size(), 4u) << "too few flushes for 600 ms at a 50 ms period";
    const size_t n = flushes.size();
    EXPECT_EQ(flushes[n - 1].num("flags"), kFlushForced) << "the last flush is not forced";
    EXPECT_EQ(flushes[n - 2].num("flags"), 0) << "no FlushAll(0) right before the forced one";
    const long long mainThread = run.harness("tid");
    const long long flushThread = flushes[0].num("tid");
    EXPECT_NE(flushThread, mainThread) << "periodic flushes from the job's main thread";
    for (size_t i = 0; i + 2 < n; ++i) {
        EXPECT_EQ(flushes[i].num("flags"), 0) << "flush " << i;
        EXPECT_EQ(flushes[i].num("tid"), flushThread) << "flush " << i << " from another thread";
    }
    for (size_t i = 1; i < n; ++i) {
        EXPECT_GE(flushes[i].num("enter_ns"), flushes[i - 1].num("exit_ns"))
            << "flush " << i << " began before flush " << i - 1 << " ended";
    }
    EXPECT_TRUE(run.events("finalize").empty()) << "cuptiFinalize was called";
    // The last 500 kernels were in an incomplete buffer: only the forced flush returns them.
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.kernels.size(), static_cast<size_t>(plan::kKernels));
    expectPlannedKernels(loaded->data, 0, plan::kKernels);
}

TEST_F(FakeCupti, DISABLED_SigtermFlushesFromTheFlushThreadThenEndsTheProcessBySigterm) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("sigterm", "", {{"VRAMSCOPE_FLUSH_MS", "100"}});
    ASSERT_EQ(run.signal, SIGTERM) << describe(run);
    const long long signalAt = run.harness("t_ns");
    ASSERT_GT(signalAt, 0);
    long long flushThread = -1;
    std::vector<LogEntry> after;
    for (const LogEntry& f : run.events("flush_enter")) {
        if (f.num("enter_ns") < signalAt) {
            flushThread = f.num("tid");  // the periodic flushes' thread
        } else {
            after.push_back(f);
        }
    }
    ASSERT_NE(flushThread, -1) << "no periodic flush in the 400 ms before the signal";
    ASSERT_FALSE(after.empty()) << "no flush after SIGTERM";
    for (const LogEntry& f : after) {
        EXPECT_EQ(f.num("flags"), 0) << "a forced flush on SIGTERM";
        EXPECT_EQ(f.num("tid"), flushThread) << "a flush on SIGTERM outside the flush thread";
    }
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.kernels.size(), 100u);
    expectPlannedKernels(loaded->data, 0, 100);
}

// --- 4. undecodable records ---
TEST_F(FakeCupti, DISABLED_AnUndecodableRecordKeepsTheRecordsBeforeItAndIsCountedOnce) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("undecodable", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const trace::TraceData& d = loaded->data;
    // CUPTI's walk stops at the bad record: the 5 behind it cannot be reached.
    EXPECT_EQ(d.kernels.size(), 10u);
    expectPlannedKernels(d, 0, 10);
    EXPECT_EQ(lossRows(d, trace::LossCounter::CuptiRecordsUndecoded), 1u);
    for (const trace::DataLoss& l : d.dataLoss) {
        if (l.counter == trace::LossCounter::CuptiRecordsUndecoded) {
            EXPECT_GE(l.count, 1u);
        }
    }
}

// --- 5. out of memory ---
namespace {

/// The callback thread of the cudaMalloc calls, checking that the agent had them enabled.
long long allocationCallbackThread(const HarnessRun& run) {
    long long tid = -1;
    for (const LogEntry& c : run.events("api_call")) {
        if (c.num("cbid") == kCbidCudaMalloc) {
            EXPECT_EQ(c.num("delivered"), 1) << "the agent did not enable cudaMalloc callbacks";
            tid = c.num("tid");
        }
    }
    EXPECT_NE(tid, -1);
    return tid;
}

/// cuMemGetInfo (a driver call that may block) is never made from inside an API callback, nor on
/// the callback's thread while the job runs (before the harness says it exits: after that the
/// agent's exit handler may run there).
void expectNoMemGetInfoOn(const HarnessRun& run, long long callbackThread) {
    long long exitingAt = -1;
    for (const LogEntry& e : run.events("harness")) {
        if (e.has("t_ns")) {
            exitingAt = e.num("t_ns");
        }
    }
    for (const LogEntry& c : run.events("cuMemGetInfo")) {
        EXPECT_NE(c.num("in_callback"), 1) << "cuMemGetInfo inside an API callback";
        if (c.num("tid") == callbackThread) {
            EXPECT_GT(c.num("t_ns"), exitingAt)
                << "cuMemGetInfo on the API callback's thread while the job runs";
        }
    }
}

size_t countersNamed(const trace::TraceData& d, const std::string& name, double* last) {
    size_t n = 0;
    for (size_t i = 0; i < d.counters.size(); ++i) {
        if (d.string(d.counters.name[i]) == name) {
            ++n;
            *last = d.counters.value[i];
        }
    }
    return n;
}

}  // namespace

TEST_F(FakeCupti, DISABLED_AFailedCudaMallocRetriedWithSuccessIsCountedNotAnOom) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("oom_retried", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    expectNoMemGetInfoOn(run, allocationCallbackThread(run));
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    EXPECT_TRUE(loaded->data.ooms.empty());
    double last = -1;
    EXPECT_GE(countersNamed(loaded->data, "cuda allocation failures (retried)", &last), 1u);
    EXPECT_EQ(last, 1.0) << "one failure was retried";
}

TEST_F(FakeCupti, DISABLED_TwoFailedCudaMallocsInARowAreOneOom) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("oom_twice", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    expectNoMemGetInfoOn(run, allocationCallbackThread(run));
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->data.ooms.size(), 1u);
    EXPECT_EQ(loaded->data.ooms[0].requestedBytes, plan::kOomRequestBytes);
}

TEST_F(FakeCupti, DISABLED_AFailedCudaMallocNotRetriedBeforeExitIsOneOom) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("oom_last", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    expectNoMemGetInfoOn(run, allocationCallbackThread(run));
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->data.ooms.size(), 1u);
    EXPECT_EQ(loaded->data.ooms[0].requestedBytes, plan::kOomRequestBytes);
}

// --- 6. another CUPTI user takes the buffers ---
TEST_F(FakeCupti, DISABLED_ReplacedBufferCallbacksAreSaidOnceAndTheJobExitsNormally) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("other_user", "", {{"VRAMSCOPE_FLUSH_MS", "50"}});
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.agentLinesWith("records stopped arriving"), 1) << run.stderrText;
    // Said while the job ran: after the replacement, before the job's exit.
    const auto lines = run.stderrLines();
    auto at = [&](const std::string& text) {
        for (size_t i = 0; i < lines.size(); ++i) {
            if (lines[i].find(text) != std::string::npos) {
                return static_cast<long>(i);
            }
        }
        return -1L;
    };
    const long replaced = at("harness: buffer callbacks replaced");
    const long said = at("records stopped arriving");
    const long exiting = at("harness: exiting");
    ASSERT_GE(replaced, 0);
    EXPECT_GT(said, replaced) << run.stderrText;
    EXPECT_LT(said, exiting) << "said only at exit, not within the job's last 4 s";
}

// --- 7. a CUDA 12 job ---
TEST_F(FakeCupti, DISABLED_ACuda12RuntimeInTheProcessMakesTheAgentStepAside) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("step_aside", VRAMSCOPE_FAKE_CUDART12_PATH);
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.agentLinesWith("CUDA 12"), 1) << run.stderrText;
    EXPECT_TRUE(run.traceFiles().empty()) << "a trace file was written";
    EXPECT_TRUE(run.events("activity_enable").empty()) << "CUPTI activity was enabled anyway";
}

// --- 8. NVTX hand-over by CUPTI version ---
TEST_F(FakeCupti, DISABLED_Cupti13_0_0KeepsNvtxAwayFromLibcuptiAndSaysSo) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("nvtx", "130000");
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.harness("nvtx_result"), 0);
    EXPECT_TRUE(run.events("nvtx2_init").empty()) << "forwarded to libcupti 13.0.0";
    EXPECT_EQ(run.agentLinesWith("NVTX"), 1) << run.stderrText;
}

TEST_F(FakeCupti, Cupti13_0_1GetsNvtxInitialisationForwarded) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("nvtx", "130001");
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    EXPECT_EQ(run.events("nvtx2_init").size(), 1u);
    EXPECT_EQ(run.harness("nvtx_result"), 1) << "libcupti's answer was not passed on";
}

// --- 9. CUPTI settings ---
TEST_F(FakeCupti, DISABLED_SystemThreadIdsLatencyTimestampsAndConcurrentKernelsNeverKernel) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("settings", "");
    ASSERT_EQ(run.exitCode, 0) << describe(run);
    const auto types = run.events("thread_id_type");
    ASSERT_FALSE(types.empty()) << "cuptiSetThreadIdType was not called";
    EXPECT_EQ(types.back().num("type"), kThreadIdSystem);
    const auto latency = run.events("latency_timestamps");
    ASSERT_FALSE(latency.empty()) << "cuptiActivityEnableLatencyTimestamps was not called";
    EXPECT_EQ(latency.back().num("enable"), 1);
    bool concurrent = false;
    for (const LogEntry& e : run.events("activity_enable")) {
        EXPECT_NE(e.num("kind"), kKindKernel) << "CUPTI_ACTIVITY_KIND_KERNEL serialises kernels";
        concurrent = concurrent || e.num("kind") == kKindConcurrentKernel;
    }
    EXPECT_TRUE(concurrent) << "CONCURRENT_KERNEL was not enabled";
}

// --- 10. SIGKILL ---
TEST_F(FakeCupti, SigkillHalfASecondAfterDeliveryKeepsTheDeliveredRecords) {
    SKIP_WITHOUT_AGENT();
    const HarnessRun run = play("kill", "", {{"VRAMSCOPE_FLUSH_MS", "100"}});
    ASSERT_EQ(run.signal, SIGKILL) << describe(run);
    auto loaded = loadTrace(run);  // cut (no closing frame) but readable
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.kernels.size(), 100u);
    expectPlannedKernels(loaded->data, 0, 100);
}
