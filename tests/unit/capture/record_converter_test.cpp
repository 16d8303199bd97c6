// Constructed CUPTI activity records through the converter, and on through the .vscope writer
// and reader. Expected rows are written out by hand from the records' fields and the mapping in
// DESIGN.md ("Two levels of GPU memory", NCCL kernel names).

#include "record_converter.h"

#include <gtest/gtest.h>

#include <cstring>

#include "device_facts.h"
#include "vramscope/trace/trace_file.h"

using namespace vramscope;
using namespace vramscope::capture;
using trace::KernelCategory;
using trace::MemoryAction;
using trace::MemoryKind;
using trace::MemoryLevel;

namespace {

template <class T>
T zeroed() {
    T r;
    std::memset(static_cast<void*>(&r), 0, sizeof(T));
    return r;
}

const CUpti_Activity& asRecord(const void* r) {
    return *static_cast<const CUpti_Activity*>(r);
}

CUpti_ActivityMemory4 memoryRecord(CUpti_ActivityMemoryOperationType op,
                                   CUpti_ActivityMemoryKind kind, uint64_t address, uint64_t bytes,
                                   uint64_t t) {
    auto r = zeroed<CUpti_ActivityMemory4>();
    r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    r.memoryOperationType = op;
    r.memoryKind = kind;
    r.address = address;
    r.bytes = bytes;
    r.timestamp = t;
    r.deviceId = 0;
    r.streamId = CUPTI_INVALID_STREAM_ID;
    return r;
}

CUpti_ActivityMarker2 marker(CUpti_ActivityFlag flag, uint32_t id, uint64_t t, uint32_t thread,
                             const char* name) {
    auto r = zeroed<CUpti_ActivityMarker2>();
    r.kind = CUPTI_ACTIVITY_KIND_MARKER;
    r.flags = flag;
    r.id = id;
    r.timestamp = t;
    r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    r.objectId.pt.processId = 1;
    r.objectId.pt.threadId = thread;
    r.name = name;
    return r;
}

CUpti_ActivityKernel10 kernel(const char* name, uint64_t start, uint64_t end, uint32_t stream) {
    auto r = zeroed<CUpti_ActivityKernel10>();
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.name = name;
    r.start = start;
    r.end = end;
    r.deviceId = 1;
    r.streamId = stream;
    r.correlationId = 77;
    return r;
}

}  // namespace

TEST(RecordConverter, MapsCudaMallocToReservedAndPoolAllocationsToAllocated) {
    trace::TraceData data;
    RecordConverter conv(data);
    const auto malloc1 =
        memoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                     CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000, 2 << 20, 1000);
    auto pooled = memoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                               CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f1000000000, 4096, 1100);
    pooled.isAsync = 1;
    pooled.streamId = 13;
    pooled.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    pooled.memoryPoolConfig.address = 0xabc;
    pooled.memoryPoolConfig.pool.size = 64 << 20;
    auto pooledFree = pooled;
    pooledFree.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    pooledFree.timestamp = 1200;
    const auto free1 =
        memoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
                     CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000, 2 << 20, 1300);
    for (const void* r :
         {static_cast<const void*>(&malloc1), static_cast<const void*>(&pooled),
          static_cast<const void*>(&pooledFree), static_cast<const void*>(&free1)}) {
        conv.convert(asRecord(r));
    }

    ASSERT_EQ(data.memory.size(), 4u);
    const trace::MemoryEvent a = data.memory.at(0);
    EXPECT_EQ(a.timestampNs, 1000);
    EXPECT_EQ(a.address, 0x7f0000000000u);
    EXPECT_EQ(a.sizeBytes, 2u << 20);
    EXPECT_EQ(a.action, MemoryAction::Alloc);
    EXPECT_EQ(a.level, MemoryLevel::Reserved);
    EXPECT_EQ(a.kind, MemoryKind::Device);
    EXPECT_EQ(a.stream, 0u);  // CUPTI_INVALID_STREAM_ID: a synchronous allocation
    const trace::MemoryEvent b = data.memory.at(1);
    EXPECT_EQ(b.level, MemoryLevel::Allocated);
    EXPECT_EQ(b.kind, MemoryKind::Pool);
    EXPECT_EQ(b.stream, 13u);
    EXPECT_EQ(data.memory.at(2).action, MemoryAction::Free);
    EXPECT_EQ(data.memory.at(2).level, MemoryLevel::Allocated);
    EXPECT_EQ(data.memory.at(3).action, MemoryAction::Free);
    EXPECT_EQ(data.memory.at(3).level, MemoryLevel::Reserved);
    EXPECT_EQ(conv.stats().memory, 4u);
    EXPECT_EQ(conv.lastTimestampNs(), 1300);

    // The pool size is a counter, sampled when it changes (64 MiB once: alloc and free agree).
    ASSERT_EQ(data.counters.size(), 1u);
    EXPECT_EQ(data.string(data.counters.name[0]), "cuda memory pool bytes");
    EXPECT_DOUBLE_EQ(data.counters.value[0], 64.0 * (1 << 20));
}

TEST(RecordConverter, KeepsModuleGlobalsOnTheDeviceAndHostMemoryOffIt) {
    trace::TraceData data;
    RecordConverter conv(data);
    const auto statics = memoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                                      CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, 0x10, 15, 5);
    const auto pinned = memoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                                     CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 0x20, 1 << 20, 6);
    const auto managed = memoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                                      CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 0x30, 4096, 7);
    conv.convert(asRecord(&statics));
    conv.convert(asRecord(&pinned));
    conv.convert(asRecord(&managed));
    ASSERT_EQ(data.memory.size(), 3u);
    EXPECT_EQ(data.memory.at(0).kind, MemoryKind::DeviceStatic);
    EXPECT_EQ(data.memory.at(0).level, MemoryLevel::Reserved);
    EXPECT_EQ(data.memory.at(0).device, trace::DeviceIndex{0});
    EXPECT_EQ(data.memory.at(1).kind, MemoryKind::Pinned);
    EXPECT_EQ(data.memory.at(1).device, trace::kHostDevice);
    EXPECT_EQ(data.memory.at(2).kind, MemoryKind::Managed);
    EXPECT_EQ(data.memory.at(2).device, trace::DeviceIndex{0});
}

TEST(RecordConverter, TracksThePoolSizeAcrossPoolRecords) {
    trace::TraceData data;
    RecordConverter conv(data);
    auto created = zeroed<CUpti_ActivityMemoryPool3>();
    created.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    created.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
    created.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    created.address = 0x1;
    created.size = 32 << 20;
    created.timestamp = 10;
    auto second = created;
    second.address = 0x2;
    second.size = 8 << 20;
    second.timestamp = 20;
    auto trimmed = created;
    trimmed.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
    trimmed.size = 16 << 20;
    trimmed.timestamp = 30;
    auto destroyed = second;
    destroyed.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED;
    destroyed.timestamp = 40;
    for (const auto* r : {&created, &second, &trimmed, &destroyed}) {
        conv.convert(asRecord(r));
    }
    // Sum over the device's pools: 32, 32+8, 16+8, 16 MiB.
    ASSERT_EQ(data.counters.size(), 4u);
    const double mib = 1 << 20;
    EXPECT_DOUBLE_EQ(data.counters.value[0], 32 * mib);
    EXPECT_DOUBLE_EQ(data.counters.value[1], 40 * mib);
    EXPECT_DOUBLE_EQ(data.counters.value[2], 24 * mib);
    EXPECT_DOUBLE_EQ(data.counters.value[3], 16 * mib);
    EXPECT_EQ(data.counters.timestampNs[3], 40);
    EXPECT_EQ(conv.stats().memoryPool, 4u);
}

TEST(RecordConverter, DemanglesKernelNamesAndMarksNcclKernelsAsCommunication) {
    trace::TraceData data;
    RecordConverter conv(data);
    auto compute = kernel("_Z10add_kernelPfS_i", 100, 250, 7);
    compute.queued = 90;
    const auto nccl = kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 300, 900, 21);
    const auto mangledNccl =
        kernel("_Z39ncclDevKernel_AllGather_RING_LL_Sum_int824ncclDevKernelArgsStorageILm4096EE",
               950, 990, 21);
    conv.convert(asRecord(&compute));
    conv.convert(asRecord(&nccl));
    conv.convert(asRecord(&mangledNccl));
    ASSERT_EQ(data.kernels.size(), 3u);
    const trace::KernelEvent k = data.kernels.at(0);
    EXPECT_EQ(data.string(k.name), "add_kernel(float*, float*, int)");
    EXPECT_EQ(k.startNs, 100);
    EXPECT_EQ(k.endNs, 250);
    EXPECT_EQ(k.device, trace::DeviceIndex{1});
    EXPECT_EQ(k.stream, 7u);
    EXPECT_EQ(k.category, KernelCategory::Compute);
    EXPECT_EQ(k.launchNs, 90);
    EXPECT_EQ(k.correlationId, 77u);
    EXPECT_EQ(data.kernels.at(1).category, KernelCategory::Communication);
    EXPECT_EQ(data.kernels.at(1).launchNs, -1);  // queued time not measured
    EXPECT_EQ(data.kernels.at(2).category, KernelCategory::Communication);
    EXPECT_EQ(conv.lastTimestampNs(), 990);
    // The same kernel again reuses its interned name.
    const size_t strings = data.strings.size();
    conv.convert(asRecord(&compute));
    EXPECT_EQ(data.strings.size(), strings);
    EXPECT_EQ(data.kernels.name[3], data.kernels.name[0]);
}

TEST(RecordConverter, TurnsMemcpyAndMemsetIntoCopyAndSetRows) {
    trace::TraceData data;
    RecordConverter conv(data);
    auto copy = zeroed<CUpti_ActivityMemcpy6>();
    copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    copy.bytes = 1 << 20;
    copy.start = 10;
    copy.end = 60;
    copy.streamId = 3;
    auto set = zeroed<CUpti_ActivityMemset4>();
    set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    set.bytes = 4096;
    set.start = 70;
    set.end = 75;
    set.deviceId = 2;
    conv.convert(asRecord(&copy));
    conv.convert(asRecord(&set));
    ASSERT_EQ(data.kernels.size(), 2u);
    EXPECT_EQ(data.kernels.at(0).category, KernelCategory::Memcpy);
    EXPECT_EQ(data.string(data.kernels.at(0).name), "Memcpy HtoD");
    EXPECT_EQ(data.kernels.at(0).bytes, 1u << 20);
    EXPECT_EQ(data.kernels.at(1).category, KernelCategory::Memset);
    EXPECT_EQ(data.kernels.at(1).bytes, 4096u);
    EXPECT_EQ(data.kernels.at(1).device, trace::DeviceIndex{2});
}

TEST(RecordConverter, PairsNvtxMarkersIntoNestedRanges) {
    trace::TraceData data;
    RecordConverter conv(data);
    // push "iteration 0", push "forward", pop, push "backward", pop, pop on thread 7; a
    // process-wide start/end range on another id; an instantaneous mark inside backward.
    const auto m = {
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 7, "iteration 0"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 110, 7, "forward"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 150, 7, nullptr),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 160, 7, "backward"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 4, 170, 7, "checkpoint"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 190, 7, nullptr),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 200, 7, nullptr),
    };
    for (const auto& r : m) {
        conv.convert(asRecord(&r));
    }
    ASSERT_EQ(data.ranges.size(), 4u);
    // Emitted as they end: forward, checkpoint (instant), backward, iteration 0.
    const trace::RangeEvent forward = data.ranges.at(0);
    EXPECT_EQ(data.string(forward.name), "forward");
    EXPECT_EQ(forward.startNs, 110);
    EXPECT_EQ(forward.endNs, 150);
    EXPECT_EQ(forward.depth, 1u);
    EXPECT_EQ(forward.threadId, 7u);
    EXPECT_EQ(forward.kind, trace::RangeKind::Nvtx);
    EXPECT_EQ(forward.device, trace::kHostDevice);
    const trace::RangeEvent mark = data.ranges.at(1);
    EXPECT_EQ(data.string(mark.name), "checkpoint");
    EXPECT_EQ(mark.startNs, mark.endNs);
    EXPECT_EQ(mark.depth, 2u);
    EXPECT_EQ(data.ranges.at(2).depth, 1u);
    const trace::RangeEvent iteration = data.ranges.at(3);
    EXPECT_EQ(data.string(iteration.name), "iteration 0");
    EXPECT_EQ(iteration.startNs, 100);
    EXPECT_EQ(iteration.endNs, 200);
    EXPECT_EQ(iteration.depth, 0u);
    EXPECT_EQ(conv.openRangeCount(), 0u);
    EXPECT_EQ(conv.stats().markers, 7u);
}

TEST(RecordConverter, KeepsThreadsApartAndClosesOpenRangesAtExit) {
    trace::TraceData data;
    RecordConverter conv(data);
    const auto a = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 10, 1, "a");
    const auto b = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 20, 2, "b");
    const auto stray = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 99, 25, 2, nullptr);
    conv.convert(asRecord(&a));
    conv.convert(asRecord(&b));
    conv.convert(asRecord(&stray));
    EXPECT_EQ(conv.stats().unmatchedEnds, 1u);
    EXPECT_EQ(data.ranges.size(), 0u);
    EXPECT_EQ(conv.closeOpenRanges(500), 2u);
    ASSERT_EQ(data.ranges.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        const trace::RangeEvent r = data.ranges.at(i);
        EXPECT_EQ(r.depth, 0u) << "each thread has its own nesting";
        EXPECT_EQ(r.endNs, 500);
    }
}

TEST(RecordConverter, CountsKindsItDoesNotConvert) {
    trace::TraceData data;
    RecordConverter conv(data);
    auto api = zeroed<CUpti_ActivityAPI>();
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    conv.convert(asRecord(&api));
    EXPECT_EQ(conv.stats().ignored, 1u);
    EXPECT_EQ(data.eventCount(), 0u);
    EXPECT_STREQ(recordKindName(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernel records");
}

TEST(IsCommunicationKernel, RecognisesNcclAndRcclNames) {
    EXPECT_TRUE(isCommunicationKernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
    EXPECT_TRUE(isCommunicationKernel("ncclSymkDevKernel_AllReduce_AGxLL_R"));
    EXPECT_FALSE(isCommunicationKernel("ampere_sgemm_128x64_nn"));
    EXPECT_FALSE(isCommunicationKernel(""));
}

TEST(RecordConverter, ConvertedEventsSurviveTheWriterAndReader) {
    trace::TraceData data;
    data.header.producer = "vramscope-capture test";
    data.header.clockDomain = "cupti-ns";
    data.header.rank = trace::RankId{2};
    RecordConverter conv(data);
    const auto alloc = memoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                                    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x1000, 1 << 30, 5000);
    const auto k = kernel("_Z10add_kernelPfS_i", 6000, 7000, 7);
    const auto push = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 5500, 3, "iteration 0");
    const auto pop = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 7500, 3, nullptr);
    for (const void* r : {static_cast<const void*>(&alloc), static_cast<const void*>(&k),
                          static_cast<const void*>(&push), static_cast<const void*>(&pop)}) {
        conv.convert(asRecord(r));
    }
    trace::OomEvent oom;
    oom.timestampNs = 8000;
    oom.requestedBytes = 3ull << 30;
    oom.stream = 7;
    data.ooms.push_back(oom);
    data.dataLoss.push_back({trace::LossCounter::WriterQueueOverflow, 12, "kernel records", 0, 0});

    const std::string bytes = trace::writeTraceBytes(data);
    auto loaded = trace::readTraceBytes(bytes, "converted.vscope");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    const trace::TraceData& back = loaded->data;
    EXPECT_EQ(back.header.rank, trace::RankId{2});
    ASSERT_EQ(back.memory.size(), 1u);
    EXPECT_EQ(back.memory.at(0).sizeBytes, 1u << 30);
    EXPECT_EQ(back.memory.at(0).level, MemoryLevel::Reserved);
    ASSERT_EQ(back.kernels.size(), 1u);
    EXPECT_EQ(back.string(back.kernels.at(0).name), "add_kernel(float*, float*, int)");
    EXPECT_EQ(back.kernels.at(0).endNs, 7000);
    ASSERT_EQ(back.ranges.size(), 1u);
    EXPECT_EQ(back.string(back.ranges.at(0).name), "iteration 0");
    EXPECT_EQ(back.ranges.at(0).endNs, 7500);
    ASSERT_EQ(back.ooms.size(), 1u);
    EXPECT_EQ(back.ooms[0].requestedBytes, 3ull << 30);
    EXPECT_EQ(back.ooms[0].stream, 7u);
    ASSERT_GE(back.dataLoss.size(), 1u);
    EXPECT_EQ(back.dataLoss[0].counter, trace::LossCounter::WriterQueueOverflow);
    EXPECT_EQ(back.dataLoss[0].reason, "kernel records");
    EXPECT_EQ(back.dataLoss[0].count, 12u);
}

TEST(FormatGpuUuid, PrintsLikeNvidiaSmi) {
    const unsigned char bytes[16] = {0x5e, 0x2c, 0x12, 0x34, 0xab, 0xcd, 0x00, 0x01,
                                     0x02, 0x03, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54};
    EXPECT_EQ(formatGpuUuid(bytes), "GPU-5e2c1234-abcd-0001-0203-fedcba987654");
}
