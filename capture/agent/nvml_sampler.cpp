#include "nvml_sampler.h"

#include <dlfcn.h>

#include <cstring>

namespace vramscope::capture {

namespace {

constexpr int kNvmlSuccess = 0;  // NVML_SUCCESS
/// NVML_VALUE_NOT_AVAILABLE: usedGpuMemory where the driver cannot tell (e.g. Windows WDDM).
constexpr unsigned long long kNotAvailable = ~0ull;

struct NvmlMemory {  // nvmlMemory_t
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct NvmlProcessInfo {  // nvmlProcessInfo_t, as the _v3 process queries fill it
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};

}  // namespace

struct NvmlSampler::Api {
    int (*init)() = nullptr;
    const char* (*errorString)(int) = nullptr;
    int (*getCount)(unsigned int*) = nullptr;
    int (*getHandle)(unsigned int, void**) = nullptr;
    int (*getUuid)(void*, char*, unsigned int) = nullptr;
    int (*getMemory)(void*, NvmlMemory*) = nullptr;
    int (*getProcesses)(void*, unsigned int*, NvmlProcessInfo*) = nullptr;
};

bool NvmlSampler::start(std::string& why) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (lib == nullptr) {
        lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    }
    if (lib == nullptr) {
        why = "NVML (libnvidia-ml.so.1) cannot be loaded";
        return false;
    }
    // Never destroyed: the table lives as long as the process.
    auto* api = new Api();
    api->init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    api->errorString = reinterpret_cast<const char* (*)(int)>(dlsym(lib, "nvmlErrorString"));
    api->getCount = reinterpret_cast<int (*)(unsigned int*)>(dlsym(lib, "nvmlDeviceGetCount_v2"));
    api->getHandle = reinterpret_cast<int (*)(unsigned int, void**)>(
        dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    api->getUuid =
        reinterpret_cast<int (*)(void*, char*, unsigned int)>(dlsym(lib, "nvmlDeviceGetUUID"));
    api->getMemory =
        reinterpret_cast<int (*)(void*, NvmlMemory*)>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
    api->getProcesses = reinterpret_cast<int (*)(void*, unsigned int*, NvmlProcessInfo*)>(
        dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    if (api->init == nullptr || api->getCount == nullptr || api->getHandle == nullptr ||
        api->getUuid == nullptr || api->getMemory == nullptr) {
        why = "NVML (libnvidia-ml.so.1) lacks the functions the agent needs";
        return false;
    }
    if (const int rc = api->init(); rc != kNvmlSuccess) {
        const char* text = api->errorString != nullptr ? api->errorString(rc) : nullptr;
        why = "NVML does not start (nvmlInit_v2: " +
              (text != nullptr ? std::string(text) : "error " + std::to_string(rc)) + ")";
        return false;
    }
    m_lib = lib;
    m_api = api;
    return true;
}

void NvmlSampler::setCudaDevices(const std::vector<trace::DeviceInfo>& devices) {
    if (m_api == nullptr) {
        return;
    }
    m_devices.clear();
    unsigned int count = 0;
    if (m_api->getCount(&count) != kNvmlSuccess) {
        return;
    }
    for (unsigned int i = 0; i < count && i < 1024; ++i) {
        void* handle = nullptr;
        char uuid[96] = {};  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
        if (m_api->getHandle(i, &handle) != kNvmlSuccess ||
            m_api->getUuid(handle, uuid, sizeof(uuid)) != kNvmlSuccess) {
            continue;
        }
        for (const trace::DeviceInfo& d : devices) {
            if (!d.uuid.empty() && d.uuid == uuid) {
                m_devices.emplace_back(handle, d.index);
            }
        }
    }
    m_mapped = true;
}

std::vector<NvmlDeviceSample> NvmlSampler::sample(uint32_t pid) const {
    std::vector<NvmlDeviceSample> out;
    if (m_api == nullptr) {
        return out;
    }
    for (const auto& [handle, device] : m_devices) {
        NvmlMemory memory{};
        if (m_api->getMemory(handle, &memory) != kNvmlSuccess) {
            continue;
        }
        NvmlDeviceSample s;
        s.device = device;
        s.usedBytes = memory.used;
        s.freeBytes = memory.free;
        s.totalBytes = memory.total;
        if (m_api->getProcesses != nullptr) {
            NvmlProcessInfo infos[64];
            unsigned int n = 64;
            const int rc = m_api->getProcesses(handle, &n, infos);
            // NOTE(nvml): more than 64 processes on one GPU: NVML answers INSUFFICIENT_SIZE and
            // this process is not looked for.
            for (unsigned int i = 0; rc == kNvmlSuccess && i < n && i < 64; ++i) {
                // One entry per context (or MIG instance): this process's add up.
                if (infos[i].pid == pid && infos[i].usedGpuMemory != kNotAvailable) {
                    s.processBytes = s.processBytes.value_or(0) + infos[i].usedGpuMemory;
                }
            }
        }
        out.push_back(s);
    }
    return out;
}

}  // namespace vramscope::capture
