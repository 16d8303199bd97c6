#pragma once
// The record layouts of one build of the fake libcupti: FAKE_CUPTI_MAJOR 13 writes the CUDA 13.0
// structs (cupti_activity.h), 12 the CUDA 12.x ones (cupti_activity_deprecated.h of the 13.0
// toolkit, which keeps them). Records come in as CUDA 13 structs; the 12 build copies every field
// the tests set, by name, into the 12.x struct, so that an agent reading 12.x records with the 13
// layout would read wrong values wherever the two differ (the copy never relies on a shared
// offset). Which struct version a 12.x release writes: docs/DESIGN.md "CUPTI record versions"
// (this build
// plays 12.6: Kernel9, Memory3, MemoryPool2, Memcpy5, Memset3).

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#ifndef FAKE_CUPTI_MAJOR
#define FAKE_CUPTI_MAJOR 13
#endif

namespace vramscope::fake {

#if FAKE_CUPTI_MAJOR == 12
using KernelRecord = CUpti_ActivityKernel9;
using MemoryRecord = CUpti_ActivityMemory3;
using MemoryPoolRecord = CUpti_ActivityMemoryPool2;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using MemsetRecord = CUpti_ActivityMemset3;
inline constexpr uint32_t kDefaultVersion = 24;  // CUDA 12.6 (cupti_version.h)
#else
using KernelRecord = CUpti_ActivityKernel10;
using MemoryRecord = CUpti_ActivityMemory4;
using MemoryPoolRecord = CUpti_ActivityMemoryPool3;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemsetRecord = CUpti_ActivityMemset4;
inline constexpr uint32_t kDefaultVersion = CUPTI_API_VERSION;
#endif

/// Bytes of a record of `kind` in this build's buffers; 0 for kinds the fake cannot size.
inline size_t recordSize(CUpti_ActivityKind kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            return sizeof(KernelRecord);
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            return sizeof(MemoryRecord);
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
            return sizeof(MemoryPoolRecord);
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            return sizeof(MemcpyRecord);
        case CUPTI_ACTIVITY_KIND_MEMSET:
            return sizeof(MemsetRecord);
        case CUPTI_ACTIVITY_KIND_MARKER:
            return sizeof(CUpti_ActivityMarker2);
        default:
            return 0;
    }
}

/// Bytes of the CUDA 13 struct a record of `kind` is handed to the fake in; 0 when unknown.
inline size_t inputSize(CUpti_ActivityKind kind) {
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

/// Copies the fields of a CUDA 13 kernel record into `out` by name.
template <class Out>
void copyKernel(const CUpti_ActivityKernel10& in, Out& out) {
    out.kind = in.kind;
    out.start = in.start;
    out.end = in.end;
    out.completed = in.completed;
    out.deviceId = in.deviceId;
    out.contextId = in.contextId;
    out.streamId = in.streamId;
    out.gridX = in.gridX;
    out.gridY = in.gridY;
    out.gridZ = in.gridZ;
    out.blockX = in.blockX;
    out.blockY = in.blockY;
    out.blockZ = in.blockZ;
    out.correlationId = in.correlationId;
    out.gridId = in.gridId;
    out.name = in.name;
    out.queued = in.queued;
    out.submitted = in.submitted;
}

template <class Out>
void copyMemory(const CUpti_ActivityMemory4& in, Out& out) {
    out.kind = in.kind;
    out.memoryOperationType = in.memoryOperationType;
    out.memoryKind = in.memoryKind;
    out.correlationId = in.correlationId;
    out.address = in.address;
    out.bytes = in.bytes;
    out.timestamp = in.timestamp;
    out.PC = in.PC;
    out.processId = in.processId;
    out.deviceId = in.deviceId;
    out.contextId = in.contextId;
    out.streamId = in.streamId;
    out.name = in.name;
    out.isAsync = in.isAsync;
    out.memoryPoolConfig.memoryPoolType = in.memoryPoolConfig.memoryPoolType;
    out.memoryPoolConfig.address = in.memoryPoolConfig.address;
    out.memoryPoolConfig.releaseThreshold = in.memoryPoolConfig.releaseThreshold;
    out.memoryPoolConfig.pool.size = in.memoryPoolConfig.pool.size;
    out.memoryPoolConfig.utilizedSize = in.memoryPoolConfig.utilizedSize;
}

template <class Out>
void copyMemoryPool(const CUpti_ActivityMemoryPool3& in, Out& out) {
    out.kind = in.kind;
    out.memoryPoolOperationType = in.memoryPoolOperationType;
    out.memoryPoolType = in.memoryPoolType;
    out.correlationId = in.correlationId;
    out.processId = in.processId;
    out.deviceId = in.deviceId;
    out.minBytesToKeep = in.minBytesToKeep;
    out.address = in.address;
    out.size = in.size;
    out.releaseThreshold = in.releaseThreshold;
    out.timestamp = in.timestamp;
    out.utilizedSize = in.utilizedSize;
}

template <class Out>
void copyMemcpy(const CUpti_ActivityMemcpy6& in, Out& out) {
    out.kind = in.kind;
    out.copyKind = in.copyKind;
    out.srcKind = in.srcKind;
    out.dstKind = in.dstKind;
    out.flags = in.flags;
    out.bytes = in.bytes;
    out.start = in.start;
    out.end = in.end;
    out.deviceId = in.deviceId;
    out.contextId = in.contextId;
    out.streamId = in.streamId;
    out.correlationId = in.correlationId;
    out.runtimeCorrelationId = in.runtimeCorrelationId;
}

template <class Out>
void copyMemset(const CUpti_ActivityMemset4& in, Out& out) {
    out.kind = in.kind;
    out.value = in.value;
    out.bytes = in.bytes;
    out.start = in.start;
    out.end = in.end;
    out.deviceId = in.deviceId;
    out.contextId = in.contextId;
    out.streamId = in.streamId;
    out.correlationId = in.correlationId;
    out.flags = in.flags;
    out.memoryKind = in.memoryKind;
}

/// Writes `in` (a CUDA 13 struct of its kind) at `at` in this build's layout, `bytes` =
/// recordSize(in.kind) (or the 8-byte head for kinds the fake cannot size).
inline void writeRecord(uint8_t* at, const CUpti_Activity& in, size_t bytes) {
    switch (in.kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            KernelRecord out{};
            copyKernel(reinterpret_cast<const CUpti_ActivityKernel10&>(in), out);
            std::memcpy(at, &out, sizeof(out));
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMORY2: {
            MemoryRecord out{};
            copyMemory(reinterpret_cast<const CUpti_ActivityMemory4&>(in), out);
            std::memcpy(at, &out, sizeof(out));
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
            MemoryPoolRecord out{};
            copyMemoryPool(reinterpret_cast<const CUpti_ActivityMemoryPool3&>(in), out);
            std::memcpy(at, &out, sizeof(out));
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            MemcpyRecord out{};
            copyMemcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(in), out);
            std::memcpy(at, &out, sizeof(out));
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            MemsetRecord out{};
            copyMemset(reinterpret_cast<const CUpti_ActivityMemset4&>(in), out);
            std::memcpy(at, &out, sizeof(out));
            return;
        }
        default:
            std::memcpy(at, &in, bytes);  // MARKER (Marker2 in both majors), or a bare head
            return;
    }
}

/// What a forced flush makes of a record still in flight: a kernel without its times, any other
/// record unreadable (kind INVALID: the walk stops there).
inline void makeIncomplete(uint8_t* at) {
    CUpti_ActivityKind kind{};
    std::memcpy(&kind, at, sizeof(kind));
    if (kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        KernelRecord k{};
        std::memcpy(&k, at, sizeof(k));
        k.start = 0;
        k.end = 0;
        k.completed = 0;
        std::memcpy(at, &k, sizeof(k));
        return;
    }
    const CUpti_ActivityKind invalid = CUPTI_ACTIVITY_KIND_INVALID;
    std::memcpy(at, &invalid, sizeof(invalid));
}

}  // namespace vramscope::fake
