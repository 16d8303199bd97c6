// The C entry points of libvramscope_capture.so: the only exported symbols (see
// libvramscope_capture.map). None of them lets an exception or a failure reach the caller: the
// traced job must run exactly as it would without the agent.
//
// The NCCL profiler plugin's tables (ncclProfiler_v6 / _v5 / _v4, NCCL_PROFILER_PLUGIN=this
// library) are exported from nccl_plugin.cpp.

#include <mutex>

#include "agent.h"
#include "cupti_session.h"

#define VRAMSCOPE_EXPORT extern "C" __attribute__((visibility("default")))

/// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names this library.
/// Returns 1 (success for the driver) whether or not capture could start.
VRAMSCOPE_EXPORT int InitializeInjection(void) {
    static std::once_flag once;
    try {
        std::call_once(once, [] { vramscope::capture::Agent::instance().start(); });
    } catch (...) {
        try {
            vramscope::capture::printNotice("capture is off: unexpected error while starting");
        } catch (...) {
        }
    }
    return 1;
}

/// Called by NVTX (NVTX_INJECTION64_PATH names this library) on the first NVTX call. Hands the
/// call to the libcupti this library is bound to, so that NVTX markers reach the same CUPTI
/// instance that records everything else (a different libcupti file gets no markers:
/// docs/DESIGN.md "NVTX").
/// The argument is NVTX's NvtxGetExportTableFunc_t (nvtxDetail/nvtxTypes.h); 0 = not handled.
VRAMSCOPE_EXPORT int InitializeInjectionNvtx2(const void* getExportTable) {
    try {
        return vramscope::capture::forwardNvtxInitialization(getExportTable);
    } catch (...) {
        return 0;
    }
}

/// NVTX extension modules (payload schemas, counters): forwarded to libcupti as well.
VRAMSCOPE_EXPORT int InitializeInjectionNvtxExtension(void* moduleInfo) {
    try {
        return vramscope::capture::forwardNvtxExtensionInitialization(moduleInfo);
    } catch (...) {
        return 0;
    }
}
