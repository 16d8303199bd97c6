// Kineto importer on the real traces in ../shared/realdata. Expected values are computed here
// from each file with nlohmann-json (an independent parser), never taken from the importer.

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

using testdata::eventsOf;
using testdata::loadGzJson;

using nlohmann::json;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

bool hasNccl(const std::string& name) {
    const std::string n = lower(name);
    return n.find("nccl") != std::string::npos || n.find("rccl") != std::string::npos;
}

struct KernelCounts {
    size_t kernels = 0;  ///< cat kernel / Kernel
    size_t communication = 0;
    size_t copies = 0;  ///< memcpy + memset
};

KernelCounts countKernels(const json& doc) {
    KernelCounts c;
    for (const auto& e : eventsOf(doc)) {
        if (!e.is_object() || e.value("ph", "") != "X" || !e.contains("cat")) {
            continue;
        }
        const std::string cat = lower(e["cat"].get<std::string>());
        if (cat == "kernel") {
            ++c.kernels;
            c.communication += hasNccl(e.value("name", "")) ? 1 : 0;
        } else if (cat == "gpu_memcpy" || cat == "memcpy" || cat == "gpu_memset" ||
                   cat == "memset") {
            ++c.copies;
        }
    }
    return c;
}

KernelCounts countImported(const TraceData& d) {
    KernelCounts c;
    for (auto cat : d.kernels.category) {
        c.kernels += cat == KernelCategory::Compute || cat == KernelCategory::Communication;
        c.communication += cat == KernelCategory::Communication;
        c.copies += cat == KernelCategory::Memcpy || cat == KernelCategory::Memset;
    }
    return c;
}

LoadedTrace open(const std::string& path) {
    auto r = openTrace(path);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
    return r.ok() ? std::move(r).value() : LoadedTrace{};
}

std::map<DeviceIndex, double> counterMax(const TraceData& d, CounterKind kind) {
    std::map<DeviceIndex, double> out;
    for (size_t i = 0; i < d.counters.size(); ++i) {
        if (d.counters.kind[i] == kind) {
            out[d.counters.device[i]] = std::max(out[d.counters.device[i]], d.counters.value[i]);
        }
    }
    return out;
}

#define SKIP_IF_MISSING(path) VRAMSCOPE_REQUIRE_INPUT(path)

TEST(KinetoRealData, MemoryPeaksEqualTheFilesOwnTotals) {
    for (const std::string& path : {realdata::kDfIndexTrace, realdata::kBertTrace}) {
        SKIP_IF_MISSING(path);
        const json doc = loadGzJson(path);
        std::map<DeviceIndex, double> allocated;
        std::map<DeviceIndex, double> reserved;
        for (const auto& e : eventsOf(doc)) {
            if (e.value("name", "") != "[memory]" || e["args"].value("Device Type", -1) != 1) {
                continue;
            }
            const auto dev = e["args"]["Device Id"].get<DeviceIndex>();
            allocated[dev] = std::max(allocated[dev], e["args"]["Total Allocated"].get<double>());
            reserved[dev] = std::max(reserved[dev], e["args"]["Total Reserved"].get<double>());
        }
        const auto t = open(path);
        EXPECT_EQ(counterMax(t.data, CounterKind::AllocatedBytes), allocated) << path;
        EXPECT_EQ(counterMax(t.data, CounterKind::ReservedBytes), reserved) << path;
    }
}

/// The CPU's `[memory]` events of a file (Device Type 0) and the peak of the host counter they
/// should give: the largest Total Allocated, or (2021 files without totals) the largest running
/// sum of Bytes in time order, lifted by its deepest deficit.
struct CpuMemory {
    size_t events = 0;
    double peak = 0.0;
};

CpuMemory cpuMemoryOf(const json& doc) {
    std::vector<std::pair<double, int64_t>> rows;  // (ts us, Bytes), file order
    CpuMemory c;
    bool totals = false;
    for (const auto& e : eventsOf(doc)) {
        if (!e.is_object() || e.value("name", "") != "[memory]" ||
            e["args"].value("Device Type", -1) != 0) {
            continue;
        }
        ++c.events;
        if (e["args"].contains("Total Allocated")) {
            totals = true;
            c.peak = std::max(c.peak, e["args"]["Total Allocated"].get<double>());
        }
        rows.emplace_back(e["ts"].get<double>(), e["args"]["Bytes"].get<int64_t>());
    }
    if (!totals) {
        std::stable_sort(rows.begin(), rows.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        int64_t sum = 0;
        int64_t lowest = 0;
        int64_t highest = 0;
        for (const auto& r : rows) {
            sum += r.second;
            lowest = std::min(lowest, sum);
            highest = std::max(highest, sum);
        }
        c.peak = double(highest - lowest);
    }
    return c;
}

TEST(KinetoRealData, CpuMemoryEventsBecomeOneHostCounterAndNoGpuMemory) {
    for (const std::string& path :
         {realdata::kDfIndexTrace, realdata::kBertTrace, realdata::kResnetTrace}) {
        SKIP_IF_MISSING(path);
        const CpuMemory expected = cpuMemoryOf(loadGzJson(path));
        ASSERT_GT(expected.events, 0u) << path;
        const auto t = open(path);
        size_t host = 0;
        for (size_t i = 0; i < t.data.counters.size(); ++i) {
            const bool isHost = t.data.counters.kind[i] == CounterKind::HostAllocatedBytes;
            host += isHost;
            // Host samples sit on the host, and nothing on the host is GPU memory.
            EXPECT_EQ(isHost, t.data.counters.device[i] == kHostDevice) << path;
        }
        EXPECT_EQ(host, expected.events) << path;
        EXPECT_EQ(counterMax(t.data, CounterKind::HostAllocatedBytes)[kHostDevice], expected.peak)
            << path;
        for (DeviceIndex d : t.data.memory.device) {
            ASSERT_NE(d, kHostDevice) << path;
        }
        for (const DeviceInfo& d : t.data.header.devices) {
            EXPECT_NE(d.index, kHostDevice) << path;
        }
    }
}

TEST(KinetoRealData, DfIndexResolverMemoryIsOnDeviceOneAndReplaysToTheTotals) {
    SKIP_IF_MISSING(realdata::kDfIndexTrace);
    const auto t = open(realdata::kDfIndexTrace);
    const auto peaks = counterMax(t.data, CounterKind::AllocatedBytes);
    ASSERT_EQ(peaks.size(), 1u);
    EXPECT_EQ(peaks.begin()->first, DeviceIndex{1});
    EXPECT_EQ(t.data.header.rank, RankId{1});
    EXPECT_EQ(t.data.header.worldSize, 2);
    // Replaying the imported events (PreExisting included) reaches the producer's peak.
    int64_t live = 0;
    int64_t peak = 0;
    const auto& m = t.data.memory;
    for (size_t i = 0; i < m.size(); ++i) {
        EXPECT_EQ(m.device[i], DeviceIndex{1});
        live +=
            (m.action[i] == MemoryAction::Alloc ? 1 : -1) * static_cast<int64_t>(m.sizeBytes[i]);
        peak = std::max(peak, live);
    }
    EXPECT_EQ(static_cast<double>(peak), peaks.at(DeviceIndex{1}));
    // 26,770 CUDA events in the file (README), plus the one PreExisting allocation.
    const json doc = loadGzJson(realdata::kDfIndexTrace);
    size_t cuda = 0;
    for (const auto& e : eventsOf(doc)) {
        cuda += e.value("name", "") == "[memory]" && e["args"].value("Device Type", -1) == 1;
    }
    EXPECT_EQ(m.size(), cuda + 1);
}

TEST(KinetoRealData, BertPeakIsAbout96MiB) {
    SKIP_IF_MISSING(realdata::kBertTrace);
    const auto t = open(realdata::kBertTrace);
    const auto peaks = counterMax(t.data, CounterKind::AllocatedBytes);
    ASSERT_EQ(peaks.count(DeviceIndex{0}), 1u);
    EXPECT_NEAR(peaks.at(DeviceIndex{0}) / (1 << 20), 96.6, 0.05);
}

TEST(KinetoRealData, OldSchemaRebuildsTheAllocatedCounterFromBytes) {
    SKIP_IF_MISSING(realdata::kResnetTrace);
    const json doc = loadGzJson(realdata::kResnetTrace);
    std::vector<std::pair<double, int64_t>> bytes;  // (ts, Bytes) of CUDA events
    for (const auto& e : eventsOf(doc)) {
        if (e.value("name", "") == "[memory]" && e["args"].value("Device Type", -1) == 1) {
            bytes.emplace_back(e["ts"].get<double>(), e["args"]["Bytes"].get<int64_t>());
        }
    }
    std::stable_sort(bytes.begin(), bytes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    int64_t sum = 0;
    int64_t lowest = 0;
    int64_t highest = 0;
    for (const auto& [ts, b] : bytes) {
        sum += b;
        lowest = std::min(lowest, sum);
        highest = std::max(highest, sum);
    }
    const auto t = open(realdata::kResnetTrace);
    const auto peaks = counterMax(t.data, CounterKind::AllocatedBytes);
    ASSERT_EQ(peaks.size(), 1u);
    EXPECT_EQ(peaks.at(DeviceIndex{0}), static_cast<double>(highest - lowest));
    EXPECT_TRUE(counterMax(t.data, CounterKind::ReservedBytes).empty());
    EXPECT_EQ(countImported(t.data).kernels, countKernels(doc).kernels);
    EXPECT_EQ(countImported(t.data).copies, countKernels(doc).copies);
}

TEST(KinetoRealData, KernelCountsMatchTheJson) {
    for (const std::string& path :
         {realdata::kResnetTrace, realdata::kB200Trace, realdata::kMi300Trace,
          realdata::kMi210Trace, realdata::kMi250Trace, realdata::kLargeIntegerTrace,
          realdata::kNcclTrace, realdata::kSampledRank0Trace, realdata::kDfIndexTrace}) {
        SKIP_IF_MISSING(path);
        const json doc = loadGzJson(path);
        const KernelCounts expected = countKernels(doc);
        const auto t = open(path);
        const KernelCounts got = countImported(t.data);
        EXPECT_EQ(got.kernels, expected.kernels) << path;
        EXPECT_EQ(got.communication, expected.communication) << path;
        EXPECT_EQ(got.copies, expected.copies) << path;
        EXPECT_EQ(t.data.collectives.size(), expected.communication) << path;
        EXPECT_TRUE(t.report.complete) << path;
    }
}

TEST(KinetoRealData, CollectiveSizesComeFromKernelArgs) {
    SKIP_IF_MISSING(realdata::kNcclTrace);
    const json doc = loadGzJson(realdata::kNcclTrace);
    // Element sizes of the dtypes this file uses (PyTorch: Float 4 bytes, Long 8 bytes).
    const std::map<std::string, uint64_t> width{{"Float", 4}, {"Long", 8}};
    std::multiset<std::pair<int64_t, uint64_t>> expected;  // (start ns, bytes)
    const int64_t base = doc.at("baseTimeNanoseconds").get<int64_t>();
    for (const auto& e : eventsOf(doc)) {
        if (e.value("cat", "") == "kernel" && hasNccl(e.value("name", ""))) {
            const auto& a = e["args"];
            const int64_t ns =
                base + static_cast<int64_t>(std::llround(e["ts"].get<double>() * 1000.0));
            expected.emplace(ns, a["In msg nelems"].get<uint64_t>() * width.at(a["dtype"]));
        }
    }
    const auto t = open(realdata::kNcclTrace);
    std::multiset<std::pair<int64_t, uint64_t>> got;
    for (size_t i = 0; i < t.data.collectives.size(); ++i) {
        got.emplace(t.data.collectives.startNs[i], t.data.collectives.bytes[i]);
        EXPECT_EQ(t.data.collectives.nranks[i], 2);
        EXPECT_EQ(t.data.collectives.rank[i], RankId{0});
        const auto fn = t.data.string(t.data.collectives.function[i]);
        EXPECT_TRUE(fn == "AllReduce" || fn == "Broadcast") << fn;
    }
    // nlohmann reads ts as a double, whose 53 bits hold these 16-17 significant digits only to
    // about 1 ns; the importer reads the digits themselves.
    ASSERT_EQ(got.size(), expected.size());
    for (auto g = got.begin(), e = expected.begin(); g != got.end(); ++g, ++e) {
        EXPECT_NEAR(static_cast<double>(g->first - e->first), 0.0, 1.0);
        EXPECT_EQ(g->second, e->second);
    }
}

TEST(KinetoRealData, Mi300CollectivesAreTypedDespiteGenericKernelNames) {
    SKIP_IF_MISSING(realdata::kMi300Trace);
    const json doc = loadGzJson(realdata::kMi300Trace);
    size_t named = 0;
    for (const auto& e : eventsOf(doc)) {
        if (e.value("cat", "") == "kernel" && hasNccl(e.value("name", "")) &&
            e["args"].contains("Collective name")) {
            ++named;
        }
    }
    const auto t = open(realdata::kMi300Trace);
    size_t typed = 0;
    for (auto fn : t.data.collectives.function) {
        const auto name = t.data.string(fn);
        typed += name == "AllReduce" || name == "Broadcast";
    }
    EXPECT_GE(typed, named);
    EXPECT_GT(named, 0u);
}

TEST(KinetoRealData, B200UsesRelativeTimestampsAndNewNcclNames) {
    SKIP_IF_MISSING(realdata::kB200Trace);
    const json doc = loadGzJson(realdata::kB200Trace);
    const int64_t base = doc.at("baseTimeNanoseconds").get<int64_t>();
    int64_t first = INT64_MAX;
    for (const auto& e : eventsOf(doc)) {
        if (e.value("cat", "") == "kernel") {
            first = std::min<int64_t>(first, base + std::llround(e["ts"].get<double>() * 1000.0));
        }
    }
    const auto t = open(realdata::kB200Trace);
    int64_t imported = INT64_MAX;
    for (size_t i = 0; i < t.data.kernels.size(); ++i) {
        if (t.data.kernels.category[i] == KernelCategory::Compute ||
            t.data.kernels.category[i] == KernelCategory::Communication) {
            imported = std::min(imported, t.data.kernels.startNs[i]);
        }
    }
    EXPECT_NEAR(static_cast<double>(imported - first), 0.0, 1.0);  // see CollectiveSizes...
    ASSERT_EQ(t.data.collectives.size(), 1u);
    EXPECT_EQ(t.data.string(t.data.collectives.function[0]), "AllGather");
    EXPECT_EQ(t.data.header.rank, RankId{0});
    EXPECT_EQ(t.data.header.worldSize, 8);
    ASSERT_EQ(t.data.header.devices.size(), 1u);
    EXPECT_EQ(t.data.header.devices[0].name, "NVIDIA B200");
}

TEST(KinetoRealData, CpuOnlyTraceHasNoGpu) {
    SKIP_IF_MISSING(realdata::kCpuOnlyTrace);
    const auto t = open(realdata::kCpuOnlyTrace);
    EXPECT_TRUE(t.data.header.devices.empty());
    EXPECT_EQ(t.data.kernels.size(), 0u);
    EXPECT_EQ(t.data.memory.size(), 0u);
    EXPECT_EQ(t.data.header.rank, RankId{34});
    EXPECT_EQ(t.data.header.worldSize, 300);
}

TEST(KinetoRealData, LargeIntegerTraceOpensWithItsKernel) {
    SKIP_IF_MISSING(realdata::kLargeIntegerTrace);
    const auto t = open(realdata::kLargeIntegerTrace);
    ASSERT_EQ(t.data.kernels.size(), 1u);
    EXPECT_EQ(t.data.kernels.category[0], KernelCategory::Communication);
    EXPECT_EQ(t.data.kernels.endNs[0] - t.data.kernels.startNs[0], 50'000);
}

}  // namespace
}  // namespace vramscope::trace
