#pragma once
// One record converter for CUDA 12 and CUDA 13 CUPTI: every field RecordConverter reads sits at
// the same offset in the 12.x structs (cupti_activity_deprecated.h of the 13.0 toolkit) and the
// 13.0 ones (cupti_activity.h), which the static_asserts below keep true at compile time. The
// converter reads records through the 13.0 types; a record's stride always comes from
// cuptiActivityGetNextRecord, never from sizeof (layouts change within a major too: Memcpy5 up to
// 12.7, Memcpy6 from 12.8: docs/DESIGN.md "CUPTI record versions").

#include <cupti.h>

#include <cstddef>
#include <cstdint>

namespace vramscope::capture {

#define VRAMSCOPE_SAME_OFFSET(A, B, field)                                                \
    static_assert(                                                                        \
        offsetof(A, field) == offsetof(B, field) && sizeof(A::field) == sizeof(B::field), \
        #A " and " #B " differ at " #field)

// CONCURRENT_KERNEL: Kernel9 (12.x), Kernel10 (13.0-13.1)
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, kind);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, start);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, end);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, deviceId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, streamId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, correlationId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, name);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, queued);
// MEMORY2: Memory3 (12.x), Memory4 (13.x, adds the source)
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, kind);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryOperationType);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryKind);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, address);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, bytes);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, timestamp);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, deviceId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, streamId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, isAsync);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryPoolConfig);
static_assert(offsetof(CUpti_ActivityMemory3, memoryPoolConfig.memoryPoolType) ==
              offsetof(CUpti_ActivityMemory4, memoryPoolConfig.memoryPoolType));
static_assert(offsetof(CUpti_ActivityMemory3, memoryPoolConfig.address) ==
              offsetof(CUpti_ActivityMemory4, memoryPoolConfig.address));
static_assert(offsetof(CUpti_ActivityMemory3, memoryPoolConfig.pool.size) ==
              offsetof(CUpti_ActivityMemory4, memoryPoolConfig.pool.size));
// MEMORY_POOL: MemoryPool2 (12.x), MemoryPool3 (13.x)
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, kind);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3,
                      memoryPoolOperationType);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, memoryPoolType);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, address);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, size);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, timestamp);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, deviceId);
// MEMCPY: Memcpy5 (to 12.7), Memcpy6 (12.8 and 13.x)
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, kind);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, copyKind);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, bytes);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, start);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, end);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, deviceId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, streamId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, correlationId);
// MEMSET: Memset3, Memset4 (12.x), Memset4 (13.x)
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, kind);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, bytes);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, start);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, end);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, deviceId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, streamId);
VRAMSCOPE_SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, correlationId);

#undef VRAMSCOPE_SAME_OFFSET

/// The record structs of one CUDA major.
enum class RecordLayout { Cuda12, Cuda13 };

/// Bytes of a record of `kind` in `layout`'s structs (the older version where a 12.x release may
/// write either: Memcpy5, Memset3), 0 for kinds the agent does not read. For the header and for
/// checks; the walk's stride is CUPTI's.
constexpr size_t recordBytes(RecordLayout layout, CUpti_ActivityKind kind) {
    const bool twelve = layout == RecordLayout::Cuda12;
    switch (kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            return twelve ? sizeof(CUpti_ActivityKernel9) : sizeof(CUpti_ActivityKernel10);
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            return twelve ? sizeof(CUpti_ActivityMemory3) : sizeof(CUpti_ActivityMemory4);
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
            return twelve ? sizeof(CUpti_ActivityMemoryPool2) : sizeof(CUpti_ActivityMemoryPool3);
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            return twelve ? sizeof(CUpti_ActivityMemcpy5) : sizeof(CUpti_ActivityMemcpy6);
        case CUPTI_ACTIVITY_KIND_MEMSET:
            return twelve ? sizeof(CUpti_ActivityMemset3) : sizeof(CUpti_ActivityMemset4);
        case CUPTI_ACTIVITY_KIND_MARKER:
            return sizeof(CUpti_ActivityMarker2);
        default:
            return 0;
    }
}

/// The end of the last field the converter reads in a record of `kind`: a record shorter than
/// this (a stride CUPTI gives that leaves less) is not read. The same in both majors.
constexpr size_t convertedBytes(CUpti_ActivityKind kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            return offsetof(CUpti_ActivityKernel10, queued) + sizeof(uint64_t);
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            return offsetof(CUpti_ActivityMemory4, memoryPoolConfig) +
                   sizeof(CUpti_ActivityMemory4::memoryPoolConfig);
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
            return offsetof(CUpti_ActivityMemoryPool3, timestamp) + sizeof(uint64_t);
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            return offsetof(CUpti_ActivityMemcpy6, correlationId) + sizeof(uint32_t);
        case CUPTI_ACTIVITY_KIND_MEMSET:
            return offsetof(CUpti_ActivityMemset4, correlationId) + sizeof(uint32_t);
        case CUPTI_ACTIVITY_KIND_MARKER:
            return sizeof(CUpti_ActivityMarker2);
        default:
            return sizeof(CUpti_ActivityKind);
    }
}

static_assert(convertedBytes(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) <=
              recordBytes(RecordLayout::Cuda12, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
static_assert(convertedBytes(CUPTI_ACTIVITY_KIND_MEMORY2) <=
              recordBytes(RecordLayout::Cuda12, CUPTI_ACTIVITY_KIND_MEMORY2));
static_assert(convertedBytes(CUPTI_ACTIVITY_KIND_MEMORY_POOL) <=
              recordBytes(RecordLayout::Cuda12, CUPTI_ACTIVITY_KIND_MEMORY_POOL));
static_assert(convertedBytes(CUPTI_ACTIVITY_KIND_MEMCPY) <=
              recordBytes(RecordLayout::Cuda12, CUPTI_ACTIVITY_KIND_MEMCPY));
static_assert(convertedBytes(CUPTI_ACTIVITY_KIND_MEMSET) <=
              recordBytes(RecordLayout::Cuda12, CUPTI_ACTIVITY_KIND_MEMSET));

}  // namespace vramscope::capture
