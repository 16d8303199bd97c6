// The Perfetto export: the file parses as perfetto.protos.Trace with the generated classes, and
// what it says equals what the traces say. Expected values are recomputed here from the raw
// events (a running sum over memory events, the producer's Total Allocated in the Kineto JSON,
// NCCL kernels counted in the JSON with nlohmann-json), never taken from the exporter.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock_shift.h"
#include "perfetto_trace_reader.h"
#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "refusal.h"
#include "vramscope/analysis/export/perfetto_export.h"
#include "vramscope/analysis/memory/memory_timeline.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/analysis/synthetic_job.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {
using ::vramscope::test::refused;

using testdata::PfSlice;
using testdata::PfTrace;
using testdata::replayPerfetto;
using trace::TraceData;

std::shared_ptr<const JobModel> modelOfJob(trace::Job job) {
    auto m = buildJobModel(std::move(job), "test");
    EXPECT_TRUE(m.ok());
    return m.ok() ? m.value() : nullptr;
}

std::string exportPerfetto(const JobModel& m) {
    std::ostringstream out;
    const trace::Status s = writePerfettoTrace(m, out);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
    return out.str();
}

SyntheticJobSpec smallExportSpec() {
    SyntheticJobSpec s;
    s.ranks = 3;
    s.iterations = 6;
    s.computeKernelsPerIteration = 8;
    s.computeKernelNs = 100'000;
    s.activationsPerIteration = 4;
    s.leakBytesPerIteration = 32ull << 20;
    s.segmentBytes = 1ull << 30;
    return s;
}

trace::Job syntheticJobWithOffset(const SyntheticJobSpec& spec, int64_t rank1OffsetNs) {
    trace::Job job;
    std::vector<TraceData> traces = generateSyntheticJob(spec);
    for (size_t r = 0; r < traces.size(); ++r) {
        trace::RankTrace rt;
        rt.path = "rank" + std::to_string(r) + ".vscope";
        rt.trace.data = std::move(traces[r]);
        if (r == 1) {
            test::shiftClock(rt.trace.data, rank1OffsetNs);  // another time base
        }
        job.ranks.push_back(std::move(rt));
    }
    return job;
}

/// Bytes in use at `level` on `device` at trace time t: allocations minus frees of what they
/// allocated (by address), device-static memory left out, written out as a plain loop.
int64_t runningSumAt(const TraceData& d, trace::DeviceIndex device, trace::MemoryLevel level,
                     int64_t t) {
    std::unordered_map<uint64_t, int64_t> alive;
    int64_t sum = 0;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        const trace::MemoryEvent e = d.memory.at(i);
        if (e.device != device || e.level != level || e.timestampNs > t ||
            e.kind == trace::MemoryKind::DeviceStatic) {
            continue;
        }
        if (e.action == trace::MemoryAction::Alloc) {
            alive[e.address] = static_cast<int64_t>(e.sizeBytes);
            sum += static_cast<int64_t>(e.sizeBytes);
        } else if (auto it = alive.find(e.address); it != alive.end()) {
            sum -= it->second;
            alive.erase(it);
        }
    }
    return sum;
}

TEST(PerfettoExport, CountersEqualARunningSumOfTheMemoryEventsAtSampledTimes) {
    const SyntheticJobSpec spec = smallExportSpec();
    auto m = modelOfJob(syntheticJobWithOffset(spec, 3'000'000));
    ASSERT_TRUE(m);
    const PfTrace pf = replayPerfetto(exportPerfetto(*m));
    ASSERT_TRUE(pf.problems.empty()) << pf.problems.front();
    for (size_t r = 0; r < m->job.ranks.size(); ++r) {
        const TraceData& d = m->job.ranks[r].trace.data;
        const int32_t pid = static_cast<int32_t>(r) + 1;
        const int64_t toJob = m->ranks[r].toJobNs;
        const std::vector<MemoryTimeline> timelines = buildMemoryTimelines(d);
        ASSERT_EQ(timelines.size(), 1u);
        const trace::DeviceIndex dev = timelines[0].device;
        const std::string gpu = "GPU " + std::to_string(toInt(dev));
        const uint64_t allocated = pf.counterTrack(pid, gpu + " allocated");
        const uint64_t reserved = pf.counterTrack(pid, gpu + " reserved");
        ASSERT_NE(allocated, 0u) << "rank " << r;
        ASSERT_NE(reserved, 0u) << "rank " << r;
        EXPECT_EQ(pf.tracks.at(allocated).counter().unit(),
                  perfetto::protos::CounterDescriptor::UNIT_SIZE_BYTES);
        // Every event time, the ns before it, and a few times between.
        std::set<int64_t> times;
        for (size_t i = 0; i < d.memory.size(); ++i) {
            times.insert(d.memory.timestampNs[i]);
            times.insert(d.memory.timestampNs[i] - 1);
        }
        const int64_t first = *times.begin();
        const int64_t last = *times.rbegin();
        for (int k = 0; k <= 50; ++k) {
            times.insert(first + (last - first) * k / 50);
        }
        size_t checked = 0;
        for (const int64_t t : times) {
            if (t + toJob < 0) {
                continue;
            }
            const auto jobT = static_cast<uint64_t>(t + toJob);
            const int64_t wantA = runningSumAt(d, dev, trace::MemoryLevel::Allocated, t);
            const int64_t wantR = runningSumAt(d, dev, trace::MemoryLevel::Reserved, t);
            ASSERT_EQ(pf.counterAt(allocated, jobT), wantA) << "rank " << r << " t " << t;
            ASSERT_EQ(pf.counterAt(reserved, jobT), wantR) << "rank " << r << " t " << t;
            ASSERT_EQ(timelines[0].allocated.valueAt(t), wantA);
            ASSERT_EQ(timelines[0].reserved.valueAt(t), wantR);
            ++checked;
        }
        EXPECT_GT(checked, 100u);
    }
}

TEST(PerfettoExport, SyntheticJobHasEveryKernelRangeAndOneFlowPerIterationOverAllRanks) {
    const SyntheticJobSpec spec = smallExportSpec();
    auto m = modelOfJob(syntheticJobWithOffset(spec, 3'000'000));
    ASSERT_TRUE(m);
    const PfTrace pf = replayPerfetto(exportPerfetto(*m));
    ASSERT_TRUE(pf.problems.empty()) << pf.problems.front();
    std::map<int32_t, size_t> kernels, ranges;
    std::map<uint64_t, std::vector<int32_t>> flowPids;
    for (const PfSlice& s : pf.slices) {
        const int32_t pid = pf.pidOf(s.track);
        if (s.category == "kernel" || s.category == "gpu_memcpy" || s.category == "gpu_memset") {
            ++kernels[pid];
        }
        if (s.category == "user_annotation" && pf.tracks.at(s.track).has_thread()) {
            ++ranges[pid];
        }
        for (const uint64_t id : s.flowIds) {
            flowPids[id].push_back(pid);
        }
    }
    for (size_t r = 0; r < m->job.ranks.size(); ++r) {
        const TraceData& d = m->job.ranks[r].trace.data;
        const auto pid = static_cast<int32_t>(r) + 1;
        EXPECT_EQ(kernels[pid], d.kernels.size()) << "rank " << r;
        EXPECT_EQ(ranges[pid], d.ranges.size()) << "rank " << r;
    }
    // The generator makes one gradient all-reduce per iteration on every rank.
    ASSERT_EQ(flowPids.size(), static_cast<size_t>(spec.iterations));
    for (auto& [id, pids] : flowPids) {
        std::sort(pids.begin(), pids.end());
        EXPECT_EQ(pids, (std::vector<int32_t>{1, 2, 3})) << "flow " << id;
    }
}

/// One rank with the kernels given as (start, end) on stream 7 of GPU 0.
trace::Job kernelJob(const std::vector<std::pair<int64_t, int64_t>>& kernels) {
    trace::RankTrace rt;
    rt.path = "hand.vscope";
    TraceData& d = rt.trace.data;
    d.header.rank = trace::RankId{0};
    const trace::StringId name = d.intern("k");
    for (const auto& [start, end] : kernels) {
        trace::KernelEvent k;
        k.startNs = start;
        k.endNs = end;
        k.stream = 7;
        k.name = name;
        d.kernels.append(k);
    }
    trace::Job job;
    job.ranks.push_back(std::move(rt));
    return job;
}

TEST(PerfettoExport, KernelsThatOverlapWithoutNestingGoOnAnOverlapTrack) {
    // [100, 200) and [150, 250) overlap; [110, 120) nests inside the first.
    auto m = modelOfJob(kernelJob({{100, 200}, {150, 250}, {110, 120}, {300, 400}}));
    ASSERT_TRUE(m);
    const PfTrace pf = replayPerfetto(exportPerfetto(*m));
    ASSERT_TRUE(pf.problems.empty()) << pf.problems.front();
    std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> byTrack;
    for (const PfSlice& s : pf.slices) {
        byTrack[pf.nameOf(s.track)].push_back({s.startNs, s.endNs});
    }
    for (auto& [name, v] : byTrack) {
        std::sort(v.begin(), v.end());
    }
    // Job time 0 is the first kernel's start (100).
    using V = std::vector<std::pair<uint64_t, uint64_t>>;
    EXPECT_EQ(byTrack["GPU 0 · stream 7"], (V{{0, 100}, {10, 20}, {200, 300}}));
    EXPECT_EQ(byTrack["GPU 0 · stream 7 (overlap 1)"], (V{{50, 150}}));
}

TEST(PerfettoExport, TheTracesNotesAreSlicesOnANotesTrack) {
    trace::Job job = kernelJob({{1000, 2000}});
    job.ranks[0].trace.data.annotations.push_back(
        {1500, 1800, trace::DeviceIndex{0}, "leak starts here", "alice"});
    auto m = modelOfJob(std::move(job));
    ASSERT_TRUE(m);
    const PfTrace pf = replayPerfetto(exportPerfetto(*m));
    ASSERT_TRUE(pf.problems.empty()) << pf.problems.front();
    std::vector<const PfSlice*> notes;
    for (const PfSlice& s : pf.slices) {
        if (pf.nameOf(s.track) == "notes") {
            notes.push_back(&s);
        }
    }
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0]->name, "leak starts here");
    EXPECT_EQ(notes[0]->startNs, 500u);  // job time 0 = the kernel's start, 1000
    EXPECT_EQ(notes[0]->endNs, 800u);
    EXPECT_EQ(notes[0]->stringArgs.at("author"), "alice");
}

TEST(PerfettoExport, AStreamThatFailsIsAnIoError) {
    auto m = modelOfJob(kernelJob({{0, 10}}));
    ASSERT_TRUE(m);
    std::ostringstream out;
    out.setstate(std::ios::badbit);
    const trace::Status s = writePerfettoTrace(*m, out);
    EXPECT_TRUE(
        refused(s, trace::ErrorCode::Io, {"the Perfetto trace could not be written in full"}));
}

TEST(PerfettoExportRealdata, BertCountersEqualTheProducersTotals) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    const nlohmann::json doc = testdata::loadGzJson(realdata::kBertTrace);
    // The producer's totals after each CUDA [memory] event, in time order (no two share a ts).
    std::vector<std::tuple<double, int64_t, int64_t>> producer;  // ts us, allocated, reserved
    for (const auto& e : testdata::eventsOf(doc)) {
        if (e.value("name", "") == "[memory]" && e["args"].value("Device Type", -1) == 1) {
            producer.emplace_back(e["ts"].get<double>(),
                                  e["args"]["Total Allocated"].get<int64_t>(),
                                  e["args"]["Total Reserved"].get<int64_t>());
        }
    }
    ASSERT_EQ(producer.size(), 218u);  // README: 218 CUDA [memory] events
    std::sort(producer.begin(), producer.end());
    auto job = trace::openJob({realdata::kBertTrace});
    ASSERT_TRUE(job.ok());
    auto m = modelOfJob(std::move(job).value());
    ASSERT_TRUE(m);
    const PfTrace pf = replayPerfetto(exportPerfetto(*m));
    ASSERT_TRUE(pf.problems.empty()) << pf.problems.front();
    const uint64_t allocated = pf.counterTrack(1, "GPU 0 allocated");
    const uint64_t reserved = pf.counterTrack(1, "GPU 0 reserved");
    ASSERT_NE(allocated, 0u);
    ASSERT_NE(reserved, 0u);
    // The first sample fixes the offset between the file's clock and job time; every other is
    // checked at the job time its ts maps to, and 1 ns before the next one.
    const uint64_t t0 = pf.counters.at(allocated).front().first;
    const double ts0 = std::get<0>(producer.front());
    for (size_t i = 0; i < producer.size(); ++i) {
        const auto [ts, wantA, wantR] = producer[i];
        const auto t = t0 + static_cast<uint64_t>(std::llround((ts - ts0) * 1000.0));
        EXPECT_EQ(pf.counterAt(allocated, t), wantA) << "event " << i;
        EXPECT_EQ(pf.counterAt(reserved, t), wantR) << "event " << i;
        if (i + 1 < producer.size()) {
            const double next = std::get<0>(producer[i + 1]);
            const auto before = t0 + static_cast<uint64_t>(std::llround((next - ts0) * 1000.0)) - 1;
            EXPECT_EQ(pf.counterAt(allocated, before), wantA) << "before event " << i + 1;
        }
    }
    int64_t peak = 0, producerPeak = 0;
    for (const auto& [t, v] : pf.counters.at(allocated)) {
        peak = std::max(peak, v);
    }
    for (const auto& [ts, a, r] : producer) {
        producerPeak = std::max(producerPeak, a);
    }
    EXPECT_EQ(peak, producerPeak);  // 96.6 MiB (README)
}

struct DlrmRank {
    int rank = -1;
    std::vector<std::pair<double, std::string>> nccl;  // (ts, function), by ts
    std::map<std::string, size_t> gpuOps;              // by category
    std::set<std::string> ncclOps;                     // "nccl:all_to_all", ... (CPU side)
};

std::vector<DlrmRank> readDlrmRanks() {
    std::vector<DlrmRank> out;
    std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
    archive_read_support_filter_all(a.get());
    archive_read_support_format_all(a.get());
    if (archive_read_open_filename(a.get(), realdata::kDlrmJob.c_str(), 1 << 16) != ARCHIVE_OK) {
        return out;
    }
    archive_entry* entry = nullptr;
    while (archive_read_next_header(a.get(), &entry) == ARCHIVE_OK) {
        if (!std::string(archive_entry_pathname(entry)).ends_with(".json")) {
            continue;
        }
        std::string text;
        char buf[1 << 16];
        la_ssize_t n = 0;
        while ((n = archive_read_data(a.get(), buf, sizeof buf)) > 0) {
            text.append(buf, static_cast<size_t>(n));
        }
        const nlohmann::json doc = nlohmann::json::parse(text);
        DlrmRank r;
        r.rank = doc["distributedInfo"]["rank"].get<int>();
        for (const auto& e : doc["traceEvents"]) {
            const std::string cat = e.value("cat", "");
            if (e.value("name", "").rfind("nccl:", 0) == 0) {
                r.ncclOps.insert(e["name"].get<std::string>());
            }
            if (e.value("ph", "") != "X" ||
                (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset")) {
                continue;
            }
            ++r.gpuOps[cat];
            const std::string name = e["name"].get<std::string>();
            if (cat == "kernel" && name.rfind("ncclKernel_", 0) == 0) {
                const std::string rest = name.substr(11);
                r.nccl.emplace_back(e["ts"].get<double>(), rest.substr(0, rest.find('_')));
            }
        }
        std::sort(r.nccl.begin(), r.nccl.end());
        out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(),
              [](const DlrmRank& x, const DlrmRank& y) { return x.rank < y.rank; });
    return out;
}

/// The real 8-rank dlrm job: its raw JSON as read here, its model, and the model's Perfetto export
/// read back.
class PerfettoDlrm : public ::testing::Test {
protected:
    void SetUp() override {
        VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
        raw = readDlrmRanks();
        ASSERT_EQ(raw.size(), 8u);
        auto job = trace::openJob({realdata::kDlrmJob});
        ASSERT_TRUE(job.ok());
        m = modelOfJob(std::move(job).value());
        ASSERT_TRUE(m);
        pf = replayPerfetto(exportPerfetto(*m));
        ASSERT_TRUE(pf.problems.empty()) << pf.problems.front();
    }
    std::vector<DlrmRank> raw;
    std::shared_ptr<const JobModel> m;
    PfTrace pf;
};

TEST_F(PerfettoDlrm, FlowsLinkTheSameCollectiveOnEveryRank) {
    // Per process, its collective slices in time order, and where each flow id sits.
    std::map<int32_t, std::vector<const PfSlice*>> collectives;
    for (const PfSlice& s : pf.slices) {
        if (s.category == "collective") {
            collectives[pf.pidOf(s.track)].push_back(&s);
        }
    }
    ASSERT_EQ(collectives.size(), 8u);
    std::map<uint64_t, std::map<int32_t, size_t>> flowAt;  // id -> pid -> position
    for (auto& [pid, slices] : collectives) {
        std::sort(slices.begin(), slices.end(),
                  [](const PfSlice* a, const PfSlice* b) { return a->startNs < b->startNs; });
        const DlrmRank& r = raw[static_cast<size_t>(m->ranks[size_t(pid - 1)].rank)];
        ASSERT_EQ(slices.size(), r.nccl.size()) << "pid " << pid;  // 8 NCCL kernels per rank
        // PyTorch runs all-to-all on NCCL's SendRecv kernel; this job calls no send or recv (its
        // NCCL ops are all_reduce and all_to_all), so each SendRecv kernel is an all-to-all.
        EXPECT_EQ(r.ncclOps, (std::set<std::string>{"nccl:all_reduce", "nccl:all_to_all"}));
        for (size_t k = 0; k < slices.size(); ++k) {
            const std::string function =
                r.nccl[k].second == "SendRecv" ? "AllToAll" : r.nccl[k].second;
            EXPECT_EQ(slices[k]->name, function) << "rank " << r.rank << " #" << k;
            // It is the k-th NCCL kernel: same time as that kernel's slice, 1 ns exact.
            // Copies for the lambda: clang 14 cannot capture structured bindings.
            const auto startNs = slices[k]->startNs;
            const auto rankPid = pid;
            const auto kernel = std::find_if(pf.slices.begin(), pf.slices.end(), [&](auto& s) {
                return s.startNs == startNs && pf.pidOf(s.track) == rankPid &&
                       s.name.rfind("ncclKernel_" + r.nccl[k].second, 0) == 0;
            });
            EXPECT_NE(kernel, pf.slices.end()) << "rank " << r.rank << " #" << k;
            ASSERT_EQ(slices[k]->flowIds.size(), 1u);
            EXPECT_EQ(flowAt[slices[k]->flowIds[0]].count(pid), 0u) << "a flow twice on a rank";
            flowAt[slices[k]->flowIds[0]][pid] = k;
        }
    }
    ASSERT_EQ(flowAt.size(), raw[0].nccl.size());
    for (const auto& [id, byPid] : flowAt) {
        ASSERT_EQ(byPid.size(), 8u) << "flow " << id;
        std::set<size_t> positions;
        size_t terminating = 0;
        for (const auto& [pid, k] : byPid) {
            positions.insert(k);
            terminating += collectives[pid][k]->terminates ? 1 : 0;
        }
        EXPECT_EQ(positions.size(), 1u) << "flow " << id << " links different collectives";
        EXPECT_EQ(terminating, 1u) << "flow " << id;
    }
}

TEST_F(PerfettoDlrm, KernelSlicesEqualTheTracesKernelCounts) {
    std::map<int32_t, std::map<std::string, size_t>> counted;
    for (const PfSlice& s : pf.slices) {
        if (pf.nameOf(s.track).find(" · stream ") != std::string::npos) {
            ++counted[pf.pidOf(s.track)][s.category];
        }
    }
    for (size_t i = 0; i < m->ranks.size(); ++i) {
        const auto pid = static_cast<int32_t>(i) + 1;
        const DlrmRank& r = raw[static_cast<size_t>(toInt(m->ranks[i].rank))];
        EXPECT_EQ(counted[pid], r.gpuOps) << "rank " << r.rank;
    }
}

}  // namespace
}  // namespace vramscope::analysis
