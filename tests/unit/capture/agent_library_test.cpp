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
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

struct ChildRun {
    int exitCode = -1;   // -1 when the child did not exit normally
    std::string output;  // what `body` returned
};

/// Runs `body` in a forked child (a process that has not loaded the agent yet) and returns what it
/// returned, with its exit status (0 unless it crashed).
ChildRun inChild(const std::function<std::string()>& body) {
    ChildRun r;
    int fds[2];
    if (pipe(fds) != 0) {
        return r;
    }
    const pid_t pid = fork();
    if (pid < 0) {
        return r;
    }
    if (pid == 0) {
        close(fds[0]);
        const std::string text = body();
        size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = write(fds[1], text.data() + done, text.size() - done);
            if (n <= 0) {
                break;
            }
            done += static_cast<size_t>(n);
        }
        _exit(0);
    }
    close(fds[1]);
    char buf[4096];
    ssize_t n = 0;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
        r.output.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
        r.exitCode = WEXITSTATUS(status);
    }
    return r;
}

/// The names under "global:" of a linker version script, in file order.
std::vector<std::string> versionScriptGlobals(const std::string& text) {
    std::string plain;  // without /* */ comments
    for (size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 2, "/*") == 0) {
            const size_t end = text.find("*/", i + 2);
            i = end == std::string::npos ? text.size() : end + 1;
            continue;
        }
        plain += text[i];
    }
    std::vector<std::string> names;
    const size_t global = plain.find("global:");
    const size_t local = plain.find("local:");
    if (global == std::string::npos || local == std::string::npos || local < global) {
        return names;
    }
    std::istringstream in(plain.substr(global + 7, local - global - 7));
    std::string name;
    while (std::getline(in, name, ';')) {
        name.erase(0, name.find_first_not_of(" \t\n"));
        name.erase(name.find_last_not_of(" \t\n") + 1);
        if (!name.empty()) {
            names.push_back(name);
        }
    }
    return names;
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

// --- deployability: what an old training container (RHEL 8 / Ubuntu 20.04: glibc 2.28, an old
// libstdc++) needs to load the agent ---

TEST(AgentLibrary, NeedsNoGlibcAbove228AndNoLibstdcxxOrLibgccVersion) {
    const ShellRun objdump = runShell(std::string("objdump -T ") + VRAMSCOPE_AGENT_PATH);
    if (objdump.exitCode == 127) {
        GTEST_SKIP() << "objdump is not available";
    }
    ASSERT_EQ(objdump.exitCode, 0) << objdump.output;
    // The version column of every dynamic symbol, e.g. "(GLIBC_2.34)" or "GLIBCXX_3.4.29".
    const std::regex version(R"((GLIBCXX|CXXABI|GCC|GLIBC)_([0-9A-Z_.]+))");
    int glibcReferences = 0;
    std::vector<std::string> tooNew;
    std::istringstream lines(objdump.output);
    std::string line;
    while (std::getline(lines, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, version)) {
            continue;
        }
        if (m[1] != "GLIBC") {
            tooNew.push_back(line);  // the static libstdc++/libgcc must leave no such reference
            continue;
        }
        ++glibcReferences;
        int major = 0;
        int minor = 0;
        if (std::sscanf(m[2].str().c_str(), "%d.%d", &major, &minor) != 2 ||
            major * 1000 + minor > 2 * 1000 + 28) {
            tooNew.push_back(line);  // also GLIBC_PRIVATE, which no other glibc promises
        }
    }
    EXPECT_GT(glibcReferences, 10) << "the version column was not found:\n" << objdump.output;
    std::string list;
    for (const std::string& l : tooNew) {
        list += l + "\n";
    }
    EXPECT_TRUE(tooNew.empty())
        << "symbol versions a glibc 2.28 system without a new libstdc++ lacks (bind them in "
           "capture/agent/glibc_compat.cpp and capture/cmake/deployable_library.cmake):\n"
        << list;
}

namespace {

/// The NEEDED entries of the agent (readelf -d), nullopt when readelf is not installed;
/// `dynamic` receives readelf's whole output for the failure messages.
std::optional<std::set<std::string>> neededLibraries(std::string& dynamic) {
    const ShellRun readelf = runShell(std::string("readelf -d ") + VRAMSCOPE_AGENT_PATH);
    dynamic = readelf.output;
    if (readelf.exitCode == 127) {
        return std::nullopt;
    }
    EXPECT_EQ(readelf.exitCode, 0) << readelf.output;
    std::set<std::string> needed;
    const std::regex entry(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
    for (std::sregex_iterator it(readelf.output.begin(), readelf.output.end(), entry), end;
         it != end; ++it) {
        needed.insert((*it)[1]);
    }
    return needed;
}

}  // namespace

// The agent writes its frames with protozero (vramscope::trace_write): libprotobuf, which most
// training images lack, must never come back into its NEEDED list.
TEST(AgentLibrary, NoLibprotobuf) {
    std::string dynamic;
    const auto needed = neededLibraries(dynamic);
    if (!needed) {
        GTEST_SKIP() << "readelf is not available";
    }
    for (const std::string& lib : *needed) {
        EXPECT_EQ(lib.find("protobuf"), std::string::npos)
            << lib << " is needed by the agent; it must write through vramscope::trace_write "
            << "(protozero), not vramscope::trace_io";
    }
}

// The job's own libcupti is bound at run time (capture/agent/cupti_api.h): a NEEDED libcupti.so.13
// could never serve a CUDA 12 job, and a path to the build machine's toolkit would drag a second
// CUPTI into the process.
TEST(AgentLibrary, NeedsNoLibcuptiAndCarriesNoLibraryPath) {
    std::string dynamic;
    const auto needed = neededLibraries(dynamic);
    if (!needed) {
        GTEST_SKIP() << "readelf is not available: " << dynamic;
    }
    for (const std::string& lib : *needed) {
        EXPECT_EQ(lib.rfind("libcupti", 0), std::string::npos) << lib << " is NEEDED";
        EXPECT_EQ(lib.rfind("libnvidia-ml", 0), std::string::npos) << lib << " is NEEDED";
        EXPECT_EQ(lib.rfind("libcuda", 0), std::string::npos) << lib << " is NEEDED";
    }
    EXPECT_EQ(dynamic.find("(RPATH)"), std::string::npos) << dynamic;
    EXPECT_EQ(dynamic.find("(RUNPATH)"), std::string::npos) << dynamic;
}

// The whole NEEDED list: glibc's own libraries and nothing else, so that the agent loads into any
// job on glibc 2.28 or newer. libcupti, libcuda.so.1 and libnvidia-ml.so.1 are dlopen'ed; the
// .vscope frames are written with protozero and zstd compiled in.
TEST(AgentLibrary, NeedsOnlyGlibcLibraries) {
    std::string dynamic;
    const auto needed = neededLibraries(dynamic);
    if (!needed) {
        GTEST_SKIP() << "readelf is not available: " << dynamic;
    }
    // glibc's own libraries (libpthread and libdl are empty on glibc 2.34+, and needed before).
    const std::set<std::string> allowed = {"libc.so.6",       "libm.so.6",  "libdl.so.2",
                                           "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2"};
    EXPECT_TRUE(needed->count("libc.so.6") == 1) << dynamic;
    for (const std::string& lib : *needed) {
        EXPECT_TRUE(allowed.count(lib) == 1)
            << lib << " is needed by the agent; allowed are only glibc's libraries (libcupti, "
            << "libcuda.so.1 and libnvidia-ml.so.1 are dlopen'ed)";
    }
}

TEST(AgentLibrary, LoadsNowInAFreshProcessAndExportsExactlyTheVersionScriptGlobals) {
    const std::vector<std::string> globals =
        versionScriptGlobals(readFile(VRAMSCOPE_AGENT_MAP_PATH));
    ASSERT_FALSE(globals.empty()) << "no global: names in " << VRAMSCOPE_AGENT_MAP_PATH;
    // dlsym in a process that has never loaded the agent; "" when every name resolves.
    const ChildRun child = inChild([&globals] {
        void* lib = dlopen(VRAMSCOPE_AGENT_PATH, RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            const char* error = dlerror();
            return std::string("dlopen: ") + (error != nullptr ? error : "?");
        }
        std::string missing;
        for (const std::string& name : globals) {
            if (dlsym(lib, name.c_str()) == nullptr) {
                missing += name + " ";
            }
        }
        return missing.empty() ? std::string() : "not found by dlsym: " + missing;
    });
    EXPECT_EQ(child.exitCode, 0);
    EXPECT_EQ(child.output, "");

    const ShellRun nm = runShell(std::string("nm -D --defined-only ") + VRAMSCOPE_AGENT_PATH);
    if (nm.exitCode == 127) {
        GTEST_SKIP() << "nm is not available";
    }
    ASSERT_EQ(nm.exitCode, 0) << nm.output;
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
    EXPECT_EQ(exported, std::set<std::string>(globals.begin(), globals.end()));
}

TEST(AgentLibrary, ExceptionsThreadsAndWaitsWorkUnderTheDeployableLinkSettings) {
    // The agent catches exceptions in its callbacks; its unwinder and libstdc++ are now its own
    // static copies beside the test process's shared ones. The probe is linked the same way.
    const ChildRun child = inChild([] {
        void* lib = dlopen(VRAMSCOPE_RUNTIME_PROBE_PATH, RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            const char* error = dlerror();
            return std::string("dlopen: ") + (error != nullptr ? error : "?");
        }
        auto probe = reinterpret_cast<const char* (*)()>(dlsym(lib, "vramscopeRuntimeProbe"));
        return probe != nullptr ? std::string(probe()) : std::string("no vramscopeRuntimeProbe");
    });
    EXPECT_EQ(child.exitCode, 0) << "the probe crashed (an exception that found no handler "
                                    "ends in std::terminate)";
    EXPECT_EQ(child.output,
              "runtime_error:ok out_of_range:ok invalid_argument:ok thread_exception:ok "
              "steady_wait:ok random_device:ok stat:ok");
    const ShellRun objdump = runShell(std::string("objdump -T ") + VRAMSCOPE_RUNTIME_PROBE_PATH);
    if (objdump.exitCode == 0) {
        EXPECT_EQ(objdump.output.find("GLIBCXX_"), std::string::npos) << objdump.output;
    }
}

TEST(Launcher, RefusesAnAgentThatCannotBeLoadedWithDlerrorBeforeRunningTheCommand) {
    const std::string dir = makeTempDir();
    ASSERT_FALSE(dir.empty());
    const std::string text = dir + "/libnot_elf.so";
    std::ofstream(text) << "not a shared library\n";
    // A position-independent executable is an ELF file that dlopen refuses (glibc 2.30 and later),
    // a plain executable one it cannot map at all: either way dlopen fails.
    const std::string executable = dir + "/libexecutable.so";
    ASSERT_EQ(runShell("cp /bin/true '" + executable + "'").exitCode, 0);
    for (const std::string& agent : {text, executable}) {
        // The expected text: what dlopen says in this process, independently of the launcher.
        ASSERT_EQ(dlopen(agent.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr) << agent;
        const std::string expected = dlerror();
        const ShellRun r =
            runShell("VRAMSCOPE_AGENT='" + agent + "' " + std::string(VRAMSCOPE_RUN_PATH) + " -o " +
                     dir + "/traces -- sh -c 'touch " + dir + "/ran'");
        EXPECT_EQ(r.exitCode, 2) << r.output;
        EXPECT_EQ(r.output,
                  "vramscope-run: cannot load the capture agent " + agent + ": " + expected + "\n");
        EXPECT_NE(access((dir + "/ran").c_str(), F_OK), 0) << "the command ran";
        EXPECT_NE(access((dir + "/traces").c_str(), F_OK), 0) << "an output directory was made";
    }
}
