#pragma once
// Read-only access to an Nsight Systems SQLite export (`nsys export --type sqlite`): opening the
// database without ever writing it, asking which tables and columns this export has (the schema
// drifts between nsys versions), and stepping through query rows with errors as values.
// Internal to trace_format (vramscope_trace_import); one Database per thread.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_data.h"

struct sqlite3;
struct sqlite3_stmt;

namespace vramscope::trace::nsys {

/// The 16 bytes that open every SQLite 3 database file (sqlite.org/fileformat.html, 1.3).
inline constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

/// `file:` URI for sqlite3_open_v2(SQLITE_OPEN_URI) that opens `path` read-only and immutable
/// (no journal, no lock, no write ever). '%', '?' and '#' in the path are percent-escaped
/// (RFC 3986; sqlite.org/uri.html): sqlite would read them as an escape, the query or a fragment.
std::string immutableUri(const std::string& path);

/// One open, read-only export and what its schema holds. Owns the connection (and, for a database
/// opened from memory, a copy of the bytes that SQLite owns). Movable, not copyable.
class Database {
public:
    /// Opens a file read-only through immutableUri(); `name` is used in messages. Errors: the file
    /// cannot be opened (Io), SQLite refuses it (Corrupt, with SQLite's words).
    static Result<Database> openFile(const std::string& path, const std::string& name);
    /// Opens a database image held in memory (an archive member, standard input), read-only.
    static Result<Database> openBytes(std::string_view bytes, const std::string& name);

    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    sqlite3* handle() const { return m_db; }
    const std::string& name() const { return m_name; }

    /// Lists the tables and, per table, its columns (PRAGMA table_info). Errors: the file is not
    /// a database, is damaged or cut (Corrupt / Truncated, naming what SQLite says).
    Status loadSchema();
    bool hasTable(std::string_view table) const;
    bool hasColumn(std::string_view table, std::string_view column) const;
    /// `column` when the table has it, else "NULL", for a SELECT list that works on every schema.
    std::string columnOr(std::string_view table, std::string_view column,
                         std::string_view fallback = "NULL") const;
    /// Number of tables found by loadSchema().
    size_t tableCount() const { return m_columns.size(); }

    /// An Error naming the file and what SQLite last said, after `what` ("cannot read X").
    Error error(std::string_view what, int rc) const;

private:
    Database(sqlite3* db, std::string name) : m_db(db), m_name(std::move(name)) {}
    sqlite3* m_db = nullptr;
    std::string m_name;
    std::map<std::string, std::set<std::string>, std::less<>> m_columns;
};

/// One prepared SELECT over a Database, stepped row by row:
/// `Query q(db, sql); while (q.next()) {...} if (!q.status()) ...`. Not copyable.
class Query {
public:
    Query(const Database& db, const std::string& sql);
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;
    ~Query();

    /// Steps to the next row; false at the end and on an error (see status()).
    bool next();
    /// Success, or the Error of the prepare or of the last step (naming the file).
    const Status& status() const { return m_status; }

    bool isNull(int column) const;
    /// Whether the column holds an integer (not NULL, text or a real): SQLite keeps what a row
    /// was given whatever the declared type.
    bool isInteger(int column) const;
    /// Integer value of a column; `fallback` for NULL.
    int64_t integer(int column, int64_t fallback = 0) const;
    /// Text value of a column ("" for NULL); valid until the next call of next().
    std::string_view text(int column) const;

private:
    const Database& m_db;
    sqlite3_stmt* m_stmt = nullptr;
    Status m_status;
    bool m_done = false;
};

/// What the export says of itself: nsys's product version and the export schema version, read
/// from META_DATA_EXPORT (schema 3.x) or EXPORT_META_DATA (2.x). Only these two records are read:
/// the others name the user, the host and paths, which are personal.
struct ExportVersion {
    std::string metaTable;       ///< the table they came from, empty when neither exists
    std::string productVersion;  ///< EXPORT_PRODUCT_VERSION, e.g. "2024.5.1.113"
    std::string schemaVersion;   ///< EXPORT_SCHEMA_VERSION, e.g. "3.13.2"
};
/// Reads ExportVersion; an export without either meta table gives empty fields, not an Error.
Result<ExportVersion> readExportVersion(const Database& db);

/// Tables that identify a database as an Nsight Systems export (any one of them suffices).
bool looksLikeNsysExport(const Database& db);

// Format facts of the export (NVIDIA's "SQLite Schema Reference", see nsys_importer.cpp).

/// Process part of a serialized GlobalId (hardware id bits 56-63, VM id 48-55, process id
/// 24-47): the key of a process.
uint64_t processKey(int64_t globalId);
/// Process id of a processKey() (bits 24-47 of the GlobalId).
int64_t pidOf(uint64_t key);
/// Thread id of a serialized GlobalId (bits 0-23).
uint64_t tidOf(int64_t globalId);

/// NVTX_EVENTS.eventType values that the importer tells apart.
inline constexpr int64_t kNvtxThreadName = 39;
inline constexpr int64_t kNvtxPushPop = 59;
inline constexpr int64_t kNvtxStartEnd = 60;
inline constexpr int64_t kNvtxDomainCreate = 75;

/// CUDA_MEMOPR_MEMORY_KIND names as nsys prints them ("Pageable", "Device", ...), "Unknown" else.
const char* memKindName(int64_t kind);
/// CUDA_MEMCPY_KIND short names ("HtoD", "DtoD", ...), "" for 0 and unknown values.
const char* copyKindName(int64_t kind);
/// Where CUDA_MEMOPR_MEMORY_KIND memory lives (sets `kind`); false for host memory (pageable,
/// pinned), which is no GPU memory.
bool gpuMemoryKind(int64_t memKind, MemoryKind& kind);
/// The MPI rank in the thread name nsys gives an MPI process's thread ("MPI Rank 3"), or
/// kUnknownRank.
RankId rankFromThreadName(std::string_view name);

}  // namespace vramscope::trace::nsys
