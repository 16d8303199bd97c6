// Nsight Systems importer on the two real exports in ../shared/realdata (schema 2.9.1 from nsys
// 2022.2, schema 3.13.2 from nsys 2024.5). Every expected value is computed here with the test's
// own SQL over the same file; personal records of the reports are read only to check that none
// of their values comes out, and are never printed.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "nsys_test_support.h"
#include "realdata.h"
#include "realdata_paths.h"
#include "refusal.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

using ::vramscope::test::refused;
using vramscope_test::NsysTempDir;
using vramscope_test::readAll;
using vramscope_test::SqlDb;

const std::string kCloverleaf =
    realdata::kPipitDir + "cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite";
const std::string kSaxpy = realdata::kPipitDir + "saxpy-mpi-cuda_nsys_perlmutter0.sqlite";

/// Count of rows of an optional table (0 when the export lacks it).
int64_t countRows(SqlDb& db, const std::string& table, const std::string& where = "") {
    return db.hasTable(table) ? db.integer("SELECT count(*) FROM " + table +
                                           (where.empty() ? "" : " WHERE ") + where)
                              : 0;
}

size_t countCategory(const TraceData& d, KernelCategory c) {
    return static_cast<size_t>(std::count(d.kernels.category.begin(), d.kernels.category.end(), c));
}

/// Checks one real export against the test's own SQL over it.
void checkAgainstSql(const std::string& path) {
    SqlDb db(path, true);
    auto t = openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const TraceData& d = t->data;
    const int64_t session = db.integer("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME");
    ASSERT_GT(session, 0);

    const int64_t kernels = countRows(db, "CUPTI_ACTIVITY_KIND_KERNEL");
    const int64_t copies = countRows(db, "CUPTI_ACTIVITY_KIND_MEMCPY");
    const int64_t sets = countRows(db, "CUPTI_ACTIVITY_KIND_MEMSET");
    const int64_t ranges =
        countRows(db, "NVTX_EVENTS", "eventType IN (59, 60) AND end IS NOT NULL AND end >= start");
    EXPECT_EQ(
        countCategory(d, KernelCategory::Compute) + countCategory(d, KernelCategory::Communication),
        static_cast<size_t>(kernels));
    EXPECT_EQ(countCategory(d, KernelCategory::Memcpy), static_cast<size_t>(copies));
    EXPECT_EQ(countCategory(d, KernelCategory::Memset), static_cast<size_t>(sets));
    EXPECT_EQ(d.ranges.size(), static_cast<size_t>(ranges));

    // Time span of the GPU work, absolute with the session start.
    std::string starts =
        "SELECT min(s), max(e) FROM (SELECT start AS s, end AS e FROM "
        "CUPTI_ACTIVITY_KIND_KERNEL";
    for (const char* table : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
        if (db.hasTable(table)) {
            starts += std::string(" UNION ALL SELECT start, end FROM ") + table;
        }
    }
    const auto span = db.rows(starts + ")");
    ASSERT_EQ(span.size(), 1u);
    ASSERT_FALSE(d.kernels.startNs.empty());
    EXPECT_EQ(*std::min_element(d.kernels.startNs.begin(), d.kernels.startNs.end()),
              std::stoll(span[0][0]) + session);
    EXPECT_EQ(*std::max_element(d.kernels.endNs.begin(), d.kernels.endNs.end()),
              std::stoll(span[0][1]) + session);
    if (ranges > 0) {
        const auto r = db.rows(
            "SELECT min(start), max(end) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS "
            "NOT NULL");
        EXPECT_EQ(*std::min_element(d.ranges.startNs.begin(), d.ranges.startNs.end()),
                  std::stoll(r[0][0]) + session);
        EXPECT_EQ(*std::max_element(d.ranges.endNs.begin(), d.ranges.endNs.end()),
                  std::stoll(r[0][1]) + session);
    }

    // Launch times: kernels whose CUDA API call (same correlation id, same process) is there;
    // the 2022 export also has a CUDA-backtrace row (eventClass 67) per call with that id.
    const auto launches = db.rows(
        "SELECT count(*), sum(s) FROM (SELECT min(r.start) AS s FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "AS k JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId AND "
        "(r.globalTid >> 24) = (k.globalPid >> 24) AND r.eventClass <> 67 GROUP BY k.rowid)");
    int64_t withLaunch = 0;
    int64_t launchSum = 0;
    for (size_t i = 0; i < d.kernels.size(); ++i) {
        const KernelCategory c = d.kernels.category[i];
        if (c != KernelCategory::Memcpy && c != KernelCategory::Memset &&
            d.kernels.launchNs[i] >= 0) {
            ++withLaunch;
            launchSum += d.kernels.launchNs[i] - session;
        }
    }
    EXPECT_EQ(withLaunch, std::stoll(launches[0][0]));
    EXPECT_EQ(launchSum, std::stoll(launches[0][1]));

    // The GPUs the process used (its GPU activity's deviceId), described by TARGET_INFO_GPU.
    std::string used = "SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL";
    for (const char* table : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
        if (db.hasTable(table)) {
            used += std::string(" UNION SELECT deviceId FROM ") + table;
        }
    }
    const auto gpus =
        db.rows("SELECT id, name, totalMemory, uuid FROM TARGET_INFO_GPU WHERE id IN (" + used +
                ") ORDER BY id");
    ASSERT_EQ(d.header.devices.size(), gpus.size());
    ASSERT_FALSE(gpus.empty());
    for (size_t i = 0; i < gpus.size(); ++i) {
        const DeviceInfo& dev = d.header.devices[i];
        EXPECT_EQ(toInt(dev.index), std::stoi(gpus[i][0]));
        EXPECT_EQ(dev.name, gpus[i][1]);
        EXPECT_EQ(dev.totalMemoryBytes, std::stoull(gpus[i][2]));
        EXPECT_EQ(dev.uuid, gpus[i][3]);
    }
    const std::string* listed = nullptr;
    for (const auto& [k, v] : d.header.captureSettings) {
        listed = k == "nsys.gpus_in_report" ? &v : listed;
    }
    ASSERT_NE(listed, nullptr);
    EXPECT_EQ(listed->substr(0, listed->find(' ')),
              std::to_string(db.integer("SELECT count(*) FROM TARGET_INFO_GPU")));
    // The process id of the kernels' globalPid (bits 24-47).
    EXPECT_EQ(d.header.pid, db.integer("SELECT (globalPid >> 24) & 16777215 FROM "
                                       "CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1"));

    // Personal records (the environment, the user, host and paths of the export) never come out.
    std::vector<std::string> secrets;
    for (const auto& row : db.rows("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN "
                                   "('Hostname', 'TargetInstallDir', "
                                   "'InjectionFilesStoragePath')")) {
        secrets.push_back(row[0]);
    }
    const std::string meta =
        db.hasTable("META_DATA_EXPORT") ? "META_DATA_EXPORT" : "EXPORT_META_DATA";
    for (const auto& row : db.rows("SELECT value FROM " + meta +
                                   " WHERE name IN ('EXPORT_USER', 'EXPORT_HOST') OR name LIKE "
                                   "'%PATH_ABS'")) {
        secrets.push_back(row[0]);
    }
    EXPECT_GE(secrets.size(), 4u);
    std::string everything = d.header.producer + d.header.host + d.header.jobId;
    for (const auto& s : d.strings) {
        everything += s + "\n";
    }
    for (const auto& [k, v] : d.header.captureSettings) {
        everything += k + "=" + v + "\n";
    }
    for (size_t i = 0; i < secrets.size(); ++i) {
        if (secrets[i].size() >= 4) {
            EXPECT_EQ(everything.find(secrets[i]), std::string::npos)
                << "personal record " << i << " of the report came out";
        }
    }
}

TEST(NsysRealdata, CloverleafMatchesItsOwnSql) {
    VRAMSCOPE_REQUIRE_INPUT(kCloverleaf);
    checkAgainstSql(kCloverleaf);
    auto t = openTrace(kCloverleaf);
    ASSERT_TRUE(t.ok());
    // Schema 3.13.2: no NVTX or memset table, said so in the header.
    const auto& s = t->data.header.captureSettings;
    auto has = [&](const std::string& key) {
        return std::any_of(s.begin(), s.end(), [&](const auto& kv) { return kv.first == key; });
    };
    EXPECT_TRUE(has("nsys.absent.NVTX_EVENTS"));
    EXPECT_TRUE(has("nsys.absent.CUPTI_ACTIVITY_KIND_MEMSET"));
    EXPECT_EQ(t->data.header.rank, kUnknownRank);  // no MPI in this report
}

TEST(NsysRealdata, SaxpyMatchesItsOwnSqlAndIsMpiRankZero) {
    VRAMSCOPE_REQUIRE_INPUT(kSaxpy);
    checkAgainstSql(kSaxpy);
    SqlDb db(kSaxpy, true);
    // nsys named the MPI thread "MPI Rank N" (ThreadNames and an NVTX thread-name event).
    const auto named = db.rows(
        "SELECT s.value FROM ThreadNames AS t JOIN StringIds AS s ON s.id = t.nameId WHERE "
        "s.value LIKE 'MPI Rank %'");
    ASSERT_EQ(named.size(), 1u);
    auto t = openTrace(kSaxpy);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->data.header.rank, RankId{std::stoi(named[0][0].substr(9))});
    // MPI_Init .. MPI_Finalize come from the "MPI" domain through textId.
    bool init = false;
    for (size_t i = 0; i < t->data.ranges.size(); ++i) {
        init = init || t->data.string(t->data.ranges.name[i]) == "MPI_Init";
    }
    EXPECT_TRUE(init);
}

TEST(NsysRealdata, ACopyCutAtHalfIsAClearErrorNamingTheFile) {
    VRAMSCOPE_REQUIRE_INPUT(kCloverleaf);
    NsysTempDir dir;
    const std::string bytes = readAll(kCloverleaf);
    const std::string cut = dir.file("cut.sqlite");
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    auto t = openTrace(cut);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().code, ErrorCode::Truncated);
    EXPECT_EQ(t.error().file, cut);
    EXPECT_NE(t.error().message.find("cut"), std::string::npos) << t.error().message;
    auto fromBytes = openTraceBytes(bytes.substr(0, bytes.size() / 2), "cut.sqlite");
    EXPECT_TRUE(refused(fromBytes, ErrorCode::Truncated, {"cut.sqlite", "cut"}));
}

TEST(NsysRealdata, BothReportsOpenAsOneJobFromTheirDirectory) {
    VRAMSCOPE_REQUIRE_INPUT(kSaxpy);
    VRAMSCOPE_REQUIRE_INPUT(kCloverleaf);
    auto job =
        openJob({realdata::kPipitDir});  // picks up the .sqlite beside it, not the sub-directory
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 1u);
    EXPECT_EQ(job->ranks[0].path, realdata::kPipitDir + "saxpy-mpi-cuda_nsys_perlmutter0.sqlite");
    auto both = openJob({kSaxpy, kCloverleaf});
    ASSERT_TRUE(both.ok());
    EXPECT_EQ(both->ranks.size(), 2u);
}

}  // namespace
}  // namespace vramscope::trace
