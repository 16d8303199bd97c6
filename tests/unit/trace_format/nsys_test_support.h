#pragma once
// Test helpers for the Nsight Systems importer: a temporary directory, an SQLite connection that
// runs the test's own SQL (to build small reports and to recompute what the importer should
// find), and the CREATE TABLE statements of a small report after NVIDIA's documented schema.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace vramscope_test {

/// A fresh directory under the system temp dir, removed at the end of the test.
class NsysTempDir {
public:
    NsysTempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = std::filesystem::temp_directory_path() /
                 (std::string("vramscope_nsys_") + info->name() + "_" +
                  std::to_string(reinterpret_cast<uintptr_t>(this)));
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }
    ~NsysTempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    std::string file(const std::string& name) const { return (m_path / name).string(); }
    std::string path() const { return m_path.string(); }

private:
    std::filesystem::path m_path;
};

/// One SQLite connection of the test's own, independent of the importer's code.
class SqlDb {
public:
    /// Opens (read-write, creating) `path`, or, with readOnly, an existing file immutable.
    explicit SqlDb(const std::string& path, bool readOnly = false) {
        const std::string uri = readOnly ? "file:" + path + "?immutable=1" : path;
        const int flags = readOnly ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                                   : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
        EXPECT_EQ(sqlite3_open_v2(uri.c_str(), &m_db, flags, nullptr), SQLITE_OK) << path;
    }
    ~SqlDb() { sqlite3_close(m_db); }
    SqlDb(const SqlDb&) = delete;
    SqlDb& operator=(const SqlDb&) = delete;

    void exec(const std::string& sql) {
        char* err = nullptr;
        EXPECT_EQ(sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
            << (err != nullptr ? err : "") << " in: " << sql;
        sqlite3_free(err);
    }
    /// Rows of a query, each column as text ("" for NULL).
    std::vector<std::vector<std::string>> rows(const std::string& sql) {
        std::vector<std::vector<std::string>> out;
        sqlite3_stmt* st = nullptr;
        EXPECT_EQ(sqlite3_prepare_v2(m_db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
        while (st != nullptr && sqlite3_step(st) == SQLITE_ROW) {
            std::vector<std::string> row;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                const auto* t = sqlite3_column_text(st, c);
                row.emplace_back(t != nullptr ? reinterpret_cast<const char*>(t) : "");
            }
            out.push_back(std::move(row));
        }
        sqlite3_finalize(st);
        return out;
    }
    /// The first column of the first row as an integer (0 when there is none or it is NULL).
    int64_t integer(const std::string& sql) {
        auto r = rows(sql);
        return r.empty() || r[0].empty() || r[0][0].empty() ? 0 : std::stoll(r[0][0]);
    }
    bool hasTable(const std::string& table) {
        return integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" +
                       table + "'") > 0;
    }

private:
    sqlite3* m_db = nullptr;
};

/// Tables of a report (schema 3.x column names, NVIDIA's "SQLite Schema Reference"), with the
/// columns the importer reads and a few it does not.
inline const char* kNsysReportSchema = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
  busLocation TEXT, totalMemory INTEGER, uuid TEXT, cuDevice INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  gridX INTEGER, blockX INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  srcKind INTEGER, dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
  memKind INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, address INTEGER NOT NULL,
  pc INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER NOT NULL,
  memoryOperationType INTEGER NOT NULL, name TEXT, correlationId INTEGER);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
)sql";

/// Serialized GlobalId (NVIDIA's schema reference): hardware id << 56 | VM id << 48 |
/// pid << 24 | tid.
inline int64_t globalId(int64_t pid, int64_t tid = 0, int64_t vm = 1) {
    return (vm << 48) | (pid << 24) | tid;
}

inline std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace vramscope_test
