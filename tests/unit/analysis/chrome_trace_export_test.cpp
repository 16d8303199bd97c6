// The Chrome trace JSON export: read back by our own Kineto importer it gives the source's peaks
// and kernel counts (computed here from the source JSON with nlohmann-json), and its flows and
// counters are sound when read with nlohmann-json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/export/chrome_trace_export.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

using trace::TraceData;

std::string exportChrome(const JobModel& m) {
    std::ostringstream out;
    const trace::Status s = writeChromeTrace(m, out);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
    return out.str();
}

/// What the source JSON says per CUDA device: the largest Total Allocated / Total Reserved of
/// its [memory] events and its GPU operations by category.
struct SourceDevice {
    int64_t peakAllocated = 0;
    int64_t peakReserved = 0;
    std::map<std::string, size_t> gpuOps;
};

std::map<int, SourceDevice> sourceDevices(const nlohmann::json& doc) {
    std::map<int, SourceDevice> out;
    for (const auto& e : testdata::eventsOf(doc)) {
        const std::string cat = e.value("cat", "");
        if (e.value("name", "") == "[memory]" && e["args"].value("Device Type", -1) == 1) {
            SourceDevice& d = out[e["args"]["Device Id"].get<int>()];
            d.peakAllocated =
                std::max(d.peakAllocated, e["args"]["Total Allocated"].get<int64_t>());
            d.peakReserved = std::max(d.peakReserved, e["args"]["Total Reserved"].get<int64_t>());
        } else if (e.value("ph", "") == "X" &&
                   (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset")) {
            ++out[e["args"]["device"].get<int>()].gpuOps[cat];
        }
    }
    return out;
}

std::string kinetoCategory(trace::KernelCategory c) {
    return c == trace::KernelCategory::Memcpy   ? "gpu_memcpy"
           : c == trace::KernelCategory::Memset ? "gpu_memset"
                                                : "kernel";
}

/// Exports `path` as Chrome JSON, imports that with importKinetoJson and compares per device with
/// the source JSON.
void expectRoundTripKeepsPeaksAndKernels(const std::string& path) {
    const std::map<int, SourceDevice> want = sourceDevices(testdata::loadGzJson(path));
    ASSERT_FALSE(want.empty());
    auto job = trace::openJob({path});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    auto m = buildJobModel(std::move(job).value(), "source");
    ASSERT_TRUE(m.ok());
    const std::string json = exportChrome(*m.value());
    auto back = trace::importKinetoJson(json, "exported.json");
    ASSERT_TRUE(back.ok()) << back.error().describe();
    const TraceData& d = back->data;
    std::map<int, std::map<std::string, size_t>> ops;
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        ++ops[toInt(d.kernels.device[i])][kinetoCategory(d.kernels.category[i])];
    }
    std::map<int, const MemoryTimeline*> byDevice;
    const std::vector<MemoryTimeline> timelines = buildMemoryTimelines(d);
    for (const MemoryTimeline& t : timelines) {
        byDevice[toInt(t.device)] = &t;
    }
    for (const auto& [device, src] : want) {
        EXPECT_EQ(ops[device], src.gpuOps) << "GPU " << device;
        if (src.peakAllocated == 0 && src.peakReserved == 0) {
            continue;
        }
        ASSERT_EQ(byDevice.count(device), 1u) << "GPU " << device;
        const MemoryTimeline& t = *byDevice[device];
        EXPECT_EQ(t.allocatedSource, SeriesSource::ProducerCounter);
        EXPECT_EQ(t.peakAllocatedBytes, src.peakAllocated) << "GPU " << device;
        EXPECT_EQ(t.peakReservedBytes, src.peakReserved) << "GPU " << device;
    }
}

TEST(ChromeTraceExportRealdata, BertReadBackGivesTheSourcesPeaksAndKernelCounts) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    expectRoundTripKeepsPeaksAndKernels(realdata::kBertTrace);
}

TEST(ChromeTraceExportRealdata, DfIndexReadBackGivesTheSourcesPeaksAndKernelCountsOnGpu1) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDfIndexTrace);
    expectRoundTripKeepsPeaksAndKernels(realdata::kDfIndexTrace);
}

TEST(ChromeTraceExportRealdata, OneRanksReadBackKeepsItsRankWorldSizeAndGpus) {
    // The b200 trace's own distributedInfo and deviceProperties, read here with nlohmann-json.
    VRAMSCOPE_REQUIRE_INPUT(realdata::kB200Trace);
    const nlohmann::json src = testdata::loadGzJson(realdata::kB200Trace);
    ASSERT_TRUE(src.contains("distributedInfo"));
    ASSERT_TRUE(src.contains("deviceProperties"));
    auto job = trace::openJob({realdata::kB200Trace});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    auto m = buildJobModel(std::move(job).value(), "b200");
    ASSERT_TRUE(m.ok());
    auto back = trace::importKinetoJson(exportChrome(*m.value()), "exported.json");
    ASSERT_TRUE(back.ok()) << back.error().describe();
    const trace::FileHeader& h = back->data.header;
    EXPECT_EQ(toInt(h.rank), src["distributedInfo"]["rank"].get<int>());
    EXPECT_EQ(h.worldSize, src["distributedInfo"]["world_size"].get<int>());
    // Every GPU the source lists that the trace used comes back with its name and memory.
    ASSERT_FALSE(h.devices.empty());
    for (const trace::DeviceInfo& d : h.devices) {
        const auto it = std::find_if(
            src["deviceProperties"].begin(), src["deviceProperties"].end(),
            [&](const nlohmann::json& p) { return p["id"].get<int>() == toInt(d.index); });
        ASSERT_NE(it, src["deviceProperties"].end()) << "GPU " << toInt(d.index);
        EXPECT_EQ(d.name, (*it)["name"].get<std::string>());
        EXPECT_EQ(d.totalMemoryBytes, (*it)["totalGlobalMem"].get<uint64_t>());
    }
}

trace::Job smallSyntheticJob(int ranks) {
    SyntheticJobSpec s;
    s.ranks = ranks;
    s.iterations = 5;
    s.computeKernelsPerIteration = 8;
    s.computeKernelNs = 100'000;
    s.activationsPerIteration = 4;
    s.segmentBytes = 1ull << 30;
    trace::Job job;
    for (TraceData& d : generateSyntheticJob(s)) {
        trace::RankTrace rt;
        rt.trace.data = std::move(d);
        job.ranks.push_back(std::move(rt));
    }
    return job;
}

/// ns from a Chrome "ts" in microseconds.
int64_t nsOf(const nlohmann::json& ts) {
    return std::llround(ts.get<double>() * 1000.0);
}

TEST(ChromeTraceExport, FlowsStartOnceStepOnEveryMiddleRankAndFinishOnceOnCollectives) {
    auto m = buildJobModel(smallSyntheticJob(4), "synthetic");
    ASSERT_TRUE(m.ok());
    const nlohmann::json doc = nlohmann::json::parse(exportChrome(*m.value()));
    EXPECT_EQ(doc["displayTimeUnit"], "ns");
    std::map<std::tuple<int, int64_t, int64_t>, std::string> collectiveAt;  // pid, tid, ts
    std::map<int64_t, std::map<std::string, int>> phases;
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] == "X" && e["cat"] == "collective") {
            collectiveAt[{e["pid"].get<int>(), e["tid"].get<int64_t>(), nsOf(e["ts"])}] =
                e["name"].get<std::string>();
        }
    }
    for (const auto& e : doc["traceEvents"]) {
        const std::string ph = e["ph"];
        if (ph != "s" && ph != "t" && ph != "f") {
            continue;
        }
        ++phases[e["id"].get<int64_t>()][ph];
        EXPECT_EQ(collectiveAt.count({e["pid"].get<int>(), e["tid"].get<int64_t>(), nsOf(e["ts"])}),
                  1u)
            << "flow event not on a collective slice";
        if (ph == "f") {
            EXPECT_EQ(e["bp"], "e");
        }
    }
    ASSERT_EQ(phases.size(), 5u);  // one all-reduce per iteration
    for (const auto& [id, n] : phases) {
        EXPECT_EQ(n, (std::map<std::string, int>{{"f", 1}, {"s", 1}, {"t", 2}})) << "flow " << id;
    }
}

TEST(ChromeTraceExport, CountersEqualARunningSumOfTheMemoryEvents) {
    auto built = buildJobModel(smallSyntheticJob(1), "synthetic");
    ASSERT_TRUE(built.ok());
    const JobModel& m = *built.value();
    const nlohmann::json doc = nlohmann::json::parse(exportChrome(m));
    std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> counters;
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] == "C") {
            counters[e["name"]].push_back({nsOf(e["ts"]), e["args"]["bytes"].get<int64_t>()});
        }
    }
    const TraceData& d = m.job.ranks[0].trace.data;
    const trace::DeviceIndex dev = d.memory.device[0];
    const std::string gpu = "GPU " + std::to_string(toInt(dev));
    ASSERT_EQ(counters.count(gpu + " allocated"), 1u);
    ASSERT_EQ(counters.count(gpu + " reserved"), 1u);
    const auto at = [](const std::vector<std::pair<int64_t, int64_t>>& c, int64_t t) {
        int64_t v = 0;
        for (const auto& [time, value] : c) {
            if (time > t) {
                break;
            }
            v = value;
        }
        return v;
    };
    // A running sum over the events in time order, checked after each distinct time.
    std::vector<size_t> order(d.memory.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return d.memory.timestampNs[a] < d.memory.timestampNs[b];
    });
    std::unordered_map<uint64_t, int64_t> alive[2];
    int64_t sum[2] = {0, 0};
    const int64_t toJob = m.ranks[0].toJobNs;
    for (size_t k = 0; k < order.size(); ++k) {
        const trace::MemoryEvent e = d.memory.at(order[k]);
        const int lvl = e.level == trace::MemoryLevel::Allocated ? 0 : 1;
        if (e.action == trace::MemoryAction::Alloc) {
            alive[lvl][e.address] = static_cast<int64_t>(e.sizeBytes);
            sum[lvl] += static_cast<int64_t>(e.sizeBytes);
        } else if (auto it = alive[lvl].find(e.address); it != alive[lvl].end()) {
            sum[lvl] -= it->second;
            alive[lvl].erase(it);
        }
        if (k + 1 < order.size() && d.memory.timestampNs[order[k + 1]] == e.timestampNs) {
            continue;
        }
        ASSERT_EQ(at(counters[gpu + " allocated"], e.timestampNs + toJob), sum[0]) << "event " << k;
        ASSERT_EQ(at(counters[gpu + " reserved"], e.timestampNs + toJob), sum[1]) << "event " << k;
    }
}

}  // namespace
}  // namespace vramscope::analysis
