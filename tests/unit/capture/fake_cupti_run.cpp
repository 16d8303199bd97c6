#include "fake_cupti_run.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
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
#include <sstream>

#include "agent_environment.h"

namespace vramscope::test::fake_run {

namespace plan = vramscope::test::fake_plan;

namespace {

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

/// The fakes' own settings, cleared with the agent's (agent_environment.h).
constexpr const char* kFakeEnvironment[] = {"FAKECUDA_DEVICES", "FAKENVML_INIT_RESULT"};

std::vector<std::string> harnessArgs(const std::string& scenario, const std::string& arg,
                                     const RunSetup& setup) {
    std::vector<std::string> args = {VRAMSCOPE_FAKE_CUPTI_HARNESS_PATH};
    for (const std::string& cudart : setup.cudarts) {
        args.insert(args.end(), {"--cudart", cudart});
    }
    if (!setup.cupti.empty()) {
        args.insert(args.end(), {"--cupti", setup.cupti});
    }
    if (!setup.cuptiFound.empty()) {
        args.insert(args.end(), {"--cupti-found", setup.cuptiFound});
    }
    if (!setup.nvml.empty()) {
        args.insert(args.end(), {"--nvml", setup.nvml});
    }
    args.insert(args.end(), {VRAMSCOPE_AGENT_PATH, VRAMSCOPE_FAKE_CUDA_PATH, scenario});
    if (!arg.empty()) {
        args.push_back(arg);
    }
    return args;
}

}  // namespace

bool agentBuilt() {
    struct stat st {};
    return std::string(VRAMSCOPE_AGENT_PATH).size() > 0 && stat(VRAMSCOPE_AGENT_PATH, &st) == 0;
}

long long LogEntry::num(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? -1 : std::stoll(it->second);
}

RunSetup RunSetup::cuda13(std::map<std::string, std::string> env) {
    RunSetup s;
    s.cudarts = {VRAMSCOPE_FAKE_CUDART13_PATH};
    s.cupti = VRAMSCOPE_FAKE_CUPTI_PATH;
    s.nvml = VRAMSCOPE_FAKE_NVML_PATH;
    s.env = std::move(env);
    return s;
}

RunSetup RunSetup::cuda12(std::map<std::string, std::string> env) {
    RunSetup s;
    s.cudarts = {VRAMSCOPE_FAKE_CUDART12_PATH};
    s.cupti = VRAMSCOPE_FAKE_CUPTI12_PATH;
    s.nvml = VRAMSCOPE_FAKE_NVML_PATH;
    s.env = std::move(env);
    return s;
}

std::vector<LogEntry> HarnessRun::events(const std::string& event) const {
    std::vector<LogEntry> out;
    for (const LogEntry& e : log) {
        if (e.event == event) {
            out.push_back(e);
        }
    }
    return out;
}

long long HarnessRun::harness(const std::string& key) const {
    for (const LogEntry& e : log) {
        if (e.event == "harness" && e.has(key)) {
            return e.num(key);
        }
    }
    return -1;
}

std::vector<std::string> HarnessRun::stderrLines() const {
    std::vector<std::string> lines;
    std::istringstream in(stderrText);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

int HarnessRun::agentLinesWith(const std::string& text) const {
    int n = 0;
    for (const std::string& line : stderrLines()) {
        if (line.rfind("vramscope: ", 0) == 0 && line.find(text) != std::string::npos) {
            ++n;
        }
    }
    return n;
}

std::vector<std::string> HarnessRun::traceFiles() const {
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

HarnessRun runHarness(const std::string& scenario, const std::string& arg, const RunSetup& setup,
                      int timeoutS) {
    HarnessRun run;
    run.dir = makeTempDir();
    const std::string logPath = run.dir + "/fake.log";
    const std::string errPath = run.dir + "/stderr.txt";
    std::vector<std::string> args = harnessArgs(scenario, arg, setup);
    const pid_t pid = fork();
    if (pid == 0) {
        for (const char* name : kAgentEnvironment) {
            unsetenv(name);
        }
        for (const char* name : kFakeEnvironment) {
            unsetenv(name);
        }
        setenv("VRAMSCOPE_LIVE", "0", 1);
        setenv("VRAMSCOPE_OUTPUT", run.dir.c_str(), 1);
        setenv("VRAMSCOPE_JOB", "fake", 1);
        setenv("FAKECUPTI_LOG", logPath.c_str(), 1);
        for (const auto& [k, v] : setup.env) {
            setenv(k.c_str(), v.c_str(), 1);
        }
        const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (err >= 0) {
            dup2(err, STDERR_FILENO);
            dup2(err, STDOUT_FILENO);
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

void expectPlannedKernels(const trace::TraceData& d, int64_t base, int from, int to) {
    const auto byId = kernelsByCorrelation(d);
    int missing = 0;
    for (int i = from; i < to; ++i) {
        auto it = byId.find(plan::kernelCorrelation(i));
        if (it == byId.end()) {
            ++missing;
            continue;
        }
        EXPECT_EQ(it->second.startNs, base + static_cast<int64_t>(plan::kernelStartNs(i)));
        EXPECT_EQ(it->second.endNs, base + static_cast<int64_t>(plan::kernelEndNs(i)));
    }
    EXPECT_EQ(missing, 0) << missing << " of " << to - from << " planned kernels are missing";
}

size_t lossRows(const trace::TraceData& d, trace::LossCounter counter) {
    return static_cast<size_t>(std::count_if(d.dataLoss.begin(), d.dataLoss.end(),
                                             [&](const auto& l) { return l.counter == counter; }));
}

std::vector<double> counterValues(const trace::TraceData& d, const std::string& name,
                                  std::optional<trace::DeviceIndex> device) {
    std::vector<double> out;
    for (size_t i = 0; i < d.counters.size(); ++i) {
        if (d.string(d.counters.name[i]) == name && (!device || d.counters.device[i] == *device)) {
            out.push_back(d.counters.value[i]);
        }
    }
    return out;
}

std::string setting(const trace::TraceData& d, const std::string& key) {
    for (const auto& [k, v] : d.header.captureSettings) {
        if (k == key) {
            return v;
        }
    }
    return {};
}

void expectRoundTripTrace(const HarnessRun& run) {
    auto loaded = loadTrace(run);
    ASSERT_TRUE(loaded);
    const int64_t base = run.base();
    ASSERT_GT(base, 0) << "no base_ns from the harness";
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
        EXPECT_EQ(k.startNs, base + static_cast<int64_t>(plan::kernelStartNs(i)));
        EXPECT_EQ(k.endNs, base + static_cast<int64_t>(plan::kernelEndNs(i)));
        EXPECT_EQ(k.launchNs, base + static_cast<int64_t>(plan::kernelQueuedNs(i)));
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
            const int64_t t =
                base + static_cast<int64_t>(release ? plan::releaseNs(k) : plan::allocationNs(k));
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
        EXPECT_EQ(d.ranges.startNs[found], base + static_cast<int64_t>(r.startNs));
        EXPECT_EQ(d.ranges.endNs[found], base + static_cast<int64_t>(r.endNs));
        EXPECT_EQ(d.ranges.depth[found], r.depth);
        EXPECT_EQ(d.ranges.threadId[found], plan::kNvtxThread);
        EXPECT_EQ(d.ranges.kind[found], trace::RangeKind::Nvtx);
    }
    EXPECT_TRUE(d.dataLoss.empty())
        << d.dataLoss.size()
        << " data loss rows, first: " << (d.dataLoss.empty() ? "" : d.dataLoss[0].reason);
}

bool cupti12OnThisMachine() {
    // In a child, so that a real libcupti never stays in the test process.
    const pid_t pid = fork();
    if (pid == 0) {
        _exit(dlopen("libcupti.so.12", RTLD_LAZY | RTLD_LOCAL) != nullptr ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return true;
    }
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/local", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("cuda", 0) != 0) {
            continue;
        }
        for (const char* sub :
             {"/lib64/", "/lib/", "/extras/CUPTI/lib64/", "/targets/x86_64-linux/lib/"}) {
            if (access((entry.path().string() + sub + "libcupti.so.12").c_str(), F_OK) == 0) {
                return true;
            }
        }
    }
    return false;
}

std::string copyAlone(const std::string& path, const std::string& name) {
    const std::string dir = makeTempDir();
    const std::string to = dir + "/" + name;
    std::error_code ec;
    std::filesystem::copy_file(path, to, ec);
    EXPECT_FALSE(ec) << "cannot copy " << path << ": " << ec.message();
    return to;
}

HarnessRun FakeCupti::play(const std::string& scenario, const std::string& arg,
                           const std::map<std::string, std::string>& env) {
    return playWith(scenario, arg, RunSetup::cuda13(env));
}

HarnessRun FakeCupti::playWith(const std::string& scenario, const std::string& arg,
                               const RunSetup& setup) {
    HarnessRun run = runHarness(scenario, arg, setup);
    m_dirs.push_back(run.dir);
    return run;
}

void FakeCupti::TearDown() {
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

}  // namespace vramscope::test::fake_run
