// vramscope-run: runs a command with the capture agent injected into it and all its children.
// The naming and environment logic is in common/launch_options.h; this file only resolves paths,
// forks, execs, forwards termination signals and waits.

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "launch_options.h"
#include "output_naming.h"

using namespace vramscope::capture;

namespace {

volatile sig_atomic_t g_child = 0;

void forwardSignal(int sig) {
    if (g_child > 0) {
        kill(g_child, sig);
    }
}

std::string selfDirectory() {
    char buf[PATH_MAX] = {};
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) {
        return ".";
    }
    std::string path(buf, static_cast<size_t>(n));
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string canonical(const std::string& path) {
    char buf[PATH_MAX] = {};
    return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

bool isReadableFile(const std::string& path) {
    return access(path.c_str(), R_OK) == 0;
}

std::string findAgent() {
    if (const char* forced = std::getenv("VRAMSCOPE_AGENT")) {
        return isReadableFile(forced) ? canonical(forced) : std::string();
    }
    for (const std::string& candidate : agentLibraryCandidates(selfDirectory())) {
        if (isReadableFile(candidate)) {
            return canonical(candidate);
        }
    }
    return {};
}

std::string absolutePath(const std::string& path) {
    if (!path.empty() && path[0] == '/') {
        return path;
    }
    char cwd[PATH_MAX] = {};
    if (getcwd(cwd, sizeof(cwd)) == nullptr) {
        return path;
    }
    return std::string(cwd) + "/" + path;
}

bool makeDirectories(const std::string& dir) {
    for (size_t i = 1; i <= dir.size(); ++i) {
        if (i == dir.size() || dir[i] == '/') {
            const std::string part = dir.substr(0, i);
            if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
                return false;
            }
        }
    }
    return true;
}

/// Trace files of this job written since `since`, for the closing line.
std::vector<std::string> writtenTraces(const OutputSpec& spec, const std::string& job,
                                       time_t since) {
    std::vector<std::string> found;
    std::string dir = spec.path;
    std::string prefix = sanitizeFileNamePart(job, "vramscope");
    if (spec.kind == OutputKind::File) {
        const size_t slash = spec.path.find_last_of('/');
        dir = slash == std::string::npos ? "." : spec.path.substr(0, slash);
        const std::string base =
            slash == std::string::npos ? spec.path : spec.path.substr(slash + 1);
        prefix = base.substr(0, base.size() - 7);  // without ".vscope"
    } else if (spec.kind == OutputKind::UnixSocket) {
        return found;
    }
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) {
        return found;
    }
    while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind(prefix, 0) != 0 || name.size() < 7 ||
            name.compare(name.size() - 7, 7, ".vscope") != 0) {
            continue;
        }
        const std::string full = dir + "/" + name;
        struct stat st {};
        if (stat(full.c_str(), &st) == 0 && st.st_mtime >= since) {
            found.push_back(full);
        }
    }
    closedir(d);
    return found;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const ParsedRunOptions parsed = parseRunArguments(args);
    if (!parsed.options) {
        std::fprintf(stderr, "vramscope-run: %s\n%s", parsed.error.c_str(), runUsage().c_str());
        return 2;
    }
    const RunOptions& options = *parsed.options;
    if (options.help) {
        std::fputs(runUsage().c_str(), stdout);
        return 0;
    }
    const std::string agent = findAgent();
    if (agent.empty()) {
        std::fprintf(stderr,
                     "vramscope-run: libvramscope_capture.so not found beside %s or in ../lib "
                     "(set VRAMSCOPE_AGENT to its path)\n",
                     selfDirectory().c_str());
        return 2;
    }

    OutputSpec spec = parseOutputSpec(options.output);
    if (spec.kind != OutputKind::UnixSocket) {
        spec.path = absolutePath(spec.path);
        const std::string dir = spec.kind == OutputKind::Directory
                                    ? spec.path
                                    : spec.path.substr(0, spec.path.find_last_of('/'));
        if (!dir.empty() && !makeDirectories(dir)) {
            std::fprintf(stderr, "vramscope-run: cannot create %s: %s\n", dir.c_str(),
                         std::strerror(errno));
            return 2;
        }
    }
    const std::string job = options.job.empty() ? jobNameFromCommand(options.command) : options.job;
    const std::string outputValue =
        spec.kind == OutputKind::UnixSocket ? "unix:" + spec.path : spec.path;
    const std::vector<EnvAssignment> env =
        launchEnvironment(options, agent, outputValue, job, processEnvironment());
    std::fprintf(stderr, "vramscope-run: %s\n", describeOutput(spec, job).c_str());
    const time_t started = time(nullptr);

    // Termination signals go to the command; the launcher waits for it either way.
    // Dispositions the launcher inherited are restored in the child (e.g. SIGHUP under nohup).
    constexpr int kForwarded[] = {SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    struct sigaction inherited[5]{};
    struct sigaction inheritedInt {};
    struct sigaction forward {};
    forward.sa_handler = forwardSignal;
    sigemptyset(&forward.sa_mask);
    for (int i = 0; i < 5; ++i) {
        sigaction(kForwarded[i], nullptr, &inherited[i]);
        if (inherited[i].sa_handler != SIG_IGN) {
            sigaction(kForwarded[i], &forward, nullptr);
        }
    }
    // The terminal sends SIGINT to the command's process group too; the launcher just waits.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &inheritedInt);

    const pid_t child = fork();
    if (child < 0) {
        std::fprintf(stderr, "vramscope-run: fork failed: %s\n", std::strerror(errno));
        return 2;
    }
    if (child == 0) {
        sigaction(SIGINT, &inheritedInt, nullptr);
        for (int i = 0; i < 5; ++i) {
            sigaction(kForwarded[i], &inherited[i], nullptr);
        }
        for (const EnvAssignment& a : env) {
            setenv(a.name.c_str(), a.value.c_str(), 1);
        }
        setenv(kEnvRootPid, std::to_string(getpid()).c_str(), 1);
        std::vector<char*> childArgv;
        for (const std::string& a : options.command) {
            childArgv.push_back(const_cast<char*>(a.c_str()));
        }
        childArgv.push_back(nullptr);
        execvp(childArgv[0], childArgv.data());
        std::fprintf(stderr, "vramscope-run: cannot run %s: %s\n", childArgv[0],
                     std::strerror(errno));
        _exit(127);
    }
    g_child = child;
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) {
            std::fprintf(stderr, "vramscope-run: waitpid failed: %s\n", std::strerror(errno));
            return 2;
        }
    }
    const std::vector<std::string> traces = writtenTraces(spec, job, started);
    if (!traces.empty()) {
        std::string list;
        for (size_t i = 0; i < traces.size() && i < 8; ++i) {
            list += (i ? ", " : "") + traces[i];
        }
        if (traces.size() > 8) {
            list += ", ... (" + std::to_string(traces.size()) + " in all)";
        }
        std::fprintf(stderr, "vramscope-run: wrote %zu trace file(s): %s\n", traces.size(),
                     list.c_str());
    } else if (spec.kind != OutputKind::UnixSocket) {
        std::fprintf(stderr,
                     "vramscope-run: no trace was written (the command did not use "
                     "CUDA, or the agent stepped aside: see its 'vramscope:' line)\n");
    }
    return exitCodeFromWaitStatus(status);
}
