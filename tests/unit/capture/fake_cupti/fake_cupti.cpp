// A stand-in for libcupti.so.13 (soname libcupti.so.13) so that the capture agent runs whole
// without a GPU: every cupti* function the agent imports, with behaviour a test steers through
// fake_cupti_control.h, and a log of what the agent asked for (fake_log.h). Signatures come from
// the CUPTI headers of the toolkit, so a change there fails to compile here.
//
// Thread safety: one mutex guards the fake's state; callbacks into the agent are made without it,
// so that the agent may call back into the fake from them.

#include <cupti.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "fake_cupti_control.h"
#include "fake_log.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using vramscope::fake::logLine;
using vramscope::fake::monotonicNs;
using vramscope::fake::threadId;

struct FilledBuffer {
    uint8_t* data = nullptr;
    size_t size = 0;
    size_t validSize = 0;
    bool complete = true;
    CUpti_BuffersCallbackCompleteFunc completed = nullptr;  ///< whoever handed it out
};

struct State {
    std::mutex mutex;
    uint32_t version = CUPTI_API_VERSION;
    int flushDelayMs = 0;
    CUpti_BuffersCallbackRequestFunc requested = nullptr;
    CUpti_BuffersCallbackCompleteFunc completed = nullptr;
    std::vector<FilledBuffer> queued;
    size_t dropped = 0;  ///< records no buffer took, reported with the next completed buffer
    bool subscribed = false;
    CUpti_CallbackFunc callback = nullptr;
    void* userdata = nullptr;
    std::set<std::pair<int, uint32_t>> enabledCallbacks;  ///< (domain, cbid)
    std::set<int> enabledDomains;
    std::set<int> enabledKinds;
    CUpti_ActivityThreadIdType threadIdType = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
    uint32_t correlationId = 0;
};

State& state() {
    static State* s = new State();  // never destroyed: the agent may call in during exit
    return *s;
}

/// True on a thread while the fake runs the subscriber's API callback there.
thread_local bool t_inApiCallback = false;

/// The subscriber handle the fake gives out (CUPTI's is opaque; only its address matters).
int g_subscriberTag = 0;

CUpti_SubscriberHandle ourSubscriber() {
    return reinterpret_cast<CUpti_SubscriberHandle>(&g_subscriberTag);
}

/// Bytes of a record of `kind` in the fake's buffers; 0 for kinds the fake cannot size.
size_t recordSize(CUpti_ActivityKind kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            return sizeof(CUpti_ActivityKernel10);
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            return sizeof(CUpti_ActivityMemory4);
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
            return sizeof(CUpti_ActivityMemoryPool3);
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            return sizeof(CUpti_ActivityMemcpy6);
        case CUPTI_ACTIVITY_KIND_MEMSET:
            return sizeof(CUpti_ActivityMemset4);
        case CUPTI_ACTIVITY_KIND_MARKER:
            return sizeof(CUpti_ActivityMarker2);
        default:
            return 0;
    }
}

constexpr size_t kUndecodableHeadBytes = 8;

size_t align8(size_t n) {
    return (n + 7) & ~size_t{7};
}

// --- "another CUPTI user": its own buffers, freed unread ---
void CUPTIAPI otherUserRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    *size = 64 * 1024;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
    *maxNumRecords = 0;
}

void CUPTIAPI otherUserCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) {
    std::free(buffer);
}

}  // namespace

// ------------------------------------------------------------------ controls
// (fake_cupti_control.h)

FAKE_EXPORT void fakecupti_set_version(uint32_t version) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().version = version;
}

FAKE_EXPORT void fakecupti_set_flush_delay_ms(int ms) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().flushDelayMs = ms;
}

FAKE_EXPORT size_t fakecupti_deliver(const CUpti_Activity* const* records, size_t count,
                                     int complete) {
    State& s = state();
    CUpti_BuffersCallbackRequestFunc requested = nullptr;
    CUpti_BuffersCallbackCompleteFunc completed = nullptr;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        requested = s.requested;
        completed = s.completed;
    }
    size_t written = 0;
    size_t i = 0;
    std::vector<FilledBuffer> filled;
    while (i < count && requested != nullptr) {
        FilledBuffer b;
        size_t maxRecords = 0;
        requested(&b.data, &b.size, &maxRecords);
        logLine("buffer_requested tid=%ld size=%zu max_records=%zu", threadId(), b.size,
                maxRecords);
        if (b.data == nullptr || b.size == 0) {
            break;
        }
        size_t inBuffer = 0;
        for (; i < count; ++i) {
            if (maxRecords != 0 && inBuffer == maxRecords) {
                break;
            }
            const size_t full = recordSize(records[i]->kind);
            const size_t bytes = full == 0 ? kUndecodableHeadBytes : full;
            const size_t at = align8(b.validSize);
            if (at + bytes > b.size) {
                break;
            }
            std::memcpy(b.data + at, records[i], bytes);
            b.validSize = at + bytes;
            ++inBuffer;
            ++written;
        }
        b.complete = complete != 0;
        b.completed = completed;
        if (inBuffer == 0) {
            // Not even one record fits: the buffer goes back empty, the rest is dropped.
            filled.push_back(b);
            break;
        }
        filled.push_back(b);
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    s.dropped += count - written;
    for (const FilledBuffer& b : filled) {
        s.queued.push_back(b);
    }
    logLine("deliver tid=%ld records=%zu written=%zu complete=%d buffers=%zu", threadId(), count,
            written, complete, filled.size());
    return written;
}

FAKE_EXPORT void fakecupti_replace_buffer_callbacks(void) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().requested = otherUserRequested;
    state().completed = otherUserCompleted;
    logLine("buffer_callbacks_replaced tid=%ld", threadId());
}

FAKE_EXPORT int fakecupti_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const char* name, const void* params, int returnValue) {
    State& s = state();
    CUpti_CallbackFunc callback = nullptr;
    void* userdata = nullptr;
    uint32_t correlation = 0;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        const bool enabled =
            s.subscribed && (s.enabledDomains.count(domain) != 0 ||
                             s.enabledCallbacks.count({static_cast<int>(domain), cbid}) != 0);
        if (enabled) {
            callback = s.callback;
            userdata = s.userdata;
        }
        correlation = ++s.correlationId;
    }
    logLine("api_call tid=%ld domain=%d cbid=%u return=%d delivered=%d", threadId(),
            static_cast<int>(domain), cbid, returnValue, callback != nullptr ? 1 : 0);
    if (callback == nullptr) {
        return 0;
    }
    uint64_t correlationData = 0;
    int value = 0;  // NOTE(cupti): the return value is defined only at API exit
    CUpti_CallbackData data{};
    data.functionName = name;
    data.functionParams = params;
    data.functionReturnValue = &value;
    data.symbolName = nullptr;
    data.context = nullptr;
    data.contextUid = 0;
    data.correlationData = &correlationData;
    data.correlationId = correlation;
    t_inApiCallback = true;
    data.callbackSite = CUPTI_API_ENTER;
    callback(userdata, domain, cbid, &data);
    value = returnValue;
    data.callbackSite = CUPTI_API_EXIT;
    callback(userdata, domain, cbid, &data);
    t_inApiCallback = false;
    return 1;
}

FAKE_EXPORT int fakecupti_in_api_callback(void) {
    return t_inApiCallback ? 1 : 0;
}

// ------------------------------------------------------------------ CUPTI API

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
    if (version == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    std::lock_guard<std::mutex> lock(state().mutex);
    *version = state().version;
    logLine("get_version version=%u", *version);
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
    if (str == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    switch (result) {
        case CUPTI_SUCCESS:
            *str = "CUPTI_SUCCESS";
            break;
        case CUPTI_ERROR_INVALID_KIND:
            *str = "CUPTI_ERROR_INVALID_KIND";
            break;
        case CUPTI_ERROR_MAX_LIMIT_REACHED:
            *str = "CUPTI_ERROR_MAX_LIMIT_REACHED";
            break;
        case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
            *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
            break;
        default:
            *str = "CUPTI_ERROR_UNKNOWN (fake)";
            break;
    }
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetLastError(void) {
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
    if (timestamp == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    // CUPTI's clock is CLOCK_MONOTONIC-based on Linux; so is the fake's.
    *timestamp = static_cast<uint64_t>(monotonicNs());
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext, uint32_t* deviceId) {
    if (deviceId == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    *deviceId = 0;  // the fake driver has one device
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext, CUstream, uint8_t,
                                                    uint32_t* streamId) {
    if (streamId == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    *streamId = 7;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                                CUpti_CallbackFunc callback, void* userdata) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (subscriber == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    if (s.subscribed) {
        logLine("subscribe tid=%ld result=multiple", threadId());
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    s.subscribed = true;
    s.callback = callback;
    s.userdata = userdata;
    *subscriber = ourSubscriber();
    logLine("subscribe tid=%ld result=ok", threadId());
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.subscribed || subscriber != ourSubscriber()) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    s.subscribed = false;
    s.callback = nullptr;
    s.enabledCallbacks.clear();
    s.enabledDomains.clear();
    logLine("unsubscribe tid=%ld", threadId());
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable,
                                                     CUpti_SubscriberHandle subscriber,
                                                     CUpti_CallbackDomain domain,
                                                     CUpti_CallbackId cbid) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.subscribed || subscriber != ourSubscriber()) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    if (enable != 0) {
        s.enabledCallbacks.insert({static_cast<int>(domain), cbid});
    } else {
        s.enabledCallbacks.erase({static_cast<int>(domain), cbid});
    }
    logLine("enable_callback enable=%u domain=%d cbid=%u", enable, static_cast<int>(domain), cbid);
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable,
                                                   CUpti_SubscriberHandle subscriber,
                                                   CUpti_CallbackDomain domain) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.subscribed || subscriber != ourSubscriber()) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    if (enable != 0) {
        s.enabledDomains.insert(domain);
    } else {
        s.enabledDomains.erase(domain);
    }
    logLine("enable_domain enable=%u domain=%d", enable, static_cast<int>(domain));
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t* enable,
                                                       CUpti_SubscriberHandle subscriber,
                                                       CUpti_CallbackDomain domain,
                                                       CUpti_CallbackId cbid) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (enable == nullptr || !s.subscribed || subscriber != ourSubscriber()) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    *enable = s.enabledDomains.count(domain) != 0 ||
                      s.enabledCallbacks.count({static_cast<int>(domain), cbid}) != 0
                  ? 1
                  : 0;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
    if (funcBufferRequested == nullptr || funcBufferCompleted == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    std::lock_guard<std::mutex> lock(state().mutex);
    state().requested = funcBufferRequested;
    state().completed = funcBufferCompleted;
    logLine("register_callbacks tid=%ld", threadId());
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().enabledKinds.insert(kind);
    logLine("activity_enable kind=%d", static_cast<int>(kind));
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().enabledKinds.erase(kind);
    logLine("activity_disable kind=%d", static_cast<int>(kind));
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().threadIdType = type;
    logLine("thread_id_type type=%d", static_cast<int>(type));
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
    if (type == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    std::lock_guard<std::mutex> lock(state().mutex);
    *type = state().threadIdType;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t enable) {
    logLine("latency_timestamps enable=%u", static_cast<unsigned>(enable));
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time) {
    logLine("flush_period ms=%u", time);
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void) {
    logLine("finalize tid=%ld", threadId());
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
    const int64_t enter = monotonicNs();
    // Logged at entry as well: a flush the process's end cuts short still shows.
    logLine("flush_enter tid=%ld flags=%u enter_ns=%lld", threadId(), flag,
            static_cast<long long>(enter));
    State& s = state();
    int delayMs = 0;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        delayMs = s.flushDelayMs;
    }
    if (delayMs > 0) {
        timespec left{delayMs / 1000, (delayMs % 1000) * 1'000'000L};
        while (nanosleep(&left, &left) != 0) {
        }
    }
    const bool forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
    std::vector<FilledBuffer> handBack;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        auto keep = std::stable_partition(s.queued.begin(), s.queued.end(),
                                          [&](const auto& b) { return !(forced || b.complete); });
        handBack.assign(keep, s.queued.end());
        s.queued.erase(keep, s.queued.end());
    }
    for (const FilledBuffer& b : handBack) {
        logLine("buffer_completed tid=%ld size=%zu valid=%zu", threadId(), b.size, b.validSize);
        b.completed(nullptr, 0, b.data, b.size, b.validSize);
    }
    logLine("flush tid=%ld flags=%u enter_ns=%lld exit_ns=%lld buffers=%zu", threadId(), flag,
            static_cast<long long>(enter), static_cast<long long>(monotonicNs()), handBack.size());
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer,
                                                            size_t validBufferSizeBytes,
                                                            CUpti_Activity** record) {
    if (buffer == nullptr || record == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    size_t at = 0;
    if (*record != nullptr) {
        const auto* current = reinterpret_cast<const uint8_t*>(*record);
        if (current < buffer || current >= buffer + validBufferSizeBytes) {
            return CUPTI_ERROR_INVALID_PARAMETER;
        }
        const size_t size = recordSize((*record)->kind);
        if (size == 0) {
            return CUPTI_ERROR_INVALID_KIND;
        }
        at = align8(static_cast<size_t>(current - buffer) + size);
    }
    if (at + sizeof(CUpti_ActivityKind) > validBufferSizeBytes) {
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    auto* next = reinterpret_cast<CUpti_Activity*>(buffer + at);
    const size_t size = recordSize(next->kind);
    if (size == 0 || at + size > validBufferSizeBytes) {
        return CUPTI_ERROR_INVALID_KIND;  // NOTE(cupti): an undecodable or incomplete record
    }
    *record = next;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t,
                                                                   size_t* dropped) {
    if (dropped == nullptr) {
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    std::lock_guard<std::mutex> lock(state().mutex);
    *dropped = state().dropped;
    state().dropped = 0;
    return CUPTI_SUCCESS;
}

/// libcupti's NVTX injection entry (the agent forwards NVTX_INJECTION64_PATH's call here). The
/// argument is NVTX's export-table getter; the fake only says it was called and accepts.
FAKE_EXPORT int InitializeInjectionNvtx2(const void* getExportTable) {
    logLine("nvtx2_init tid=%ld table=%d", threadId(), getExportTable != nullptr ? 1 : 0);
    return 1;
}
