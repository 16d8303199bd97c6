#pragma once
// Everything that talks to CUPTI, through the table bound to the job's own libcupti
// (cupti_api.h): the settings made before any context exists, the activity buffers, the enabled
// activity kinds, the allocation callbacks (failures, retries, driver VMM pages), flushing,
// timestamps, and the NVTX hand-over to libcupti.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vramscope::capture {

class Agent;

struct CuptiStart {
    bool ok = false;
    bool oomCallbacks = false;  ///< false when callbacks were not wanted or another tool owns them
    std::string error;          ///< why capture cannot run (ok == false)
    std::vector<std::string> notices;  ///< lines to print when running degraded
    /// Each setting's outcome for the header: "cupti_zeroed_buffers", "cupti_thread_id_type",
    /// "cupti_latency_timestamps", "cupti_subscribe", "cupti_callbacks",
    /// "cupti_register_callbacks", "cupti_enable_<KIND>" = "CUPTI_SUCCESS" or the error's name.
    std::vector<std::pair<std::string, std::string>> settings;
    std::string enabledKinds;  ///< "MEMORY2,MEMORY_POOL,..." of the kinds CUPTI accepted
};

/// Starts CUPTI on the bound library (cuptiBinding().ok must hold), inside cuInit, so before any
/// context exists: promises zeroed buffers (ZEROED_OUT_ACTIVITY_BUFFER), system thread ids
/// (cuptiSetThreadIdType), queued/submitted times (cuptiActivityEnableLatencyTimestamps); when
/// `wantCallbacks`, subscribes to the allocation APIs (a subscriber slot another tool holds is
/// said once and capture goes on without OOM events); registers the buffer callbacks; enables
/// MEMORY2, MEMORY_POOL, CONCURRENT_KERNEL (never KERNEL: it serialises kernels), MEMCPY, MEMSET
/// and MARKER, each on its own: a kind CUPTI refuses is left out with one notice, and capture is
/// off only when CUPTI takes none or refuses the buffer callbacks.
CuptiStart startCupti(Agent& agent, bool wantCallbacks);

/// cuptiActivityFlushAll(0), or with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED (also buffers holding
/// records in flight, which come back incomplete: only at the very end).
void flushCupti(bool forced);

/// CUPTI's clock, ns (the clock of every activity record; CLOCK_REALTIME on Linux x86-64). 0
/// without a bound CUPTI.
int64_t cuptiNowNs();

/// Hands NVTX initialisation to the bound libcupti's InitializeInjectionNvtx2 (what
/// NVTX_INJECTION64_PATH=libcupti would call), binding it first when NVTX comes before cuInit.
/// Refused (0, with one notice) on releases whose NVTX injection crashes (13.0.0). Returns
/// libcupti's result, 0 when there is none.
int forwardNvtxInitialization(const void* getExportTable);
/// The same for NVTX extension modules (InitializeInjectionNvtxExtension).
int forwardNvtxExtensionInitialization(void* moduleInfo);

}  // namespace vramscope::capture
