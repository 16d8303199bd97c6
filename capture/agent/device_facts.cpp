#include "device_facts.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>

namespace vramscope::capture {

namespace {

using GetCountFn = CUresult (*)(int*);
using DeviceGetFn = CUresult (*)(CUdevice*, int);
using GetNameFn = CUresult (*)(char*, int, CUdevice);
using GetUuidFn = CUresult (*)(CUuuid*, CUdevice);
using TotalMemFn = CUresult (*)(size_t*, CUdevice);

void* driverHandle() {
    // The driver that called InitializeInjection is already mapped: take that instance.
    static void* handle = [] {
        void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (h == nullptr) {
            h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        }
        return h;
    }();
    return handle;
}

template <class Fn>
Fn driverSymbol(const char* name) {
    void* h = driverHandle();
    return h == nullptr ? nullptr : reinterpret_cast<Fn>(dlsym(h, name));
}

}  // namespace

bool driverAvailable() {
    return driverHandle() != nullptr;
}

std::string formatGpuUuid(const unsigned char bytes[16]) {
    char text[64];
    std::snprintf(text, sizeof(text),
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                  bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14],
                  bytes[15]);
    return text;
}

DeviceQuery queryDevices() {
    DeviceQuery q;
    auto getCount = driverSymbol<GetCountFn>("cuDeviceGetCount");
    auto deviceGet = driverSymbol<DeviceGetFn>("cuDeviceGet");
    auto getName = driverSymbol<GetNameFn>("cuDeviceGetName");
    auto getUuid = driverSymbol<GetUuidFn>("cuDeviceGetUuid_v2");
    if (getUuid == nullptr) {
        getUuid = driverSymbol<GetUuidFn>("cuDeviceGetUuid");
    }
    auto totalMem = driverSymbol<TotalMemFn>("cuDeviceTotalMem_v2");
    if (getCount == nullptr || deviceGet == nullptr) {
        q.error = "the CUDA driver (libcuda.so.1) is not available";
        return q;
    }
    int count = 0;
    const CUresult rc = getCount(&count);
    if (rc == CUDA_ERROR_NOT_INITIALIZED) {
        q.notReady = true;
        return q;
    }
    if (rc != CUDA_SUCCESS) {
        q.error = "cuDeviceGetCount failed with CUDA error " + std::to_string(static_cast<int>(rc));
        return q;
    }
    for (int i = 0; i < count && i < 1024; ++i) {
        CUdevice dev = 0;
        if (deviceGet(&dev, i) != CUDA_SUCCESS) {
            continue;
        }
        trace::DeviceInfo info;
        info.index = trace::DeviceIndex{i};
        char name[256] = {};
        if (getName != nullptr && getName(name, sizeof(name) - 1, dev) == CUDA_SUCCESS) {
            info.name = name;
        }
        CUuuid uuid{};
        if (getUuid != nullptr && getUuid(&uuid, dev) == CUDA_SUCCESS) {
            info.uuid = formatGpuUuid(reinterpret_cast<const unsigned char*>(uuid.bytes));
        }
        size_t bytes = 0;
        if (totalMem != nullptr && totalMem(&bytes, dev) == CUDA_SUCCESS) {
            info.totalMemoryBytes = bytes;
        }
        q.devices.push_back(std::move(info));
    }
    return q;
}

}  // namespace vramscope::capture
