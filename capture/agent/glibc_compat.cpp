// glibc 2.28 compatibility of libvramscope_capture.so (x86-64): the agent is built on a newer
// glibc but must load in RHEL 8 / Ubuntu 20.04 containers (glibc 2.28). The linker binds every
// glibc reference to the newest version the build machine has, so each reference above
// GLIBC_2.28 (found with `objdump -T libvramscope_capture.so | grep GLIBC_`) is redirected with
// `-Wl,--wrap=SYM` (capture/cmake/deployable_library.cmake lists them; this covers our objects and
// the static libstdc++, libgcc and zstd archives alike) to a __wrap_SYM defined here, which calls
// the old version of SYM through a `.symver` reference, or re-implements SYM where glibc has no
// version at or below 2.28.
//
// Version facts from `objdump -T /lib/x86_64-linux-gnu/libc.so.6` (glibc 2.36) and glibc's
// Versions files: on x86-64 the first symbol set is GLIBC_2.2.5. pthread_*, sem_* and dl* moved
// into libc in 2.34 with new default versions but keep their GLIBC_2.2.5 ones; stat, fstat, lstat
// and their 64 forms are functions only since 2.33 (before, <sys/stat.h> inlined calls of
// __xstat/__fxstat/__lxstat with _STAT_VER = 1 on x86-64); pthread_cond_clockwait is 2.30,
// __libc_single_threaded 2.32, _dl_find_object 2.35 and arc4random 2.36.
//
// Thread safety: every wrapper is as thread-safe as the function it stands for. Nothing here is
// exported (the version script keeps it local).

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#if !defined(__x86_64__) || !defined(__GLIBC__)
#error "glibc_compat.cpp binds GLIBC_2.2.5 symbol versions: x86-64 glibc only"
#endif

// The oldest symbol set of x86-64 glibc.
#define VRAMSCOPE_GLIBC_BASE "GLIBC_2.2.5"

// Declares vramscope_old_NAME, a reference to NAME@GLIBC_2.2.5 (PARAMS: its parameter list).
#define VRAMSCOPE_BASE_VERSION_OF(RET, NAME, PARAMS) \
    extern "C" RET vramscope_old_##NAME PARAMS;      \
    __asm__(".symver vramscope_old_" #NAME "," #NAME "@" VRAMSCOPE_GLIBC_BASE)

// Defines __wrap_NAME calling NAME@GLIBC_2.2.5; ARGS passes the parameters of PARAMS on.
#define VRAMSCOPE_FORWARD_TO_BASE(RET, NAME, PARAMS, ARGS) \
    VRAMSCOPE_BASE_VERSION_OF(RET, NAME, PARAMS);          \
    extern "C" RET __wrap_##NAME PARAMS {                  \
        return vramscope_old_##NAME ARGS;                  \
    }

// --- functions with a GLIBC_2.2.5 version: forwarded to it ---
VRAMSCOPE_FORWARD_TO_BASE(int, pthread_create,
                          (pthread_t * thread, const pthread_attr_t* attr, void* (*start)(void*),
                           void* arg),
                          (thread, attr, start, arg))
VRAMSCOPE_FORWARD_TO_BASE(int, pthread_join, (pthread_t thread, void** result), (thread, result))
VRAMSCOPE_FORWARD_TO_BASE(int, pthread_detach, (pthread_t thread), (thread))
VRAMSCOPE_FORWARD_TO_BASE(int, pthread_once, (pthread_once_t * once, void (*init)()), (once, init))
VRAMSCOPE_FORWARD_TO_BASE(int, pthread_key_create, (pthread_key_t * key, void (*dtor)(void*)),
                          (key, dtor))
VRAMSCOPE_FORWARD_TO_BASE(int, __pthread_key_create, (pthread_key_t * key, void (*dtor)(void*)),
                          (key, dtor))
VRAMSCOPE_FORWARD_TO_BASE(int, pthread_key_delete, (pthread_key_t key), (key))
VRAMSCOPE_FORWARD_TO_BASE(void*, pthread_getspecific, (pthread_key_t key), (key))
VRAMSCOPE_FORWARD_TO_BASE(int, pthread_setspecific, (pthread_key_t key, const void* value),
                          (key, value))
VRAMSCOPE_FORWARD_TO_BASE(int, pthread_sigmask, (int how, const sigset_t* set, sigset_t* old),
                          (how, set, old))
VRAMSCOPE_FORWARD_TO_BASE(int, sem_init, (sem_t * sem, int shared, unsigned value),
                          (sem, shared, value))
VRAMSCOPE_FORWARD_TO_BASE(int, sem_wait, (sem_t * sem), (sem))
VRAMSCOPE_FORWARD_TO_BASE(int, sem_post, (sem_t * sem), (sem))
VRAMSCOPE_FORWARD_TO_BASE(void*, dlopen, (const char* file, int mode), (file, mode))
VRAMSCOPE_FORWARD_TO_BASE(void*, dlsym, (void* handle, const char* name), (handle, name))
VRAMSCOPE_FORWARD_TO_BASE(int, dlclose, (void* handle), (handle))
VRAMSCOPE_FORWARD_TO_BASE(int, dladdr, (const void* address, Dl_info* info), (address, info))
VRAMSCOPE_FORWARD_TO_BASE(char*, dlerror, (void), ())

// --- stat family: the pre-2.33 entry points with _STAT_VER = 1 (x86-64's _STAT_VER_LINUX) ---
namespace {
constexpr int kStatVersion = 1;
}  // namespace

VRAMSCOPE_BASE_VERSION_OF(int, __xstat, (int version, const char* path, struct stat* buf));
VRAMSCOPE_BASE_VERSION_OF(int, __lxstat, (int version, const char* path, struct stat* buf));
VRAMSCOPE_BASE_VERSION_OF(int, __fxstat, (int version, int fd, struct stat* buf));

// On x86-64 struct stat and struct stat64 are the same layout, and stat64 is an alias of stat.
extern "C" int __wrap_stat(const char* path, struct stat* buf) {
    return vramscope_old___xstat(kStatVersion, path, buf);
}
extern "C" int __wrap_lstat(const char* path, struct stat* buf) {
    return vramscope_old___lxstat(kStatVersion, path, buf);
}
extern "C" int __wrap_fstat(int fd, struct stat* buf) {
    return vramscope_old___fxstat(kStatVersion, fd, buf);
}
extern "C" int __wrap_stat64(const char* path, struct stat64* buf) {
    return vramscope_old___xstat(kStatVersion, path, reinterpret_cast<struct stat*>(buf));
}
extern "C" int __wrap_lstat64(const char* path, struct stat64* buf) {
    return vramscope_old___lxstat(kStatVersion, path, reinterpret_cast<struct stat*>(buf));
}
extern "C" int __wrap_fstat64(int fd, struct stat64* buf) {
    return vramscope_old___fxstat(kStatVersion, fd, reinterpret_cast<struct stat*>(buf));
}

// --- functions newer than 2.28: re-implemented over older ones ---

/// pthread_cond_clockwait (2.30, used by std::condition_variable::wait_until on steady_clock):
/// CLOCK_REALTIME waits with pthread_cond_timedwait (GLIBC_2.3.2, the condition variable's own
/// clock); a CLOCK_MONOTONIC deadline is turned into the realtime deadline at the same distance
/// from now. A realtime clock step during the wait makes it end early or late, which callers of
/// condition variables already allow (libstdc++ re-checks steady_clock after a timeout).
/// EINVAL for other clocks, as glibc does.
extern "C" int __wrap_pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                                             clockid_t clock, const struct timespec* deadline) {
    if (clock == CLOCK_REALTIME) {
        return pthread_cond_timedwait(cond, mutex, deadline);
    }
    if (clock != CLOCK_MONOTONIC) {
        return EINVAL;
    }
    constexpr int64_t kNsPerSecond = 1'000'000'000;
    timespec monotonicNow{};
    timespec realtimeNow{};
    clock_gettime(CLOCK_MONOTONIC, &monotonicNow);
    clock_gettime(CLOCK_REALTIME, &realtimeNow);
    int64_t remainingNs =
        (static_cast<int64_t>(deadline->tv_sec) - monotonicNow.tv_sec) * kNsPerSecond +
        (deadline->tv_nsec - monotonicNow.tv_nsec);
    if (remainingNs < 0) {
        remainingNs = 0;
    }
    const int64_t realtimeDeadlineNs =
        static_cast<int64_t>(realtimeNow.tv_sec) * kNsPerSecond + realtimeNow.tv_nsec + remainingNs;
    timespec realtimeDeadline{};
    realtimeDeadline.tv_sec = static_cast<time_t>(realtimeDeadlineNs / kNsPerSecond);
    realtimeDeadline.tv_nsec = static_cast<long>(realtimeDeadlineNs % kNsPerSecond);
    return pthread_cond_timedwait(cond, mutex, &realtimeDeadline);
}

/// arc4random (2.36, std::random_device's default source in libstdc++): 4 bytes of getrandom()
/// (GLIBC_2.25, kernel 3.17+), else of /dev/urandom. Like arc4random it never fails: when neither
/// source answers, a value mixed from the clocks and the pid is returned (not for secrets; the
/// agent uses no randomness for security).
extern "C" uint32_t __wrap_arc4random() {
    uint32_t value = 0;
    ssize_t got = -1;
    do {
        got = getrandom(&value, sizeof(value), 0);
    } while (got < 0 && errno == EINTR);
    if (got == static_cast<ssize_t>(sizeof(value))) {
        return value;
    }
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        got = read(fd, &value, sizeof(value));
        close(fd);
        if (got == static_cast<ssize_t>(sizeof(value))) {
            return value;
        }
    }
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t mix = static_cast<uint64_t>(ts.tv_nsec) * 0x9E3779B97F4A7C15ull ^
                   static_cast<uint64_t>(ts.tv_sec) ^ (static_cast<uint64_t>(getpid()) << 32);
    mix ^= mix >> 29;
    return static_cast<uint32_t>(mix);
}

namespace {

struct FindObjectSearch {
    uintptr_t address = 0;
    struct dl_find_object* result = nullptr;
    bool found = false;
};

int findObjectOfAddress(struct dl_phdr_info* info, size_t /*size*/, void* data) {
    auto* search = static_cast<FindObjectSearch*>(data);
    uintptr_t low = UINTPTR_MAX;
    uintptr_t high = 0;
    bool contains = false;
    const void* ehFrame = nullptr;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD) {
            const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
            const uintptr_t end = start + ph.p_memsz;
            low = start < low ? start : low;
            high = end > high ? end : high;
            contains = contains || (search->address >= start && search->address < end);
        } else if (ph.p_type == PT_GNU_EH_FRAME) {
            ehFrame = reinterpret_cast<const void*>(info->dlpi_addr + ph.p_vaddr);
        }
    }
    if (!contains) {
        return 0;  // go on with the next object
    }
    std::memset(search->result, 0, sizeof(*search->result));
    search->result->dlfo_map_start = reinterpret_cast<void*>(low);
    search->result->dlfo_map_end = reinterpret_cast<void*>(high);
    search->result->dlfo_eh_frame = const_cast<void*>(ehFrame);
    search->found = true;
    return 1;
}

}  // namespace

/// _dl_find_object (2.35): libgcc's unwinder (unwind-dw2-fde-dip.c of GCC 12) asks it for the
/// PT_GNU_EH_FRAME of the object that holds a return address, and finds no frame (so no catch
/// handler) when it fails; this finds the same over dl_iterate_phdr (GLIBC_2.2.5), as libgcc
/// did before GCC 12. Fills dlfo_map_start/_end (extent of the PT_LOAD segments) and
/// dlfo_eh_frame (null when the object has none); dlfo_link_map stays null (libgcc reads only
/// dlfo_eh_frame on x86-64). Returns 0 when found, -1 when no loaded object holds `address`.
extern "C" int __wrap__dl_find_object(void* address, struct dl_find_object* result) {
    FindObjectSearch search;
    search.address = reinterpret_cast<uintptr_t>(address);
    search.result = result;
    dl_iterate_phdr(findObjectOfAddress, &search);
    return search.found ? 0 : -1;
}

/// __libc_single_threaded (2.32) is read by libstdc++ to skip atomic reference counting while a
/// process has one thread. Our own copy stays 0, "maybe more than one thread": always correct, and
/// the agent runs threads anyway.
extern "C" {
char __libc_single_threaded = 0;
}
