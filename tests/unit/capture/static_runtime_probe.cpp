// A test library built with the capture agent's deployable settings (static hidden libstdc++ and
// libgcc, glibc references wrapped to GLIBC_2.28 or older: vramscope_deployable_library). It runs
// what the agent's callbacks rely on inside such a library: exceptions thrown by our code and by
// the static libstdc++ and caught by type, an exception carried from a thread, a timed wait on a
// condition variable (steady clock), random_device and stat. The test loads it with dlopen.

#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

[[gnu::noinline]] int throwFromOurCode(int depth) {
    if (depth == 0) {
        throw std::runtime_error("deep");
    }
    return throwFromOurCode(depth - 1) + 1;
}

std::string check(const char* name, bool ok) {
    return std::string(name) + (ok ? ":ok " : ":FAILED ");
}

std::string runChecks() {
    std::string out;

    bool caught = false;
    try {
        throwFromOurCode(8);
    } catch (const std::runtime_error& e) {
        caught = std::string(e.what()) == "deep";
    }
    out += check("runtime_error", caught);

    caught = false;
    try {
        const std::vector<int> empty;
        (void)empty.at(3);  // std::out_of_range from libstdc++.a's __throw_out_of_range_fmt
    } catch (const std::out_of_range&) {
        caught = true;
    }
    out += check("out_of_range", caught);

    caught = false;
    try {
        (void)std::stoi("not a number");  // std::invalid_argument from libstdc++.a
    } catch (const std::invalid_argument&) {
        caught = true;
    }
    out += check("invalid_argument", caught);

    std::future<int> fromThread = std::async(std::launch::async, [] {
        throw std::logic_error("from a thread");
        return 0;
    });
    caught = false;
    try {
        (void)fromThread.get();
    } catch (const std::logic_error& e) {
        caught = std::string(e.what()) == "from a thread";
    }
    out += check("thread_exception", caught);

    std::mutex mutex;
    std::condition_variable cv;
    std::unique_lock<std::mutex> lock(mutex);
    const auto start = std::chrono::steady_clock::now();
    const bool woken = cv.wait_for(lock, std::chrono::milliseconds(30), [] { return false; });
    const auto waited = std::chrono::steady_clock::now() - start;
    out += check("steady_wait", !woken && waited >= std::chrono::milliseconds(30) &&
                                    waited < std::chrono::seconds(5));

    std::random_device device;
    unsigned orBits = 0;
    for (int i = 0; i < 8; ++i) {
        orBits |= device();
    }
    out += check("random_device", orBits != 0);  // 8 zero draws of 32 bits: p = 2^-256

    struct stat st {};
    const int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat fst {};
    const bool fstatOk = fd >= 0 && fstat(fd, &fst) == 0 && S_ISDIR(fst.st_mode);
    if (fd >= 0) {
        close(fd);
    }
    out +=
        check("stat", stat("/", &st) == 0 && S_ISDIR(st.st_mode) && fstatOk &&
                          st.st_ino == fst.st_ino && lstat("/", &st) == 0 && S_ISDIR(st.st_mode));
    out.pop_back();
    return out;
}

}  // namespace

/// Runs every check; "NAME:ok" or "NAME:FAILED" for each, space-separated, in a static buffer.
/// Never throws (a check that cannot run at all is reported as "checks:FAILED <what>").
extern "C" __attribute__((visibility("default"))) const char* vramscopeRuntimeProbe() {
    static std::string result;
    try {
        result = runChecks();
    } catch (const std::exception& e) {
        result = std::string("checks:FAILED ") + e.what();
    } catch (...) {
        result = "checks:FAILED unknown exception";
    }
    return result.c_str();
}
