#pragma once
// GPU memory as the driver sees it, through NVML (libnvidia-ml.so.1, shipped with the driver)
// loaded with dlopen: no NEEDED entry, and a machine without it costs one line. Each flush period
// the agent samples, for every GPU that is one of the process's CUDA devices (matched by UUID:
// NVML numbers GPUs by PCI order, CUDA by its own order and CUDA_VISIBLE_DEVICES), the bytes this
// process uses there (nvmlDeviceGetComputeRunningProcesses: its CUDA context, libraries,
// allocator and all) and the GPU's used bytes (nvmlDeviceGetMemoryInfo). A process holding memory
// on a GPU it does not compute on shows there (the stray-context case of docs/DESIGN.md
// "Capture: PyTorch allocator facts").
//
// The flush thread alone calls it (NVML may take milliseconds; never a job's thread). Types and
// return codes as NVML documents them (nvml.h), declared here.
// NOTE(nvml): inside a container without the host's pid namespace NVML names processes by their
// host pids, so this process is not found and only the GPU totals are recorded.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::capture {

/// One NVML sample of one CUDA device.
struct NvmlDeviceSample {
    trace::DeviceIndex device{0};
    std::optional<uint64_t> processBytes;  ///< this process's used bytes; none when not listed
    uint64_t usedBytes = 0;                ///< all processes
    uint64_t freeBytes = 0;
    uint64_t totalBytes = 0;
};

class NvmlSampler {
public:
    /// Loads NVML and initialises it (nvmlInit_v2). False with `why` (one sentence) when there
    /// is no NVML or it does not start; the sampler then stays off.
    bool start(std::string& why);
    bool running() const { return m_lib != nullptr; }
    /// Maps NVML's GPUs to the CUDA devices by UUID ("GPU-..." as both print it); GPUs that are
    /// no CUDA device of the process (MIG instances among them) are left out.
    void setCudaDevices(const std::vector<trace::DeviceInfo>& devices);
    bool mapped() const { return m_mapped; }
    /// One sample per mapped GPU whose memory NVML reports; `pid` is this process's.
    std::vector<NvmlDeviceSample> sample(uint32_t pid) const;

private:
    struct Api;
    void* m_lib = nullptr;
    const Api* m_api = nullptr;
    std::vector<std::pair<void*, trace::DeviceIndex>> m_devices;  ///< NVML handle, CUDA index
    bool m_mapped = false;
};

}  // namespace vramscope::capture
