// Constructed CUPTI activity records through the converter, and on through the .vscope writer
// and reader. Expected rows are written out by hand from the records' fields and the mapping in
// docs/DESIGN.md "Two levels of GPU memory" and "NCCL collectives" (kernel names).

#include "record_converter.h"

#include <gtest/gtest.h>

#include <cstring>

#include "device_facts.h"
#include "event_staging.h"
#include "vramscope/trace/memory_running_sum.h"
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

CUpti_ActivityMarker2 domainMarker(CUpti_ActivityFlag flag, uint32_t id, uint64_t t,
                                   uint32_t thread, const char* name, const char* domain) {
    auto r = marker(flag, id, t, thread, name);
    r.domain = domain;
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

    // 5 rows: the pool's first sight (64 MiB) is a reserved growth, written before the
    // allocation carved from it; the free leaves the pool size as it was.
    ASSERT_EQ(data.memory.size(), 5u);
    const trace::MemoryEvent a = data.memory.at(0);
    EXPECT_EQ(a.timestampNs, 1000);
    EXPECT_EQ(a.address, 0x7f0000000000u);
    EXPECT_EQ(a.sizeBytes, 2u << 20);
    EXPECT_EQ(a.action, MemoryAction::Alloc);
    EXPECT_EQ(a.level, MemoryLevel::Reserved);
    EXPECT_EQ(a.kind, MemoryKind::Device);
    EXPECT_EQ(a.stream, 0u);  // CUPTI_INVALID_STREAM_ID: a synchronous allocation
    const trace::MemoryEvent growth = data.memory.at(1);
    EXPECT_EQ(growth.level, MemoryLevel::Reserved);
    EXPECT_EQ(growth.kind, MemoryKind::Pool);
    EXPECT_EQ(growth.action, MemoryAction::Alloc);
    EXPECT_EQ(growth.address, 0xabcu);  // pool address + size before (0)
    EXPECT_EQ(growth.sizeBytes, 64u << 20);
    EXPECT_EQ(growth.timestampNs, 1100);
    const trace::MemoryEvent b = data.memory.at(2);
    EXPECT_EQ(b.level, MemoryLevel::Allocated);
    EXPECT_EQ(b.kind, MemoryKind::Pool);
    EXPECT_EQ(b.stream, 13u);
    EXPECT_EQ(data.memory.at(3).action, MemoryAction::Free);
    EXPECT_EQ(data.memory.at(3).level, MemoryLevel::Allocated);
    EXPECT_EQ(data.memory.at(4).action, MemoryAction::Free);
    EXPECT_EQ(data.memory.at(4).level, MemoryLevel::Reserved);
    EXPECT_EQ(data.memory.at(4).kind, MemoryKind::Device);
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
    // The stray END is held for a START that may still come; at exit it counts as unmatched.
    EXPECT_EQ(conv.stats().unmatchedEnds, 0u);
    EXPECT_EQ(conv.heldEndCount(), 1u);
    EXPECT_EQ(data.ranges.size(), 0u);
    EXPECT_EQ(conv.closeOpenRanges(500), 2u);
    EXPECT_EQ(conv.stats().unmatchedEnds, 1u);
    EXPECT_EQ(conv.heldEndCount(), 0u);
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
    // RCCL's own kernels: communication here as in the Kineto and Nsight Systems importers.
    EXPECT_TRUE(isCommunicationKernel("rcclAllToAllKernel"));
    EXPECT_TRUE(isCommunicationKernel("_Z18rcclAllToAllKernelv"));
    EXPECT_FALSE(isCommunicationKernel("ampere_sgemm_128x64_nn"));
    EXPECT_FALSE(isCommunicationKernel(""));
}

TEST(RecordConverter, MarksRcclKernelsAsCommunication) {
    // The agent once knew only NCCL's kernel prefixes and wrote RCCL kernels as compute, while
    // the importers called them communication: the same kernel is now the same category.
    trace::TraceData data;
    RecordConverter conv(data);
    const auto rccl = kernel("rcclAllToAllKernel", 100, 400, 3);
    const auto gemm = kernel("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32", 500, 600, 3);
    conv.convert(asRecord(&rccl));
    conv.convert(asRecord(&gemm));
    ASSERT_EQ(data.kernels.size(), 2u);
    EXPECT_EQ(data.kernels.at(0).category, KernelCategory::Communication);
    EXPECT_EQ(data.kernels.at(1).category, KernelCategory::Compute);
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

TEST(RecordConverter, DropsAndCountsRecordsWithoutATime) {
    trace::TraceData data;
    RecordConverter conv(data);
    const auto good = kernel("_Z4stepv", 1000, 2000, 7);
    const auto untimed = kernel("_Z4stepv", 0, 0, 7);          // CUPTI could not take the time
    const auto backwards = kernel("_Z4stepv", 5000, 4000, 7);  // end before start
    auto copy = zeroed<CUpti_ActivityMemcpy6>();
    copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    copy.start = 0;
    copy.end = 50;
    auto set = zeroed<CUpti_ActivityMemset4>();
    set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    set.start = 10;
    set.end = 0;
    for (const void* r : {static_cast<const void*>(&good), static_cast<const void*>(&untimed),
                          static_cast<const void*>(&backwards), static_cast<const void*>(&copy),
                          static_cast<const void*>(&set)}) {
        conv.convert(asRecord(r));
    }
    ASSERT_EQ(data.kernels.size(), 1u);  // nothing stored at t = 0
    EXPECT_EQ(data.kernels.at(0).startNs, 1000);
    EXPECT_EQ(conv.stats().kernels, 1u);
    EXPECT_EQ(conv.stats().memcpys, 0u);
    EXPECT_EQ(conv.stats().memsets, 0u);
    EXPECT_EQ(conv.stats().withoutTime, 4u);
    EXPECT_EQ(conv.lastTimestampNs(), 2000);  // the dropped records' times are not taken

    std::vector<trace::DataLoss> loss;
    conv.takeDataLoss(loss);
    ASSERT_EQ(loss.size(), 3u);
    EXPECT_EQ(loss[0].counter, trace::LossCounter::CuptiRecordsWithoutTime);
    EXPECT_EQ(loss[0].reason, "memcpy records");
    EXPECT_EQ(loss[0].count, 1u);
    EXPECT_EQ(loss[1].reason, "memset records");
    EXPECT_EQ(loss[1].count, 1u);
    EXPECT_EQ(loss[2].reason, "kernel records");
    EXPECT_EQ(loss[2].count, 2u);
    EXPECT_EQ(trace::lossCounterInfo(loss[0].counter).name, "cupti_records_without_time");
    conv.takeDataLoss(loss);  // counts since the previous take: none
    EXPECT_EQ(loss.size(), 3u);
    conv.convert(asRecord(&untimed));
    conv.takeDataLoss(loss);
    ASSERT_EQ(loss.size(), 4u);
    EXPECT_EQ(loss[3].count, 1u);
}

TEST(EventStaging, HandsTheConvertersLossesToTheWriterRound) {
    EventStaging staging(1000);
    const auto untimed = kernel("_Z4stepv", 0, 0, 7);
    const auto good = kernel("_Z4stepv", 10, 20, 7);
    std::vector<const CUpti_Activity*> records = {&asRecord(&untimed), &asRecord(&good),
                                                  &asRecord(&untimed)};
    size_t next = 0;
    staging.addRecords(0, [&]() { return next < records.size() ? records[next++] : nullptr; });
    trace::TraceData out;
    staging.takeInto(out, false);
    EXPECT_EQ(out.kernels.size(), 1u);
    ASSERT_EQ(out.dataLoss.size(), 1u);
    EXPECT_EQ(out.dataLoss[0].counter, trace::LossCounter::CuptiRecordsWithoutTime);
    EXPECT_EQ(out.dataLoss[0].count, 2u);
    EXPECT_EQ(out.dataLoss[0].reason, "kernel records");
    // Options come before the first record only: the converter's state is never thrown away.
    EXPECT_FALSE(staging.setConverterOptions(ConverterOptions{true}));
    EventStaging fresh(1000);
    EXPECT_TRUE(fresh.setConverterOptions(ConverterOptions{true}));
}

TEST(IsLibraryNvtxDomain, KnowsTheLibrariesAndLeavesTheApplicationAlone) {
    for (const char* library :
         {"NCCL", "nccl", "cuBLAS", "cuBLASLt", "cuDNN", "CUPTI", "cuFFT", "cuSPARSE", "cuSOLVER",
          "nvJPEG", "TensorRT", "NVSHMEM", "CCCL", "aws-ofi-nccl gin_comm 0x1_0"}) {
        EXPECT_TRUE(isLibraryNvtxDomain(library)) << library;
    }
    for (const char* app : {"my app", "PyTorch", "train", "", "nc"}) {
        EXPECT_FALSE(isLibraryNvtxDomain(app)) << app;
    }
    EXPECT_FALSE(isLibraryNvtxDomain(nullptr));  // the default domain is the application's
}

TEST(RecordConverter, LeavesLibraryNvtxOutUnlessAskedToKeepIt) {
    // Thread 7: the application pushes "step" (default domain) and "attention" (its own domain)
    // inside an NCCL range, whose END carries no domain; cuBLASLt marks an instant; a CCCL range
    // carries its domain on both markers.
    const std::vector<CUpti_ActivityMarker2> records = {
        domainMarker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 7, "ncclAllReduce", "NCCL"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 110, 7, "step"),
        domainMarker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 120, 7, "attention", "my app"),
        domainMarker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 4, 125, 7, "gemm", "cuBLASLt"),
        domainMarker(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, 126, 7, "DeviceReduce", "CCCL"),
        domainMarker(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, 127, 7, nullptr, "CCCL"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 130, 7, nullptr),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 140, 7, nullptr),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 150, 7, nullptr),
    };
    trace::TraceData data;
    RecordConverter conv(data);
    for (const auto& r : records) {
        conv.convert(asRecord(&r));
    }
    ASSERT_EQ(data.ranges.size(), 2u);
    EXPECT_EQ(data.string(data.ranges.at(0).name), "attention");
    EXPECT_EQ(data.ranges.at(0).depth, 1u);  // inside "step"; the NCCL range does not count
    EXPECT_EQ(data.string(data.ranges.at(1).name), "step");
    EXPECT_EQ(data.ranges.at(1).depth, 0u);
    EXPECT_EQ(conv.stats().markers, 9u);
    EXPECT_EQ(conv.stats().libraryMarkers, 5u);  // NCCL start/end, cuBLASLt, CCCL start/end
    EXPECT_EQ(conv.stats().unmatchedEnds, 0u);
    EXPECT_EQ(conv.heldEndCount(), 0u);
    EXPECT_EQ(conv.openRangeCount(), 0u);

    trace::TraceData all;
    ConverterOptions keep;
    keep.keepLibraryNvtx = true;
    RecordConverter keeping(all, keep);
    for (const auto& r : records) {
        keeping.convert(asRecord(&r));
    }
    // Emitted as they end: gemm, DeviceReduce, attention, step, ncclAllReduce.
    ASSERT_EQ(all.ranges.size(), 5u);
    EXPECT_EQ(all.string(all.ranges.at(0).name), "gemm");
    EXPECT_EQ(all.string(all.ranges.at(1).name), "DeviceReduce");
    EXPECT_EQ(all.ranges.at(1).depth, 3u);
    EXPECT_EQ(all.string(all.ranges.at(4).name), "ncclAllReduce");
    EXPECT_EQ(all.ranges.at(3).depth, 1u);  // "step" inside the NCCL range
    EXPECT_EQ(keeping.stats().libraryMarkers, 0u);
}

TEST(RecordConverter, CompletesARangeWhoseEndArrivedBeforeItsStart) {
    trace::TraceData data;
    RecordConverter conv(data);
    // Thread 2's buffer arrives first: it ends thread 1's start/end range 5 at 300.
    const auto lateEnd = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, 300, 2, nullptr);
    conv.convert(asRecord(&lateEnd));
    EXPECT_EQ(conv.heldEndCount(), 1u);
    EXPECT_EQ(data.ranges.size(), 0u);
    // Thread 1's buffer: push "step" (4), start "prefetch" (5) inside it, pop "step" at 400,
    // then push "next" (6).
    const std::vector<CUpti_ActivityMarker2> thread1 = {
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 4, 100, 1, "step"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, 150, 1, "prefetch"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 4, 400, 1, nullptr),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 6, 410, 1, "next"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 6, 420, 1, nullptr),
    };
    for (const auto& r : thread1) {
        conv.convert(asRecord(&r));
    }
    ASSERT_EQ(data.ranges.size(), 3u);
    const trace::RangeEvent prefetch = data.ranges.at(0);
    EXPECT_EQ(data.string(prefetch.name), "prefetch");
    EXPECT_EQ(prefetch.startNs, 150);
    EXPECT_EQ(prefetch.endNs, 300);
    EXPECT_EQ(prefetch.threadId, 1u);        // the starting thread's
    EXPECT_EQ(prefetch.depth, 1u);           // inside "step" on thread 1
    EXPECT_EQ(data.ranges.at(1).depth, 0u);  // "step"
    EXPECT_EQ(data.string(data.ranges.at(2).name), "next");
    EXPECT_EQ(data.ranges.at(2).depth, 0u);  // "prefetch" left nothing open on thread 1
    EXPECT_EQ(conv.stats().lateStarts, 1u);
    EXPECT_EQ(conv.stats().ranges, 3u);
    EXPECT_EQ(conv.stats().unmatchedEnds, 0u);
    EXPECT_EQ(conv.heldEndCount(), 0u);
}

TEST(RecordConverter, GivesACrossThreadRangeTheStartingThreadsDepth) {
    trace::TraceData data;
    RecordConverter conv(data);
    // Thread 1 pushes "step" (9) and starts "load" (10) inside it; thread 2, inside its own push
    // "io" (11), ends "load"; then thread 1 pushes "fwd" (12) while "step" is still open.
    const std::vector<CUpti_ActivityMarker2> records = {
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 9, 100, 1, "step"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 10, 110, 1, "load"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 11, 115, 2, "io"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 10, 120, 2, nullptr),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 11, 125, 2, nullptr),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 12, 130, 1, "fwd"),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 12, 140, 1, nullptr),
        marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 9, 150, 1, nullptr),
    };
    for (const auto& r : records) {
        conv.convert(asRecord(&r));
    }
    ASSERT_EQ(data.ranges.size(), 4u);
    const trace::RangeEvent load = data.ranges.at(0);
    EXPECT_EQ(data.string(load.name), "load");
    EXPECT_EQ(load.threadId, 1u);
    EXPECT_EQ(load.depth, 1u);
    EXPECT_EQ(load.endNs, 120);
    EXPECT_EQ(data.string(data.ranges.at(1).name), "io");
    EXPECT_EQ(data.ranges.at(1).depth, 0u);  // thread 2's own nesting is untouched
    EXPECT_EQ(data.string(data.ranges.at(2).name), "fwd");
    EXPECT_EQ(data.ranges.at(2).depth, 1u);  // "load" closed on thread 1: only "step" is open
    EXPECT_EQ(data.ranges.at(3).depth, 0u);
}

TEST(RecordConverter, HoldsABoundedNumberOfEndsAndCountsTheRest) {
    trace::TraceData data;
    ConverterOptions options;
    options.maxHeldEnds = 2;
    RecordConverter conv(data, options);
    for (uint32_t id = 1; id <= 3; ++id) {
        const auto end = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, 100 + id, 2, nullptr);
        conv.convert(asRecord(&end));
    }
    EXPECT_EQ(conv.heldEndCount(), 2u);
    EXPECT_EQ(conv.stats().unmatchedEnds, 1u);
    // The START of a held END completes its range; the one not held stays unmatched.
    const auto start1 = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 50, 1, "a");
    conv.convert(asRecord(&start1));
    ASSERT_EQ(data.ranges.size(), 1u);
    EXPECT_EQ(data.ranges.at(0).endNs, 101);
    EXPECT_EQ(conv.closeOpenRanges(1000), 0u);
    EXPECT_EQ(conv.stats().unmatchedEnds, 2u);  // id 3 (never held) and id 2 (never started)
}

TEST(RecordConverter, TurnsPoolGrowthIntoReservedMemoryThatEndsAtThePoolSize) {
    trace::TraceData data;
    RecordConverter conv(data);
    const uint64_t mib = 1 << 20;
    const uint64_t poolA = 0x7f0000000000;
    const uint64_t poolB = 0x7f8000000000;
    auto tensor = [&](uint64_t t, uint64_t address, uint64_t bytes, uint64_t poolBytes) {
        auto r = memoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                              CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, address, bytes, t);
        r.isAsync = 1;
        r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
        r.memoryPoolConfig.address = poolA;
        r.memoryPoolConfig.pool.size = poolBytes;
        return r;
    };
    auto poolRecord = [&](CUpti_ActivityMemoryPoolOperationType op, uint64_t t, uint64_t address,
                          uint64_t bytes) {
        auto r = zeroed<CUpti_ActivityMemoryPool3>();
        r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
        r.memoryPoolOperationType = op;
        r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
        r.address = address;
        r.size = bytes;
        r.timestamp = t;
        return r;
    };
    // Pool A: 32 MiB at the first tensor, still 32 at the second, 96 at the third, trimmed to
    // 40 MiB; pool B created with 16 MiB; pool A destroyed.
    const auto t1 = tensor(10, poolA + 0x100, 20 * mib, 32 * mib);
    const auto t2 = tensor(20, poolA + 0x2000000, 10 * mib, 32 * mib);
    const auto t3 = tensor(30, poolA + 0x4000000, 60 * mib, 96 * mib);
    const auto trim =
        poolRecord(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, 40, poolA, 40 * mib);
    const auto createB =
        poolRecord(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, 50, poolB, 16 * mib);
    const auto destroyA =
        poolRecord(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, 60, poolA, 0);
    for (const void* r :
         {static_cast<const void*>(&t1), static_cast<const void*>(&t2),
          static_cast<const void*>(&t3), static_cast<const void*>(&trim),
          static_cast<const void*>(&createB), static_cast<const void*>(&destroyA)}) {
        conv.convert(asRecord(r));
    }

    // Expected reserved rows, by hand: +32 @A, +64 @A+32 (96); trim by 56: -64 @A+32, +8 @A+32
    // (40); +16 @B (56); destroy A: -8 @A+32, -32 @A (16).
    struct Row {
        MemoryAction action;
        uint64_t address;
        uint64_t bytes;
        trace::TimestampNs t;
    };
    const Row expected[] = {
        {MemoryAction::Alloc, poolA, 32 * mib, 10},
        {MemoryAction::Alloc, poolA + 32 * mib, 64 * mib, 30},
        {MemoryAction::Free, poolA + 32 * mib, 64 * mib, 40},
        {MemoryAction::Alloc, poolA + 32 * mib, 8 * mib, 40},
        {MemoryAction::Alloc, poolB, 16 * mib, 50},
        {MemoryAction::Free, poolA + 32 * mib, 8 * mib, 60},
        {MemoryAction::Free, poolA, 32 * mib, 60},
    };
    std::vector<trace::MemoryEvent> reserved;
    trace::MemoryRunningSum sum;
    int64_t peak = 0;
    for (size_t i = 0; i < data.memory.size(); ++i) {
        const trace::MemoryEvent e = data.memory.at(i);
        if (e.level != MemoryLevel::Reserved) {
            continue;
        }
        EXPECT_EQ(e.kind, MemoryKind::Pool);
        reserved.push_back(e);
        peak = std::max(peak, sum.apply(e.action, e.address, e.sizeBytes));
    }
    ASSERT_EQ(reserved.size(), std::size(expected));
    for (size_t i = 0; i < reserved.size(); ++i) {
        EXPECT_EQ(reserved[i].action, expected[i].action) << i;
        EXPECT_EQ(reserved[i].address, expected[i].address) << i;
        EXPECT_EQ(reserved[i].sizeBytes, expected[i].bytes) << i;
        EXPECT_EQ(reserved[i].timestampNs, expected[i].t) << i;
    }
    EXPECT_EQ(sum.sum(), int64_t(16 * mib));  // pool B alone is left
    EXPECT_EQ(peak, int64_t(96 * mib));
    EXPECT_EQ(sum.unmatchedFrees(), 0u);  // every free matches an alloc by address and size
    EXPECT_EQ(conv.stats().poolGrowths, 4u);
    EXPECT_EQ(conv.stats().poolShrinks, 3u);
    // The tensors stay allocated-level rows, each after the growth that made room for it, and
    // reserved (96 MiB) is never below allocated (90 MiB at the third tensor).
    EXPECT_EQ(data.memory.at(1).level, MemoryLevel::Allocated);
    EXPECT_EQ(data.memory.at(1).sizeBytes, 20 * mib);
    EXPECT_EQ(data.memory.at(3).level, MemoryLevel::Reserved);
    EXPECT_EQ(data.memory.at(4).sizeBytes, 60 * mib);
}

TEST(FormatGpuUuid, PrintsLikeNvidiaSmi) {
    const unsigned char bytes[16] = {0x5e, 0x2c, 0x12, 0x34, 0xab, 0xcd, 0x00, 0x01,
                                     0x02, 0x03, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54};
    EXPECT_EQ(formatGpuUuid(bytes), "GPU-5e2c1234-abcd-0001-0203-fedcba987654");
}
