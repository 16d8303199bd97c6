#pragma once
// The controls a test holds over the fake libcupti (fake_cupti.cpp), beside the cupti* functions
// the agent calls. The harness dlopens the fake and finds these by dlsym, so the names are C
// symbols and the types below are the pointers it casts them to.
//
// The fake is built twice: as libcupti.so.13 (CUDA 13 record structs: CUpti_ActivityKernel10,
// Memory4, MemoryPool3, Memcpy6, Memset4; version CUPTI_API_VERSION of the toolkit headers) and as
// libcupti.so.12 (the 12.x structs of cupti_activity_deprecated.h: Kernel9, Memory3,
// MemoryPool2, Memcpy5, Memset3; version 24 = CUDA 12.6, cupti_version.h). Records are always
// handed to fakecupti_deliver in the CUDA 13 structs; the 12 build copies each field it knows by
// name into the 12.x struct, so the agent sees 12.x strides and layouts.
//
// How the fake hands records back, as CUPTI does (cupti_activity.h, cuptiActivityFlushAll):
// - Buffers are per thread: fakecupti_deliver writes into the calling thread's current buffer
//   (asking the registered bufferRequested callback for one on that thread when it has none) at
//   the next 8-byte aligned offset. A buffer that cannot take the next record is closed and the
//   thread gets a new one. Records delivered with `complete` 0 are in flight (the GPU has not
//   finished them) until fakecupti_complete_in_flight.
// - A worker thread of the fake hands closed buffers without records in flight back through
//   bufferCompleted, on its own thread, a few ms after they close.
// - cuptiActivityFlushAll(0) hands back, on the calling thread, every buffer without records in
//   flight, also a thread's current buffer when it holds records (the thread then asks for a new
//   one). Buffers with records in flight stay.
// - cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) hands back every buffer; a record in
//   flight comes back incomplete: a kernel with start, end and completed 0, any other record with
//   kind CUPTI_ACTIVITY_KIND_INVALID, at which cuptiActivityGetNextRecord stops with
//   CUPTI_ERROR_INVALID_KIND (as it does at a record it cannot decode).
// - At context destruction (the fake's own atexit handler, registered when the fake is loaded,
//   so it runs after the handlers of everything loaded later, the agent's included) every record
//   in flight completes, the records given to fakecupti_at_context_destroy are written, and every
//   buffer is handed back on the exiting thread.
// - A record of a kind the fake cannot size (CUPTI_ACTIVITY_KIND_INVALID, say) is written as its
//   8-byte head only; the walk stops there with CUPTI_ERROR_INVALID_KIND.
// - bufferCompleted gets a NULL context and stream 0 (the parameters are deprecated and always
//   NULL, cupti_activity.h); API callbacks get a non-null context (one per device).
// - cuptiGetTimestamp is CLOCK_REALTIME (CUPTI's clock on Linux x86-64, cupti_activity.h).

#include <cupti.h>

#include <cstddef>
#include <cstdint>

extern "C" {

/// The version cuptiGetVersion reports from now on.
void fakecupti_set_version(uint32_t version);
/// 12 or 13: which build this is.
uint32_t fakecupti_major(void);
/// Every cuptiActivityFlushAll sleeps `ms` before it hands buffers back (0: no sleep).
void fakecupti_set_flush_delay_ms(int ms);
/// Writes `count` records (CUDA 13 structs) into the calling thread's buffers (see above);
/// `complete` 0 keeps them in flight. Returns how many were written; the rest (no buffer, or a
/// buffer too small for one record) are counted for cuptiActivityGetNumDroppedRecords.
size_t fakecupti_deliver(const CUpti_Activity* const* records, size_t count, int complete);
/// The GPU finished: every record in flight is complete from now on.
void fakecupti_complete_in_flight(void);
/// Records completed at context destruction (written and handed back by the fake's atexit).
void fakecupti_at_context_destroy(const CUpti_Activity* const* records, size_t count);
/// Another CUPTI user registers its own buffer callbacks: from now on the agent's are never
/// called (buffers already handed out are completed to their own callback).
void fakecupti_replace_buffer_callbacks(void);
/// The registered buffer callbacks, and a way to put others in (the benchmark swaps in empty
/// ones and back).
void fakecupti_get_buffer_callbacks(CUpti_BuffersCallbackRequestFunc* requested,
                                    CUpti_BuffersCallbackCompleteFunc* completed);
void fakecupti_set_buffer_callbacks(CUpti_BuffersCallbackRequestFunc requested,
                                    CUpti_BuffersCallbackCompleteFunc completed);
/// cuptiActivityEnable(kind) fails with `result` from now on (CUPTI_SUCCESS: succeeds again).
void fakecupti_fail_enable(CUpti_ActivityKind kind, CUptiResult result);
/// One API call as CUPTI reports it to the subscriber: ENTER, then EXIT with `returnValue`
/// (cudaError_t or CUresult), on the calling thread, when the subscriber enabled (domain, cbid).
/// `params` is the call's parameter struct (cudaMalloc_v3020_params, ...), `device` the device
/// whose context is current. Returns 1 when the subscriber was called, else 0.
int fakecupti_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
                       const void* params, int returnValue, int device);
/// A runtime call that makes a driver call underneath, as cudart does (cudaMalloc ->
/// cuMemAlloc_v2): runtime ENTER, driver ENTER, driver EXIT, runtime EXIT, each to the subscriber
/// when it enabled that callback. Returns how many callbacks were made.
int fakecupti_api_call_nested(CUpti_CallbackId runtimeCbid, const char* runtimeName,
                              const void* runtimeParams, int runtimeReturn,
                              CUpti_CallbackId driverCbid, const char* driverName,
                              const void* driverParams, int driverReturn, int device);
/// The same ENTER/EXIT pair as fakecupti_api_call, made to `callback` instead of the subscriber
/// (the benchmark's empty callback, measured on the same path).
int fakecupti_api_call_to(CUpti_CallbackFunc callback, CUpti_CallbackDomain domain,
                          CUpti_CallbackId cbid, const char* name, const void* params,
                          int returnValue, int device);
/// 1 while the calling thread is inside an API callback made by the fake, else 0. The fake driver
/// asks this (by dlsym) to log whether cuMemGetInfo was called from one.
int fakecupti_in_api_callback(void);

using FakeSetVersionFn = void (*)(uint32_t);
using FakeMajorFn = uint32_t (*)(void);
using FakeSetFlushDelayFn = void (*)(int);
using FakeDeliverFn = size_t (*)(const CUpti_Activity* const*, size_t, int);
using FakeCompleteInFlightFn = void (*)(void);
using FakeAtContextDestroyFn = void (*)(const CUpti_Activity* const*, size_t);
using FakeReplaceCallbacksFn = void (*)(void);
using FakeGetBufferCallbacksFn = void (*)(CUpti_BuffersCallbackRequestFunc*,
                                          CUpti_BuffersCallbackCompleteFunc*);
using FakeSetBufferCallbacksFn = void (*)(CUpti_BuffersCallbackRequestFunc,
                                          CUpti_BuffersCallbackCompleteFunc);
using FakeFailEnableFn = void (*)(CUpti_ActivityKind, CUptiResult);
using FakeApiCallFn = int (*)(CUpti_CallbackDomain, CUpti_CallbackId, const char*, const void*, int,
                              int);
using FakeApiCallNestedFn = int (*)(CUpti_CallbackId, const char*, const void*, int,
                                    CUpti_CallbackId, const char*, const void*, int, int);
using FakeApiCallToFn = int (*)(CUpti_CallbackFunc, CUpti_CallbackDomain, CUpti_CallbackId,
                                const char*, const void*, int, int);
}
