// The built agent library and launcher, as a job sees them: what the .so exports, that it loads
// and steps aside without a CUDA driver, and what vramscope-run hands to the command.
// This test links nothing of the trace library: a process holding its own copy of the generated
// .vscope schema next to the agent's would register the schema twice with libprotobuf.

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string makeTempDir() {
    std::string pattern = ::testing::TempDir() + "vramscope-capture-XXXXXX";
    char* dir = mkdtemp(pattern.data());
    return dir != nullptr ? std::string(dir) : std::string();
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct ShellRun {
    int exitCode = -1;
    std::string output;  // stdout and stderr together
};

ShellRun runShell(const std::string& command) {
    ShellRun r;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) {
        return r;
    }
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
        r.output.append(buf, n);
    }
    const int status = pclose(p);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

bool driverPresent() {
    void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h != nullptr) {
        dlclose(h);
        return true;
    }
    return false;
}

}  // namespace

TEST(AgentLibrary, ExportsOnlyItsEntryPoints) {
    const ShellRun nm = runShell(std::string("nm -D --defined-only ") + VRAMSCOPE_AGENT_PATH);
    if (nm.exitCode != 0) {
        GTEST_SKIP() << "nm is not available: " << nm.output;
    }
    std::set<std::string> exported;
    std::istringstream lines(nm.output);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string address, type, name;
        if (words >> address >> type >> name) {
            exported.insert(name);
        }
    }
    // The CUDA and NVTX injection entry points, and the NCCL profiler plugin's tables (NCCL
    // dlsyms ncclProfiler_v6, then _v5, then _v4).
    EXPECT_EQ(exported,
              (std::set<std::string>{"InitializeInjection", "InitializeInjectionNvtx2",
                                     "InitializeInjectionNvtxExtension", "ncclProfiler_v6",
                                     "ncclProfiler_v5", "ncclProfiler_v4"}));
}

TEST(AgentLibrary, LoadsAndStepsAsideWithOneLineWhenThereIsNoDriver) {
    if (driverPresent()) {
        GTEST_SKIP() << "a CUDA driver is installed here; tests/gpu covers this machine";
    }
    const std::string dir = makeTempDir();
    int pipeFds[2];
    ASSERT_EQ(pipe(pipeFds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        dup2(pipeFds[1], STDERR_FILENO);
        close(pipeFds[0]);
        setenv("VRAMSCOPE_OUTPUT", dir.c_str(), 1);
        void* lib = dlopen(VRAMSCOPE_AGENT_PATH, RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            _exit(100);
        }
        auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
        if (init == nullptr) {
            _exit(101);
        }
        const int first = init();
        const int second = init();  // the driver calls it once; a second call must be harmless
        _exit(first == 1 && second == 1 ? 0 : 102);
    }
    close(pipeFds[1]);
    std::string err;
    char buf[1024];
    ssize_t n = 0;
    while ((n = read(pipeFds[0], buf, sizeof(buf))) > 0) {
        err.append(buf, static_cast<size_t>(n));
    }
    close(pipeFds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "100: dlopen failed, 101: no symbol, 102: not 1";
    EXPECT_EQ(err.rfind("vramscope: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find("driver"), std::string::npos) << err;
    EXPECT_EQ(runShell("ls -A " + dir).output, "") << "no trace file when capture is off";
}

TEST(Launcher, HandsTheAgentAndOutputToTheCommandAndReturnsItsExitCode) {
    const std::string dir = makeTempDir();
    const ShellRun r = runShell(std::string(VRAMSCOPE_RUN_PATH) + " -o " + dir +
                                "/traces --job myjob --flush-ms 150 -- sh -c 'env > " + dir +
                                "/env.txt; echo $$ > " + dir + "/pid.txt; exit 7'");
    EXPECT_EQ(r.exitCode, 7) << r.output;
    EXPECT_NE(r.output.find("traces go to " + dir + "/traces/myjob-rank<R>.vscope"),
              std::string::npos)
        << r.output;
    const std::string env = readFile(dir + "/env.txt");
    char agent[4096] = {};
    ASSERT_NE(realpath(VRAMSCOPE_AGENT_PATH, agent), nullptr);
    EXPECT_NE(env.find(std::string("CUDA_INJECTION64_PATH=") + agent + "\n"), std::string::npos);
    EXPECT_NE(env.find(std::string("NVTX_INJECTION64_PATH=") + agent + "\n"), std::string::npos);
    EXPECT_NE(env.find("VRAMSCOPE_OUTPUT=" + dir + "/traces\n"), std::string::npos) << env;
    EXPECT_NE(env.find("VRAMSCOPE_JOB=myjob\n"), std::string::npos);
    EXPECT_NE(env.find("VRAMSCOPE_FLUSH_MS=150\n"), std::string::npos);
    EXPECT_NE(env.find(std::string("NCCL_PROFILER_PLUGIN=") + agent + "\n"), std::string::npos);
    EXPECT_NE(env.find("VRAMSCOPE_NCCL=coll\n"), std::string::npos);
    std::string pid = readFile(dir + "/pid.txt");
    pid.erase(pid.find_last_not_of('\n') + 1);
    EXPECT_NE(env.find("VRAMSCOPE_ROOT_PID=" + pid + "\n"), std::string::npos) << pid;
    EXPECT_EQ(env.find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos);
}

TEST(Launcher, PerTensorKeepsTheAllocatorSettingsAndKilledCommandsGive128PlusSignal) {
    const std::string dir = makeTempDir();
    const ShellRun r = runShell(
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True " + std::string(VRAMSCOPE_RUN_PATH) +
        " -o " + dir + " --per-tensor -- sh -c 'echo \"$PYTORCH_CUDA_ALLOC_CONF\"; kill -9 $$'");
    EXPECT_EQ(r.exitCode, 137) << r.output;
    EXPECT_NE(r.output.find("expandable_segments:True,backend:cudaMallocAsync\n"),
              std::string::npos)
        << r.output;
}

TEST(Launcher, RefusesAMissingCommandWithUsage) {
    const ShellRun r = runShell(std::string(VRAMSCOPE_RUN_PATH) + " -o /tmp/x --");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.output.find("usage: vramscope-run"), std::string::npos) << r.output;
}
