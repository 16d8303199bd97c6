#pragma once
// The CUPTI functions the agent calls, bound at run time to the libcupti the job uses (no NEEDED
// entry, no link-time symbol versions): found in the order of capture/common/cupti_library.h,
// opened with dlopen (RTLD_NOLOAD first, so the process's own copy is reused), filled by dlsym.
//
// The agent compiles against the toolkit's CUPTI headers only for the types and the signatures;
// calling a cupti* function directly would be an undefined symbol at link time (--no-undefined),
// so every call goes through this table. Bound once per process, from whichever entry point runs
// first (InitializeInjection or NVTX's), and never destroyed: atexit handlers and CUPTI's late
// callbacks use it.

#include <cupti.h>

#include <optional>
#include <string>
#include <vector>

#include "cupti_library.h"

namespace vramscope::capture {

/// Pointers to CUPTI's functions; the ones marked optional may be null (older releases).
struct CuptiApi {
    decltype(&::cuptiGetVersion) getVersion = nullptr;
    decltype(&::cuptiGetResultString) getResultString = nullptr;
    decltype(&::cuptiGetTimestamp) getTimestamp = nullptr;
    decltype(&::cuptiGetDeviceId) getDeviceId = nullptr;
    decltype(&::cuptiGetStreamIdEx) getStreamIdEx = nullptr;
    decltype(&::cuptiSubscribe) subscribe = nullptr;
    decltype(&::cuptiEnableCallback) enableCallback = nullptr;
    decltype(&::cuptiActivityRegisterCallbacks) activityRegisterCallbacks = nullptr;
    decltype(&::cuptiActivityEnable) activityEnable = nullptr;
    decltype(&::cuptiActivityDisable) activityDisable = nullptr;
    decltype(&::cuptiActivityFlushAll) activityFlushAll = nullptr;
    decltype(&::cuptiActivityGetNextRecord) activityGetNextRecord = nullptr;
    decltype(&::cuptiActivityGetNumDroppedRecords) activityGetNumDroppedRecords = nullptr;
    decltype(&::cuptiActivitySetAttribute) activitySetAttribute = nullptr;  ///< optional
    decltype(&::cuptiSetThreadIdType) setThreadIdType = nullptr;            ///< optional
    /// optional
    decltype(&::cuptiActivityEnableLatencyTimestamps) activityEnableLatencyTimestamps = nullptr;
    /// libcupti's NVTX injection entries (NVTX_INJECTION64_PATH=libcupti calls them); optional.
    int (*nvtxInitialize)(const void* getExportTable) = nullptr;
    int (*nvtxExtensionInitialize)(void* moduleInfo) = nullptr;
};

/// The outcome of binding: the table, where it came from and what was tried.
struct CuptiBinding {
    bool ok = false;
    CuptiApi api;
    std::string path;  ///< the file bound (as dladdr names it), "" when none
    CuptiSource source = CuptiSource::Mapped;
    uint32_t version = 0;  ///< cuptiGetVersion
    CuptiRelease release;
    std::optional<int> jobMajor;  ///< the major of the job's mapped libcudart
    /// When !ok: one sentence for the "capture is off" line, naming the job's major ("no CUPTI
    /// for CUDA 12 ...") and the places looked at.
    std::string error;
    std::vector<std::string> tried;  ///< "PATH: why not", in order
};

/// The binding of this process, made on the first call (thread-safe), never destroyed.
/// VRAMSCOPE_CUPTI_UNVERIFIED=1 accepts releases newer than the table in cupti_library.h.
const CuptiBinding& cuptiBinding();

/// The bound table; only valid when cuptiBinding().ok.
inline const CuptiApi& cupti() {
    return cuptiBinding().api;
}

/// "CUPTI_SUCCESS", "CUPTI_ERROR_NOT_COMPATIBLE", ... for the codes of cupti_result.h the agent
/// meets, else "CUPTI error N" (names written out here, so that the header does not depend on
/// what a libcupti's cuptiGetResultString says).
std::string cuptiResultName(CUptiResult rc);

}  // namespace vramscope::capture
