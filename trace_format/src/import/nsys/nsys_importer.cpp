// Nsight Systems SQLite export importer (`nsys export --type sqlite`): one LoadedTrace per
// profiled process of the report.
//
// Format facts, from NVIDIA's "SQLite Export Schema Reference" of the Nsight Systems
// documentation (nsys-exporter/exported_data.html, shipped with nsys and on docs.nvidia.com), and
// checked against the two real exports in the project's test data (schema 2.9.1 / nsys 2022.2 and
// 3.13.2 / nsys 2024.5):
//  - "tables are created lazily", so any table may be absent; older exports declare every field
//    NOT NULL and write a default value (0) where there is none;
//  - every timestamp is ns since the session start; TARGET_INFO_SESSION_START_TIME.utcEpochNs is
//    the session start in Unix ns;
//  - a serialized GlobalId (globalPid, globalTid) packs hardware id (bits 56-63), VM id (48-55),
//    process id (24-47) and thread id (0-23);
//  - names are ids into StringIds (kernel demangledName / shortName / mangledName, NVTX textId);
//  - NVTX_EVENTS.eventType: 34 mark, 39 OS thread name, 59 push/pop range, 60 start/end range,
//    75 domain create (text = domain name, domainId); marks and names have no end;
//  - CUDA_MEMOPR_MEMORY_KIND (memKind, srcKind, dstKind): 0 pageable, 1 pinned, 2 device,
//    3 array, 4 managed, 5 device static, 6 managed static, 7 unknown (the ENUM_CUDA_MEM_KIND
//    table of newer exports lists the same);
//  - CUDA_MEMCPY_KIND (copyKind): 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA, 8 DtoD,
//    9 HtoH, 10 PtoP, 11-13 unified HtoD / DtoH / DtoD (ENUM_CUDA_MEMCPY_OPER);
//  - CUDA_GPU_MEMORY_USAGE_EVENTS.memoryOperationType: 0 allocation, 1 deallocation.
// Tables are created only when used, and columns come and go between versions: every read asks
// the schema first (nsys_schema.h) and says in the header what was absent.

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "import/kineto/kineto_text.h"
#include "import/nsys/nsys_schema.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/kernel_names.h"

namespace vramscope::trace {
namespace {

using nsys::copyKindName;
using nsys::Database;
using nsys::gpuMemoryKind;
using nsys::kNvtxDomainCreate;
using nsys::kNvtxPushPop;
using nsys::kNvtxStartEnd;
using nsys::kNvtxThreadName;
using nsys::memKindName;
using nsys::pidOf;
using nsys::processKey;
using nsys::Query;
using nsys::rankFromThreadName;
using nsys::tidOf;

struct RawKernel {
    KernelEvent event;
    std::string name;
};

struct RawRange {
    RangeEvent event;
    std::string name;
    bool pushPop = false;
    int64_t globalTid = 0;
};

/// What one process of the report holds, before it becomes a TraceData.
struct Process {
    std::vector<RawKernel> kernels;
    std::vector<MemoryEvent> memory;
    std::vector<RawRange> ranges;
    std::map<int64_t, std::string> domains;  ///< NVTX domainId -> name (75 events)
    RankId rank = kUnknownRank;
    uint64_t nvtxWithoutEnd = 0;
    uint64_t badIntervals = 0;  ///< activity rows whose start or end is no time, or end < start
    uint64_t freesOfUnknownAddress = 0;
    uint64_t hostMemoryEvents = 0;

    bool hasEvents() const { return !kernels.empty() || !memory.empty() || !ranges.empty(); }
};

/// Reads one export into per-process traces. Single use, single thread.
class NsysImporter {
public:
    NsysImporter(const Database& db, const ReadOptions& options) : m_db(db), m_options(options) {}

    Result<std::vector<LoadedTrace>> run(uint64_t fileBytes);

private:
    using Step = Status (NsysImporter::*)();
    Status readSession();
    Status readGpus();
    Status readLaunches();
    Status readKernels();
    Status readCopies();
    Status readMemsets();
    Status readMemory();
    Status readNvtx();
    Status readMpiRanks();
    void note(const std::string& key, const std::string& sentence) {
        m_notes.emplace_back("nsys.absent." + key, sentence);
    }
    /// True when the table exists; else notes `sentence` under its name.
    bool need(const char* table, const std::string& sentence) {
        if (m_db.hasTable(table)) {
            return true;
        }
        note(table, sentence);
        return false;
    }
    int64_t toTrace(int64_t sessionNs) const { return sessionNs + m_sessionStartNs; }
    TimestampNs launchOf(uint64_t key, int64_t correlation) const;
    void addKernel(const Query& q, RawKernel k);
    void mergeOrphans();
    std::vector<DeviceInfo> devicesUsed(const TraceData& d) const;
    void addSettings(const Process& p, TraceData& d) const;
    LoadedTrace build(uint64_t key, Process& p, uint64_t fileBytes) const;

    const Database& m_db;
    const ReadOptions& m_options;
    nsys::ExportVersion m_version;
    int64_t m_sessionStartNs = 0;
    bool m_haveSessionStart = false;
    std::vector<DeviceInfo> m_gpus;
    std::map<uint64_t, std::unordered_map<int64_t, int64_t>> m_launches;  ///< key -> corr -> ns
    std::map<uint64_t, Process> m_processes;
    std::vector<std::pair<std::string, std::string>> m_notes;
};

Result<std::vector<LoadedTrace>> NsysImporter::run(uint64_t fileBytes) {
    auto version = nsys::readExportVersion(m_db);
    if (!version) {
        return version.error();
    }
    m_version = *version;
    const Step steps[] = {
        &NsysImporter::readSession, &NsysImporter::readGpus,   &NsysImporter::readLaunches,
        &NsysImporter::readKernels, &NsysImporter::readCopies, &NsysImporter::readMemsets,
        &NsysImporter::readMemory,  &NsysImporter::readNvtx,   &NsysImporter::readMpiRanks};
    const uint64_t total = std::size(steps);
    uint64_t done = 0;
    for (Step step : steps) {
        if (Status s = (this->*step)(); !s) {
            return s.error();
        }
        if (!reportProgress(m_options.progress, ++done, total, "Reading " + m_db.name())) {
            return Error::cancelled(m_db.name());
        }
    }
    // Rows without a process (globalPid NULL in an old export) belong to the only process there
    // is; with several, they stay a process of their own (pid 0).
    mergeOrphans();
    std::vector<LoadedTrace> out;
    for (auto& [key, process] : m_processes) {
        if (process.hasEvents()) {
            out.push_back(build(key, process, fileBytes));
        }
    }
    if (out.empty()) {
        Process none;
        out.push_back(build(0, none, fileBytes));
    }
    return out;
}

Status NsysImporter::readSession() {
    if (!need("TARGET_INFO_SESSION_START_TIME",
              "no session start time: times are ns since the session start, not Unix time, so "
              "reports of other ranks cannot be put on one axis")) {
        return Status::success();
    }
    Query q(m_db, "SELECT " + m_db.columnOr("TARGET_INFO_SESSION_START_TIME", "utcEpochNs") +
                      " FROM TARGET_INFO_SESSION_START_TIME");
    while (q.next()) {
        if (!q.isNull(0) && q.integer(0) > 0) {
            m_sessionStartNs = q.integer(0);
            m_haveSessionStart = true;
        }
    }
    return q.status();
}

Status NsysImporter::readGpus() {
    const char* t = "TARGET_INFO_GPU";
    if (!need(t, "no GPU list: names and capacities of the GPUs are unknown")) {
        return Status::success();
    }
    Query q(m_db, "SELECT " + m_db.columnOr(t, "id") + ", " + m_db.columnOr(t, "name") + ", " +
                      m_db.columnOr(t, "uuid") + ", " + m_db.columnOr(t, "totalMemory") + " FROM " +
                      t + " ORDER BY 1");
    while (q.next()) {
        DeviceInfo d;
        d.index = DeviceIndex{static_cast<int32_t>(q.integer(0))};
        d.name = std::string(q.text(1));
        d.uuid = std::string(q.text(2));
        d.totalMemoryBytes = static_cast<uint64_t>(std::max<int64_t>(0, q.integer(3)));
        if (std::none_of(m_gpus.begin(), m_gpus.end(),
                         [&](const DeviceInfo& g) { return g.index == d.index; })) {
            m_gpus.push_back(std::move(d));
        }
    }
    return q.status();
}

Status NsysImporter::readLaunches() {
    const char* t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!need(t, "no CUDA API calls: kernel launch times are unknown")) {
        return Status::success();
    }
    // NOTE(nsys): with backtraces on, nsys adds a CUDA-backtrace row (eventClass 67, and 68 / 69
    // start / finish; ENUM_NSYS_EVENT_CLASS) with the same correlation id around the API call;
    // the launch is the API call itself. Several API rows (runtime over driver): the first.
    const std::string notBacktrace =
        m_db.hasColumn(t, "eventClass") ? " AND eventClass NOT IN (67, 68, 69)" : std::string();
    Query q(m_db, "SELECT " + m_db.columnOr(t, "globalTid", "0") + ", " +
                      m_db.columnOr(t, "correlationId") + ", start FROM " + t +
                      " WHERE start IS NOT NULL" + notBacktrace);
    while (q.next()) {
        if (!q.isNull(1)) {
            auto [it, added] =
                m_launches[processKey(q.integer(0))].emplace(q.integer(1), q.integer(2));
            if (!added) {
                it->second = std::min(it->second, q.integer(2));
            }
        }
    }
    return q.status();
}

TimestampNs NsysImporter::launchOf(uint64_t key, int64_t correlation) const {
    auto p = m_launches.find(key);
    if (p == m_launches.end()) {
        return -1;
    }
    auto it = p->second.find(correlation);
    return it == p->second.end() ? -1 : toTrace(it->second);
}

/// Whether the row's start and end (columns 0 and 1 of activityColumns) are integer times with
/// end >= start: SQLite stores whatever a row was given (text, NULL) despite NOT NULL INTEGER.
bool hasValidInterval(const Query& q) {
    return q.isInteger(0) && q.isInteger(1) && q.integer(1) >= q.integer(0);
}

void NsysImporter::addKernel(const Query& q, RawKernel k) {
    const uint64_t key = processKey(q.integer(5));
    if (!hasValidInterval(q)) {
        ++m_processes[key].badIntervals;
        return;
    }
    if (k.event.correlationId != 0) {
        k.event.launchNs = launchOf(key, static_cast<int64_t>(k.event.correlationId));
    }
    m_processes[key].kernels.push_back(std::move(k));
}

/// The columns every GPU activity table shares, for a SELECT list: start, end, deviceId,
/// streamId, correlationId, globalPid (0 = columns 0..5).
std::string activityColumns(const Database& db, const char* t) {
    return "start, " + db.columnOr(t, "end", "start") + ", " + db.columnOr(t, "deviceId", "0") +
           ", " + db.columnOr(t, "streamId", "0") + ", " + db.columnOr(t, "correlationId", "0") +
           ", " + db.columnOr(t, "globalPid", "0");
}

KernelEvent activityEvent(const Query& q, int64_t sessionStartNs) {
    KernelEvent e;
    e.startNs = q.integer(0) + sessionStartNs;
    e.endNs = std::max(e.startNs, q.integer(1) + sessionStartNs);
    e.device = DeviceIndex{static_cast<int32_t>(q.integer(2))};
    e.stream = static_cast<uint64_t>(q.integer(3));
    e.correlationId = static_cast<uint64_t>(std::max<int64_t>(0, q.integer(4)));
    return e;
}

Status NsysImporter::readKernels() {
    const char* t = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (!need(t, "no kernel table: the report has no CUDA kernels")) {
        return Status::success();
    }
    // Kernel names as the other importers store them: the demangled name with its arguments,
    // else the short name, else the mangled one.
    std::string joins;
    std::string names;
    for (const char* column : {"demangledName", "shortName", "mangledName"}) {
        if (!m_db.hasColumn(t, column)) {
            note(std::string(t) + "." + column, "column absent in this export");
            continue;
        }
        const std::string alias = std::string("s_") + column;
        // Id 0 is a default of old exports (StringIds 0 = "[Unknown]"): fall through to the next.
        joins += " LEFT JOIN StringIds AS " + alias + " ON " + alias + ".id = k." + column +
                 " AND k." + column + " <> 0";
        names += (names.empty() ? "" : ", ") + alias + ".value";
    }
    const std::string nameExpr = names.empty() ? "NULL" : "COALESCE(" + names + ", NULL)";
    Query q(m_db, "SELECT " + activityColumns(m_db, t) + ", " + nameExpr + " FROM " + t + " AS k" +
                      joins);
    while (q.next()) {
        RawKernel k{activityEvent(q, m_sessionStartNs), std::string(q.text(6))};
        k.event.category =
            isCommunicationKernel(k.name) ? KernelCategory::Communication : KernelCategory::Compute;
        addKernel(q, std::move(k));
    }
    return q.status();
}

Status NsysImporter::readCopies() {
    const char* t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!need(t, "no memcpy table: the report has no memory copies")) {
        return Status::success();
    }
    Query q(m_db, "SELECT " + activityColumns(m_db, t) + ", " + m_db.columnOr(t, "bytes", "0") +
                      ", " + m_db.columnOr(t, "copyKind", "0") + ", " +
                      m_db.columnOr(t, "srcKind") + ", " + m_db.columnOr(t, "dstKind") + " FROM " +
                      t);
    while (q.next()) {
        RawKernel k{activityEvent(q, m_sessionStartNs), "Memcpy"};
        k.event.category = KernelCategory::Memcpy;
        k.event.bytes = static_cast<uint64_t>(std::max<int64_t>(0, q.integer(6)));
        if (const std::string kind = copyKindName(q.integer(7)); !kind.empty()) {
            k.name += " " + kind;
        }
        if (!q.isNull(8) && !q.isNull(9)) {
            k.name += std::string(" (") + memKindName(q.integer(8)) + " -> " +
                      memKindName(q.integer(9)) + ")";
        }
        addKernel(q, std::move(k));
    }
    return q.status();
}

Status NsysImporter::readMemsets() {
    const char* t = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!need(t, "no memset table: the report has no memsets")) {
        return Status::success();
    }
    Query q(m_db, "SELECT " + activityColumns(m_db, t) + ", " + m_db.columnOr(t, "bytes", "0") +
                      ", " + m_db.columnOr(t, "memKind") + " FROM " + t);
    while (q.next()) {
        RawKernel k{activityEvent(q, m_sessionStartNs), "Memset"};
        k.event.category = KernelCategory::Memset;
        k.event.bytes = static_cast<uint64_t>(std::max<int64_t>(0, q.integer(6)));
        if (!q.isNull(7)) {
            k.name += std::string(" (") + memKindName(q.integer(7)) + ")";
        }
        addKernel(q, std::move(k));
    }
    return q.status();
}

Status NsysImporter::readMemory() {
    const char* t = "CUDA_GPU_MEMORY_USAGE_EVENTS";
    if (!need(t,
              "no GPU memory table: the report has no allocations (nsys records them only "
              "with --cuda-memory-usage=true)")) {
        return Status::success();
    }
    Query q(m_db, "SELECT start, " + m_db.columnOr(t, "globalPid", "0") + ", " +
                      m_db.columnOr(t, "deviceId", "0") + ", " + m_db.columnOr(t, "address", "0") +
                      ", " + m_db.columnOr(t, "bytes", "0") + ", " + m_db.columnOr(t, "memKind") +
                      ", " + m_db.columnOr(t, "memoryOperationType", "0") + " FROM " + t +
                      " WHERE start IS NOT NULL ORDER BY start, rowid");
    // Live allocations per process, device and address: a free takes the size of its allocation.
    std::map<std::tuple<uint64_t, int64_t, int64_t>, uint64_t> live;
    uint64_t rows = 0;
    while (q.next()) {
        ++rows;
        const uint64_t key = processKey(q.integer(1));
        Process& p = m_processes[key];
        MemoryEvent e;
        // Pinned host memory (cudaHostAlloc) is kept, on the host, for the host-memory analysis;
        // pageable host memory is no allocation of the process's own that nsys tracks.
        const bool pinned = q.integer(5, 7) == 1;
        if (pinned) {
            e.kind = MemoryKind::Pinned;
        } else if (!gpuMemoryKind(q.integer(5, 7), e.kind)) {
            ++p.hostMemoryEvents;
            continue;
        }
        e.timestampNs = toTrace(q.integer(0));
        e.device = pinned ? kHostDevice : DeviceIndex{static_cast<int32_t>(q.integer(2))};
        e.address = static_cast<uint64_t>(q.integer(3));
        e.sizeBytes = static_cast<uint64_t>(std::max<int64_t>(0, q.integer(4)));
        // cudaMalloc-level allocations from the driver: the reserved level (docs/DESIGN.md
        // "Two levels of GPU memory"), as the capture agent files CUPTI's device allocations.
        e.level = MemoryLevel::Reserved;
        const auto at = std::make_tuple(key, q.integer(2), q.integer(3));
        if (q.integer(6) == 1) {
            auto it = live.find(at);
            if (it == live.end()) {
                ++p.freesOfUnknownAddress;
                continue;
            }
            e.action = MemoryAction::Free;
            e.sizeBytes = it->second;
            live.erase(it);
        } else {
            e.action = MemoryAction::Alloc;
            live[at] = e.sizeBytes;
        }
        p.memory.push_back(e);
    }
    if (q.status() && rows == 0) {
        note(t, "the table is empty: the report has no GPU memory allocations");
    }
    return q.status();
}

Status NsysImporter::readNvtx() {
    const char* t = "NVTX_EVENTS";
    if (!need(t, "no NVTX table: the report has no NVTX ranges")) {
        return Status::success();
    }
    // Columns of NVTX_EVENTS as "n.col", or a constant where this export lacks them.
    auto col = [&](const char* column, const char* fallback) {
        return m_db.hasColumn(t, column) ? "n." + m_db.columnOr(t, column) : std::string(fallback);
    };
    const bool textIds = m_db.hasColumn(t, "textId") && m_db.hasTable("StringIds");
    const std::string nameExpr =
        textIds ? "COALESCE(" + col("text", "NULL") + ", s.value)" : col("text", "NULL");
    const std::string join = textIds ? " LEFT JOIN StringIds AS s ON s.id = n.textId" : "";
    Query q(m_db, "SELECT n.start, " + col("end", "NULL") + ", " + col("eventType", "0") + ", " +
                      col("globalTid", "0") + ", " + col("domainId", "0") + ", " + nameExpr +
                      " FROM " + t + " AS n" + join +
                      " WHERE n.start IS NOT NULL ORDER BY n.start, n.rowid");
    while (q.next()) {
        const int64_t type = q.integer(2);
        const int64_t gtid = q.integer(3);
        Process& p = m_processes[processKey(gtid)];
        const std::string_view name = q.text(5);
        if (type == kNvtxDomainCreate) {
            p.domains[q.integer(4)] = std::string(name);
        } else if (type == kNvtxThreadName) {
            if (const RankId r = rankFromThreadName(name); r != kUnknownRank) {
                p.rank = r;
            }
        } else if (type == kNvtxPushPop || type == kNvtxStartEnd) {
            if (q.isNull(1) || q.integer(1) < q.integer(0)) {
                ++p.nvtxWithoutEnd;
                continue;
            }
            RawRange r;
            r.event.startNs = toTrace(q.integer(0));
            r.event.endNs = toTrace(q.integer(1));
            r.event.threadId = tidOf(gtid);
            r.pushPop = type == kNvtxPushPop;
            r.globalTid = gtid;
            r.name = std::string(name);
            // NOTE(nccl): NCCL annotates its calls in its own NVTX domain "NCCL"; its ranges
            // keep the domain in their name so they are not taken for the program's own.
            if (auto d = p.domains.find(q.integer(4));
                d != p.domains.end() && d->second == "NCCL") {
                r.name = "NCCL: " + r.name;
            }
            p.ranges.push_back(std::move(r));
        }
        // Marks (34), categories and the other kinds have no extent: they make no range.
    }
    return q.status();
}

Status NsysImporter::readMpiRanks() {
    // nsys names the MPI thread "MPI Rank N" (ThreadNames; the 2022 saxpy export does), and MPI
    // traces add an MPI_RANKS table; its layout (globalTid, rank) is not in the schema reference
    // this was written from, so it is read only when both columns are there.
    if (m_db.hasTable("ThreadNames") && m_db.hasColumn("ThreadNames", "globalTid") &&
        m_db.hasColumn("ThreadNames", "nameId")) {
        Query q(m_db,
                "SELECT t.globalTid, s.value FROM ThreadNames AS t JOIN StringIds AS s ON "
                "s.id = t.nameId WHERE s.value LIKE 'MPI Rank %'");
        while (q.next()) {
            if (auto it = m_processes.find(processKey(q.integer(0))); it != m_processes.end()) {
                if (const RankId r = rankFromThreadName(q.text(1)); r != kUnknownRank) {
                    it->second.rank = r;
                }
            }
        }
        if (!q.status()) {
            return q.status();
        }
    }
    const char* t = "MPI_RANKS";
    if (m_db.hasTable(t) && m_db.hasColumn(t, "rank") && m_db.hasColumn(t, "globalTid")) {
        Query q(m_db, std::string("SELECT globalTid, rank FROM ") + t);
        while (q.next()) {
            if (auto it = m_processes.find(processKey(q.integer(0)));
                it != m_processes.end() && !q.isNull(1)) {
                it->second.rank = RankId{static_cast<int32_t>(q.integer(1))};
            }
        }
        return q.status();
    }
    return Status::success();
}

/// Nesting depth of push/pop ranges per thread: ranges sorted by start (longer first) sit inside
/// every earlier range that has not ended yet.
void assignDepths(std::vector<RawRange>& ranges) {
    std::stable_sort(ranges.begin(), ranges.end(), [](const RawRange& a, const RawRange& b) {
        if (a.event.startNs != b.event.startNs) {
            return a.event.startNs < b.event.startNs;
        }
        return a.event.endNs > b.event.endNs;
    });
    std::map<int64_t, std::vector<TimestampNs>> open;  ///< per thread: ends of enclosing ranges
    for (RawRange& r : ranges) {
        if (!r.pushPop) {
            continue;
        }
        auto& stack = open[r.globalTid];
        while (!stack.empty() && stack.back() <= r.event.startNs) {
            stack.pop_back();
        }
        r.event.depth = static_cast<uint32_t>(stack.size());
        stack.push_back(r.event.endNs);
    }
}

/// Appends the kernels (sorted by start) and a collective for each NCCL / RCCL kernel, its
/// function and algorithm read from the kernel name as the Kineto importer reads them.
void appendKernels(std::vector<RawKernel>& kernels, TraceData& d) {
    std::stable_sort(kernels.begin(), kernels.end(), [](const RawKernel& a, const RawKernel& b) {
        return a.event.startNs < b.event.startNs;
    });
    d.kernels.reserve(kernels.size());
    for (RawKernel& k : kernels) {
        k.event.name = k.name.empty() ? 0 : d.intern(k.name);
        d.kernels.append(k.event);
        if (k.event.category == KernelCategory::Communication) {
            CollectiveEvent c;
            c.startNs = k.event.startNs;
            c.endNs = k.event.endNs;
            c.device = k.event.device;
            c.stream = k.event.stream;
            const std::string_view function = collectiveFromKernelName(k.name);
            c.function = function.empty() ? 0 : d.intern(function);
            c.timing = CollectiveTiming::Kernel;  // the kernel's own GPU interval
            // The algorithm only where the name tells it (algorithmFromKernelName's NCCL
            // facts); the protocol in the name is never the one that ran.
            if (const std::string_view algorithm = algorithmFromKernelName(k.name);
                !algorithm.empty()) {
                c.algorithm = d.intern(algorithm);
            }
            d.collectives.append(c);
        }
    }
}

void NsysImporter::mergeOrphans() {
    auto orphan = m_processes.find(0);
    Process* other = nullptr;
    size_t withEvents = 0;
    for (auto& [key, process] : m_processes) {
        if (key != 0 && process.hasEvents()) {
            other = &process;
            ++withEvents;
        }
    }
    if (orphan == m_processes.end() || withEvents != 1) {
        return;
    }
    const Process& o = orphan->second;
    other->kernels.insert(other->kernels.end(), o.kernels.begin(), o.kernels.end());
    other->memory.insert(other->memory.end(), o.memory.begin(), o.memory.end());
    other->ranges.insert(other->ranges.end(), o.ranges.begin(), o.ranges.end());
    other->nvtxWithoutEnd += o.nvtxWithoutEnd;
    other->badIntervals += o.badIntervals;
    other->freesOfUnknownAddress += o.freesOfUnknownAddress;
    other->hostMemoryEvents += o.hostMemoryEvents;
    if (other->rank == kUnknownRank) {
        other->rank = o.rank;
    }
    m_processes.erase(orphan);
}

/// The GPUs this process used (kernels, copies, memory), described from TARGET_INFO_GPU, in
/// index order. A report lists every GPU of the node, also those other processes (other ranks)
/// used: listing them all on every rank would show idle GPUs that were never this rank's. A
/// process that used none lists every GPU of the report.
std::vector<DeviceInfo> NsysImporter::devicesUsed(const TraceData& d) const {
    std::set<DeviceIndex> used(d.kernels.device.begin(), d.kernels.device.end());
    used.insert(d.memory.device.begin(), d.memory.device.end());
    used.erase(kHostDevice);  // pinned host memory is no GPU's
    if (used.empty()) {
        return m_gpus;
    }
    std::vector<DeviceInfo> out;
    for (DeviceIndex index : used) {
        auto it = std::find_if(m_gpus.begin(), m_gpus.end(),
                               [&](const DeviceInfo& g) { return g.index == index; });
        out.push_back(it != m_gpus.end() ? *it : DeviceInfo{index, {}, {}, 0});
    }
    return out;
}

LoadedTrace NsysImporter::build(uint64_t key, Process& p, uint64_t fileBytes) const {
    LoadedTrace out;
    TraceData& d = out.data;
    FileHeader& h = d.header;
    h.formatMajor = kFormatMajor;
    h.formatMinor = kFormatMinor;
    h.producer = "nsys-sqlite import";
    h.pid = pidOf(key);
    h.rank = p.rank;
    h.clockDomain = m_haveSessionStart ? "nsys-ns (Unix time)" : "nsys-ns (since session start)";
    if (m_haveSessionStart) {
        h.wallClockAnchorNs = m_sessionStartNs;
        h.anchorTraceNs = m_sessionStartNs;
    }
    appendKernels(p.kernels, d);
    d.memory.reserve(p.memory.size());
    for (const MemoryEvent& e : p.memory) {
        d.memory.append(e);
    }
    h.devices = devicesUsed(d);
    assignDepths(p.ranges);
    for (RawRange& r : p.ranges) {
        r.event.name = d.intern(r.name);
        d.ranges.append(r.event);
    }
    addSettings(p, d);
    auto skipped = [&](uint64_t n, const std::string& what) {
        if (n > 0) {
            d.dataLoss.push_back({LossCounter::NsysRowsSkipped, n, what, 0, 0});
        }
    };
    skipped(p.nvtxWithoutEnd, "NVTX ranges without an end (never popped or ended) were left out");
    skipped(p.badIntervals,
            "kernel, memcpy or memset rows whose start or end is not a time, or that end before "
            "they start, were left out");
    skipped(p.freesOfUnknownAddress, "frees of addresses the report never allocated were left out");
    // Rows are the events of this format: counted as whole events of an event stream.
    out.report.eventStream = true;
    out.report.framesLoaded = d.eventCount();
    out.report.fileName = m_db.name();
    out.report.fileBytes = fileBytes;
    out.report.bytesLoaded = fileBytes;
    return out;
}

/// The header's nsys.* settings: versions, session start, the report's GPUs, what was absent.
void NsysImporter::addSettings(const Process& p, TraceData& d) const {
    FileHeader& h = d.header;
    auto& settings = h.captureSettings;
    settings.emplace_back("nsys.product_version",
                          m_version.productVersion.empty() ? "unknown" : m_version.productVersion);
    settings.emplace_back("nsys.schema_version",
                          m_version.schemaVersion.empty()
                              ? "unknown (no META_DATA_EXPORT or EXPORT_META_DATA table)"
                              : m_version.schemaVersion);
    if (m_haveSessionStart) {
        settings.emplace_back("nsys.session_start_utc_ns", std::to_string(m_sessionStartNs));
    }
    if (!m_gpus.empty()) {
        std::string ids;
        for (const DeviceInfo& g : m_gpus) {
            ids += (ids.empty() ? "" : ", ") + std::to_string(toInt(g.index));
        }
        const size_t usedCount = d.kernels.size() + d.memory.size() == 0 ? 0 : h.devices.size();
        settings.emplace_back("nsys.gpus_in_report", std::to_string(m_gpus.size()) + " (ids " +
                                                         ids + "); this process used " +
                                                         std::to_string(usedCount));
    }
    settings.insert(settings.end(), m_notes.begin(), m_notes.end());
    if (p.hostMemoryEvents > 0) {
        settings.emplace_back(
            "nsys.host_memory_events_left_out",
            std::to_string(p.hostMemoryEvents) + " (pageable host memory is no GPU memory)");
    }
}

Result<std::vector<LoadedTrace>> importDatabase(Result<nsys::Database> db, uint64_t fileBytes,
                                                const ReadOptions& options) {
    if (!db) {
        return db.error();
    }
    if (Status s = db->loadSchema(); !s) {
        return s.error();
    }
    if (!nsys::looksLikeNsysExport(*db)) {
        return Error::make(ErrorCode::Unsupported, db->name(),
                           "an SQLite database, but not an Nsight Systems export (it has " +
                               std::to_string(db->tableCount()) +
                               " tables and none of StringIds with META_DATA_EXPORT, "
                               "EXPORT_META_DATA or CUPTI_ACTIVITY_KIND_KERNEL)");
    }
    NsysImporter importer(*db, options);
    return importer.run(fileBytes);
}

}  // namespace

Result<std::vector<LoadedTrace>> importNsysSqlite(const std::string& path,
                                                  const ReadOptions& options) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    return importDatabase(nsys::Database::openFile(path, path), ec ? 0 : size, options);
}

Result<std::vector<LoadedTrace>> importNsysSqliteBytes(std::string_view bytes,
                                                       const std::string& name,
                                                       const ReadOptions& options) {
    return importDatabase(nsys::Database::openBytes(bytes, name), bytes.size(), options);
}

}  // namespace vramscope::trace
