// dropImplausibleEvents on hand-built traces: memory sizes above 1 PiB, memory counters above it
// or not finite, times far outside the rest (a kernel at 0 beside epoch times, a duration of
// years), and the cases the rule must leave alone (a trace within a day, two capture windows
// two days apart). Then through openTraceBytes: a Kineto JSON and a .vscope of hostile values.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "trace_file_test_support.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/plausibility.h"

namespace vramscope::trace {
namespace {

constexpr int64_t kEpochNs = 1'700'000'000'000'000'000;  // Nov 2023 in Unix ns
constexpr int64_t kDayNs = 86'400'000'000'000;
constexpr uint64_t kPiB = 1ull << 50;

using testing::findLoss;

uint64_t lossCount(const TraceData& d, LossCounter counter) {
    const DataLoss* l = findLoss(d, counter);
    return l != nullptr ? l->count : 0;
}

MemoryEvent memoryEvent(int64_t t, uint64_t address, uint64_t size, MemoryAction action) {
    MemoryEvent e;
    e.timestampNs = t;
    e.address = address;
    e.sizeBytes = size;
    e.action = action;
    return e;
}

void addKernel(TraceData& d, int64_t start, int64_t end) {
    KernelEvent k;
    k.startNs = start;
    k.endNs = end;
    d.kernels.append(k);
}

/// `n` kernels of 1 us, 1 ms apart, from kEpochNs.
TraceData epochKernels(int n) {
    TraceData d;
    for (int i = 0; i < n; ++i) {
        addKernel(d, kEpochNs + i * 1'000'000, kEpochNs + i * 1'000'000 + 1000);
    }
    return d;
}

TEST(Plausibility, RemovesMemorySizesAboveOnePebibyte) {
    TraceData d;
    d.memory.append(memoryEvent(10, 0x1000, 1 << 20, MemoryAction::Alloc));
    d.memory.append(memoryEvent(20, 0x2000, (1ull << 63) - 1, MemoryAction::Alloc));  // ~8 EiB
    d.memory.append(memoryEvent(30, 0x3000, kPiB, MemoryAction::Alloc));  // 1 PiB: the bound
    d.memory.append(memoryEvent(40, 0x2000, (1ull << 63) - 1, MemoryAction::Free));
    const PlausibilityResult r = dropImplausibleEvents(d);
    EXPECT_EQ(r.sizesOutOfRange, 2u);
    EXPECT_EQ(r.timesOutOfSpan, 0u);
    ASSERT_EQ(d.memory.size(), 2u);
    EXPECT_EQ(d.memory.at(0).sizeBytes, 1u << 20);
    EXPECT_EQ(d.memory.at(1).sizeBytes, kPiB);
    EXPECT_EQ(d.memory.at(1).timestampNs, 30);
    EXPECT_EQ(lossCount(d, LossCounter::SizesOutOfRange), 2u);
    EXPECT_EQ(findLoss(d, LossCounter::TimesOutOfSpan), nullptr);
}

TEST(Plausibility, RemovesMemoryCountersAboveTheBoundOrNotFinite) {
    TraceData d;
    const auto add = [&d](int64_t t, CounterKind kind, double v) {
        d.counters.append({t, 0, DeviceIndex{0}, kind, v});
    };
    add(1, CounterKind::AllocatedBytes, 4096.0);
    add(2, CounterKind::AllocatedBytes, 9.2e18);  // 8 EiB
    add(3, CounterKind::ReservedBytes, std::numeric_limits<double>::quiet_NaN());
    add(4, CounterKind::HostResidentBytes, std::numeric_limits<double>::infinity());
    add(5, CounterKind::Generic, 1e30);  // not memory: any value is the producer's business
    add(6, CounterKind::ReservedBytes, 8.0 * 1024 * 1024 * 1024);
    EXPECT_EQ(dropImplausibleEvents(d).sizesOutOfRange, 3u);
    ASSERT_EQ(d.counters.size(), 3u);
    EXPECT_EQ(d.counters.timestampNs, (std::vector<TimestampNs>{1, 5, 6}));
}

TEST(Plausibility, RemovesAKernelAtZeroBesideEpochTimes) {
    TraceData d = epochKernels(200);
    addKernel(d, 0, 1000);  // 54 years before the rest
    const PlausibilityResult r = dropImplausibleEvents(d);
    EXPECT_EQ(r.timesOutOfSpan, 1u);
    ASSERT_EQ(d.kernels.size(), 200u);
    EXPECT_EQ(d.kernels.startNs.front(), kEpochNs);
    EXPECT_EQ(d.kernels.endNs.back(), kEpochNs + 199 * 1'000'000 + 1000);
    const DataLoss* loss = findLoss(d, LossCounter::TimesOutOfSpan);
    ASSERT_NE(loss, nullptr);
    EXPECT_EQ(loss->count, 1u);
    // The reason gives the span kept: first to last instant of the 200 kernels.
    EXPECT_NE(loss->reason.find(std::to_string(kEpochNs) + ".." +
                                std::to_string(kEpochNs + 199 * 1'000'000 + 1000)),
              std::string::npos)
        << loss->reason;
}

TEST(Plausibility, RemovesADurationOfYears) {
    TraceData d = epochKernels(100);
    addKernel(d, kEpochNs + 5'000'000, kEpochNs + 3 * 365 * kDayNs);  // ends 3 years later
    d.memory.append(memoryEvent(kEpochNs + 7, 0x10, 256, MemoryAction::Alloc));
    EXPECT_EQ(dropImplausibleEvents(d).timesOutOfSpan, 1u);
    EXPECT_EQ(d.kernels.size(), 100u);
    EXPECT_EQ(d.memory.size(), 1u);
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        EXPECT_LE(d.kernels.endNs[i] - d.kernels.startNs[i], 1000);
    }
}

TEST(Plausibility, RemovesOutliersOnBothSidesOfASmallTrace) {
    // Three kernels and one range: at 0, at the far future, and two beside each other.
    TraceData d;
    addKernel(d, kEpochNs, kEpochNs + 10);
    addKernel(d, kEpochNs + 20, kEpochNs + 30);
    addKernel(d, 0, 0);
    RangeEvent range;
    range.startNs = std::numeric_limits<int64_t>::max() - 5;
    range.endNs = std::numeric_limits<int64_t>::max();
    d.ranges.append(range);
    EXPECT_EQ(dropImplausibleEvents(d).timesOutOfSpan, 2u);
    EXPECT_EQ(d.kernels.startNs, (std::vector<TimestampNs>{kEpochNs, kEpochNs + 20}));
    EXPECT_EQ(d.ranges.size(), 0u);
}

TEST(Plausibility, LeavesATraceWithinADayAlone) {
    // 20 hours of sparse memory events and a kernel 23 hours after them: no gap above a day.
    TraceData d;
    for (int i = 0; i < 20; ++i) {
        d.memory.append(
            memoryEvent(kEpochNs + i * kDayNs / 24, 0x100 + i, 64, MemoryAction::Alloc));
    }
    addKernel(d, kEpochNs + 19 * kDayNs / 24 + 23 * kDayNs / 24, kEpochNs + 2 * kDayNs - 1);
    const TraceData before = d;
    EXPECT_EQ(dropImplausibleEvents(d).timesOutOfSpan, 0u);
    EXPECT_EQ(d.memory.size(), before.memory.size());
    EXPECT_EQ(d.kernels.size(), before.kernels.size());
    EXPECT_TRUE(d.dataLoss.empty());
}

TEST(Plausibility, LeavesTwoCaptureWindowsDaysApartAlone) {
    // 100 kernels, then 100 more three days later: too many beyond the gap to be outliers.
    TraceData d = epochKernels(100);
    for (int i = 0; i < 100; ++i) {
        addKernel(d, kEpochNs + 3 * kDayNs + i * 1000, kEpochNs + 3 * kDayNs + i * 1000 + 10);
    }
    EXPECT_EQ(dropImplausibleEvents(d).timesOutOfSpan, 0u);
    EXPECT_EQ(d.kernels.size(), 200u);
}

TEST(Plausibility, RenumbersTheRangesMemoryEventsPointAt) {
    TraceData d = epochKernels(300);
    RangeEvent good;
    good.startNs = kEpochNs;
    good.endNs = kEpochNs + 1000;
    RangeEvent bad = good;
    bad.startNs = 0;
    d.ranges.append(good);  // id 1
    d.ranges.append(bad);   // id 2: starts at 0
    good.startNs = kEpochNs + 5000;
    d.ranges.append(good);  // id 3, becomes 2
    MemoryEvent m = memoryEvent(kEpochNs + 100, 0x10, 64, MemoryAction::Alloc);
    for (uint32_t id : {1u, 2u, 3u, 0u}) {
        m.nvtxRange = id;
        d.memory.append(m);
    }
    EXPECT_EQ(dropImplausibleEvents(d).timesOutOfSpan, 1u);
    ASSERT_EQ(d.ranges.size(), 2u);
    EXPECT_EQ(d.ranges.startNs[1], kEpochNs + 5000);
    EXPECT_EQ(d.memory.nvtxRange, (std::vector<uint32_t>{1, 0, 2, 0}));
}

TEST(Plausibility, KinetoJsonOfHostileValuesIsCountedWhenOpened) {
    // Epoch-microsecond kernels, one at ts 0, and a [memory] event of 4 EiB on device 0 beside a
    // normal one on device 1.
    std::string events;
    for (int i = 0; i < 50; ++i) {
        events += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
                  std::to_string(1'700'000'000'000'000 + i * 100) +
                  R"(, "dur": 5, "args": {"device": 0, "stream": 7}},)";
    }
    events += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0,
                  "dur": 5, "args": {"device": 0, "stream": 7}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 7,
       "ts": 1700000000000010, "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096,
       "Bytes": 4611686018427387904, "Total Allocated": 4611686018427387904,
       "Total Reserved": 4611686018427387904}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 7,
       "ts": 1700000000000020, "args": {"Device Type": 1, "Device Id": 1, "Addr": 8192,
       "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2048}})";
    const std::string json = "{\"traceEvents\": [" + events + "]}";
    auto t = openTraceBytes(json, "hostile.json");
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const TraceData& d = t->data;
    // Kept: 50 kernels; device 1's event of 512 B and its two totals.
    EXPECT_EQ(d.kernels.size(), 50u);
    ASSERT_EQ(d.memory.size(), 1u);
    EXPECT_EQ(d.memory.at(0).sizeBytes, 512u);
    for (size_t i = 0; i < d.counters.size(); ++i) {
        EXPECT_EQ(d.counters.device[i], DeviceIndex{1});
    }
    EXPECT_EQ(lossCount(d, LossCounter::TimesOutOfSpan), 1u);
    // The 4 EiB event and its two totals.
    EXPECT_EQ(lossCount(d, LossCounter::SizesOutOfRange), 3u);
}

// A stray copy of a trace's first [memory] event at ts 0: the importer places the memory alive
// before the trace began (Total Allocated minus Bytes of the first event in time order, here
// 1,000,000 - 4096 = 995,904 B) at that event's time. The stray event goes; that memory must
// stay, at the start of what is kept, or the job loses what was held for good. (300 kernels:
// the stray event's 4 instants, with its totals and that memory, are under 1 % of all.)
TEST(Plausibility, MemoryAliveBeforeTheTraceStaysWhenTheFirstEventIsAnOutlier) {
    std::string events;
    for (int i = 0; i < 300; ++i) {
        events += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
                  std::to_string(1'700'000'000'000'000 + i * 100) +
                  R"(, "dur": 5, "args": {"device": 0, "stream": 7}},)";
    }
    const std::string first = R"("cat": "cpu_instant_event", "name": "[memory]", "pid": 7,
       "tid": 7, "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096, "Bytes": 4096,
       "Total Allocated": 1000000, "Total Reserved": 2097152}})";
    events += R"({"ph": "i", "ts": 1700000000000010, )" + first + ",";
    events += R"({"ph": "i", "ts": 1700000000000030, "cat": "cpu_instant_event",
       "name": "[memory]", "pid": 7, "tid": 7, "args": {"Device Type": 1, "Device Id": 0,
       "Addr": 4096, "Bytes": -4096, "Total Allocated": 995904, "Total Reserved": 2097152}},)";
    events += R"({"ph": "i", "ts": 0, )" + first;
    auto t = openTraceBytes("{\"traceEvents\": [" + events + "]}", "stray.json");
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const TraceData& d = t->data;
    uint64_t preExisting = 0;
    int64_t preExistingAt = -1;
    size_t allocs = 0;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        if (d.memory.kind[i] == MemoryKind::PreExisting) {
            preExisting += d.memory.sizeBytes[i];
            preExistingAt = d.memory.timestampNs[i];
        } else if (d.memory.action[i] == MemoryAction::Alloc) {
            ++allocs;
        }
    }
    EXPECT_EQ(preExisting, 995'904u);
    EXPECT_EQ(allocs, 1u);  // the real allocation; its stray copy is gone
    // The kept span starts at the first epoch kernel (1.7e15 us = 1.7e18 ns).
    EXPECT_EQ(preExistingAt, 1'700'000'000'000'000'000);
    EXPECT_GE(lossCount(d, LossCounter::TimesOutOfSpan), 1u);
}

}  // namespace
}  // namespace vramscope::trace
