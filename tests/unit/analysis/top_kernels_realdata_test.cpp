// Top kernels on real Kineto traces. Expected per-name launches, summed and longest durations are
// recomputed here from the raw JSON (zlib / libarchive + nlohmann-json) over the events with cat
// "kernel" and ph "X", never through vramscope's importer; busy is this test's own union.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "realdata.h"
#include "realdata_json.h"
#include "realdata_paths.h"
#include "realdata_tar.h"
#include "vramscope/analysis/time/top_kernels.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::analysis {
namespace {

using testdata::eventsOf;
using testdata::loadGzJson;

/// One kernel name as the JSON has it: launches, summed and longest dur (us).
struct JsonKernel {
    size_t count = 0;
    double totalUs = 0;
    double maxUs = 0;
};

struct JsonKernels {
    std::map<std::string, JsonKernel> byName;
    double busyUs = 0;  ///< |union of [ts, ts + dur)| over the kernels
    size_t launches = 0;
};

JsonKernels kernelsOf(const nlohmann::json& doc) {
    JsonKernels out;
    std::vector<std::pair<double, double>> v;
    for (const auto& e : eventsOf(doc)) {
        if (e.value("cat", "") != "kernel" || e.value("ph", "") != "X" || !e.contains("name")) {
            continue;
        }
        const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
        JsonKernel& k = out.byName[e["name"].get<std::string>()];
        k.count += 1;
        k.totalUs += dur;
        k.maxUs = std::max(k.maxUs, dur);
        v.emplace_back(ts, ts + dur);
    }
    out.launches = v.size();
    std::sort(v.begin(), v.end());
    double start = 0, end = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i == 0 || v[i].first > end) {
            out.busyUs += i == 0 ? 0.0 : end - start;
            start = v[i].first;
            end = v[i].second;
        } else {
            end = std::max(end, v[i].second);
        }
    }
    out.busyUs += v.empty() ? 0.0 : end - start;
    return out;
}

/// The importer rounds each start and end to whole ns: 2 ns per launch at most, in us.
double launchSumToleranceUs(size_t launches) {
    return 0.002 * double(launches) + 0.001;
}

/// Checks the kernel rows of `t` (compute and communication: the JSON's cat "kernel") against
/// the JSON's own sums. `t` must be uncut (limit 0).
void expectMatches(const DeviceKernelTimes& t, const JsonKernels& e, const std::string& what) {
    ASSERT_FALSE(e.byName.empty()) << what;
    size_t rows = 0;
    for (const KernelTime& k : t.byName) {
        if (k.category != trace::KernelCategory::Compute &&
            k.category != trace::KernelCategory::Communication) {
            continue;
        }
        ++rows;
        const auto it = e.byName.find(k.name);
        ASSERT_NE(it, e.byName.end()) << what << ": " << k.name << " is not in the JSON";
        EXPECT_EQ(k.count, it->second.count) << what << ": " << k.name;
        EXPECT_NEAR(double(k.totalNs) / 1000.0, it->second.totalUs, launchSumToleranceUs(k.count))
            << what << ": " << k.name;
        EXPECT_NEAR(double(k.maxNs) / 1000.0, it->second.maxUs, 0.002) << what << ": " << k.name;
    }
    EXPECT_EQ(rows, e.byName.size()) << what;
    // Sorted by total, largest first.
    for (size_t i = 1; i < t.byName.size(); ++i) {
        EXPECT_GE(t.byName[i - 1].totalNs, t.byName[i].totalNs) << what;
    }
}

TEST(TopKernelsRealdata, BertSmallPerNameTotalsEqualTheJsonSums) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kBertTrace);
    const nlohmann::json doc = loadGzJson(realdata::kBertTrace);
    const JsonKernels e = kernelsOf(doc);
    ASSERT_EQ(e.launches, 60u);  // 60 kernels of 11 names on GPU 0 (counted in the file)
    auto t = trace::openTrace(realdata::kBertTrace);
    ASSERT_TRUE(t.ok()) << t.error().message;
    const auto all = topKernels(t->data, 0);
    ASSERT_EQ(all.size(), 1u);
    expectMatches(all[0], e, "bert");
    // The one gpu_memcpy of the file is the memcpy category; busy also covers it.
    ASSERT_FALSE(all[0].byCategory.empty());
    EXPECT_EQ(all[0].byCategory[0].name, "compute");
    EXPECT_GE(double(all[0].busyNs) / 1000.0, e.busyUs - launchSumToleranceUs(e.launches));
    // The limit: 20 rows > 11 names, nothing cut; 5 rows keep the same first five.
    const DeviceKernelTimes cut = topKernels(t->data, 5)[0];
    ASSERT_EQ(cut.byName.size(), 5u);
    EXPECT_EQ(cut.otherNames, all[0].byName.size() - 5);
    int64_t rest = 0;
    for (size_t i = 5; i < all[0].byName.size(); ++i) {
        rest += all[0].byName[i].totalNs;
    }
    EXPECT_EQ(cut.otherTotalNs, rest);
}

TEST(TopKernelsRealdata, DlrmEveryRankPerNameTotalsAndNcclTimeEqualTheJson) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
    const std::map<int, nlohmann::json> docs = testdata::jsonByRank(realdata::kDlrmJob);
    ASSERT_EQ(docs.size(), 8u);
    auto job = trace::openJob({realdata::kDlrmJob});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 8u);
    for (const trace::RankTrace& rt : job->ranks) {
        const int rank = toInt(rt.trace.data.header.rank);
        const std::string what = "dlrm rank " + std::to_string(rank);
        ASSERT_EQ(docs.count(rank), 1u) << what;
        const JsonKernels e = kernelsOf(docs.at(rank));
        const auto all = topKernels(rt.trace.data, 0);
        ASSERT_EQ(all.size(), 1u) << what;
        expectMatches(all[0], e, what);
        // The communication category: the JSON's kernels whose name holds "nccl".
        double ncclUs = 0;
        size_t ncclLaunches = 0;
        for (const auto& [name, k] : e.byName) {
            if (name.find("nccl") != std::string::npos) {
                ncclUs += k.totalUs;
                ncclLaunches += k.count;
            }
        }
        ASSERT_GT(ncclLaunches, 0u) << what;
        const auto comm =
            std::find_if(all[0].byCategory.begin(), all[0].byCategory.end(),
                         [](const KernelTime& c) { return c.name == "communication"; });
        ASSERT_NE(comm, all[0].byCategory.end()) << what;
        EXPECT_EQ(comm->count, ncclLaunches) << what;
        EXPECT_NEAR(double(comm->totalNs) / 1000.0, ncclUs, launchSumToleranceUs(ncclLaunches))
            << what;
    }
}

}  // namespace
}  // namespace vramscope::analysis
