#pragma once
// Everything that talks to CUPTI: version check, activity buffers, the enabled activity kinds,
// the OOM callbacks, flushing, timestamps, and the NVTX hand-over to libcupti.

#include <cstdint>
#include <string>

namespace vramscope::capture {

class Agent;

struct CuptiStart {
    bool ok = false;
    bool oomCallbacks = false;  ///< false when callbacks were not wanted or another tool owns them
    std::string error;          ///< why capture cannot run (ok == false)
    std::string warning;        ///< one line to print when running degraded
    uint32_t version = 0;       ///< cuptiGetVersion
};

/// CUPTI API version the agent was built against (CUPTI_API_VERSION).
uint32_t builtCuptiVersion();
/// True when a libcupti reporting `runtime` can be used by an agent built against `built`: the
/// same major (CUPTI >= 13 numbers versions MMmmpp, e.g. 130001) and not older. Activity record
/// layouts change only with the major (CUpti_ActivityKernel10, CUpti_ActivityMemory4 in 13.x).
bool cuptiVersionCompatible(uint32_t built, uint32_t runtime);

/// Checks the CUPTI version, registers the buffer callbacks, enables MEMORY2, MEMORY_POOL,
/// CONCURRENT_KERNEL (never KERNEL: it serialises kernels), MEMCPY, MEMSET and MARKER, and, when
/// `wantOomCallbacks`, subscribes to the allocation APIs to catch out-of-memory failures. When
/// another tool already holds the one CUPTI subscriber slot it runs with activity records only.
CuptiStart startCupti(Agent& agent, bool wantOomCallbacks);

/// cuptiActivityFlushAll(0), or with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED (also incomplete buffers).
void flushCupti(bool forced);

/// CUPTI's clock, ns (the clock of every activity record).
int64_t cuptiNowNs();

/// Hands NVTX initialisation to the libcupti this library is bound to (its exported
/// InitializeInjectionNvtx2, the function NVTX_INJECTION64_PATH=libcupti.so would call).
/// Returns its result, 0 when that libcupti cannot be found.
int forwardNvtxInitialization(const void* getExportTable);
/// The same for NVTX extension modules (InitializeInjectionNvtxExtension).
int forwardNvtxExtensionInitialization(void* moduleInfo);

}  // namespace vramscope::capture
