// A stand-in for the CUDA driver, libcuda.so.1 (soname libcuda.so.1), with the cu* functions the
// capture agent finds by dlsym (capture/agent/device_facts.cpp) and a few it may come to use: one
// device, "Fake GPU" with 80 GiB (two with FAKECUDA_DEVICES=2), of which cuMemGetInfo reports
// kFakeFreeBytes free. Device d's UUID bytes are 0xa0 + 16 d, 0xa1 + 16 d, ... (fake_nvml.cpp
// names its GPUs by the same UUIDs). Every
// cuMemGetInfo call is logged with its thread, its time and whether it came from inside a CUPTI
// API callback (fake_log.h), so a test can tell where the agent asked. The types are written out as
// plain C types (CUresult = int, CUdevice = int) rather than taken from cuda.h, whose macros rename
// cuMemGetInfo to cuMemGetInfo_v2.

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fake_log.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0;          // CUDA_SUCCESS
constexpr int kInvalidValue = 1;     // CUDA_ERROR_INVALID_VALUE
constexpr int kInvalidDevice = 101;  // CUDA_ERROR_INVALID_DEVICE
constexpr size_t kFakeTotalBytes = size_t{80} << 30;
constexpr size_t kFakeFreeBytes = size_t{3} << 30;

/// 1, or 2 when FAKECUDA_DEVICES=2.
int deviceCount() {
    static const int n = [] {
        const char* v = std::getenv("FAKECUDA_DEVICES");
        return v != nullptr && std::strcmp(v, "2") == 0 ? 2 : 1;
    }();
    return n;
}

bool validDevice(int device) {
    return device >= 0 && device < deviceCount();
}

/// CUuuid: 16 bytes (cuda.h).
struct FakeUuid {
    char bytes[16];
};

int memGetInfo(size_t* freeBytes, size_t* totalBytes) {
    // The fake libcupti, mapped RTLD_GLOBAL beside this library, says whether the caller is
    // inside an API callback (-1 when no fake libcupti is there).
    using InCallbackFn = int (*)();
    static const auto inCallback =
        reinterpret_cast<InCallbackFn>(dlsym(RTLD_DEFAULT, "fakecupti_in_api_callback"));
    vramscope::fake::logLine("cuMemGetInfo tid=%ld in_callback=%d t_ns=%lld",
                             vramscope::fake::threadId(), inCallback != nullptr ? inCallback() : -1,
                             static_cast<long long>(vramscope::fake::monotonicNs()));
    if (freeBytes == nullptr || totalBytes == nullptr) {
        return kInvalidValue;
    }
    *freeBytes = kFakeFreeBytes;
    *totalBytes = kFakeTotalBytes;
    return kSuccess;
}

int uuidOf(FakeUuid* uuid, int device) {
    if (uuid == nullptr) {
        return kInvalidValue;
    }
    if (!validDevice(device)) {
        return kInvalidDevice;
    }
    for (int i = 0; i < 16; ++i) {
        uuid->bytes[i] = static_cast<char>(0xa0 + 16 * device + i);
    }
    return kSuccess;
}

}  // namespace

FAKE_EXPORT int cuInit(unsigned int) {
    return kSuccess;
}

FAKE_EXPORT int cuDriverGetVersion(int* version) {
    if (version == nullptr) {
        return kInvalidValue;
    }
    *version = 13000;
    return kSuccess;
}

FAKE_EXPORT int cuDeviceGetCount(int* count) {
    if (count == nullptr) {
        return kInvalidValue;
    }
    *count = deviceCount();
    return kSuccess;
}

FAKE_EXPORT int cuDeviceGet(int* device, int ordinal) {
    if (device == nullptr) {
        return kInvalidValue;
    }
    if (!validDevice(ordinal)) {
        return kInvalidDevice;
    }
    *device = ordinal;
    return kSuccess;
}

FAKE_EXPORT int cuDeviceGetName(char* name, int len, int device) {
    if (name == nullptr || len <= 0) {
        return kInvalidValue;
    }
    if (!validDevice(device)) {
        return kInvalidDevice;
    }
    std::snprintf(name, static_cast<size_t>(len), "%s", "Fake GPU");
    return kSuccess;
}

FAKE_EXPORT int cuDeviceGetUuid(FakeUuid* uuid, int device) {
    return uuidOf(uuid, device);
}

FAKE_EXPORT int cuDeviceGetUuid_v2(FakeUuid* uuid, int device) {
    return uuidOf(uuid, device);
}

FAKE_EXPORT int cuDeviceTotalMem_v2(size_t* bytes, int device) {
    if (bytes == nullptr) {
        return kInvalidValue;
    }
    if (!validDevice(device)) {
        return kInvalidDevice;
    }
    *bytes = kFakeTotalBytes;
    return kSuccess;
}

FAKE_EXPORT int cuDeviceTotalMem(size_t* bytes, int device) {
    return cuDeviceTotalMem_v2(bytes, device);
}

FAKE_EXPORT int cuDeviceGetAttribute(int* value, int, int device) {
    if (value == nullptr) {
        return kInvalidValue;
    }
    if (!validDevice(device)) {
        return kInvalidDevice;
    }
    *value = 0;
    return kSuccess;
}

FAKE_EXPORT int cuDeviceGetPCIBusId(char* pciBusId, int len, int device) {
    if (pciBusId == nullptr || len <= 0) {
        return kInvalidValue;
    }
    if (!validDevice(device)) {
        return kInvalidDevice;
    }
    std::snprintf(pciBusId, static_cast<size_t>(len), "%s", "0000:00:00.0");
    return kSuccess;
}

FAKE_EXPORT int cuCtxGetCurrent(void** context) {
    if (context == nullptr) {
        return kInvalidValue;
    }
    *context = nullptr;  // no context: the fake never creates one
    return kSuccess;
}

FAKE_EXPORT int cuCtxGetDevice(int* device) {
    if (device == nullptr) {
        return kInvalidValue;
    }
    *device = 0;
    return kSuccess;
}

FAKE_EXPORT int cuMemGetInfo_v2(size_t* freeBytes, size_t* totalBytes) {
    return memGetInfo(freeBytes, totalBytes);
}

FAKE_EXPORT int cuMemGetInfo(size_t* freeBytes, size_t* totalBytes) {
    return memGetInfo(freeBytes, totalBytes);
}
