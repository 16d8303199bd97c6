// A stand-in for NVML, libnvidia-ml.so.1 (soname libnvidia-ml.so.1), with the functions the
// capture agent looks up by dlsym: two GPUs, listed in the opposite order of the fake driver's
// CUDA devices (fake_cuda.cpp), so that only a mapping by UUID finds the right one:
//   NVML index 0 = UUID GPU-b0b1b2b3-b4b5-b6b7-b8b9-babbbcbdbebf (the fake driver's device 1),
//                  80 GiB, 2 GiB used, of which this process holds kStrayBytes (534 MiB: a
//                  context on a GPU the process does not compute on, the real case
//                  of docs/DESIGN.md "Capture: PyTorch allocator facts");
//   NVML index 1 = UUID GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf (device 0), 80 GiB, 7 GiB used,
//                  5 GiB of it this process's and 2 GiB pid 1's.
// FAKENVML_INIT_RESULT=N makes nvmlInit_v2 return N (9 = NVML_ERROR_DRIVER_NOT_LOADED). Every
// call is logged with its thread (fake_log.h). Types as NVML documents them (nvml.h): return
// codes are ints, a device handle is an opaque pointer, nvmlMemory_t is three unsigned long long
// (total, free, used), nvmlProcessInfo_t (the _v3 process queries) is pid, usedGpuMemory,
// gpuInstanceId, computeInstanceId.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fake_log.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0;           // NVML_SUCCESS
constexpr int kInvalidArgument = 2;   // NVML_ERROR_INVALID_ARGUMENT
constexpr int kInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
constexpr unsigned long long kGiB = 1ull << 30;
constexpr unsigned long long kStrayBytes = 534ull << 20;

struct FakeMemory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct FakeProcessInfo {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};

struct FakeGpu {
    const char* uuid;
    unsigned long long used;
    unsigned long long ownBytes;    ///< this process
    unsigned long long otherBytes;  ///< pid 1
};

const FakeGpu kGpus[2] = {
    {"GPU-b0b1b2b3-b4b5-b6b7-b8b9-babbbcbdbebf", 2 * kGiB, kStrayBytes, 0},
    {"GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf", 7 * kGiB, 5 * kGiB, 2 * kGiB},
};

const FakeGpu* gpuOf(void* device) {
    for (const FakeGpu& g : kGpus) {
        if (device == &g) {
            return &g;
        }
    }
    return nullptr;
}

void logCall(const char* fn) {
    vramscope::fake::logLine("nvml_call tid=%ld fn=%s", vramscope::fake::threadId(), fn);
}

}  // namespace

FAKE_EXPORT int nvmlInit_v2(void) {
    logCall("nvmlInit_v2");
    const char* forced = std::getenv("FAKENVML_INIT_RESULT");
    return forced != nullptr ? std::atoi(forced) : kSuccess;
}

FAKE_EXPORT int nvmlShutdown(void) {
    logCall("nvmlShutdown");
    return kSuccess;
}

FAKE_EXPORT const char* nvmlErrorString(int result) {
    return result == 9 ? "Driver Not Loaded" : "fake NVML error";
}

FAKE_EXPORT int nvmlDeviceGetCount_v2(unsigned int* count) {
    logCall("nvmlDeviceGetCount_v2");
    if (count == nullptr) {
        return kInvalidArgument;
    }
    *count = 2;
    return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
    if (device == nullptr || index >= 2) {
        return kInvalidArgument;
    }
    *device = const_cast<FakeGpu*>(&kGpus[index]);
    return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetUUID(void* device, char* uuid, unsigned int length) {
    const FakeGpu* g = gpuOf(device);
    if (g == nullptr || uuid == nullptr || length < std::strlen(g->uuid) + 1) {
        return kInvalidArgument;
    }
    std::snprintf(uuid, length, "%s", g->uuid);
    return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetMemoryInfo(void* device, FakeMemory* memory) {
    logCall("nvmlDeviceGetMemoryInfo");
    const FakeGpu* g = gpuOf(device);
    if (g == nullptr || memory == nullptr) {
        return kInvalidArgument;
    }
    memory->total = 80 * kGiB;
    memory->used = g->used;
    memory->free = memory->total - memory->used;
    return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count,
                                                        FakeProcessInfo* infos) {
    logCall("nvmlDeviceGetComputeRunningProcesses_v3");
    const FakeGpu* g = gpuOf(device);
    if (g == nullptr || count == nullptr) {
        return kInvalidArgument;
    }
    const unsigned int n = g->otherBytes > 0 ? 2 : 1;
    if (*count < n || infos == nullptr) {
        *count = n;
        return kInsufficientSize;
    }
    *count = n;
    infos[0] = {static_cast<unsigned int>(getpid()), g->ownBytes, 0xffffffffu, 0xffffffffu};
    if (n > 1) {
        infos[1] = {1u, g->otherBytes, 0xffffffffu, 0xffffffffu};
    }
    return kSuccess;
}
