// The analyses on real inputs from ../shared/realdata, with expected values derived
// independently: from the Kineto JSON itself (parsed here with nlohmann-json) and from the
// workload that produced the H200 snapshots (../shared/device/gpt_train.py).
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpt_h200_workload.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/advice/check_rules.h"
#include "vramscope/analysis/memory/flame_tree.h"
#include "vramscope/analysis/memory/gpu_capacity.h"
#include "vramscope/analysis/memory/oom_diagnosis.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/model/text_format.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

using testdata::loadGzJson;

// --- independent computation on the Kineto JSON ---------------------------------------------

using testdata::IntervalUs;
using testdata::unionUs;

struct JsonRank {
    int rank = -1;
    double span = 0, busy = 0, compute = 0, comm = 0, memory = 0, overlap = 0;
    std::vector<std::pair<std::string, double>> ncclStarts;  // (name, ts us), by ts
};

JsonRank fromJson(const nlohmann::json& doc) {
    JsonRank r;
    r.rank = doc["distributedInfo"]["rank"].get<int>();
    std::vector<IntervalUs> all, compute, comm, memory;
    for (const auto& e : doc["traceEvents"]) {
        if (!e.contains("cat") || e.value("ph", "") != "X") {
            continue;
        }
        const std::string cat = e["cat"].get<std::string>();
        if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") {
            continue;
        }
        const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
        const IntervalUs iv{ts, ts + dur};
        const std::string name = e["name"].get<std::string>();
        all.push_back(iv);
        if (cat != "kernel") {
            memory.push_back(iv);
        } else if (name.rfind("nccl", 0) == 0) {
            comm.push_back(iv);
            r.ncclStarts.emplace_back(name, ts);
        } else {
            compute.push_back(iv);
        }
    }
    double first = 1e300, last = -1e300;
    for (const IntervalUs& i : all) {
        first = std::min(first, i.first);
        last = std::max(last, i.second);
    }
    r.span = last - first;
    r.busy = unionUs(all);
    std::vector<IntervalUs> mc, mm;
    r.compute = unionUs(compute, &mc);
    r.comm = unionUs(comm, &mm);
    r.memory = unionUs(memory);
    for (const IntervalUs& a : mm) {
        for (const IntervalUs& b : mc) {
            r.overlap += std::max(0.0, std::min(a.second, b.second) - std::max(a.first, b.first));
        }
    }
    std::sort(r.ncclStarts.begin(), r.ncclStarts.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    return r;
}

std::vector<JsonRank> readDlrmJson() {
    std::vector<JsonRank> out;
    archive* a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    if (archive_read_open_filename(a, realdata::kDlrmJob.c_str(), 1 << 16) != ARCHIVE_OK) {
        archive_read_free(a);
        return out;
    }
    archive_entry* entry = nullptr;
    while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
        const std::string name = archive_entry_pathname(entry);
        if (name.size() < 5 || name.substr(name.size() - 5) != ".json") {
            continue;
        }
        std::string text;
        char buf[1 << 16];
        la_ssize_t n = 0;
        while ((n = archive_read_data(a, buf, sizeof buf)) > 0) {
            text.append(buf, size_t(n));
        }
        out.push_back(fromJson(nlohmann::json::parse(text)));
    }
    archive_read_free(a);
    std::sort(out.begin(), out.end(),
              [](const JsonRank& x, const JsonRank& y) { return x.rank < y.rank; });
    return out;
}

void expectClose(int64_t gotNs, double expectedUs, const char* what, int rank) {
    const double expectedNs = expectedUs * 1000.0;
    EXPECT_NEAR(double(gotNs), expectedNs, std::max(0.005 * expectedNs, 1.0))
        << what << " of rank " << rank;
}

TEST(DlrmJob, TimeBreakdownPerRankMatchesTheJson) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
    const std::vector<JsonRank> expected = readDlrmJson();
    ASSERT_EQ(expected.size(), 8u);
    auto job = trace::openJob({realdata::kDlrmJob});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 8u);
    for (const trace::RankTrace& rt : job->ranks) {
        const int rank = toInt(rt.trace.data.header.rank);
        ASSERT_GE(rank, 0);
        ASSERT_LT(rank, 8);
        const JsonRank& e = expected[size_t(rank)];
        ASSERT_GT(e.comm, 0.0);
        ASSERT_GT(e.compute, 0.0);
        const auto all = computeTimeBreakdowns(rt.trace.data);
        ASSERT_EQ(all.size(), 1u) << "rank " << rank;
        const TimeBreakdown& b = all[0];
        expectClose(b.spanNs, e.span, "span", rank);
        expectClose(b.busyNs, e.busy, "busy", rank);
        expectClose(b.idleNs, e.span - e.busy, "idle", rank);
        expectClose(b.computeNs, e.compute, "compute", rank);
        expectClose(b.communicationNs, e.comm, "communication", rank);
        expectClose(b.memoryNs, e.memory, "memory", rank);
        expectClose(b.overlapNs, e.overlap, "overlap", rank);
        expectClose(b.exposedCommunicationNs, e.comm - e.overlap, "exposed communication", rank);
    }
}

TEST(DlrmJob, ReportsTheStragglerOfEveryCollective) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
    const std::vector<JsonRank> expected = readDlrmJson();
    auto job = trace::openJob({realdata::kDlrmJob});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    const CollectiveMatch m = matchCollectives(rankInputs(*job));
    // Expected: the k-th NCCL kernel of each function on every rank is one collective; the rank
    // whose kernel starts last is the straggler. 8 NCCL kernels per rank (README).
    std::map<std::pair<std::string, int>, std::pair<double, int>> latest;  // -> (ts, rank)
    for (const JsonRank& r : expected) {
        std::map<std::string, int> order;
        for (const auto& [name, ts] : r.ncclStarts) {
            // Every SendRecv kernel of this job was launched by PyTorch's nccl:all_to_all op
            // (checked in duplicate_ranks_test.cpp against the JSON), so the importer names
            // those collectives AllToAll.
            std::string fn = collectiveFunctionFromKernel(name);
            fn = fn == "SendRecv" ? "AllToAll" : fn;
            const auto key = std::make_pair(fn, order[fn]++);
            auto it = latest.find(key);
            if (it == latest.end() || ts > it->second.first) {
                latest[key] = {ts, r.rank};
            }
        }
    }
    ASSERT_EQ(latest.size(), 8u);
    ASSERT_EQ(m.collectives.size(), 8u);
    EXPECT_EQ(m.unmatched, 0u);
    std::map<std::string, int> seen;
    for (const MatchedCollective& c : m.collectives) {
        EXPECT_EQ(c.participants.size(), 8u);
        const auto key = std::make_pair(c.function, seen[c.function]++);
        ASSERT_TRUE(latest.count(key)) << c.function;
        EXPECT_EQ(c.stragglerRank, trace::RankId{latest[key].second})
            << c.function << " #" << key.second;
        EXPECT_GT(c.skewNs, 0);
    }
    ASSERT_EQ(m.ranks.size(), 8u);
}

// --- H200 snapshots of ../shared/device/gpt_train.py ----------------------------------------

using test::gpt_h200::kFloatLogitsBytes;
using test::gpt_h200::kLogitsBytes;
// "leak" keeps every micro-batch's logits.
constexpr uint64_t kLeakPerIteration = test::gpt_h200::kMicroBatchesPerStep * kLogitsBytes;

/// What tests/tools/snapshot_replay.py --oom-state (an independent Python replay of the
/// snapshot's own entries, sharing no code with the importer) prints for the first OOM of device 0.
struct OomReplay {
    bool ran = false;
    uint64_t requestedBytes = 0;
    int64_t allocatedBytes = -1;
    int64_t reservedBytes = -1;
    int64_t liveBlocks = -1;
    std::map<uint64_t, int64_t> liveBySize;  ///< blocks the trace allocated, alive at the OOM
    uint64_t deviceFreeBytes = 0;            ///< the oom entry's own device_free
    int64_t segments = -1;                   ///< segments alive at the OOM (rebuilt from the dump)
    int64_t largestFreeBlockBytes = -1;      ///< longest range in one segment no block covers
    int64_t segmentFreeBytes = -1;           ///< all such ranges
};

OomReplay replayOom(const std::string& path) {
    OomReplay out;
    const std::string cmd = "python3 '" VRAMSCOPE_SOURCE_DIR "/tests/tools/snapshot_replay.py' '" +
                            path + "' --oom-state 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe) {
        return out;
    }
    std::string text;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, pipe.get())) > 0;) {
        text.append(buf, n);
    }
    std::istringstream lines(text);
    bool seenOom = false;
    for (std::string line; std::getline(lines, line);) {
        std::istringstream ls(line);
        std::string head, k;
        int device = -1;
        ls >> head >> k >> device;
        if (device != 0) {
            continue;
        }
        if (head == "oom" && !seenOom) {
            ls >> k >> out.requestedBytes >> k >> out.deviceFreeBytes;
            seenOom = out.ran = true;
        } else if (head == "oom_segments" && out.segments < 0) {
            ls >> k >> out.segments >> k >> out.largestFreeBlockBytes >> k >> out.segmentFreeBytes;
        } else if (head == "oom_state" && out.allocatedBytes < 0) {
            ls >> k >> out.allocatedBytes >> k >> out.reservedBytes >> k >> out.liveBlocks;
        } else if (head == "oom_live_size" && out.liveBlocks >= 0 && seenOom) {
            uint64_t size = 0;
            int64_t count = 0;
            ls >> k >> size >> k >> count;
            out.liveBySize.emplace(size, count);  // the first OOM's lines come first
        }
    }
    return out;
}

TEST(H200Snapshot, LeakIsAStaircaseOfTheKeptLogits) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptLeakSnapshot);
    auto t = trace::openTrace(realdata::kGptLeakSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    auto its = findIterations(t->data, trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    // The snapshot names no step, but its external_annotations carry PyTorch's
    // Optimizer.step#AdamW.step: the iterations run from one to the next.
    EXPECT_EQ(its->source, IterationSource::OptimizerSteps) << its->reason;
    const LeakReport r = analyzeLeak(t->data, trace::DeviceIndex{0}, *its);
    EXPECT_EQ(r.verdict, LeakVerdict::Staircase) << r.reason;
    EXPECT_NEAR(double(r.growthBytesPerIteration), double(kLeakPerIteration),
                0.05 * double(kLeakPerIteration));
    ASSERT_FALSE(r.survivors.empty());
    const SurvivorGroup& top = r.survivors.front();
    // The survivors are the logits themselves...
    EXPECT_EQ(top.bytes % kLogitsBytes, 0u);
    EXPECT_EQ(top.largestBytes, kLogitsBytes);
    // ... allocated by the model's head in gpt_train.py, called from the training step.
    EXPECT_NE(top.userFrame.find("forward (/"), std::string::npos) << top.userFrame;
    EXPECT_NE(top.userFrame.find("gpt_train.py:"), std::string::npos) << top.userFrame;
    bool step = false;
    for (const std::string& f : top.userFrames) {
        step |= f.rfind("step (", 0) == 0 && f.find("gpt_train.py:") != std::string::npos;
    }
    EXPECT_TRUE(step) << "no step() frame of gpt_train.py among the survivors' user frames";
}

class HealthySnapshot : public ::testing::TestWithParam<const char*> {};

TEST_P(HealthySnapshot, IsNotAStaircase) {
    const std::string path = realdata::kDir + GetParam();
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto t = trace::openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    ASSERT_FALSE(t->data.header.devices.empty());
    for (const trace::DeviceInfo& dev : t->data.header.devices) {
        auto its = findIterations(t->data, dev.index);
        ASSERT_TRUE(its.ok());
        const LeakReport r = analyzeLeak(t->data, dev.index, *its);
        EXPECT_NE(r.verdict, LeakVerdict::Staircase) << GetParam() << ": " << r.reason;
    }
}

// Snapshots of jobs written by others that do not leak (realdata README).
INSTANTIATE_TEST_SUITE_P(RealData, HealthySnapshot,
                         ::testing::Values("/MAGMA27_assignment2-systems/memory_snapshot.pickle",
                                           "/ZidongLiu_DeComFL/memory.pickle",
                                           "/silmont2000_assignment2-systems/mem_snapshot.pickle"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             std::string name = info.param;
                             name = name.substr(1, name.find('/', 1) - 1);
                             for (char& c : name) {
                                 c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             }
                             return name;
                         });

TEST(H200Snapshot, LiveSetAtTheOomIsLedByTheLeakedLogits) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptOomSnapshot);
    VRAMSCOPE_REQUIRE_PYTHON();
    auto t = trace::openTrace(realdata::kGptOomSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const trace::TraceData& d = t->data;
    ASSERT_EQ(d.ooms.size(), 1u);
    FlameTreeBuilder builder(d, d.ooms[0].device, detailLevel(d, d.ooms[0].device));
    const FlameTree tree = builder.at(d.ooms[0].timestampNs, FlameGrouping::Stack);
    // The heaviest leaf (allocation site) is the logits kept by the leak.
    uint32_t heaviest = 0;
    for (uint32_t i = 1; i < tree.nodes.size(); ++i) {
        if (tree.nodes[i].selfBytes > tree.nodes[heaviest].selfBytes) {
            heaviest = i;
        }
    }
    const FlameNode& leaf = tree.nodes[heaviest];
    // Logits alive at the OOM, counted by their size alone in the Python replay of the snapshot.
    const OomReplay py = replayOom(realdata::kGptOomSnapshot);
    ASSERT_TRUE(py.ran) << "snapshot_replay.py printed no OOM";
    const auto found = py.liveBySize.find(kLogitsBytes);
    ASSERT_NE(found, py.liveBySize.end()) << "no block of the logits' size alive at the OOM";
    const int64_t logits = found->second;
    // From the workload: the cap leaves 3 GiB above the healthy peak, room for at most 6 kept
    // logits of 500 MiB, plus the one or two of the step that failed; several steps' worth were
    // kept before it failed.
    EXPECT_GE(logits, 4);
    EXPECT_LE(logits, 8);
    const int64_t logitsBytes = logits * int64_t(kLogitsBytes);
    EXPECT_GE(leaf.selfBytes, logitsBytes);
    EXPECT_GE(double(logitsBytes), 0.95 * double(leaf.selfBytes));
    EXPECT_GT(double(logitsBytes), 0.4 * double(tree.root().bytes));
    // It is also the heaviest path from the root: the first child at every level leads to it.
    uint32_t node = 0;
    while (!tree.nodes[node].children.empty()) {
        node = tree.nodes[node].children.front();
    }
    EXPECT_EQ(node, heaviest);
    bool viaStep = false;
    for (const std::string& name : tree.path(heaviest)) {
        viaStep |= name.rfind("step (", 0) == 0;
    }
    EXPECT_TRUE(viaStep);
}

// --- df_index_resolver's memory, from its JSON --------------------------------------------

/// [ts, ts + dur) in us of every "ProfilerStep#N" complete event, by start.
std::vector<std::pair<double, double>> profilerSteps(const nlohmann::json& doc) {
    std::vector<std::pair<double, double>> out;
    for (const auto& e : doc["traceEvents"]) {
        if (e.value("ph", "") == "X" && e.value("name", "").rfind("ProfilerStep#", 0) == 0) {
            out.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// Per window: the lowest "Total Allocated" of the CUDA [memory] events of `device` inside it,
/// with the value of the last event before it when that value holds at the window's start; 0
/// when neither exists.
std::vector<int64_t> lowestTotalAllocated(const nlohmann::json& doc, int device,
                                          const std::vector<std::pair<double, double>>& windows) {
    std::vector<std::pair<double, int64_t>> samples;  // (ts us, Total Allocated), by ts
    for (const auto& e : doc["traceEvents"]) {
        if (e.value("name", "") != "[memory]" || !e.contains("args")) {
            continue;
        }
        const auto& a = e["args"];
        if (a.value("Device Type", -1) == 1 && a.value("Device Id", -2) == device) {
            samples.emplace_back(e["ts"].get<double>(), a["Total Allocated"].get<int64_t>());
        }
    }
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<int64_t> out;
    for (const auto& [start, end] : windows) {
        int64_t low = 0;
        bool any = false;
        for (size_t i = 0; i < samples.size(); ++i) {
            const bool inside = samples[i].first >= start && samples[i].first < end;
            const bool carriedIn = samples[i].first < start &&
                                   (i + 1 == samples.size() || samples[i + 1].first > start);
            if (inside || carriedIn) {
                low = any ? std::min(low, samples[i].second) : samples[i].second;
                any = true;
            }
        }
        out.push_back(low);
    }
    return out;
}

TEST(KinetoMemory, IterationBaselinesCountOnlyTheKnownCurve) {
    const std::string path = realdata::kDfIndexTrace;
    VRAMSCOPE_REQUIRE_INPUT(path);
    auto t = trace::openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    auto job = analyzeJob({{&t->data, trace::RankId{0}, 0}});
    ASSERT_TRUE(job.ok());
    const DeviceAnalysis* d = nullptr;
    for (const DeviceAnalysis& a : job->devices) {
        d = a.leak.iterations.empty() ? d : &a;
    }
    ASSERT_NE(d, nullptr);
    // ProfilerStep#2 starts at 32.4 ms, the first [memory] event comes at 51.8 ms: nothing
    // before the first event may count as 0 B. Expected, from the JSON read here: per
    // ProfilerStep window [ts, ts + dur), the lowest "Total Allocated" of the window's CUDA
    // [memory] events on this device, and of the value carried in from the last event before the
    // window when there is one (the curve holds it from the window's start).
    const nlohmann::json doc = loadGzJson(path);
    const std::vector<std::pair<double, double>> steps = profilerSteps(doc);
    const std::vector<int64_t> expected = lowestTotalAllocated(doc, toInt(d->device), steps);
    ASSERT_EQ(steps.size(), 5u);  // ProfilerStep#2 .. #6
    ASSERT_EQ(d->leak.iterations.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        ASSERT_GT(expected[i], 0) << "window " << i << " holds no memory event";
        EXPECT_EQ(d->leak.iterations[i].baselineBytes, expected[i])
            << "iteration " << d->leak.iterations[i].number;
    }
    EXPECT_EQ(d->leak.risingFraction, 0.0);
}

TEST(H200Snapshot, OomIsAdvisedWithTheMemoryAtThatMoment) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptOomSnapshot);
    VRAMSCOPE_REQUIRE_PYTHON();
    auto t = trace::openTrace(realdata::kGptOomSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    ASSERT_EQ(t->data.ooms.size(), 1u);
    auto job = analyzeJob({{&t->data, trace::kUnknownRank, 0}});
    ASSERT_TRUE(job.ok());
    ASSERT_EQ(job->devices.size(), 1u);
    const DeviceAnalysis& d = job->devices[0];
    ASSERT_EQ(d.ooms.size(), 1u);
    // The request is the fp32 copy of the logits (the workload), as the snapshot's own oom entry
    // says; the memory then is the Python replay of the snapshot's entries up to the oom.
    const OomReplay py = replayOom(realdata::kGptOomSnapshot);
    ASSERT_TRUE(py.ran) << "snapshot_replay.py printed no OOM";
    EXPECT_EQ(py.requestedBytes, kFloatLogitsBytes);
    EXPECT_EQ(d.ooms[0].requestedBytes, kFloatLogitsBytes);
    EXPECT_EQ(d.ooms[0].allocatedBytes, py.allocatedBytes);
    EXPECT_EQ(d.ooms[0].reservedBytes, py.reservedBytes);
    EXPECT_EQ(int64_t(d.ooms[0].liveAllocations), py.liveBlocks);
    EXPECT_FALSE(d.ooms[0].topLive.empty());
    ASSERT_FALSE(job->advice.empty());
    EXPECT_EQ(job->advice[0].rule, "oom");
    EXPECT_EQ(job->advice[0].severity, Severity::Critical);
    // Memory existed before the first iteration's first event: its baseline is not 0.
    ASSERT_FALSE(d.leak.iterations.empty());
    EXPECT_GT(d.leak.iterations[0].baselineBytes, int64_t(1) << 30);
}

// The capacity table against what CUDA / ROCm reported on real GPUs: each Kineto trace's own
// deviceProperties totalGlobalMem, and the H200 of ../shared/device/README.md (143,771 MiB). A
// datasheet size read as GiB is at most 2 % above the usable memory, never below it.
TEST(GpuCapacityTable, DatasheetSizesSitJustAboveWhatTheDevicesReport) {
    const std::pair<const char*, const char*> traces[] = {
        {"H100-80GB",
         "/AMD-AGI_TraceLens/tests/traces/h100/"
         "gaunernst_bert-small-uncased__1016001.json.gz"},
        {"B200", "/AMD-AGI_TraceLens/tests/traces/b200/eager_trace.json.gz"},
        {"MI300X", "/AMD-AGI_TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"},
    };
    auto near = [](const char* name, double reported) {
        const std::optional<uint64_t> table = gpuCapacityByName(name);
        ASSERT_TRUE(table.has_value()) << name;
        EXPECT_GE(double(*table), reported) << name;
        EXPECT_LT((double(*table) - reported) / double(*table), 0.02) << name;
    };
    near("H200", 143771.0 * 1024 * 1024);
    for (const auto& [name, file] : traces) {
        const std::string path = realdata::kDir + file;
        VRAMSCOPE_REQUIRE_INPUT(path);
        auto t = trace::openTrace(path);
        ASSERT_TRUE(t.ok()) << t.error().describe();
        ASSERT_FALSE(t->data.header.devices.empty()) << path;
        near(name, double(t->data.header.devices.front().totalMemoryBytes));
    }
}

TEST(H200Snapshot, OomCauseIsTheLimitBelowTheDeviceNotAFullDevice) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kGptOomSnapshot);
    VRAMSCOPE_REQUIRE_PYTHON();
    auto t = trace::openTrace(realdata::kGptOomSnapshot);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    auto job = analyzeJob({{&t->data, trace::kUnknownRank, 0}});
    ASSERT_TRUE(job.ok());
    ASSERT_EQ(job->devices.size(), 1u);
    const DeviceAnalysis& d = job->devices[0];
    ASSERT_EQ(d.ooms.size(), 1u);
    const OomFacts& o = d.ooms[0];
    // Too few iterations before the OOM to tell the kept logits from weights: no model state.
    ASSERT_LT(d.iterations.count(), kModelStateMinIterations);
    EXPECT_EQ(d.modelStateBytes, -1);
    // The free space inside the segments when the allocation failed, rebuilt by the Python replay
    // backwards from the dump (the importer and segmentFreeSpaceAt go forwards).
    const OomReplay py = replayOom(realdata::kGptOomSnapshot);
    ASSERT_TRUE(py.ran) << "snapshot_replay.py printed no OOM";
    ASSERT_GE(py.largestFreeBlockBytes, 0) << "snapshot_replay.py printed no oom_segments";
    EXPECT_EQ(o.largestFreeBlockBytes, py.largestFreeBlockBytes);
    EXPECT_EQ(o.segmentFreeBytes, py.segmentFreeBytes);
    // The producer's own numbers: the device reported far more free than was requested (the job
    // ran under set_per_process_memory_fraction, ../shared/device/gpt_train.py), so the verdict is
    // a limit below the device, whatever the fragmentation.
    ASSERT_GT(py.deviceFreeBytes, py.requestedBytes);
    EXPECT_EQ(o.freeBytes, py.deviceFreeBytes);
    const OomDiagnosis why = diagnoseOom(o, d.memory.capacityBytes);
    EXPECT_EQ(why.cause, OomCause::LimitBelowDevice) << why.explanation;
    // Fragmentation as the replay's numbers say: the largest free block below the request while
    // reserved - allocated is at least the request.
    const bool fragmented = py.largestFreeBlockBytes < int64_t(py.requestedBytes) &&
                            py.reservedBytes - py.allocatedBytes >= int64_t(py.requestedBytes);
    EXPECT_EQ(why.fragmented, fragmented);
    EXPECT_NE(why.explanation.find(formatBytes(double(py.deviceFreeBytes))), std::string::npos)
        << why.explanation;
    if (fragmented) {
        EXPECT_NE(why.explanation.find(formatBytes(double(py.largestFreeBlockBytes))),
                  std::string::npos)
            << why.explanation;
    }
    // The advice says so, and no longer blames fragmentation for the whole failure.
    ASSERT_FALSE(job->advice.empty());
    const Advice& a = job->advice[0];
    ASSERT_EQ(a.rule, "oom");
    EXPECT_NE(a.message.find("A limit below the device was hit"), std::string::npos) << a.message;
    EXPECT_NE(a.message.find("set_per_process_memory_fraction"), std::string::npos) << a.message;
    EXPECT_EQ(a.message.find("may be the cause"), std::string::npos) << a.message;

    // With the H200's capacity given, peak / capacity (9.70 / 141 GiB = 0.07) would pass any
    // limit; the job had no such headroom (the device reported free more than the request), so
    // the peak rule is not checked, and the oom rule fails.
    JobAnalysisOptions given;
    given.capacityBytes = 141ull << 30;
    auto capped = analyzeJob({{&t->data, trace::kUnknownRank, 0}}, given);
    ASSERT_TRUE(capped.ok());
    CheckRules rules;
    rules.maxPeakShare = 0.8;
    bool sawPeak = false;
    for (const RuleResult& r : evaluateRules(*capped, rules, given)) {
        if (r.rule == "max-peak-fraction") {
            sawPeak = true;
            EXPECT_EQ(r.outcome, RuleOutcome::NotChecked) << r.detail;
            EXPECT_NE(r.detail.find("limit below its capacity"), std::string::npos) << r.detail;
        } else if (r.rule == "oom") {
            EXPECT_EQ(r.outcome, RuleOutcome::Fail) << r.detail;
        }
    }
    EXPECT_TRUE(sawPeak);
}

}  // namespace
}  // namespace vramscope::analysis
