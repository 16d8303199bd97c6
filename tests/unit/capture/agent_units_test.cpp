// The agent's plain parts, without CUPTI: the activity buffer pool, failed allocations per thread
// (retry or OOM), the driver VMM pages as reserved memory, and the staging's data-loss counts for
// undecodable buffers and records after the final round. Expected values are worked out here by
// hand from the rules in the headers' comments (the facts behind them: docs/DESIGN.md "How CUPTI
// hands buffers back" and "Capture: PyTorch allocator facts").

#include <cupti_activity.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "activity_buffers.h"
#include "allocation_failures.h"
#include "event_staging.h"
#include "vmm_tracker.h"

namespace {

using namespace vramscope;
using namespace vramscope::capture;

bool allZero(const uint8_t* b, size_t n) {
    return std::all_of(b, b + n, [](uint8_t c) { return c == 0; });
}

TEST(ActivityBufferPool, BuffersAre256KiBZeroedAndGivenBackOnesAreZeroedByRefill) {
    ActivityBufferPool pool(2, 4);
    pool.refill();
    EXPECT_EQ(pool.readyCount(), 2u);
    uint8_t* a = pool.take();
    uint8_t* b = pool.take();
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(ActivityBufferPool::kBufferBytes, 262'144u);
    EXPECT_TRUE(allZero(a, ActivityBufferPool::kBufferBytes));
    EXPECT_EQ(pool.allocatedOnDemand(), 0u);
    std::memset(a, 0xab, ActivityBufferPool::kBufferBytes);  // CUPTI wrote records into it
    pool.give(a, ActivityBufferPool::kBufferBytes);
    EXPECT_EQ(pool.dirtyCount(), 1u);
    EXPECT_EQ(pool.readyCount(), 0u) << "a used buffer is never handed out before refill()";
    pool.refill();
    EXPECT_EQ(pool.dirtyCount(), 0u);
    EXPECT_EQ(pool.readyCount(), 2u);
    uint8_t* again = pool.take();
    EXPECT_TRUE(allZero(again, ActivityBufferPool::kBufferBytes));
    pool.give(again, ActivityBufferPool::kBufferBytes);
    pool.give(b, ActivityBufferPool::kBufferBytes);
}

TEST(ActivityBufferPool, AnEmptyPoolAllocatesAndAFullOneFrees) {
    ActivityBufferPool pool(0, 1);
    uint8_t* a = pool.take();
    uint8_t* b = pool.take();
    EXPECT_EQ(pool.allocatedOnDemand(), 2u);
    EXPECT_TRUE(allZero(b, ActivityBufferPool::kBufferBytes));
    pool.give(a, ActivityBufferPool::kBufferBytes);
    pool.give(b, ActivityBufferPool::kBufferBytes);  // beyond maxPooled: freed
    EXPECT_EQ(pool.dirtyCount(), 1u);
    pool.give(nullptr, 0);
}

struct Ooms {
    std::vector<std::pair<FailedAllocation, uint32_t>> seen;
    AllocationFailures::OomSink sink() {
        return [this](const FailedAllocation& f, uint32_t n) { seen.emplace_back(f, n); };
    }
};

FailedAllocation request(uint64_t bytes, int64_t t = 100) {
    FailedAllocation f;
    f.timestampNs = t;
    f.requestedBytes = bytes;
    f.device = 1;
    f.stream = 7;
    return f;
}

TEST(AllocationFailures, AFailureRetriedWithSuccessIsCountedAndNoOom) {
    Ooms ooms;
    AllocationFailures failures(ooms.sink());
    failures.failed(request(1 << 30), 1'000);
    failures.succeeded();
    EXPECT_EQ(failures.takeAll(), 0u);
    EXPECT_TRUE(ooms.seen.empty());
    EXPECT_EQ(failures.retried(), 1u);
    failures.succeeded();  // a later success retries nothing
    EXPECT_EQ(failures.retried(), 1u);
}

TEST(AllocationFailures, TwoFailuresInARowAreOneOomAtOnce) {
    Ooms ooms;
    AllocationFailures failures(ooms.sink());
    failures.failed(request(3u << 30, 100), 1'000);
    failures.failed(request(3u << 30, 200), 2'000);
    ASSERT_EQ(ooms.seen.size(), 1u);
    EXPECT_EQ(ooms.seen[0].first.requestedBytes, 3u << 30);
    EXPECT_EQ(ooms.seen[0].first.timestampNs, 200) << "the retry's failure, when PyTorch gave up";
    EXPECT_EQ(ooms.seen[0].second, 2u);
    failures.succeeded();
    EXPECT_EQ(failures.retried(), 0u) << "nothing was waiting";
    EXPECT_EQ(failures.takeAll(), 0u);
}

TEST(AllocationFailures, AFailureNothingFollowsIsAnOomAfterOnePeriodOrAtExit) {
    Ooms ooms;
    AllocationFailures failures(ooms.sink());
    failures.failed(request(5 << 20), 1'000'000);
    EXPECT_EQ(failures.takeExpired(1'000'000 + 199'999'999, 200'000'000), 0u) << "too early";
    EXPECT_EQ(failures.takeExpired(1'000'000 + 200'000'000, 200'000'000), 1u);
    ASSERT_EQ(ooms.seen.size(), 1u);
    EXPECT_EQ(ooms.seen[0].first.device, 1);
    EXPECT_EQ(ooms.seen[0].first.stream, 7u);
    failures.failed(request(6 << 20), 5'000'000'000);
    EXPECT_EQ(failures.takeAll(), 1u);
    EXPECT_EQ(ooms.seen.size(), 2u);
}

TEST(AllocationFailures, EachThreadHasItsOwnFailure) {
    Ooms ooms;
    AllocationFailures failures(ooms.sink());
    failures.failed(request(1), 0);
    std::thread other([&] {
        failures.failed(request(2), 0);
        failures.succeeded();  // retries its own failure only
    });
    other.join();
    EXPECT_EQ(failures.retried(), 1u);
    EXPECT_EQ(failures.takeAll(), 1u);
    ASSERT_EQ(ooms.seen.size(), 1u);
    EXPECT_EQ(ooms.seen[0].first.requestedBytes, 1u) << "the main thread's was not retried";
}

using trace::MemoryAction;

TEST(VmmTracker, MappedPagesAreReservedOnTheirHandlesDeviceAndUnmapsFreeThem) {
    VmmTracker vmm;
    std::vector<trace::MemoryEvent> out;
    const uint64_t page = 20 << 20;
    vmm.created(0x10, page, 2);
    vmm.created(0x11, page, 2);
    vmm.mapped(0x7000'0000, page, 0x10, 0, 50, out);
    vmm.mapped(0x7000'0000 + page, page, 0x11, 0, 60, out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].address, 0x7000'0000u);
    EXPECT_EQ(out[0].sizeBytes, page);
    EXPECT_EQ(out[0].action, MemoryAction::Alloc);
    EXPECT_EQ(out[0].level, trace::MemoryLevel::Reserved);
    EXPECT_EQ(out[0].device, trace::DeviceIndex{2});
    EXPECT_EQ(out[1].timestampNs, 60);
    out.clear();
    vmm.unmapped(0x7000'0000, 2 * page, 70, out);  // one unmap over both pages
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].action, MemoryAction::Free);
    EXPECT_EQ(out[0].address, 0x7000'0000u);
    EXPECT_EQ(out[1].address, 0x7000'0000u + page);
    EXPECT_EQ(vmm.mappedRanges(), 0u);
}

TEST(VmmTracker, AnUnmapOfPartOfARangeFreesItAndAllocatesTheKeptParts) {
    VmmTracker vmm;
    std::vector<trace::MemoryEvent> out;
    vmm.mapped(1000, 300, 0x99, 3, 1, out);  // an imported handle: the context's device
    EXPECT_EQ(out[0].device, trace::DeviceIndex{3});
    out.clear();
    vmm.unmapped(1100, 100, 2, out);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].action, MemoryAction::Free);
    EXPECT_EQ(out[0].sizeBytes, 300u);
    EXPECT_EQ(out[1].action, MemoryAction::Alloc);
    EXPECT_EQ(out[1].address, 1000u);
    EXPECT_EQ(out[1].sizeBytes, 100u);
    EXPECT_EQ(out[2].action, MemoryAction::Alloc);
    EXPECT_EQ(out[2].address, 1200u);
    EXPECT_EQ(out[2].sizeBytes, 100u);
    EXPECT_EQ(vmm.mappedRanges(), 2u);
    out.clear();
    vmm.created(0x5, 64, -1);  // host memory
    vmm.mapped(5000, 64, 0x5, 0, 3, out);
    EXPECT_TRUE(out.empty());
}

CUpti_ActivityMemory4 allocation(uint64_t address) {
    CUpti_ActivityMemory4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.address = address;
    m.bytes = 4096;
    m.timestamp = 10;
    m.streamId = CUPTI_INVALID_STREAM_ID;
    return m;
}

void addOne(EventStaging& staging, const CUpti_ActivityMemory4& m) {
    bool given = false;
    staging.addRecords(0, [&]() -> const CUpti_Activity* {
        if (given) {
            return nullptr;
        }
        given = true;
        return reinterpret_cast<const CUpti_Activity*>(&m);
    });
}

uint64_t count(const trace::TraceData& d, trace::LossCounter c) {
    uint64_t n = 0;
    for (const trace::DataLoss& l : d.dataLoss) {
        n += l.counter == c ? l.count : 0;
    }
    return n;
}

TEST(EventStaging, UndecodableBuffersAndRecordsAfterTheFinalRoundAreCounted) {
    EventStaging staging;
    staging.noteUndecodedBuffer(300);
    staging.noteUndecodedBuffer(200);
    addOne(staging, allocation(0x100));
    trace::TraceData out;
    staging.takeInto(out, true);  // the final round
    EXPECT_EQ(out.memory.size(), 1u);
    EXPECT_EQ(count(out, trace::LossCounter::CuptiRecordsUndecoded), 2u) << "two buffers cut";
    EXPECT_EQ(count(out, trace::LossCounter::CuptiRecordsAfterClose), 0u);
    addOne(staging, allocation(0x200));
    addOne(staging, allocation(0x300));
    trace::TraceData late;
    staging.takeInto(late, false);
    EXPECT_EQ(late.memory.size(), 2u) << "written in the last frame";
    EXPECT_EQ(count(late, trace::LossCounter::CuptiRecordsAfterClose), 2u);
    EXPECT_EQ(count(late, trace::LossCounter::CuptiRecordsUndecoded), 0u) << "taken once";
}

TEST(EventStaging, RowsTheAgentMakesItselfKeepToTheSameBound) {
    EventStaging staging(2);
    trace::MemoryEvent e;
    e.sizeBytes = 1;
    staging.addMemory({e, e, e});
    EXPECT_EQ(staging.stagedRows(), 2u);
    EXPECT_EQ(staging.pendingDrops(trace::LossCounter::WriterQueueOverflow), 1u);
    staging.addCounters({trace::CounterSample{}});
    EXPECT_EQ(staging.pendingDrops(trace::LossCounter::WriterQueueOverflow), 2u);
}

}  // namespace
