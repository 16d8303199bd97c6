#include "launch_process.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cupti_library.h"

namespace vramscope::capture {

namespace {

volatile sig_atomic_t g_child = 0;

void forwardSignal(int sig) {
    if (g_child > 0) {
        kill(g_child, sig);
    }
}

std::string canonical(const std::string& path) {
    char buf[PATH_MAX] = {};
    return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

bool isReadableFile(const std::string& path) {
    return access(path.c_str(), R_OK) == 0;
}

bool isExecutableFile(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

void writeAll(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;  // the user's stderr is gone; the run goes on
        }
        data += n;
        size -= static_cast<size_t>(n);
    }
}

/// Copies what `fd` holds now to stderr and `tail`; false at end of file or on an error.
bool pumpOnce(int fd, BoundedTail& tail) {
    char buf[8192];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
        writeAll(STDERR_FILENO, buf, static_cast<size_t>(n));
        tail.append(std::string_view(buf, static_cast<size_t>(n)));
        return true;
    }
    return n < 0 && (errno == EINTR || errno == EAGAIN);
}

/// Waits for `child` while passing its stderr pipe through. A grandchild may keep the pipe open
/// after the command exited, so the loop ends on the command's exit, not on end of file, and
/// then takes only what is already in the pipe.
int waitPumping(pid_t child, int fd, BoundedTail& tail) {
    bool open = true;
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child) {
            break;
        }
        if (done < 0 && errno != EINTR) {
            std::fprintf(stderr, "vramscope-run: waitpid failed: %s\n", std::strerror(errno));
            close(fd);
            return -1;
        }
        if (!open) {
            pollfd none{};
            poll(&none, 0, 100);  // the pipe is closed: just wait for the exit
            continue;
        }
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 200) > 0) {
            open = pumpOnce(fd, tail);
        }
    }
    if (open) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        char buf[8192];
        for (;;) {
            const ssize_t n = read(fd, buf, sizeof buf);
            if (n > 0) {
                writeAll(STDERR_FILENO, buf, static_cast<size_t>(n));
                tail.append(std::string_view(buf, static_cast<size_t>(n)));
            } else if (!(n < 0 && errno == EINTR)) {
                break;
            }
        }
    }
    close(fd);
    return status;
}

}  // namespace

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

std::string agentLoadError(const std::string& agent) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        return std::string("cannot test the library (pipe failed: ") + std::strerror(errno) + ")";
    }
    const pid_t child = fork();
    if (child < 0) {
        const int error = errno;
        close(fds[0]);
        close(fds[1]);
        return std::string("cannot test the library (fork failed: ") + std::strerror(error) + ")";
    }
    if (child == 0) {
        close(fds[0]);
        // A link namespace of its own: the launcher's libprotobuf already holds the .vscope
        // schema (trace_io), and the agent's copy of it would abort there, not in the job.
        if (dlmopen(LM_ID_NEWLM, agent.c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr) {
            _exit(0);
        }
        const char* error = dlerror();
        const std::string text = error != nullptr ? error : "dlopen failed without a message";
        writeAll(fds[1], text.data(), text.size());
        _exit(1);
    }
    close(fds[1]);
    // dlerror()'s line fits the pipe, so the child never blocks on it: wait first, then read.
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    std::string message;
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n > 0) {
            message.append(buf, static_cast<size_t>(n));
        } else if (!(n < 0 && errno == EINTR)) {
            break;
        }
    }
    close(fds[0]);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return {};
    }
    if (!message.empty()) {
        return message;
    }
    if (WIFSIGNALED(status)) {
        return std::string("loading it killed the test process (") + strsignal(WTERMSIG(status)) +
               ")";
    }
    return "loading it ended the test process with exit status " +
           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

namespace {

/// Bit 2N: libcudart.so.N loads, bit 2N+1: libcupti.so.N loads, for the supported majors; asked
/// in a child that exits at once.
uint64_t loadableCudaLibraries() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        return 0;
    }
    const pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (child == 0) {
        close(fds[0]);
        uint64_t bits = 0;
        for (int major : kSupportedCudaMajors) {
            const std::string n = std::to_string(major);
            if (dlopen(("libcudart.so." + n).c_str(), RTLD_LAZY | RTLD_LOCAL) != nullptr) {
                bits |= uint64_t{1} << (2 * major);
            }
            if (dlopen(("libcupti.so." + n).c_str(), RTLD_LAZY | RTLD_LOCAL) != nullptr) {
                bits |= uint64_t{1} << (2 * major + 1);
            }
        }
        writeAll(fds[1], reinterpret_cast<const char*>(&bits), sizeof(bits));
        _exit(0);
    }
    close(fds[1]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    uint64_t bits = 0;
    if (read(fds[0], &bits, sizeof(bits)) != static_cast<ssize_t>(sizeof(bits))) {
        bits = 0;
    }
    close(fds[0]);
    return bits;
}

}  // namespace

std::vector<std::string> cuptiWarnings() {
    CuptiSearchInputs in;
    const char* home = std::getenv("CUDA_HOME");
    if (home == nullptr || *home == '\0') {
        home = std::getenv("CUDA_PATH");
    }
    in.cudaHome = home != nullptr ? home : "";
    if (const char* path = std::getenv(kEnvCuptiPath)) {
        in.overridePath = path;
    }
    in.localToolkits = listLocalToolkits();
    const uint64_t bits = loadableCudaLibraries();
    std::vector<int> majors;
    for (int major : kSupportedCudaMajors) {
        const std::string prefix = "cuda-" + std::to_string(major) + ".";
        bool seen = (bits >> (2 * major) & 1) != 0;
        for (const std::string& folder : in.localToolkits) {
            seen = seen || folder.starts_with(prefix);
        }
        for (const char* lib : {"/lib64/", "/lib/", "/targets/x86_64-linux/lib/"}) {
            seen = seen ||
                   (!in.cudaHome.empty() &&
                    isReadableFile(in.cudaHome + lib + "libcudart.so." + std::to_string(major)));
        }
        if (seen) {
            majors.push_back(major);
        }
    }
    return missingCuptiWarnings(
        majors, in, [bits](int major) { return (bits >> (2 * major + 1) & 1) != 0; },
        [](const std::string& path) { return isReadableFile(path); });
}

std::string findCli() {
    if (const char* forced = std::getenv("VRAMSCOPE_CLI")) {
        return isExecutableFile(forced) ? canonical(forced) : std::string();
    }
    for (const std::string& candidate : cliCandidates(selfDirectory())) {
        if (isExecutableFile(candidate)) {
            return canonical(candidate);
        }
    }
    return {};
}

std::vector<std::string> writtenTraces(const OutputSpec& spec, const std::string& job, long since) {
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
        if (!name.starts_with(prefix) || name.size() < 7 || !name.ends_with(".vscope")) {
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

int runCommand(const std::vector<std::string>& command, const std::vector<EnvAssignment>& env,
               BoundedTail* stderrTail) {
    int pipeFds[2] = {-1, -1};
    if (stderrTail != nullptr && pipe2(pipeFds, O_CLOEXEC) != 0) {
        std::fprintf(stderr, "vramscope-run: cannot make a pipe: %s\n", std::strerror(errno));
        return -1;
    }
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
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &inheritedInt);
    auto restoreSignals = [&] {
        g_child = 0;
        sigaction(SIGINT, &inheritedInt, nullptr);
        for (int i = 0; i < 5; ++i) {
            sigaction(kForwarded[i], &inherited[i], nullptr);
        }
    };

    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t child = fork();
    if (child < 0) {
        std::fprintf(stderr, "vramscope-run: fork failed: %s\n", std::strerror(errno));
        restoreSignals();
        return -1;
    }
    if (child == 0) {
        restoreSignals();
        if (stderrTail != nullptr) {
            dup2(pipeFds[1], STDERR_FILENO);  // dup2 clears close-on-exec on the copy
        }
        for (const EnvAssignment& a : env) {
            setenv(a.name.c_str(), a.value.c_str(), 1);
        }
        setenv(kEnvRootPid, std::to_string(getpid()).c_str(), 1);
        std::vector<char*> childArgv;
        for (const std::string& a : command) {
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
    if (stderrTail != nullptr) {
        close(pipeFds[1]);
        status = waitPumping(child, pipeFds[0], *stderrTail);
    } else {
        while (waitpid(child, &status, 0) < 0) {
            if (errno != EINTR) {
                std::fprintf(stderr, "vramscope-run: waitpid failed: %s\n", std::strerror(errno));
                status = -1;
                break;
            }
        }
    }
    restoreSignals();
    return status;
}

}  // namespace vramscope::capture
