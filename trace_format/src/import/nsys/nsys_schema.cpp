#include "import/nsys/nsys_schema.h"

#include <sqlite3.h>

#include "vramscope/trace/importers.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

namespace vramscope::trace::nsys {
namespace {

/// Size of the SQLite database header (sqlite.org/fileformat.html, 1.3).
constexpr size_t kHeaderBytes = 100;

uint32_t bigEndian(std::string_view b, size_t at, size_t width) {
    uint32_t v = 0;
    for (size_t i = 0; i < width; ++i) {
        v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    }
    return v;
}

/// A cut file, told apart from other damage before SQLite reads a page: the header announces the
/// database size in pages (offset 28) when its version-valid-for number (offset 92) equals the
/// change counter (offset 24); the page size is at offset 16 (1 = 65536).
std::optional<Error> checkCut(std::string_view header, uint64_t fileBytes,
                              const std::string& name) {
    if (header.size() < kHeaderBytes) {
        return Error::make(ErrorCode::Truncated, name,
                           "the SQLite database is cut inside its 100-byte header (" +
                               std::to_string(fileBytes) + " bytes)");
    }
    const uint32_t rawPage = bigEndian(header, 16, 2);
    const uint64_t pageBytes = rawPage == 1 ? 65536 : rawPage;
    const uint32_t pages = bigEndian(header, 28, 4);
    const bool powerOfTwo = (pageBytes & (pageBytes - 1)) == 0;
    if (bigEndian(header, 92, 4) != bigEndian(header, 24, 4) || pages == 0 || pageBytes < 512 ||
        pageBytes > 65536 || !powerOfTwo) {
        return std::nullopt;  // no usable size in the header; SQLite's own checks decide
    }
    const uint64_t expected = pageBytes * pages;
    if (fileBytes < expected) {
        return Error::make(ErrorCode::Truncated, name,
                           "the SQLite database is cut: the file has " + std::to_string(fileBytes) +
                               " bytes of the " + std::to_string(expected) +
                               " its header announces (an interrupted copy or export)")
            .atByte(static_cast<int64_t>(fileBytes));
    }
    return std::nullopt;
}

std::string quoteIdentifier(std::string_view id) {
    std::string out = "\"";
    for (char c : id) {
        out += c;
        if (c == '"') {
            out += '"';
        }
    }
    return out + "\"";
}

}  // namespace

std::string immutableUri(const std::string& path) {
    // NOTE(sqlite): "file://x/..." names an authority (host) x, which SQLite refuses; POSIX reads
    // "//tmp/a" as "/tmp/a", so leading slashes collapse to one.
    std::string_view p = path;
    while (p.size() > 1 && p[0] == '/' && p[1] == '/') {
        p.remove_prefix(1);
    }
    std::string escaped;
    escaped.reserve(p.size() + 8);
    for (char c : p) {
        switch (c) {
            case '%':
                escaped += "%25";
                break;
            case '?':
                escaped += "%3f";
                break;
            case '#':
                escaped += "%23";
                break;
            default:
                escaped += c;
        }
    }
    // NOTE(sqlite): a relative path stays relative in a "file:" URI without an authority; an
    // absolute one needs "file://" + "/abs" or "file:/abs", which this spelling gives.
    return "file:" + escaped + "?mode=ro&immutable=1";
}

Result<Database> Database::openFile(const std::string& path, const std::string& name) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error::make(ErrorCode::Io, name, "cannot open the file");
    }
    std::string header(kHeaderBytes, '\0');
    in.read(header.data(), static_cast<std::streamsize>(header.size()));
    header.resize(static_cast<size_t>(in.gcount()));
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (auto cut = checkCut(header, ec ? header.size() : size, name)) {
        return *cut;
    }
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(immutableUri(path).c_str(), &db,
                                   SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    Database out(db, name);
    if (rc != SQLITE_OK) {
        return out.error("SQLite cannot open the file", rc);
    }
    return out;
}

Result<Database> Database::openBytes(std::string_view bytes, const std::string& name) {
    if (auto cut = checkCut(bytes.substr(0, kHeaderBytes), bytes.size(), name)) {
        return *cut;
    }
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr);
    Database out(db, name);
    if (rc != SQLITE_OK) {
        return out.error("SQLite cannot open an in-memory database", rc);
    }
    auto* image = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
    if (image == nullptr) {
        return Error::make(ErrorCode::Limit, name, "no memory for the SQLite database image");
    }
    std::memcpy(image, bytes.data(), bytes.size());
    rc = sqlite3_deserialize(db, "main", image, static_cast<sqlite3_int64>(bytes.size()),
                             static_cast<sqlite3_int64>(bytes.size()),
                             SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
    if (rc != SQLITE_OK) {
        return out.error("SQLite cannot read the database image", rc);
    }
    return out;
}

Database::Database(Database&& other) noexcept
    : m_db(other.m_db), m_name(std::move(other.m_name)), m_columns(std::move(other.m_columns)) {
    other.m_db = nullptr;
}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        sqlite3_close(m_db);
        m_db = other.m_db;
        other.m_db = nullptr;
        m_name = std::move(other.m_name);
        m_columns = std::move(other.m_columns);
    }
    return *this;
}

Database::~Database() {
    sqlite3_close(m_db);
}

Error Database::error(std::string_view what, int rc) const {
    const char* why = m_db != nullptr ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    const int primary = rc & 0xff;
    ErrorCode code = ErrorCode::Corrupt;
    if (primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR || primary == SQLITE_PERM) {
        code = ErrorCode::Io;
    } else if (primary == SQLITE_NOMEM || primary == SQLITE_TOOBIG) {
        code = ErrorCode::Limit;
    }
    std::string message(what);
    if (primary == SQLITE_NOTADB) {
        message += ": the file starts like an SQLite database but is not one";
    } else if (primary == SQLITE_CORRUPT) {
        message += ": the SQLite database is damaged";
    }
    message += std::string(" (SQLite: ") + (why != nullptr ? why : "unknown error") + ")";
    return Error::make(code, m_name, std::move(message));
}

Status Database::loadSchema() {
    m_columns.clear();
    std::vector<std::string> tables;
    {
        Query q(*this, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')");
        while (q.next()) {
            tables.emplace_back(q.text(0));
        }
        if (!q.status()) {
            return q.status();
        }
    }
    for (const auto& table : tables) {
        auto& columns = m_columns[table];
        Query q(*this, "PRAGMA table_info(" + quoteIdentifier(table) + ")");
        while (q.next()) {
            columns.emplace(q.text(1));  // cid, name, type, notnull, dflt_value, pk
        }
        if (!q.status()) {
            return q.status();
        }
    }
    return Status::success();
}

bool Database::hasTable(std::string_view table) const {
    return m_columns.find(table) != m_columns.end();
}

bool Database::hasColumn(std::string_view table, std::string_view column) const {
    auto it = m_columns.find(table);
    return it != m_columns.end() && it->second.count(std::string(column)) > 0;
}

std::string Database::columnOr(std::string_view table, std::string_view column,
                               std::string_view fallback) const {
    return hasColumn(table, column) ? quoteIdentifier(column) : std::string(fallback);
}

Query::Query(const Database& db, const std::string& sql) : m_db(db) {
    const int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &m_stmt, nullptr);
    if (rc != SQLITE_OK) {
        m_status = db.error("cannot read the report", rc);
        m_done = true;
    }
}

Query::~Query() {
    sqlite3_finalize(m_stmt);
}

bool Query::next() {
    if (m_done) {
        return false;
    }
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) {
        return true;
    }
    m_done = true;
    if (rc != SQLITE_DONE) {
        m_status = m_db.error("cannot read the report", rc);
    }
    return false;
}

bool Query::isNull(int column) const {
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

bool Query::isInteger(int column) const {
    return sqlite3_column_type(m_stmt, column) == SQLITE_INTEGER;
}

int64_t Query::integer(int column, int64_t fallback) const {
    return isNull(column) ? fallback : sqlite3_column_int64(m_stmt, column);
}

std::string_view Query::text(int column) const {
    const auto* p = sqlite3_column_text(m_stmt, column);
    if (p == nullptr) {
        return {};
    }
    return {reinterpret_cast<const char*>(p),
            static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))};
}

Result<ExportVersion> readExportVersion(const Database& db) {
    ExportVersion v;
    for (const char* table : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
        if (!db.hasTable(table) || !db.hasColumn(table, "name") || !db.hasColumn(table, "value")) {
            continue;
        }
        v.metaTable = table;
        Query q(db, std::string("SELECT name, value FROM ") + table +
                        " WHERE name IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')");
        while (q.next()) {
            (q.text(0) == "EXPORT_SCHEMA_VERSION" ? v.schemaVersion : v.productVersion) =
                std::string(q.text(1));
        }
        if (!q.status()) {
            return q.status().error();
        }
        break;
    }
    return v;
}

bool looksLikeNsysExport(const Database& db) {
    if (!db.hasTable("StringIds")) {
        return false;
    }
    for (const char* table :
         {"META_DATA_EXPORT", "EXPORT_META_DATA", "TARGET_INFO_SESSION_START_TIME",
          "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"}) {
        if (db.hasTable(table)) {
            return true;
        }
    }
    return false;
}

uint64_t processKey(int64_t globalId) {
    return static_cast<uint64_t>(globalId) >> 24;
}
int64_t pidOf(uint64_t key) {
    return static_cast<int64_t>(key & 0xFFFFFF);
}
uint64_t tidOf(int64_t globalId) {
    return static_cast<uint64_t>(globalId) & 0xFFFFFF;
}

/// CUDA_MEMOPR_MEMORY_KIND names, as nsys prints them.
const char* memKindName(int64_t kind) {
    static constexpr const char* kNames[] = {"Pageable",       "Pinned",  "Device",
                                             "Array",          "Managed", "Device Static",
                                             "Managed Static", "Unknown"};
    return kind >= 0 && kind < 8 ? kNames[kind] : "Unknown";
}

const char* copyKindName(int64_t kind) {
    static constexpr const char* kNames[] = {
        "",     "HtoD", "DtoH", "HtoA", "AtoH",           "AtoA",           "AtoD",
        "DtoA", "DtoD", "HtoH", "PtoP", "HtoD (unified)", "DtoH (unified)", "DtoD (unified)"};
    return kind >= 0 && kind < 14 ? kNames[kind] : "";
}

/// Where CUDA_MEMOPR_MEMORY_KIND memory lives; false for host memory (pageable, pinned), which is
/// no GPU memory.
bool gpuMemoryKind(int64_t memKind, MemoryKind& kind) {
    switch (memKind) {
        case 2:  // device
        case 3:  // array
            kind = MemoryKind::Device;
            return true;
        case 4:  // managed
        case 6:  // managed static
            kind = MemoryKind::Managed;
            return true;
        case 5:
            kind = MemoryKind::DeviceStatic;
            return true;
        case 0:  // pageable
        case 1:  // pinned
            return false;
        default:
            kind = MemoryKind::Unknown;
            return true;
    }
}

/// The MPI rank in a thread name nsys gives the MPI thread ("MPI Rank 3"), or kUnknownRank.
RankId rankFromThreadName(std::string_view name) {
    constexpr std::string_view kPrefix = "MPI Rank ";
    if (name.substr(0, kPrefix.size()) != kPrefix) {
        return kUnknownRank;
    }
    int64_t v = 0;
    size_t digits = 0;
    for (char c : name.substr(kPrefix.size())) {
        if (c < '0' || c > '9' || ++digits > 9) {
            return kUnknownRank;
        }
        v = v * 10 + (c - '0');
    }
    return digits > 0 ? RankId{static_cast<int32_t>(v)} : kUnknownRank;
}

}  // namespace vramscope::trace::nsys

namespace vramscope::trace {

bool looksLikeSqlite(std::string_view bytes) {
    return bytes.substr(0, nsys::kSqliteMagic.size()) == nsys::kSqliteMagic;
}

std::string nsysExportCommand(std::string_view reportPath) {
    std::string stem(reportPath);
    for (std::string_view ext : {std::string_view(".nsys-rep"), std::string_view(".qdrep")}) {
        if (stem.ends_with(ext)) {
            stem.resize(stem.size() - ext.size());
            break;
        }
    }
    // Quoted for a POSIX shell where the path has characters a shell would read.
    auto quote = [](const std::string& s) {
        if (s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789._/+-=:@,") == std::string::npos) {
            return s;
        }
        std::string q = "'";
        for (char c : s) {
            q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        }
        return q + "'";
    };
    return "nsys export --type sqlite --output " + quote(stem + ".sqlite") + " " +
           quote(std::string(reportPath));
}

}  // namespace vramscope::trace
