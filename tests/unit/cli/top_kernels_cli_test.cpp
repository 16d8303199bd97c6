// `report --json` top_kernels and the text table on the real 8-rank dlrm job. Expected figures
// come from the raw JSON of each rank (libarchive + nlohmann-json): per kernel name the launches
// and summed dur of its GPU events (cat kernel, gpu_memcpy, gpu_memset), and busy as this test's
// own union of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_command.h"
#include "cli_run.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "realdata_tar.h"

namespace vramscope::app {
namespace {

using test::CliRun;
using test::run;

struct RawName {
    size_t count = 0;
    double totalUs = 0;
};

struct RawRank {
    std::map<std::string, RawName> byName;
    double busyUs = 0;
    double totalUs = 0;
    size_t launches = 0;
};

RawRank rawRank(const nlohmann::json& doc) {
    RawRank r;
    std::vector<std::pair<double, double>> v;
    for (const auto& e : doc.at("traceEvents")) {
        const std::string cat = e.value("cat", "");
        if ((cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") ||
            e.value("ph", "") != "X") {
            continue;
        }
        const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
        RawName& n = r.byName[e["name"].get<std::string>()];
        n.count += 1;
        n.totalUs += dur;
        r.totalUs += dur;
        v.emplace_back(ts, ts + dur);
    }
    r.launches = v.size();
    std::sort(v.begin(), v.end());
    double start = 0, end = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0 && v[i].first <= end) {
            end = std::max(end, v[i].second);
            continue;
        }
        r.busyUs += i == 0 ? 0.0 : end - start;
        start = v[i].first;
        end = v[i].second;
    }
    r.busyUs += v.empty() ? 0.0 : end - start;
    return r;
}

/// Whole-ns rounding of each start and end by the importer: 2 ns per launch at most.
double slackNs(size_t launches) {
    return 2.0 * double(launches) + 1.0;
}

TEST(TopKernelsCli, ReportJsonListsTheTop20OfEveryRankWithTheRestAsOther) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
    const std::map<int, nlohmann::json> docs = testdata::jsonByRank(realdata::kDlrmJob);
    ASSERT_EQ(docs.size(), 8u);
    const CliRun r = run({"report", "--json", realdata::kDlrmJob});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    size_t checked = 0;
    for (const auto& d : j.at("devices")) {
        const int rank = d.at("rank").get<int>();
        ASSERT_EQ(docs.count(rank), 1u);
        const RawRank raw = rawRank(docs.at(rank));
        const auto& t = d.at("top_kernels");
        ASSERT_TRUE(t.is_object()) << "rank " << rank;
        const double busy = t.at("busy_ns").get<double>();
        EXPECT_NEAR(busy, raw.busyUs * 1000.0, slackNs(raw.launches)) << "rank " << rank;
        EXPECT_EQ(t.at("launches").get<size_t>(), raw.launches);
        EXPECT_EQ(t.at("names").get<size_t>(), raw.byName.size());
        const auto& rows = t.at("kernels");
        ASSERT_EQ(rows.size(), std::min<size_t>(20, raw.byName.size()));
        double listedNs = 0;
        size_t listedCount = 0;
        for (size_t i = 0; i < rows.size(); ++i) {
            const auto& k = rows[i];
            const std::string name = k.at("name").get<std::string>();
            ASSERT_EQ(raw.byName.count(name), 1u) << name;
            const RawName& e = raw.byName.at(name);
            const double total = k.at("total_ns").get<double>();
            EXPECT_EQ(k.at("count").get<size_t>(), e.count) << name;
            EXPECT_NEAR(total, e.totalUs * 1000.0, slackNs(e.count)) << name;
            EXPECT_DOUBLE_EQ(k.at("busy_share").get<double>(), total / busy) << name;
            EXPECT_LE(k.at("max_ns").get<double>(), total) << name;
            if (i > 0) {
                EXPECT_GE(rows[i - 1].at("total_ns").get<double>(), total) << name;
            }
            // Nothing left out is larger than what is listed last.
            if (i + 1 == rows.size()) {
                for (const auto& [n, x] : raw.byName) {
                    bool listed = false;
                    for (const auto& row : rows) {
                        listed |= row.at("name").get<std::string>() == n;
                    }
                    if (!listed) {
                        EXPECT_LE(x.totalUs * 1000.0, total + slackNs(x.count)) << n;
                    }
                }
            }
            listedNs += total;
            listedCount += e.count;
        }
        const auto& other = t.at("other");
        EXPECT_EQ(other.at("names").get<size_t>(), raw.byName.size() - rows.size());
        EXPECT_EQ(other.at("count").get<size_t>(), raw.launches - listedCount);
        EXPECT_NEAR(other.at("total_ns").get<double>(), raw.totalUs * 1000.0 - listedNs,
                    slackNs(raw.launches));
        // The categories: communication is the NCCL kernels of the raw JSON.
        double ncclUs = 0;
        for (const auto& [n, x] : raw.byName) {
            ncclUs += n.rfind("nccl", 0) == 0 ? x.totalUs : 0.0;
        }
        bool sawCommunication = false;
        for (const auto& c : t.at("categories")) {
            if (c.at("category") == "communication") {
                sawCommunication = true;
                EXPECT_NEAR(c.at("total_ns").get<double>(), ncclUs * 1000.0, slackNs(raw.launches));
            }
        }
        EXPECT_TRUE(sawCommunication) << "rank " << rank;
        ++checked;
    }
    EXPECT_EQ(checked, 8u);
}

TEST(TopKernelsCli, TextReportShowsTheTop10PerGpuAndTheRest) {
    VRAMSCOPE_REQUIRE_INPUT(realdata::kDlrmJob);
    const CliRun r = run({"report", realdata::kDlrmJob});
    ASSERT_EQ(r.code, kExitSuccess) << r.err;
    size_t tables = 0;
    for (size_t at = r.out.find("  top kernels: "); at != std::string::npos;
         at = r.out.find("  top kernels: ", at + 1)) {
        ++tables;
        const size_t header = r.out.find("    kernel ", at);
        ASSERT_NE(header, std::string::npos);
        const size_t other = r.out.find("    other ", header);
        ASSERT_NE(other, std::string::npos);
        // 10 rows between the header line and the "other N kernels" line.
        const std::string rows = r.out.substr(header, other - header);
        EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 11) << rows;
        // "top kernels: N kernels in ...": N is a rank's distinct names (77 or 81 in the raw
        // JSON), and the rest are N - 10.
        const size_t names = std::stoul(r.out.substr(at + 15));
        EXPECT_TRUE(names == 77 || names == 81) << names;
        const std::string expected = "    other " + std::to_string(names - 10) + " kernels: ";
        EXPECT_EQ(r.out.compare(other, expected.size(), expected), 0) << r.out.substr(other, 80);
    }
    EXPECT_EQ(tables, 8u);
    EXPECT_NE(r.out.find("shares sum above 100 %"), std::string::npos);
}

}  // namespace
}  // namespace vramscope::app
