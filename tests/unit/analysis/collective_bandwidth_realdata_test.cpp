// Bus bandwidth of every NCCL kernel of real Kineto traces, recomputed here from the JSON fields
// (read with nlohmann-json, sharing no code with the importer) and the nccl-tests formula written
// out below, against what the importer and collectiveBandwidth give:
//   algBw = traffic bytes / duration; busBw = algBw x factor (nccl-tests doc/PERFORMANCE.md)
//   all-reduce: traffic = message, factor 2(n-1)/n
//   all-to-all: traffic = message (the whole send buffer), factor (n-1)/n
//   broadcast:  traffic = message, factor 1
// nccl_data.json.gz: message = "In msg nelems" x size of "dtype", n = "Group size".
// dlrm (8 ranks, 2023): kernels carry no sizes; the message is the first "Input Dims" tensor x
// size of its "Input type" of the "nccl:<collective>" op enclosing the kernel's launch call on the
// launching thread, n = distributedInfo.world_size (no process group is recorded).
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "vramscope/analysis/collectives/collective_bandwidth.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

using testdata::loadGzJson;

/// One NCCL kernel as recomputed: start and duration (us, as written), expected busBw (GB/s).
struct ExpectedNcclKernel {
    double ts = 0, dur = 0;
    std::string function;
    double busbw = 0;
    uint64_t bytes = 0;
};

/// busBw in GB/s of `function` ("allreduce"/"all_reduce", "all_to_all", "broadcast") moving
/// `message` bytes over n ranks in `durUs` microseconds.
double expectedBusbw(std::string function, double message, int n, double durUs) {
    std::erase(function, '_');
    double factor = 0;
    if (function == "allreduce") {
        factor = 2.0 * (n - 1) / n;
    } else if (function == "alltoall") {
        factor = double(n - 1) / n;
    } else if (function == "broadcast") {
        factor = 1.0;
    }
    const double algbw = message / (durUs * 1e-6) / 1e9;  // bytes per second / 1e9
    return algbw * factor;
}

bool isNcclKernel(const nlohmann::json& e) {
    return e.value("cat", "") == "kernel" && e.value("name", "").find("nccl") != std::string::npos;
}

/// The importer's occurrences of one input in start order against `expected` in start order.
void compare(const CollectiveBandwidthReport& r, size_t input,
             std::vector<ExpectedNcclKernel> expected, const std::string& what) {
    std::vector<const CollectiveBandwidth*> got;
    for (const CollectiveBandwidth& o : r.occurrences) {
        if (o.input == input) {
            got.push_back(&o);
        }
    }
    std::sort(expected.begin(), expected.end(),
              [](const ExpectedNcclKernel& a, const ExpectedNcclKernel& b) { return a.ts < b.ts; });
    ASSERT_EQ(got.size(), expected.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
        const CollectiveBandwidth& o = *got[i];
        const ExpectedNcclKernel& e = expected[i];
        ASSERT_TRUE(o.busbwGBps.has_value()) << what << " kernel " << i << " " << o.function;
        EXPECT_EQ(o.bytes, e.bytes) << what << " kernel " << i;
        EXPECT_NEAR(*o.busbwGBps, e.busbw, 1e-6 * e.busbw) << what << " kernel " << i;
        EXPECT_NEAR(double(o.durationNs), e.dur * 1000.0, 1.0) << what << " kernel " << i;
        EXPECT_EQ(o.timing, trace::CollectiveTiming::Kernel);
    }
}

TEST(CollectiveBandwidthRealData, EveryNcclKernelOfNcclDataHasTheFormulaBusBw) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kNcclTrace);
    const nlohmann::json doc = loadGzJson(realdata::kNcclTrace);
    const std::map<std::string, uint64_t> width{{"Float", 4}, {"Long", 8}};  // c10 ScalarType
    std::vector<ExpectedNcclKernel> expected;
    for (const auto& e : testdata::eventsOf(doc)) {
        if (!isNcclKernel(e)) {
            continue;
        }
        const auto& a = e["args"];
        const uint64_t message = a["In msg nelems"].get<uint64_t>() * width.at(a["dtype"]);
        const double dur = e["dur"].get<double>();
        expected.push_back(
            {e["ts"].get<double>(), dur, a["Collective name"],
             expectedBusbw(a["Collective name"], double(message), a["Group size"].get<int>(), dur),
             message});
    }
    ASSERT_EQ(expected.size(), 21u);  // 15 all-reduce + 6 broadcast kernels in the file
    auto job = trace::openJob({realdata::kNcclTrace});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    auto analysed = analyzeJob(rankInputs(*job));
    ASSERT_TRUE(analysed.ok());
    compare(analysed->bandwidth, 0, expected, "nccl_data");
    // The kernels are ncclKernel_<Func>_RING_LL_... (NCCL 2.17): the algorithm is the name's,
    // the protocol is not taken (the LL kernel runs every protocol).
    for (const CollectiveBandwidth& o : analysed->bandwidth.occurrences) {
        EXPECT_EQ(o.algorithm, "RING");
        EXPECT_EQ(o.protocol, "");
    }
}

/// The expected busBw of every NCCL kernel of one dlrm rank.
std::vector<ExpectedNcclKernel> dlrmExpected(const nlohmann::json& doc) {
    const int n = doc["distributedInfo"]["world_size"].get<int>();
    const std::map<std::string, uint64_t> width{{"float", 4}, {"long int", 8}, {"int", 4}};
    std::map<int64_t, std::pair<double, std::string>> launches;  // correlation -> (ts, tid)
    struct Op {
        std::string tid, name;
        double start = 0, end = 0;
        uint64_t bytes = 0;
    };
    std::vector<Op> ops;
    for (const auto& e : doc["traceEvents"]) {
        const std::string cat = e.value("cat", "");
        const std::string name = e.value("name", "");
        if (cat == "cuda_runtime" && e.contains("args") && e["args"].contains("correlation")) {
            launches[e["args"]["correlation"].get<int64_t>()] = {e["ts"].get<double>(),
                                                                 e["tid"].dump()};
        } else if (name.rfind("nccl:", 0) == 0) {
            const auto& dims = e["args"]["Input Dims"][0];
            uint64_t elems = 1;
            for (const auto& d : dims) {
                elems *= d.get<uint64_t>();
            }
            const double ts = e["ts"].get<double>();
            ops.push_back({e["tid"].dump(), name.substr(5), ts, ts + e["dur"].get<double>(),
                           elems * width.at(e["args"]["Input type"][0])});
        }
    }
    std::vector<ExpectedNcclKernel> out;
    for (const auto& e : doc["traceEvents"]) {
        if (!isNcclKernel(e)) {
            continue;
        }
        const auto l = launches.find(e["args"]["correlation"].get<int64_t>());
        EXPECT_NE(l, launches.end());
        const Op* op = nullptr;
        for (const Op& o : ops) {
            if (l != launches.end() && o.tid == l->second.second && o.start <= l->second.first &&
                l->second.first <= o.end) {
                op = &o;
            }
        }
        EXPECT_NE(op, nullptr) << e["name"];
        if (op == nullptr) {
            continue;
        }
        const double dur = e["dur"].get<double>();
        out.push_back({e["ts"].get<double>(), dur, op->name,
                       expectedBusbw(op->name, double(op->bytes), n, dur), op->bytes});
    }
    return out;
}

std::vector<nlohmann::json> readDlrmDocs() {
    std::vector<nlohmann::json> out;
    std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
    archive_read_support_filter_all(a.get());
    archive_read_support_format_all(a.get());
    if (archive_read_open_filename(a.get(), realdata::kDlrmJob.c_str(), 1 << 16) != ARCHIVE_OK) {
        return out;
    }
    archive_entry* entry = nullptr;
    while (archive_read_next_header(a.get(), &entry) == ARCHIVE_OK) {
        const std::string name = archive_entry_pathname(entry);
        if (!name.ends_with(".json")) {
            continue;
        }
        std::string text;
        char buf[1 << 16];
        la_ssize_t got = 0;
        while ((got = archive_read_data(a.get(), buf, sizeof buf)) > 0) {
            text.append(buf, size_t(got));
        }
        out.push_back(nlohmann::json::parse(text));
    }
    return out;
}

TEST(CollectiveBandwidthRealData, EveryNcclKernelOfTheEightDlrmRanksHasTheFormulaBusBw) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
    std::map<int, std::vector<ExpectedNcclKernel>> expected;  // by rank
    for (const nlohmann::json& doc : readDlrmDocs()) {
        expected[doc["distributedInfo"]["rank"].get<int>()] = dlrmExpected(doc);
    }
    ASSERT_EQ(expected.size(), 8u);
    auto job = trace::openJob({realdata::kDlrmJob});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    const std::vector<RankInput> inputs = rankInputs(*job);
    auto analysed = analyzeJob(inputs);
    ASSERT_TRUE(analysed.ok());
    size_t kernels = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const int rank = toInt(inputs[i].rank);
        ASSERT_EQ(expected.count(rank), 1u) << rank;
        kernels += expected[rank].size();
        compare(analysed->bandwidth, i, expected[rank], "dlrm rank " + std::to_string(rank));
    }
    EXPECT_EQ(kernels, 64u);  // 8 NCCL kernels per rank
    // The collectives are matched by order (the 2023 trace has no sequence numbers): every
    // all-reduce / all-to-all occurrence has a wait, and the job's groups count each collective
    // once, not once per rank.
    size_t groupCollectives = 0, groupOccurrences = 0;
    for (const CollectiveGroup& g : analysed->bandwidth.groups) {
        groupCollectives += g.count;
        groupOccurrences += g.occurrences;
    }
    EXPECT_EQ(groupOccurrences, 64u);
    EXPECT_EQ(groupCollectives, 8u);
    // A V100 (SXM2, NVLink 2, hybrid cube-mesh) has no documented default: without
    // --link-bandwidth no verdict but one asking for it; with one, a verdict with figures.
    for (const CommunicationVerdict& v : analysed->bandwidth.verdicts) {
        if (v.limit == CommunicationLimit::WaitingOnRank) {
            continue;  // waiting needs no link peak
        }
        EXPECT_EQ(v.limit, CommunicationLimit::Unknown) << v.evidence;
        EXPECT_NE(v.missing.find("--link-bandwidth"), std::string::npos) << v.missing;
    }
    JobAnalysisOptions options;
    options.bandwidth.linkGBps = 150.0;
    auto withLink = analyzeJob(inputs, options);
    ASSERT_TRUE(withLink.ok());
    ASSERT_EQ(withLink->bandwidth.verdicts.size(), 8u);
    for (const CommunicationVerdict& v : withLink->bandwidth.verdicts) {
        EXPECT_NE(v.limit, CommunicationLimit::Unknown) << v.missing;
        EXPECT_EQ(v.linkGBps, 150.0);
    }
}

}  // namespace
}  // namespace vramscope::analysis
