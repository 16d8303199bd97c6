#pragma once
// The controls a test holds over the fake libcupti.so.13 (fake_cupti.cpp), beside the cupti*
// functions the agent calls. The harness dlopens the fake and finds these by dlsym, so the names
// are C symbols and the types below are the pointers it casts them to.
//
// What the fake does with records (the buffer format is the fake's own, walked by its own
// cuptiActivityGetNextRecord): fakecupti_deliver asks the registered bufferRequested callback for a
// buffer on the calling thread, copies each record to the next 8-byte aligned offset (its size
// from its kind: CUpti_ActivityKernel10, CUpti_ActivityMemory4, CUpti_ActivityMemoryPool3,
// CUpti_ActivityMemcpy6, CUpti_ActivityMemset4, CUpti_ActivityMarker2), asks for another buffer
// when one is full, and queues the filled buffers. cuptiActivityFlushAll hands queued buffers back
// through bufferCompleted on the thread that calls it: buffers delivered as complete on every
// flush, the others only with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED. A record of any other kind
// (CUPTI_ACTIVITY_KIND_INVALID, say) is written as its 8-byte head only; the walk stops there with
// CUPTI_ERROR_INVALID_KIND, as CUPTI does at a record it cannot decode.

#include <cupti.h>

#include <cstddef>
#include <cstdint>

extern "C" {

/// The version cuptiGetVersion reports from now on (CUPTI_API_VERSION until set).
void fakecupti_set_version(uint32_t version);
/// Every cuptiActivityFlushAll sleeps `ms` before it hands buffers back (0: no sleep).
void fakecupti_set_flush_delay_ms(int ms);
/// Writes `count` records into buffers of the registered buffer callbacks (see above); `complete`
/// false keeps them for a forced flush. Returns how many were written; the rest (no buffer, or a
/// buffer too small for one record) are counted for cuptiActivityGetNumDroppedRecords.
size_t fakecupti_deliver(const CUpti_Activity* const* records, size_t count, int complete);
/// Another CUPTI user registers its own buffer callbacks: from now on the agent's are never
/// called (buffers already handed out are completed to their own callback).
void fakecupti_replace_buffer_callbacks(void);
/// One API call as CUPTI reports it to the subscriber: ENTER, then EXIT with `*returnValue`
/// (cudaError_t or CUresult), on the calling thread, when the subscriber enabled (domain, cbid).
/// `params` is the call's parameter struct (cudaMalloc_v3020_params, ...). Returns 1 when the
/// subscriber was called, 0 when the callback was not enabled or nobody subscribed.
int fakecupti_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
                       const void* params, int returnValue);

/// 1 while the calling thread is inside the subscriber's API callback (fakecupti_api_call), else
/// 0. The fake driver asks this (by dlsym) to log whether cuMemGetInfo was called from one.
int fakecupti_in_api_callback(void);

using FakeSetVersionFn = void (*)(uint32_t);
using FakeSetFlushDelayFn = void (*)(int);
using FakeDeliverFn = size_t (*)(const CUpti_Activity* const*, size_t, int);
using FakeReplaceCallbacksFn = void (*)(void);
using FakeApiCallFn = int (*)(CUpti_CallbackDomain, CUpti_CallbackId, const char*, const void*,
                              int);
}
