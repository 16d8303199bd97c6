// Kineto / Chrome trace JSON importer on small hand-written documents: every expected value is
// written by hand next to the JSON it comes from.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "refusal.h"
#include "trace_file_test_support.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/input_bytes.h"

namespace vramscope::trace {
namespace {

LoadedTrace importKinetoOk(const std::string& json) {
    auto r = importKinetoJson(json, "test.json");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
    return r.ok() ? std::move(r).value() : LoadedTrace{};
}

std::string wrap(const std::string& events, const std::string& extra = "") {
    return "{\"schemaVersion\": 1, " + extra + "\"traceEvents\": [" + events + "]}";
}

size_t countKind(const TraceData& d, KernelCategory c) {
    return static_cast<size_t>(std::count(d.kernels.category.begin(), d.kernels.category.end(), c));
}

using testing::findLoss;
using ::vramscope::test::refused;

TEST(KinetoImporter, MapsCudaMemoryEventsToAllocatedLevelAndCounters) {
    // Unsorted on purpose: the 20 us event comes first in the file.
    const std::string events = R"(
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 7, "ts": 20,
       "args": {"Device Type": 1, "Device Id": 1, "Addr": 4096, "Bytes": -100,
                "Total Allocated": 1000, "Total Reserved": 4000}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 7, "ts": 10,
       "args": {"Device Type": 1, "Device Id": 1, "Addr": 4096, "Bytes": 100,
                "Total Allocated": 1100, "Total Reserved": 4000}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 7, "ts": 15,
       "args": {"Device Type": 0, "Device Id": -1, "Addr": 8, "Bytes": 64}})";
    const auto t = importKinetoOk(wrap(events));
    const auto& m = t.data.memory;
    // Alive before the trace: 1100 - 100 = 1000 bytes, one synthetic allocation at address 0.
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m.kind[0], MemoryKind::PreExisting);
    EXPECT_EQ(m.sizeBytes[0], 1000u);
    EXPECT_EQ(m.address[0], 0u);
    EXPECT_EQ(m.timestampNs[0], 10'000);
    EXPECT_EQ(m.action[1], MemoryAction::Alloc);
    EXPECT_EQ(m.sizeBytes[1], 100u);
    EXPECT_EQ(m.address[1], 4096u);
    EXPECT_EQ(m.action[2], MemoryAction::Free);
    EXPECT_EQ(m.sizeBytes[2], 100u);
    EXPECT_EQ(m.timestampNs[2], 20'000);
    for (size_t i = 0; i < m.size(); ++i) {
        EXPECT_EQ(m.level[i], MemoryLevel::Allocated);
        EXPECT_EQ(m.device[i], DeviceIndex{1});
    }
    // Counters: the producer's own totals, on device 1.
    const auto& c = t.data.counters;
    std::vector<double> allocated;
    std::vector<double> reserved;
    std::vector<double> host;
    for (size_t i = 0; i < c.size(); ++i) {
        if (c.kind[i] == CounterKind::HostAllocatedBytes) {
            EXPECT_EQ(c.device[i], kHostDevice);
            host.push_back(c.value[i]);
            continue;
        }
        EXPECT_EQ(c.device[i], DeviceIndex{1});
        (c.kind[i] == CounterKind::AllocatedBytes ? allocated : reserved).push_back(c.value[i]);
    }
    EXPECT_EQ(allocated, (std::vector<double>{1100, 1000}));
    EXPECT_EQ(reserved, (std::vector<double>{4000, 4000}));
    // The CPU event is host memory: no memory event, no device; a host counter of its running
    // sum (the event has no Total Allocated), 64 bytes.
    EXPECT_EQ(host, (std::vector<double>{64}));
    ASSERT_EQ(t.data.header.devices.size(), 1u);
    EXPECT_EQ(t.data.header.devices[0].index, DeviceIndex{1});
}

TEST(KinetoImporter, RebuildsAllocatedCounterFromBytesWhenTotalsAreMissing) {
    // 2021 schema: no Total Allocated. A free of 50 bytes comes before any allocation, so 50
    // bytes were alive before the trace; running sum: 50, 0, 300, 100.
    const std::string events = R"(
      {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1,
       "args": {"Device Type": 1, "Device Id": 0, "Bytes": -50}},
      {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 2,
       "args": {"Device Type": 1, "Device Id": 0, "Bytes": 300}},
      {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3,
       "args": {"Device Type": 1, "Device Id": 0, "Bytes": -200}})";
    const auto t = importKinetoOk(wrap(events));
    std::vector<double> allocated;
    for (size_t i = 0; i < t.data.counters.size(); ++i) {
        EXPECT_EQ(t.data.counters.kind[i], CounterKind::AllocatedBytes);
        allocated.push_back(t.data.counters.value[i]);
    }
    EXPECT_EQ(allocated, (std::vector<double>{0, 300, 100}));
    ASSERT_EQ(t.data.memory.size(), 4u);
    EXPECT_EQ(t.data.memory.kind[0], MemoryKind::PreExisting);
    EXPECT_EQ(t.data.memory.sizeBytes[0], 50u);
}

TEST(KinetoImporter, KeepsNanosecondsOfFractionalMicroseconds) {
    // 16-digit epoch microseconds with a fraction: a double would lose the last digits.
    const std::string events = R"(
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
       "ts": 1669783687464300.123, "dur": 2.5, "args": {"device": 0, "stream": 7}})";
    const auto t = importKinetoOk(wrap(events));
    ASSERT_EQ(t.data.kernels.size(), 1u);
    EXPECT_EQ(t.data.kernels.startNs[0], 1669783687464300123);
    EXPECT_EQ(t.data.kernels.endNs[0], 1669783687464302623);
    // Epoch-like times: the trace clock is Unix time.
    EXPECT_EQ(t.data.header.wallClockAnchorNs, 1669783687464300123);
    EXPECT_EQ(t.data.header.clockDomain, "kineto-us");
    EXPECT_EQ(t.data.header.producer, "kineto-json import");
}

TEST(KinetoImporter, AddsBaseTimeNanosecondsToRelativeTimestamps) {
    const std::string events = R"(
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1365627949863.953,
       "dur": 21.953, "args": {"device": 0, "stream": 7}})";
    const auto t = importKinetoOk(wrap(events, "\"baseTimeNanoseconds\": 1767189312000000000, "));
    ASSERT_EQ(t.data.kernels.size(), 1u);
    EXPECT_EQ(t.data.kernels.startNs[0], 1767189312000000000 + 1365627949863953);
    EXPECT_EQ(t.data.kernels.endNs[0] - t.data.kernels.startNs[0], 21953);
}

TEST(KinetoImporter, ReadsOldSchemaWithStringIdsAndCapitalisedCategories) {
    const std::string events = R"J(
      {"ph": "X", "cat": "Kernel", "name": "volta_sgemm", "pid": 0, "tid": "stream 7",
       "ts": 100, "dur": 5, "args": {"device": 0, "correlation": 34441}},
      {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 25738, "tid": "25738",
       "ts": 90, "dur": 3, "args": {"correlation": 34441}},
      {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
       "tid": "stream 7", "ts": 200, "dur": 10,
       "args": {"device": 0, "stream": 7, "bytes": 19267584, "correlation": 5}},
      {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 9",
       "ts": 300, "dur": 1, "args": {"device": 0, "stream": 9, "bytes": 128000}},
      {"ph": "X", "cat": "Operator", "name": "ProfilerStep#5", "pid": 25738, "tid": "25738",
       "ts": 50, "dur": 1000})J";
    const auto t = importKinetoOk(wrap(events));
    const auto& k = t.data.kernels;
    ASSERT_EQ(k.size(), 3u);
    EXPECT_EQ(t.data.string(k.name[0]), "volta_sgemm");
    EXPECT_EQ(k.stream[0], 7u);  // from tid "stream 7"
    EXPECT_EQ(k.category[0], KernelCategory::Compute);
    EXPECT_EQ(k.launchNs[0], 90'000);
    EXPECT_EQ(k.correlationId[0], 34441u);
    EXPECT_EQ(k.category[1], KernelCategory::Memcpy);
    EXPECT_EQ(k.bytes[1], 19267584u);
    EXPECT_EQ(k.launchNs[1], -1);  // no runtime event with correlation 5
    EXPECT_EQ(k.category[2], KernelCategory::Memset);
    EXPECT_EQ(k.stream[2], 9u);
    ASSERT_EQ(t.data.ranges.size(), 1u);
    EXPECT_EQ(t.data.ranges.kind[0], RangeKind::Iteration);
    EXPECT_EQ(t.data.ranges.threadId[0], 25738u);
    EXPECT_EQ(t.data.header.pid, 25738);
}

TEST(KinetoImporter, UsesPidAndTidWhenArgsLackDeviceAndStream) {
    const std::string events = R"(
      {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 3, "tid": 11,
       "ts": 100, "dur": 50})";
    const auto t = importKinetoOk(wrap(events));
    ASSERT_EQ(t.data.kernels.size(), 1u);
    EXPECT_EQ(t.data.kernels.device[0], DeviceIndex{3});
    EXPECT_EQ(t.data.kernels.stream[0], 11u);
    EXPECT_EQ(t.data.kernels.category[0], KernelCategory::Communication);
    ASSERT_EQ(t.data.collectives.size(), 1u);
    EXPECT_EQ(t.data.string(t.data.collectives.function[0]), "AllReduce");
    EXPECT_EQ(t.data.collectives.bytes[0], 0u);
}

TEST(KinetoImporter, DescribesNcclCollectivesFromKernelArgs) {
    // 6637568 Float elements = 26550272 bytes; this rank is 1 in group [0, 1].
    const std::string events = R"J(
      {"ph": "X", "cat": "kernel",
       "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       "pid": 0, "tid": 40, "ts": 1000, "dur": 10,
       "args": {"device": 0, "stream": 40, "correlation": 9, "Collective name": "allreduce",
                "In msg nelems": 6637568, "Out msg nelems": 6637568, "Group size": 2,
                "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0, 1]",
                "Seq": 17}},
      {"ph": "X", "cat": "kernel", "name": "rcclSomething", "pid": 0, "tid": 40, "ts": 2000,
       "dur": 10, "args": {"device": 0, "stream": 40, "Collective name": "_allgather_base",
                           "In msg nelems": 10, "dtype": "BFloat16", "Group size": 2,
                           "Process Group Name": "0"}},
      {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1500, "dur": 10,
       "args": {"device": 0, "stream": 7}})J";
    const auto t =
        importKinetoOk(wrap(events, R"("distributedInfo": {"rank": 1, "world_size": 2}, )"));
    EXPECT_EQ(countKind(t.data, KernelCategory::Communication), 2u);
    EXPECT_EQ(countKind(t.data, KernelCategory::Compute), 1u);
    const auto& c = t.data.collectives;
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(t.data.string(c.function[0]), "AllReduce");  // "Collective name" wins
    EXPECT_EQ(c.bytes[0], 6637568u * 4u);
    EXPECT_EQ(c.nranks[0], 2);
    EXPECT_EQ(c.rank[0], RankId{1});
    EXPECT_EQ(c.seqNumber[0], 17);
    EXPECT_EQ(t.data.string(c.datatype[0]), "Float");
    EXPECT_EQ(c.startNs[0], 1'000'000);
    EXPECT_EQ(c.stream[0], 40u);
    EXPECT_EQ(t.data.string(c.function[1]), "AllGather");
    EXPECT_EQ(c.bytes[1], 20u);
    EXPECT_EQ(c.rank[1], RankId{1});  // no rank list, but the group is the whole world
    EXPECT_EQ(c.seqNumber[1], -1);
    EXPECT_NE(c.communicatorHash[0], 0u);
    EXPECT_EQ(c.communicatorHash[0], c.communicatorHash[1]);  // same process group
}

TEST(KinetoImporter, TakesCollectiveFromRecordParamCommsAroundTheLaunch) {
    // RCCL names every collective kernel ncclDevKernel_Generic; the launch at 1010 us lies
    // inside the record_param_comms op [1000, 1050] on thread 639.
    const std::string events = R"J(
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
       "pid": 2, "tid": 4, "ts": 3000, "dur": 100,
       "args": {"device": 2, "stream": 4, "correlation": 7670, "kind": "Dispatch Kernel"}},
      {"ph": "X", "cat": "cuda_runtime", "name": "hipExtLaunchKernel", "pid": 542, "tid": 639,
       "ts": 1010, "dur": 5, "args": {"correlation": 7670}},
      {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 542, "tid": 639,
       "ts": 1000, "dur": 50,
       "args": {"Collective name": "allreduce", "dtype": "BFloat16", "In msg nelems": 2873320,
                "Group size": 8, "Process Group Name": "0",
                "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}},
      {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 542, "tid": 639,
       "ts": 2000, "dur": 50, "args": {"Collective name": "broadcast", "dtype": "Long"}},
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
       "pid": 2, "tid": 4, "ts": 4000, "dur": 100,
       "args": {"device": 2, "stream": 4, "correlation": 4079}})J";
    const auto t =
        importKinetoOk(wrap(events, R"("distributedInfo": {"rank": 3, "world_size": 8}, )"));
    const auto& c = t.data.collectives;
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(t.data.string(c.function[0]), "AllReduce");
    EXPECT_EQ(c.bytes[0], 2873320u * 2u);
    EXPECT_EQ(c.nranks[0], 8);
    EXPECT_EQ(c.rank[0], RankId{3});
    EXPECT_EQ(c.device[0], DeviceIndex{2});
    // The second kernel has no launch event: only its own name is known.
    EXPECT_EQ(t.data.string(c.function[1]), "Generic");
    EXPECT_EQ(c.bytes[1], 0u);
    EXPECT_EQ(t.data.kernels.launchNs[1], -1);
}

TEST(KinetoImporter, MapsAnnotationsAndStepsWithNestingDepth) {
    const std::string events = R"(
      {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 1, "tid": 5,
       "ts": 110, "dur": 20},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 5,
       "ts": 100, "dur": 100},
      {"ph": "X", "cat": "user_annotation", "name": "inner", "pid": 1, "tid": 5,
       "ts": 115, "dur": 5},
      {"ph": "X", "cat": "user_annotation", "name": "other thread", "pid": 1, "tid": 6,
       "ts": 115, "dur": 5},
      {"ph": "X", "cat": "gpu_user_annotation", "name": "forward", "pid": 0, "tid": 7,
       "ts": 140, "dur": 30, "args": {"device": 0, "stream": 7}})";
    const auto t = importKinetoOk(wrap(events));
    const auto& r = t.data.ranges;
    ASSERT_EQ(r.size(), 5u);
    // In time order: step (100), forward (110), inner (115, depth 2), other thread (115), GPU.
    EXPECT_EQ(t.data.string(r.name[0]), "ProfilerStep#3");
    EXPECT_EQ(r.kind[0], RangeKind::Iteration);
    EXPECT_EQ(r.depth[0], 0u);
    EXPECT_EQ(t.data.string(r.name[1]), "forward");
    EXPECT_EQ(r.kind[1], RangeKind::UserAnnotation);
    EXPECT_EQ(r.depth[1], 1u);
    EXPECT_EQ(r.device[1], kHostDevice);
    std::vector<std::pair<std::string, uint32_t>> at115;
    for (size_t i = 2; i < 4; ++i) {
        at115.emplace_back(std::string(t.data.string(r.name[i])), r.depth[i]);
    }
    std::sort(at115.begin(), at115.end());
    EXPECT_EQ(at115,
              (std::vector<std::pair<std::string, uint32_t>>{{"inner", 2}, {"other thread", 0}}));
    EXPECT_EQ(r.kind[4], RangeKind::GpuAnnotation);
    EXPECT_EQ(r.device[4], DeviceIndex{0});
    EXPECT_EQ(r.threadId[4], 7u);
    EXPECT_EQ(r.endNs[4] - r.startNs[4], 30'000);
}

TEST(KinetoImporter, FillsHeaderFromDistributedInfoAndDeviceProperties) {
    const std::string extra = R"(
      "deviceProperties": [{"id": 0, "name": "GPU Zero", "totalGlobalMem": 1000},
                           {"id": 1, "name": "GPU One", "totalGlobalMem": 2000}],
      "distributedInfo": {"backend": "nccl", "rank": 5, "world_size": 16},)";
    const std::string events = R"(
      {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 1, "dur": 1,
       "args": {"device": 1, "stream": 7}},
      {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 2, "dur": 1,
       "args": {"device": 3, "stream": 7}})";
    const auto t = importKinetoOk(wrap(events, extra));
    const auto& h = t.data.header;
    EXPECT_EQ(h.rank, RankId{5});
    EXPECT_EQ(h.worldSize, 16);
    // Devices the events use: 1 with its properties, 3 with only its index.
    ASSERT_EQ(h.devices.size(), 2u);
    EXPECT_EQ(h.devices[0].index, DeviceIndex{1});
    EXPECT_EQ(h.devices[0].name, "GPU One");
    EXPECT_EQ(h.devices[0].totalMemoryBytes, 2000u);
    EXPECT_EQ(h.devices[1].index, DeviceIndex{3});
    EXPECT_EQ(h.devices[1].name, "");
    EXPECT_EQ(h.devices[1].totalMemoryBytes, 0u);
}

TEST(KinetoImporter, ReadsABareTopLevelArray) {
    const auto t = importKinetoOk(R"([{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1,
                                 "ts": 5, "dur": 1}, 42, "junk"])");
    EXPECT_EQ(t.data.kernels.size(), 1u);
    EXPECT_EQ(t.report.framesSkipped, 2u);
    ASSERT_NE(findLoss(t.data, LossCounter::JsonNonObjectEntries), nullptr);
    EXPECT_EQ(findLoss(t.data, LossCounter::JsonNonObjectEntries)->count, 2u);
}

TEST(KinetoImporter, SkipsAnIntegerAboveInt64MaxButKeepsItsEvent) {
    const std::string events = R"(
      {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 4, "tid": 0, "ts": 100,
       "dur": 50, "args": {"device": 10159970886766084423, "Comms Id": 10159970886766084423}})";
    const auto t = importKinetoOk(wrap(events));
    ASSERT_EQ(t.data.kernels.size(), 1u);
    EXPECT_EQ(t.data.kernels.device[0], DeviceIndex{4});  // the bad device value fell back to pid
    const DataLoss* loss = findLoss(t.data, LossCounter::JsonValuesOutOfRange);
    ASSERT_NE(loss, nullptr);
    EXPECT_EQ(loss->count, 1u);  // "Comms Id" is never read, so it is not counted
    EXPECT_TRUE(t.report.complete);
}

TEST(KinetoImporter, ReplacesInvalidUtf8AndReportsTheFirstOffset) {
    std::string json = wrap(R"({"ph": "X", "cat": "kernel", "name": "bad@name", "pid": 0,
                                "tid": 1, "ts": 5, "dur": 1})");
    const size_t at = json.find('@');
    json[at] = '\xff';
    const auto t = importKinetoOk(json);
    ASSERT_EQ(t.data.kernels.size(), 1u);
    EXPECT_EQ(t.data.string(t.data.kernels.name[0]), "bad\xEF\xBF\xBDname");
    ASSERT_EQ(t.report.problems.size(), 1u);
    EXPECT_EQ(t.report.problems[0].byteOffset, static_cast<int64_t>(at));
    ASSERT_NE(findLoss(t.data, LossCounter::JsonInvalidUtf8Replaced), nullptr);
    EXPECT_EQ(findLoss(t.data, LossCounter::JsonInvalidUtf8Replaced)->count, 1u);
    EXPECT_FALSE(t.report.complete);
}

TEST(KinetoImporter, ReplacesAControlCharacterInAStringAndReportsItsOffset) {
    std::string json = wrap(R"({"ph": "X", "cat": "kernel", "name": "tab@here", "pid": 0,
                                "tid": 1, "ts": 5, "dur": 1},
                               {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0,
                                "tid": 1, "ts": 6, "dur": 1})");
    const size_t at = json.find('@');
    json[at] = '\x01';
    const auto t = importKinetoOk(json);
    EXPECT_EQ(t.data.kernels.size(), 2u);
    ASSERT_EQ(t.report.problems.size(), 1u);
    EXPECT_EQ(t.report.problems[0].byteOffset, static_cast<int64_t>(at));
    ASSERT_NE(findLoss(t.data, LossCounter::JsonControlCharactersReplaced), nullptr);
    EXPECT_FALSE(t.report.complete);
}

/// A document of `n` kernels and, for each, the offset just past its closing brace.
std::string kernelsDocument(size_t n, std::vector<size_t>& eventEnds) {
    std::string json = "{\"schemaVersion\": 1, \"traceEvents\": [\n";
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) {
            json += ",\n";
        }
        json += R"({"ph": "X", "cat": "kernel", "name": "kernel \"q\" )" + std::to_string(i) +
                R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(100 + i) +
                R"(.5, "dur": 1, "args": {"device": 0, "stream": 7, "grid": [1, 2, 3]}})";
        eventEnds.push_back(json.size());
    }
    json += "\n], \"distributedInfo\": {\"rank\": 2, \"world_size\": 4}}";
    return json;
}

TEST(KinetoImporter, CutFileSummarySpeaksOfEventsNotFramesOrCrashes) {
    std::vector<size_t> ends;
    const std::string json = kernelsDocument(6, ends);
    const size_t cut = ends[2] + 5;  // inside the fourth kernel event
    auto r = importKinetoJson(std::string_view(json).substr(0, cut), "cut.json");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const std::string s = r->report.summary();
    EXPECT_NE(s.find("cut.json ends at byte "), std::string::npos) << s;
    EXPECT_NE(s.find(" inside an event; the "), std::string::npos) << s;
    EXPECT_NE(s.find(" whole events before it were loaded. The file was cut"), std::string::npos)
        << s;
    EXPECT_EQ(s.find("frame"), std::string::npos) << s;
    EXPECT_EQ(s.find("crashed"), std::string::npos) << s;
}

TEST(KinetoImporter, LoadsEveryWholeEventBeforeACutAtAnyByte) {
    std::vector<size_t> ends;
    const std::string json = kernelsDocument(6, ends);
    for (size_t cut = 0; cut < json.size(); ++cut) {
        const size_t whole =
            static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
        auto r = importKinetoJson(std::string_view(json).substr(0, cut), "cut.json");
        if (!r.ok()) {
            // Only acceptable when not one whole event precedes the cut.
            EXPECT_EQ(whole, 0u) << "cut at " << cut << ": " << r.error().describe();
            EXPECT_FALSE(r.error().message.empty());
            continue;
        }
        EXPECT_EQ(r->data.kernels.size(), whole) << "cut at " << cut;
        EXPECT_FALSE(r->report.complete) << "cut at " << cut;
        EXPECT_FALSE(r->report.problems.empty());
        EXPECT_TRUE(r->report.truncated);
        EXPECT_NE(findLoss(r->data, LossCounter::JsonEventsAfterDamage), nullptr);
    }
    const auto full = importKinetoOk(json);
    EXPECT_EQ(full.data.kernels.size(), 6u);
    EXPECT_TRUE(full.report.complete);
    EXPECT_EQ(full.data.header.rank, RankId{2});
}

TEST(KinetoImporter, NeverCrashesOnDamagedBytes) {
    std::vector<size_t> ends;
    const std::string json = kernelsDocument(8, ends);
    std::mt19937 rng(12345);
    for (int round = 0; round < 400; ++round) {
        std::string damaged = json;
        const int flips = 1 + round % 5;
        for (int i = 0; i < flips; ++i) {
            damaged[rng() % damaged.size()] = static_cast<char>(rng() % 256);
        }
        auto r = importKinetoJson(damaged, "damaged.json");
        if (r.ok()) {
            EXPECT_LE(r->data.kernels.size(), 8u);
        } else {
            EXPECT_FALSE(r.error().message.empty());
        }
    }
}

TEST(KinetoImporter, GivesClearErrorsForInputThatIsNotATrace) {
    for (const std::string bad : {"", "   ", "hello", "42", "{\"a\": 1}", "{", "[", "\"str\""}) {
        auto r = importKinetoJson(bad, "bad.json");
        ASSERT_FALSE(r.ok()) << "'" << bad << "'";
        EXPECT_EQ(r.error().file, "bad.json");
        EXPECT_FALSE(r.error().message.empty());
    }
    // An empty but well-formed trace is not an error.
    auto empty = importKinetoJson("{\"traceEvents\": []}", "empty.json");
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(empty->data.eventCount(), 0u);
}

TEST(KinetoImporter, StopsWhenProgressCallbackCancels) {
    std::string events;
    for (int i = 0; i < 40000; ++i) {
        events += std::string(i ? "," : "") + R"({"ph": "X", "cat": "cpu_op", "name": "op"})";
    }
    ReadOptions options;
    int calls = 0;
    options.progress = [&](double done, std::string_view stage) {
        EXPECT_LE(done, 1.0);
        EXPECT_EQ(stage, "Reading big.json");
        ++calls;
        return false;
    };
    auto r = importKinetoJson(wrap(events), "big.json", options);
    EXPECT_TRUE(refused(r, ErrorCode::Cancelled, {"big.json", kCancelledMessage}));
    EXPECT_EQ(calls, 1);
}

TEST(KinetoImporter, ParsesInPlaceOrCopiesWithTheSameResult) {
    const std::string json = wrap(R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0,
                                      "tid": 1, "ts": 5, "dur": 1})");
    std::string tight = json;
    tight.shrink_to_fit();
    auto padded = decodeInputBytes(json, "p.json");
    ASSERT_TRUE(padded.ok());
    auto a = importKinetoJsonBuffer(tight, "t.json");
    auto b = importKinetoJsonBuffer(*padded, "p.json");
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(a->data.kernels.startNs, b->data.kernels.startNs);
}

}  // namespace
}  // namespace vramscope::trace
