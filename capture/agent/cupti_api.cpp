#include "cupti_api.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

namespace vramscope::capture {

namespace {

template <class Fn>
bool bindSymbol(void* handle, const char* name, Fn& out) {
    out = reinterpret_cast<Fn>(dlsym(handle, name));
    return out != nullptr;
}

/// Fills `api` from `handle`; the name of the first required function missing, or "".
std::string fillTable(void* handle, CuptiApi& api) {
    struct Required {
        const char* name;
        bool ok;
    };
    const Required required[] = {
        {"cuptiGetVersion", bindSymbol(handle, "cuptiGetVersion", api.getVersion)},
        {"cuptiGetResultString", bindSymbol(handle, "cuptiGetResultString", api.getResultString)},
        {"cuptiGetTimestamp", bindSymbol(handle, "cuptiGetTimestamp", api.getTimestamp)},
        {"cuptiGetDeviceId", bindSymbol(handle, "cuptiGetDeviceId", api.getDeviceId)},
        {"cuptiGetStreamIdEx", bindSymbol(handle, "cuptiGetStreamIdEx", api.getStreamIdEx)},
        {"cuptiSubscribe", bindSymbol(handle, "cuptiSubscribe", api.subscribe)},
        {"cuptiEnableCallback", bindSymbol(handle, "cuptiEnableCallback", api.enableCallback)},
        {"cuptiActivityRegisterCallbacks",
         bindSymbol(handle, "cuptiActivityRegisterCallbacks", api.activityRegisterCallbacks)},
        {"cuptiActivityEnable", bindSymbol(handle, "cuptiActivityEnable", api.activityEnable)},
        {"cuptiActivityDisable", bindSymbol(handle, "cuptiActivityDisable", api.activityDisable)},
        {"cuptiActivityFlushAll",
         bindSymbol(handle, "cuptiActivityFlushAll", api.activityFlushAll)},
        {"cuptiActivityGetNextRecord",
         bindSymbol(handle, "cuptiActivityGetNextRecord", api.activityGetNextRecord)},
        {"cuptiActivityGetNumDroppedRecords",
         bindSymbol(handle, "cuptiActivityGetNumDroppedRecords", api.activityGetNumDroppedRecords)},
    };
    bindSymbol(handle, "cuptiActivitySetAttribute", api.activitySetAttribute);
    bindSymbol(handle, "cuptiSetThreadIdType", api.setThreadIdType);
    bindSymbol(handle, "cuptiActivityEnableLatencyTimestamps", api.activityEnableLatencyTimestamps);
    bindSymbol(handle, "InitializeInjectionNvtx2", api.nvtxInitialize);
    bindSymbol(handle, "InitializeInjectionNvtxExtension", api.nvtxExtensionInitialize);
    for (const Required& r : required) {
        if (!r.ok) {
            return r.name;
        }
    }
    return {};
}

/// The file `fn` lives in (dladdr), "" when unknown.
std::string fileOf(void* fn) {
    Dl_info info{};
    if (fn == nullptr || dladdr(fn, &info) == 0 || info.dli_fname == nullptr) {
        return {};
    }
    return info.dli_fname;
}

std::string envOr(const char* name, const char* other = nullptr) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') {
        return v;
    }
    if (other != nullptr) {
        if (const char* v = std::getenv(other); v != nullptr && *v != '\0') {
            return v;
        }
    }
    return {};
}

std::string nothingFound(const CuptiBinding& b) {
    const std::string what =
        b.jobMajor ? "no CUPTI for CUDA " + std::to_string(*b.jobMajor) + " (libcupti.so." +
                         std::to_string(*b.jobMajor) + ")"
                   : std::string(
                         "no CUPTI (libcupti.so.13 or libcupti.so.12; the job maps no "
                         "libcudart)");
    std::string firstReason;
    for (const std::string& t : b.tried) {
        if (t.find("cannot open") == std::string::npos &&
            t.find("No such file") == std::string::npos) {
            firstReason = "; " + t;
            break;
        }
    }
    return what +
           " found in the process, on the loader's path, beside its libcudart, in its "
           "nvidia-cuda-cupti wheel, CUDA_HOME or /usr/local/cuda*" +
           firstReason + " (set " + kEnvCuptiPath + " to one)";
}

/// Tries one candidate; true when `b` is bound to it.
bool tryCandidate(const CuptiCandidate& c, bool allowUnverified, CuptiBinding& b) {
    const bool byName = c.source == CuptiSource::SearchPath;
    if (!byName && c.source != CuptiSource::Mapped && access(c.path.c_str(), F_OK) != 0) {
        b.tried.push_back(c.path + ": No such file");
        return false;
    }
    bool loadedHere = false;
    void* handle = dlopen(c.path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) {
        if (c.source == CuptiSource::Mapped) {
            b.tried.push_back(c.path + ": mapped but cannot be opened");
            return false;
        }
        handle = dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
        loadedHere = handle != nullptr;
    }
    if (handle == nullptr) {
        const char* e = dlerror();
        b.tried.push_back(c.path + ": cannot open (" + (e != nullptr ? e : "?") + ")");
        return false;
    }
    auto reject = [&](const std::string& why) {
        b.tried.push_back(c.path + ": " + why);
        if (loadedHere) {
            dlclose(handle);
        }
        b.api = CuptiApi{};
        return false;
    };
    if (const std::string missing = fillTable(handle, b.api); !missing.empty()) {
        return reject("not a libcupti (no " + missing + ")");
    }
    uint32_t version = 0;
    if (b.api.getVersion(&version) != CUPTI_SUCCESS) {
        return reject("cuptiGetVersion failed");
    }
    const CuptiRelease release = classifyCuptiVersion(version);
    if (release.major != 0 && release.major != c.major) {
        return reject("it is CUPTI " + release.name + ", not CUDA " + std::to_string(c.major) +
                      "'s");
    }
    if (!releaseUsable(release, allowUnverified)) {
        const std::string why =
            release.note + (release.verdict == CuptiVerdict::Unverified
                                ? std::string("; set ") + kEnvCuptiUnverified + "=1 to try it"
                                : std::string());
        reject(why);
        b.error = "the job's CUPTI at " + c.path + " cannot be used: " + why;
        return false;
    }
    b.ok = true;
    b.version = version;
    b.release = release;
    b.source = c.source;
    b.path = byName ? fileOf(reinterpret_cast<void*>(b.api.getVersion)) : c.path;
    if (b.path.empty()) {
        b.path = c.path;
    }
    return true;
}

CuptiBinding bind() {
    CuptiBinding b;
    CuptiSearchInputs in;
    in.mapped = mappedLibraries();
    in.jobMajor = jobCudaMajor(in.mapped);
    in.cudaHome = envOr("CUDA_HOME", "CUDA_PATH");
    in.overridePath = envOr(kEnvCuptiPath);
    in.localToolkits = listLocalToolkits();
    b.jobMajor = in.jobMajor;
    const bool allowUnverified = envOr(kEnvCuptiUnverified) == "1";
    for (const CuptiCandidate& c : cuptiCandidates(in)) {
        if (tryCandidate(c, allowUnverified, b)) {
            return b;
        }
        if (!b.error.empty() && c.source == CuptiSource::Mapped) {
            return b;  // the process's own CUPTI is refused: never bring a second one in
        }
    }
    if (b.error.empty()) {
        b.error = nothingFound(b);
    }
    return b;
}

}  // namespace

const CuptiBinding& cuptiBinding() {
    // Never destroyed: exit handlers and CUPTI's late callbacks go through the table.
    static CuptiBinding* binding = new CuptiBinding(bind());
    return *binding;
}

std::string cuptiResultName(CUptiResult rc) {
    switch (rc) {
        case CUPTI_SUCCESS:
            return "CUPTI_SUCCESS";
        case CUPTI_ERROR_INVALID_PARAMETER:
            return "CUPTI_ERROR_INVALID_PARAMETER";
        case CUPTI_ERROR_INVALID_DEVICE:
            return "CUPTI_ERROR_INVALID_DEVICE";
        case CUPTI_ERROR_INVALID_CONTEXT:
            return "CUPTI_ERROR_INVALID_CONTEXT";
        case CUPTI_ERROR_INVALID_KIND:
            return "CUPTI_ERROR_INVALID_KIND";
        case CUPTI_ERROR_NOT_INITIALIZED:
            return "CUPTI_ERROR_NOT_INITIALIZED";
        case CUPTI_ERROR_INVALID_OPERATION:
            return "CUPTI_ERROR_INVALID_OPERATION";
        case CUPTI_ERROR_MAX_LIMIT_REACHED:
            return "CUPTI_ERROR_MAX_LIMIT_REACHED";
        case CUPTI_ERROR_NOT_READY:
            return "CUPTI_ERROR_NOT_READY";
        case CUPTI_ERROR_NOT_COMPATIBLE:
            return "CUPTI_ERROR_NOT_COMPATIBLE";
        case CUPTI_ERROR_NOT_SUPPORTED:
            return "CUPTI_ERROR_NOT_SUPPORTED";
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
            return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
        case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
            return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        case CUPTI_ERROR_UNKNOWN:
            return "CUPTI_ERROR_UNKNOWN";
        default:
            return "CUPTI error " + std::to_string(static_cast<int>(rc));
    }
}

}  // namespace vramscope::capture
