// Nsight Systems SQLite importer on small reports built here with the documented schema: kernels,
// copies, launches, NVTX nesting and domains, GPU memory and its peak, several processes, old
// schemas, secrets that must never come out, and damaged files.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "nsys_test_support.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;
using vramscope_test::globalId;
using vramscope_test::NsysTempDir;
using vramscope_test::readAll;
using vramscope_test::SqlDb;

constexpr int64_t kSessionStart = 1'700'000'000'000'000'000;
constexpr int64_t kPid = 4242;

/// A report of one process (pid 4242): two kernels (one NCCL), one copy, one memset, launches,
/// NVTX push/pop nested two deep, a start/end range, a mark, an NCCL-domain range.
void buildSmallReport(SqlDb& db) {
    db.exec(vramscope_test::kNsysReportSchema);
    const std::string gpid = std::to_string(globalId(kPid));
    const std::string gtid = std::to_string(globalId(kPid, 4243));
    db.exec(
        "INSERT INTO StringIds VALUES (1, 'void gemm<float>(float*, int)'), (2, 'gemm'), "
        "(3, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)'), "
        "(4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), (5, 'cudaLaunchKernel'), "
        "(6, 'step'), (7, 'MPI Rank 3');"
        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2'), "
        "('EXPORT_PRODUCT_VERSION', '2024.5.1.113'), ('EXPORT_USER', 'someone');"
        "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (" +
        std::to_string(kSessionStart) +
        ", 'x', 'y');"
        "INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'NVIDIA H200', '0000:01:00.0', 150000000000, "
        "'uuid-0', 1), (1, 1, 'NVIDIA H200', '0000:02:00.0', 150000000000, 'uuid-1', 0);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900, 950, 0, " +
        gtid + ", 11, 5, 0, NULL), (1900, 1950, 0, " + gtid + ", 12, 5, 0, NULL);" +
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1500, 0, 1, NULL, 7, 11, " + gpid +
        ", 1, 2, NULL, 1, 1), (2000, 2600, 0, 1, NULL, 8, 12, " + gpid + ", 3, 4, NULL, 1, 1);" +
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (3000, 3100, 0, 1, 7, 13, " + gpid +
        ", 4096, 1, 0, 2);" +
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (3200, 3300, 0, 1, 7, 14, " + gpid +
        ", 0, 512, 2);" +
        // NVTX: domain NCCL (id 9), push/pop "step" > "inner", start/end "io", mark, thread name.
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) VALUES "
        "(10, NULL, 75, 'NCCL', " +
        gtid + ", NULL, 9), (20, NULL, 39, 'MPI Rank 3', " + gtid + ", NULL, 0), (100, 5000, 59, " +
        "NULL, " + gtid + ", 6, 0), (200, 800, 59, 'inner', " + gtid + ", NULL, 0), (900, 4000, " +
        "60, 'io', " + gtid + ", NULL, 0), (950, NULL, 34, 'a mark', " + gtid + ", NULL, 0), " +
        "(1990, 2700, 59, 'ncclAllReduce', " + gtid + ", NULL, 9), (6000, NULL, 59, 'open', " +
        gtid + ", NULL, 0);");
}

const std::string* setting(const FileHeader& h, const std::string& key) {
    for (const auto& [k, v] : h.captureSettings) {
        if (k == key) {
            return &v;
        }
    }
    return nullptr;
}

TEST(NsysImporter, MapsKernelsCopiesLaunchesAndRanges) {
    NsysTempDir dir;
    const std::string path = dir.file("small.sqlite");
    {
        SqlDb db(path);
        buildSmallReport(db);
    }
    auto t = openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const TraceData& d = t->data;
    EXPECT_EQ(d.header.pid, kPid);
    EXPECT_EQ(d.header.rank, RankId{3});  // the "MPI Rank 3" thread name
    EXPECT_EQ(d.header.wallClockAnchorNs, kSessionStart);
    // Only GPU 0 ran this process's work; the report's GPU 1 is named in the settings.
    ASSERT_EQ(d.header.devices.size(), 1u);
    EXPECT_EQ(d.header.devices[0].uuid, "uuid-0");
    EXPECT_EQ(d.header.devices[0].totalMemoryBytes, 150000000000u);
    EXPECT_EQ(*setting(d.header, "nsys.gpus_in_report"), "2 (ids 0, 1); this process used 1");
    ASSERT_EQ(d.kernels.size(), 4u);
    EXPECT_EQ(d.string(d.kernels.name[0]), "void gemm<float>(float*, int)");  // demangled
    EXPECT_EQ(d.kernels.startNs[0], kSessionStart + 1000);
    EXPECT_EQ(d.kernels.endNs[0], kSessionStart + 1500);
    EXPECT_EQ(d.kernels.launchNs[0], kSessionStart + 900);  // runtime row of correlation 11
    EXPECT_EQ(d.kernels.launchNs[1], kSessionStart + 1900);
    EXPECT_EQ(d.kernels.stream[0], 7u);
    EXPECT_EQ(d.kernels.category[1], KernelCategory::Communication);
    EXPECT_EQ(d.kernels.category[2], KernelCategory::Memcpy);
    EXPECT_EQ(d.kernels.bytes[2], 4096u);
    EXPECT_EQ(d.string(d.kernels.name[2]), "Memcpy HtoD (Pageable -> Device)");
    EXPECT_EQ(d.kernels.category[3], KernelCategory::Memset);
    EXPECT_EQ(d.kernels.bytes[3], 512u);
    ASSERT_EQ(d.collectives.size(), 1u);
    EXPECT_EQ(d.string(d.collectives.function[0]), "AllReduce");
    EXPECT_EQ(d.collectives.startNs[0], kSessionStart + 2000);

    // Ranges: step (depth 0), inner (1), io (start/end), the NCCL one; no mark, no domain or
    // thread-name event, and the push that was never popped is left out and counted.
    std::map<std::string, RangeEvent> byName;
    for (size_t i = 0; i < d.ranges.size(); ++i) {
        byName[std::string(d.string(d.ranges.name[i]))] = d.ranges.at(i);
    }
    ASSERT_EQ(d.ranges.size(), 4u);
    EXPECT_EQ(byName.at("step").depth, 0u);
    EXPECT_EQ(byName.at("inner").depth, 1u);
    EXPECT_EQ(byName.at("inner").threadId, 4243u);
    EXPECT_EQ(byName.at("io").endNs, kSessionStart + 4000);
    EXPECT_EQ(byName.count("NCCL: ncclAllReduce"), 1u);
    EXPECT_EQ(byName.count("a mark"), 0u);
    ASSERT_EQ(d.dataLoss.size(), 1u);
    EXPECT_EQ(d.dataLoss[0].counter, LossCounter::NsysRowsSkipped);
    EXPECT_EQ(d.dataLoss[0].count, 1u);

    ASSERT_NE(setting(d.header, "nsys.schema_version"), nullptr);
    EXPECT_EQ(*setting(d.header, "nsys.schema_version"), "3.13.2");
    EXPECT_EQ(*setting(d.header, "nsys.product_version"), "2024.5.1.113");
    ASSERT_NE(setting(d.header, "nsys.absent.CUDA_GPU_MEMORY_USAGE_EVENTS"), nullptr);
    EXPECT_EQ(setting(d.header, "nsys.absent.NVTX_EVENTS"), nullptr);
    for (const auto& s : d.strings) {
        EXPECT_EQ(s.find("someone"), std::string::npos);
    }
}

TEST(NsysImporter, MemoryEventsGiveThePeakOfTheirRunningSumWithPinnedMemoryOnTheHost) {
    NsysTempDir dir;
    const std::string path = dir.file("memory.sqlite");
    struct Row {
        int64_t start, address, bytes, kind, op;
    };
    // memKind 2 device, 5 device static, 1 pinned (host), 0 pageable (host); op 0 alloc, 1 free.
    const std::vector<Row> rows = {
        {10, 0x1000, 1 << 20, 2, 0}, {20, 0x2000, 4 << 20, 2, 0},  {25, 0x9000, 64 << 20, 1, 0},
        {30, 0x1000, 1 << 20, 2, 1}, {40, 0x3000, 8 << 20, 2, 0},  {45, 0x8000, 256, 5, 0},
        {50, 0x2000, 4 << 20, 2, 1}, {55, 0xA000, 32 << 20, 0, 0}, {60, 0x4000, 2 << 20, 2, 0},
        {70, 0x3000, 8 << 20, 2, 1}, {80, 0x9000, 64 << 20, 1, 1},
    };
    {
        SqlDb db(path);
        db.exec(vramscope_test::kNsysReportSchema);
        db.exec("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2')");
        for (const Row& r : rows) {
            db.exec("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (" + std::to_string(r.start) +
                    ", " + std::to_string(globalId(7)) + ", 0, 1, " + std::to_string(r.address) +
                    ", 0, " + std::to_string(r.bytes) + ", " + std::to_string(r.kind) + ", " +
                    std::to_string(r.op) + ", NULL, 0)");
        }
    }
    // The expected peak, by a running sum over the rows above that are GPU memory.
    int64_t live = 0;
    int64_t peak = 0;
    size_t gpuRows = 0;
    for (const Row& r : rows) {
        if (r.kind == 0 || r.kind == 1) {
            continue;
        }
        ++gpuRows;
        live += r.op == 0 ? r.bytes : -r.bytes;
        peak = std::max(peak, live);
    }
    ASSERT_EQ(peak, (4 << 20) + (8 << 20) + 256);

    const size_t pinnedRows =
        size_t(std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.kind == 1; }));
    ASSERT_EQ(pinnedRows, 2u);

    auto t = openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const MemoryEvents& m = t->data.memory;
    ASSERT_EQ(m.size(), gpuRows + pinnedRows);
    int64_t ours = 0;
    int64_t ourPeak = 0;
    size_t pinned = 0;
    for (size_t i = 0; i < m.size(); ++i) {
        EXPECT_EQ(m.level[i], MemoryLevel::Reserved);
        if (m.kind[i] == MemoryKind::Pinned) {
            // Pinned memory is the host's, never a GPU's: the 64 MiB cudaHostAlloc and its free.
            EXPECT_EQ(m.device[i], kHostDevice);
            EXPECT_EQ(m.sizeBytes[i], uint64_t{64} << 20);
            ++pinned;
            continue;
        }
        ours += m.action[i] == MemoryAction::Alloc ? static_cast<int64_t>(m.sizeBytes[i])
                                                   : -static_cast<int64_t>(m.sizeBytes[i]);
        ourPeak = std::max(ourPeak, ours);
    }
    EXPECT_EQ(pinned, pinnedRows);
    EXPECT_EQ(ourPeak, peak);
    EXPECT_EQ(m.kind[5], MemoryKind::DeviceStatic);  // the 256-byte module global
    for (const DeviceInfo& d : t->data.header.devices) {
        EXPECT_NE(d.index, kHostDevice);
    }
    ASSERT_NE(setting(t->data.header, "nsys.host_memory_events_left_out"), nullptr);
    EXPECT_EQ(setting(t->data.header, "nsys.host_memory_events_left_out")->substr(0, 2), "1 ");
}

TEST(NsysImporter, SeveralProcessesBecomeRanksOfOneJob) {
    NsysTempDir dir;
    const std::string path = dir.file("two.sqlite");
    {
        SqlDb db(path);
        db.exec(vramscope_test::kNsysReportSchema);
        db.exec("INSERT INTO StringIds VALUES (1, 'k'), (2, 'MPI Rank 0'), (3, 'MPI Rank 1')");
        db.exec("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2')");
        for (int64_t pid : {100, 200}) {
            const std::string gp = std::to_string(globalId(pid));
            const std::string gt = std::to_string(globalId(pid, pid + 1));
            // The same correlation id in both processes: each kernel takes its own launch.
            db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(pid) +
                    ", " + std::to_string(pid + 5) + ", 0, " + gt + ", 1, 1, 0, NULL)");
            for (int i = 0; i < (pid == 100 ? 2 : 3); ++i) {
                db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" +
                        std::to_string(1000 + i * 100) + ", " + std::to_string(1050 + i * 100) +
                        ", 0, 1, NULL, 7, 1, " + gp + ", 1, 1, NULL, 1, 1)");
            }
            db.exec("INSERT INTO ThreadNames VALUES (" + std::string(pid == 100 ? "3" : "2") +
                    ", 0, " + gt + ")");
        }
    }
    auto one = openTrace(path);
    ASSERT_FALSE(one.ok());
    EXPECT_EQ(one.error().file, path);
    EXPECT_NE(one.error().message.find("2 processes"), std::string::npos);
    EXPECT_NE(one.error().message.find("open it as a job"), std::string::npos);

    auto job = openJob({path});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 2u);
    // Rank 0 is pid 200 (its thread is "MPI Rank 0"), rank 1 pid 100.
    EXPECT_EQ(job->ranks[0].trace.data.header.rank, RankId{0});
    EXPECT_EQ(job->ranks[0].trace.data.header.pid, 200);
    EXPECT_EQ(job->ranks[0].path, path + ":pid 200");
    EXPECT_EQ(job->ranks[0].format, InputFormat::NsysSqlite);
    EXPECT_EQ(job->ranks[0].trace.data.kernels.size(), 3u);
    EXPECT_EQ(job->ranks[0].trace.data.kernels.launchNs[0], 200);
    EXPECT_EQ(job->ranks[1].trace.data.header.pid, 100);
    EXPECT_EQ(job->ranks[1].trace.data.kernels.size(), 2u);
    EXPECT_EQ(job->ranks[1].trace.data.kernels.launchNs[1], 100);
    EXPECT_TRUE(job->warnings.empty());
}

TEST(NsysImporter, OldSchemaWithoutOptionalTablesAndColumnsLoadsAndSaysWhatWasAbsent) {
    NsysTempDir dir;
    const std::string path = dir.file("old.sqlite");
    {
        SqlDb db(path);
        // A 2.x export: EXPORT_META_DATA, a kernel table without demangledName, mangledName or
        // globalPid, no NVTX, memcpy, memset, runtime, GPU or session tables.
        db.exec(
            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, "
            "deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL, "
            "correlationId INT NOT NULL, shortName INT NOT NULL);"
            "INSERT INTO StringIds VALUES (1, 'axpy');"
            "INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_SCHEMA_VERSION', '2.0.0'), "
            "('EXPORT_HOST', 'somehost');"
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (5, 9, 0, 1, 7, 0, 1), "
            "(10, 20, 1, 1, 7, 0, 1);");
    }
    auto t = openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    const TraceData& d = t->data;
    ASSERT_EQ(d.kernels.size(), 2u);
    EXPECT_EQ(d.string(d.kernels.name[0]), "axpy");
    EXPECT_EQ(d.kernels.startNs[0], 5);  // no session start: times stay relative
    EXPECT_EQ(d.kernels.launchNs[0], -1);
    EXPECT_EQ(d.header.wallClockAnchorNs, 0);
    EXPECT_EQ(d.header.devices.size(), 2u);  // devices 0 and 1 seen, no names known
    EXPECT_EQ(*setting(d.header, "nsys.schema_version"), "2.0.0");
    for (const char* absent :
         {"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
          "CUDA_GPU_MEMORY_USAGE_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "TARGET_INFO_GPU",
          "TARGET_INFO_SESSION_START_TIME", "CUPTI_ACTIVITY_KIND_KERNEL.demangledName"}) {
        EXPECT_NE(setting(d.header, std::string("nsys.absent.") + absent), nullptr) << absent;
    }
    EXPECT_EQ(d.header.host, "");  // EXPORT_HOST is personal and never read
}

TEST(NsysImporter, RowsWithoutAProcessJoinTheOnlyProcessThereIs) {
    NsysTempDir dir;
    const std::string path = dir.file("orphans.sqlite");
    {
        SqlDb db(path);
        db.exec(vramscope_test::kNsysReportSchema);
        // Kernels with a NULL globalPid, NVTX ranges of pid 77.
        db.exec(
            "INSERT INTO StringIds VALUES (1, 'k');"
            "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.0.0');"
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 0, 1, NULL, 7, 0, NULL, "
            "1, 1, NULL, 1, 1);"
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (5, 30, "
            "59, 'r', " +
            std::to_string(globalId(77, 78)) + ");");
    }
    auto t = openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    EXPECT_EQ(t->data.header.pid, 77);
    EXPECT_EQ(t->data.kernels.size(), 1u);
    EXPECT_EQ(t->data.ranges.size(), 1u);
}

TEST(NsysImporter, RefusesWhatIsNotAReportWithAClearError) {
    NsysTempDir dir;
    const std::string other = dir.file("other.sqlite");
    {
        SqlDb db(other);
        db.exec("CREATE TABLE notes (id INTEGER, text TEXT); INSERT INTO notes VALUES (1, 'x');");
    }
    auto a = openTrace(other);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().code, ErrorCode::Unsupported);
    EXPECT_EQ(a.error().file, other);
    EXPECT_NE(a.error().message.find("not an Nsight Systems export"), std::string::npos);

    const std::string garbage = dir.file("garbage.sqlite");
    std::ofstream(garbage, std::ios::binary)
        << std::string("SQLite format 3\0", 16) << std::string(5000, '\x5a');
    auto b = openTrace(garbage);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().file, garbage);
    EXPECT_FALSE(b.error().message.empty());

    const std::string rep = dir.file("run 1.nsys-rep");
    std::ofstream(rep, std::ios::binary) << "not readable";
    auto c = openTrace(rep);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().code, ErrorCode::Unsupported);
    EXPECT_NE(c.error().message.find("nsys export --type sqlite --output '" + dir.file("run 1") +
                                     ".sqlite' '" + rep + "'"),
              std::string::npos)
        << c.error().message;
    auto job = openJob({rep});
    ASSERT_FALSE(job.ok());
    EXPECT_NE(job.error().message.find("nsys export --type sqlite"), std::string::npos);
    EXPECT_EQ(nsysExportCommand("r.qdrep"), "nsys export --type sqlite --output r.sqlite r.qdrep");
    auto missing = openTrace(dir.file("missing.nsys-rep"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::Io);  // a missing file is said to be missing
}

TEST(NsysImporter, NeverWritesTheReportAndOpensPathsWithUriCharacters) {
    NsysTempDir dir;
    const std::string path = dir.file("a%20b?c#d.sqlite");
    {
        SqlDb db(path);
        buildSmallReport(db);
    }
    fs::permissions(path, fs::perms::owner_read | fs::perms::group_read);
    const std::string before = readAll(path);
    const auto mtime = fs::last_write_time(path);
    auto t = openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    EXPECT_EQ(t->data.kernels.size(), 4u);
    EXPECT_EQ(readAll(path), before);
    EXPECT_EQ(fs::last_write_time(path), mtime);
    size_t entries = 0;
    for (const auto& e : fs::directory_iterator(dir.path())) {
        EXPECT_EQ(e.path().string(), path);  // no -journal, -wal or -shm beside it
        ++entries;
    }
    EXPECT_EQ(entries, 1u);

    // The same bytes from memory (an archive member, standard input), and from a directory.
    auto fromBytes = openTraceBytes(before, "memory.sqlite");
    ASSERT_TRUE(fromBytes.ok()) << fromBytes.error().describe();
    EXPECT_EQ(fromBytes->data.kernels.size(), 4u);
    EXPECT_EQ(detectFormat(before, "x.bin"), InputFormat::NsysSqlite);
    auto job = openJob({dir.path()});
    ASSERT_TRUE(job.ok()) << job.error().describe();
    ASSERT_EQ(job->ranks.size(), 1u);
    EXPECT_EQ(job->ranks[0].format, InputFormat::NsysSqlite);
    EXPECT_STREQ(toString(InputFormat::NsysSqlite), "nsys-sqlite");
    // A path spelled with leading "//" (POSIX: the same as "/") is no URI authority.
    ASSERT_EQ(path.front(), '/');
    auto doubled = openTrace("/" + path);
    ASSERT_TRUE(doubled.ok()) << doubled.error().describe();
    EXPECT_EQ(doubled->data.kernels.size(), 4u);
}

TEST(NsysImporter, RowsWhoseTimesAreNoIntervalAreLeftOutAndCounted) {
    NsysTempDir dir;
    const std::string path = dir.file("bad_rows.sqlite");
    {
        SqlDb db(path);
        buildSmallReport(db);  // 2 kernels, 1 memcpy, 1 memset that are sound
        const std::string gpid = std::to_string(globalId(kPid));
        // SQLite keeps what it is given in an INTEGER column that is NOT NULL: a text start, a
        // text end, and an end before its start; one of each kind of activity table.
        db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('soon', 1500, 0, 1, NULL, 7, 21, " +
                gpid + ", 1, 2, NULL, 1, 1), (7000, 6000, 0, 1, NULL, 7, 23, " + gpid +
                ", 1, 2, NULL, 1, 1);"
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (3000, 'later', 0, 1, 7, 24, " +
                gpid + ", 4096, 1, 0, 2);");
    }
    auto t = openTrace(path);
    ASSERT_TRUE(t.ok()) << t.error().describe();
    EXPECT_EQ(t->data.kernels.size(), 4u) << "the four sound rows, nothing at time 0";
    for (size_t i = 0; i < t->data.kernels.size(); ++i) {
        EXPECT_GE(t->data.kernels.startNs[i], kSessionStart + 1000);
        EXPECT_GE(t->data.kernels.endNs[i], t->data.kernels.startNs[i]);
    }
    uint64_t counted = 0;
    for (const DataLoss& loss : t->data.dataLoss) {
        if (loss.counter == LossCounter::NsysRowsSkipped &&
            loss.reason.find("end before") != std::string::npos) {
            counted += loss.count;
        }
    }
    EXPECT_EQ(counted, 3u);
}

}  // namespace
}  // namespace vramscope::trace
