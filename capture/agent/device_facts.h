#pragma once
// Facts about the GPUs from the CUDA driver API, resolved with dlopen/dlsym from the libcuda the
// process already mapped, so that the agent loads (and steps aside) where no driver exists.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::capture {

/// True when libcuda.so.1 is mapped in the process or can be loaded.
bool driverAvailable();

struct DeviceQuery {
    std::vector<trace::DeviceInfo> devices;
    bool notReady = false;  ///< the driver is not initialised yet (try again later)
    std::string error;      ///< empty on success
};

/// Every visible device: CUDA ordinal, name (cuDeviceGetName), UUID (cuDeviceGetUuid_v2, formatted
/// as nvidia-smi prints it) and total memory in bytes (cuDeviceTotalMem_v2).
DeviceQuery queryDevices();

/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from the 16 UUID bytes (nvidia-smi's form).
std::string formatGpuUuid(const unsigned char bytes[16]);

}  // namespace vramscope::capture
