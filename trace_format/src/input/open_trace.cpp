#include "vramscope/trace/open_trace.h"

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <system_error>

#include <unistd.h>

#include "vramscope/trace/importers.h"
#include "vramscope/trace/input_bytes.h"
#include "vramscope/trace/job_index.h"
#include "vramscope/trace/plausibility.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

/// The part after the last '/', '\\' or ':', so that names inside archives and paths written on
/// Windows reduce to their file name too.
std::string_view fileNameOf(std::string_view path) {
    const size_t slash = path.find_last_of("/\\:");
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// The format a name suggests (".gz" stripped), Unknown when it suggests none.
InputFormat formatFromName(std::string_view fileName) {
    std::string n = lower(fileNameOf(fileName));
    if (n.ends_with(".gz")) {
        n.resize(n.size() - 3);
    }
    if (n.ends_with(".vscope")) {
        return InputFormat::Vscope;
    }
    if (n.ends_with(".pickle") || n.ends_with(".pkl")) {
        return InputFormat::PytorchSnapshot;
    }
    if (n.ends_with(".json")) {
        return InputFormat::KinetoJson;
    }
    if (n.ends_with(".sqlite")) {
        return InputFormat::NsysSqlite;
    }
    return InputFormat::Unknown;
}

std::optional<std::string> judgeFileStart(std::string_view head);

/// Names a directory listing or an archive contributes.
bool isSupportedName(std::string_view fileName) {
    const std::string_view base = fileNameOf(fileName);
    if (base.starts_with("._")) {
        return false;  // AppleDouble metadata files that macOS tar adds
    }
    return formatFromName(base) != InputFormat::Unknown || isArchiveName(base);
}

std::string unsupportedMessage() {
    return "unsupported format: not a .vscope file, a PyTorch memory snapshot (pickle), a "
           "Kineto / Chrome trace JSON or an Nsight Systems SQLite export";
}

/// An Nsight Systems report (.nsys-rep, .qdrep) is nsys's own format: the Error gives the command
/// that exports it to the SQLite form read here.
/// With `onDisk`, a missing file is left to the usual "cannot open" error.
std::optional<Error> refuseNsysReport(const std::string& path, bool onDisk = true) {
    const std::string n = lower(fileNameOf(path));
    std::error_code ec;
    if ((!n.ends_with(".nsys-rep") && !n.ends_with(".qdrep")) ||
        (onDisk && !fs::exists(path, ec))) {
        return std::nullopt;
    }
    return Error::make(ErrorCode::Unsupported, path,
                       "an Nsight Systems report is read through its SQLite export; make one "
                       "with: " +
                           nsysExportCommand(path));
}

/// Whether the file starts with the SQLite magic (read in place, never loaded into memory).
bool isSqliteFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string head(16, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    return in.gcount() == static_cast<std::streamsize>(head.size()) && looksLikeSqlite(head);
}

/// The one process of an Nsight Systems report, or an Error that says to open it as a job.
Result<LoadedTrace> onlyProcess(Result<std::vector<LoadedTrace>> traces, const std::string& name) {
    if (!traces) {
        return traces.error();
    }
    if (traces->size() != 1) {
        return Error::make(ErrorCode::Invalid, name,
                           "the Nsight Systems report holds " + std::to_string(traces->size()) +
                               " processes (one per rank): open it as a job");
    }
    dropImplausibleEvents(traces->front().data);
    return std::move(traces->front());
}

void addNotes(LoadedTrace& trace, InputNotes& notes) {
    for (auto& p : notes.problems) {
        trace.data.dataLoss.push_back({LossCounter::CompressedInputCut, 0, p.message, 0, 0});
        trace.report.problems.push_back(std::move(p));
        trace.report.complete = false;
        trace.report.truncated = true;
    }
}

/// Assigns the rank of a loaded trace: header, else file name, else unknown.
RankTrace makeRank(std::string path, InputFormat format, LoadedTrace trace) {
    RankTrace r;
    r.path = std::move(path);
    r.format = format;
    r.trace = std::move(trace);
    FileHeader& h = r.trace.data.header;
    if (h.rank != kUnknownRank) {
        r.rankSource = "header";
    } else if (const RankId fromName = rankFromFileName(r.path); fromName != kUnknownRank) {
        h.rank = fromName;
        r.rankSource = "file name";
    } else {
        r.rankSource = "unknown";
    }
    return r;
}

/// Adds each process of an Nsight Systems report as a rank ("REPORT:pid N" when several).
void addNsysRanks(Job& job, const std::string& path, Result<std::vector<LoadedTrace>> traces) {
    if (!traces) {
        job.skipped.push_back(traces.error());
        return;
    }
    const bool several = traces->size() > 1;
    for (LoadedTrace& t : *traces) {
        dropImplausibleEvents(t.data);
        const std::string display =
            several ? path + ":pid " + std::to_string(t.data.header.pid) : path;
        job.ranks.push_back(makeRank(display, InputFormat::NsysSqlite, std::move(t)));
    }
}

/// Loads one decoded input and adds it to the job (or to skipped).
void addToJob(Job& job, const std::string& displayPath, Result<std::string> bytes,
              InputNotes& notes, const ReadOptions& options) {
    if (!bytes) {
        job.skipped.push_back(bytes.error());
        return;
    }
    if (bytes->empty() && !notes.problems.empty()) {  // e.g. a gzip stream damaged from its start
        job.skipped.push_back(notes.problems.front());
        return;
    }
    const InputFormat format = detectFormat(*bytes, displayPath);
    if (format == InputFormat::NsysSqlite) {
        addNsysRanks(job, displayPath, importNsysSqliteBytes(*bytes, displayPath, options));
        return;
    }
    auto trace = openTraceBytes(*bytes, displayPath, options);
    if (!trace) {
        job.skipped.push_back(trace.error());
        return;
    }
    addNotes(*trace, notes);
    job.ranks.push_back(makeRank(displayPath, format, std::move(*trace)));
}

Error memberTooLarge(const std::string& name, uint64_t maxBytes) {
    return Error::make(ErrorCode::Limit, name,
                       inputLimitText("the archive member is larger than", maxBytes));
}

/// Reads the current archive member into memory, refusing members above `maxBytes`.
Result<std::string> readMember(archive* a, archive_entry* entry, const std::string& name,
                               uint64_t maxBytes) {
    if (archive_entry_size_is_set(entry) != 0 &&
        static_cast<uint64_t>(archive_entry_size(entry)) > maxBytes) {
        return memberTooLarge(name, maxBytes);
    }
    // The declared size is reserved only once the start is taken: a member of zeros is refused
    // after its first MiB, without a reservation of the size its header claims.
    const size_t declared = archive_entry_size_is_set(entry) != 0
                                ? static_cast<size_t>(archive_entry_size(entry))
                                : size_t{0};
    std::string data;
    data.reserve(std::min(declared, kStartJudgeBytes));
    char block[1 << 16];
    bool judged = false;
    for (;;) {
        const la_ssize_t n = archive_read_data(a, block, sizeof block);
        if (n < 0) {
            const char* why = archive_error_string(a);
            return Error::make(ErrorCode::Corrupt, name,
                               std::string("cannot read the archive member: ") +
                                   (why != nullptr ? why : "libarchive error"))
                .atByte(static_cast<int64_t>(data.size()));
        }
        if (n == 0) {
            break;
        }
        if (data.size() + static_cast<size_t>(n) > maxBytes) {
            return memberTooLarge(name, maxBytes);
        }
        data.append(block, static_cast<size_t>(n));
        // Plain content no reader takes is refused from its first bytes, before the rest of
        // the member is read (gzip content is judged as it is decompressed).
        if (!judged && data.size() >= kStartJudgeBytes) {
            judged = true;
            const std::string_view head = std::string_view(data).substr(0, kStartJudgeBytes);
            if (auto why = judgeFileStart(head); !isGzip(head) && why && !why->empty()) {
                return Error::make(ErrorCode::Unsupported, name, std::move(*why));
            }
            data.reserve(declared);
        }
    }
    return data;
}

/// Opens a .tar / .tar.gz / .tgz with libarchive; each member trace becomes a rank.
void openArchive(Job& job, const std::string& path, const ReadOptions& options) {
    std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
    archive_read_support_filter_all(a.get());
    archive_read_support_format_tar(a.get());
    if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) {
        const char* why = archive_error_string(a.get());
        job.skipped.push_back(Error::make(
            ErrorCode::Io, path,
            std::string("cannot open the archive: ") + (why != nullptr ? why : "unknown")));
        return;
    }
    size_t members = 0;
    archive_entry* entry = nullptr;
    int rc = ARCHIVE_OK;
    while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
        const char* memberName = archive_entry_pathname(entry);
        if (archive_entry_filetype(entry) != AE_IFREG || memberName == nullptr ||
            !isSupportedName(memberName) || isArchiveName(memberName)) {
            continue;
        }
        ++members;
        const std::string display = path + ":" + memberName;
        auto raw = readMember(a.get(), entry, display, options.maxInputBytes);
        InputNotes notes;
        Result<std::string> bytes =
            raw ? decodeInputBytes(*raw, display, options.maxInputBytes, &notes, judgeFileStart)
                : raw.error();
        addToJob(job, display, std::move(bytes), notes, options);
    }
    if (rc != ARCHIVE_EOF) {
        const char* why = archive_error_string(a.get());
        job.skipped.push_back(
            Error::make(ErrorCode::Corrupt, path,
                        std::string("the archive is damaged after ") + std::to_string(members) +
                            " members: " + (why != nullptr ? why : "libarchive error")));
    } else if (members == 0) {
        job.skipped.push_back(
            Error::make(ErrorCode::Unsupported, path, "the archive holds no supported trace file"));
    }
}

/// First and last value of a time column, (0, 0) when empty.
template <typename Column>
std::pair<int64_t, int64_t> timeRange(const Column& column) {
    if (column.empty()) {
        return {0, 0};
    }
    const auto [lo, hi] = std::minmax_element(column.begin(), column.end());
    return {static_cast<int64_t>(*lo), static_cast<int64_t>(*hi)};
}

bool sameHeader(const FileHeader& a, const FileHeader& b) {
    if (a.rank != b.rank || a.producer != b.producer || a.host != b.host || a.pid != b.pid ||
        a.worldSize != b.worldSize || a.jobId != b.jobId || a.clockDomain != b.clockDomain ||
        a.devices.size() != b.devices.size()) {
        return false;
    }
    for (size_t i = 0; i < a.devices.size(); ++i) {
        const DeviceInfo& x = a.devices[i];
        const DeviceInfo& y = b.devices[i];
        if (x.index != y.index || x.uuid != y.uuid || x.name != y.name ||
            x.totalMemoryBytes != y.totalMemoryBytes) {
            return false;
        }
    }
    return true;
}

/// Whether two input paths name one file (or one member of one archive, "ARCHIVE:MEMBER").
bool samePath(const std::string& a, const std::string& b) {
    std::error_code ea, eb;
    const fs::path ca = fs::weakly_canonical(a, ea);
    const fs::path cb = fs::weakly_canonical(b, eb);
    return ea || eb ? a == b : ca == cb;
}

/// Drops every rank that repeats an earlier one (sameRankContent), in input order, so the first
/// source given is the one kept; warns about it, and about different traces claiming one rank.
void dropRepeatedRanks(Job& job) {
    std::vector<RankTrace> kept;
    for (RankTrace& r : job.ranks) {
        const RankTrace* same = nullptr;
        const RankTrace* conflict = nullptr;
        for (const RankTrace& k : kept) {
            // An unranked trace is a repeat only when it is the same file: two unranked
            // captures of a short run can agree on every count and time without being one.
            const bool ranked = r.trace.data.header.rank != kUnknownRank;
            if (sameRankContent(k.trace.data, r.trace.data) &&
                (ranked || samePath(k.path, r.path))) {
                same = &k;
                break;
            }
            const RankId rank = k.trace.data.header.rank;
            if (rank != kUnknownRank && rank == r.trace.data.header.rank && conflict == nullptr) {
                conflict = &k;
            }
        }
        const std::string rankName =
            r.trace.data.header.rank == kUnknownRank
                ? std::string("a trace of unknown rank")
                : "rank " + std::to_string(static_cast<int32_t>(r.trace.data.header.rank));
        if (same != nullptr) {
            job.warnings.push_back(rankName + " was given twice (" + same->path + " and " + r.path +
                                   ": same header, event counts and first and last times); "
                                   "loaded once, from " +
                                   same->path);
            continue;
        }
        if (conflict != nullptr) {
            job.warnings.push_back(rankName + " is claimed by two different traces (" +
                                   conflict->path + " and " + r.path +
                                   "); both are kept, but they are probably not one job");
        }
        kept.push_back(std::move(r));
    }
    job.ranks = std::move(kept);
}

/// A tar header: "ustar" at byte 257 (POSIX.1-1988 ustar format, also GNU tar's).
bool isTarBytes(std::string_view bytes) {
    return bytes.size() > 262 && bytes.substr(257, 5) == "ustar";
}

constexpr const char* kTarOnStandardInput =
    "a tar archive on standard input is not read; give the archive's path instead";

/// "-" on a command line: standard input, read to its end (a pipe has no size up front).
bool isStandardInput(const std::string& path) {
    return path == "-";
}

/// Blank bytes that may lead a JSON document on standard input before it is refused.
constexpr size_t kMaxLeadingBlankBytes = 1u << 20;

/// The judgement of readInputStream's start check on plain (not gzipped) bytes: "" = a format
/// the readers take, nullopt = only blanks so far (JSON may start with any amount of them),
/// else why not.
std::optional<std::string> judgePlainStart(std::string_view head) {
    if (detectFormat(head, "") != InputFormat::Unknown) {
        return std::string();
    }
    if (head.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        if (head.size() < kMaxLeadingBlankBytes) {
            return std::nullopt;
        }
        return std::string("the first ") + std::to_string(kMaxLeadingBlankBytes) +
               " bytes are blank: " + unsupportedMessage();
    }
    if (isTarBytes(head)) {
        return std::string(kTarOnStandardInput);
    }
    return unsupportedMessage();
}

/// The start of a gzip stream, decompressed (at most `limit` bytes; what zlib could make of the
/// bytes so far, errors left to the full read).
std::string gunzipStart(std::string_view gz, size_t limit) {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK) {
        return {};
    }
    std::string out(limit, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    zs.avail_in = static_cast<uInt>(std::min<size_t>(gz.size(), UINT32_MAX));
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    inflate(&zs, Z_SYNC_FLUSH);
    out.resize(out.size() - zs.avail_out);
    inflateEnd(&zs);
    return out;
}

/// readInputStream's start check for standard input: the plain judgement, on the decompressed
/// start for gzip content (so that `yes | gzip` is refused too, not read to the limit).
std::optional<std::string> refuseStandardInput(std::string_view head) {
    if (!isGzip(head)) {
        return judgePlainStart(head);
    }
    const std::string start = gunzipStart(head, kMaxLeadingBlankBytes);
    if (start.empty()) {
        return std::nullopt;  // nothing decompressed yet (or damaged: the full read says so)
    }
    return judgePlainStart(start);
}

/// readInputBytes' start check for a file or an archive member (after gzip decompression): the
/// judgement of judgePlainStart, by content alone (a file named .json that starts with zeros is
/// no JSON), except that a tar header is left to openTraceBytes' message about archives.
std::optional<std::string> judgeFileStart(std::string_view head) {
    if (isTarBytes(head)) {
        return std::string();
    }
    if (head.find_first_not_of('\0') == std::string_view::npos) {
        return "the first " + std::to_string(head.size()) +
               " bytes are all zeros (a file never written, or not a trace): " +
               unsupportedMessage();
    }
    return judgePlainStart(head);
}

Result<std::string> readStandardInput(InputNotes& notes, uint64_t maxBytes) {
    return readInputStream(STDIN_FILENO, kStandardInputName, maxBytes, &notes, refuseStandardInput);
}

void openOne(Job& job, const std::string& path, const ReadOptions& options) {
    if (isStandardInput(path)) {
        InputNotes notes;
        auto bytes = readStandardInput(notes, options.maxInputBytes);
        addToJob(job, kStandardInputName, std::move(bytes), notes, options);
        return;
    }
    if (isArchiveName(path)) {
        openArchive(job, path, options);
        return;
    }
    if (auto refused = refuseNsysReport(path)) {
        job.skipped.push_back(*refused);
        return;
    }
    if (isSqliteFile(path)) {
        addNsysRanks(job, path, importNsysSqlite(path, options));
        return;
    }
    InputNotes notes;
    auto bytes = readInputBytes(path, options.maxInputBytes, &notes, judgeFileStart);
    addToJob(job, path, std::move(bytes), notes, options);
}

}  // namespace

const char* toString(InputFormat format) {
    switch (format) {
        case InputFormat::Vscope:
            return "vscope";
        case InputFormat::PytorchSnapshot:
            return "pytorch-snapshot";
        case InputFormat::KinetoJson:
            return "kineto-json";
        case InputFormat::NsysSqlite:
            return "nsys-sqlite";
        case InputFormat::Unknown:
            break;
    }
    return "unknown";
}

InputFormat detectFormat(std::string_view firstBytes, std::string_view fileName) {
    if (looksLikeVscope(firstBytes)) {
        return InputFormat::Vscope;
    }
    if (firstBytes.size() >= 2 && static_cast<unsigned char>(firstBytes[0]) == 0x80 &&
        firstBytes[1] >= 2 && firstBytes[1] <= 5) {
        return InputFormat::PytorchSnapshot;  // pickle PROTO opcode, protocols 2..5
    }
    std::string_view s = firstBytes;
    if (s.starts_with("\xEF\xBB\xBF")) {
        s.remove_prefix(3);
    }
    const size_t start = s.find_first_not_of(" \t\r\n");
    if (start != std::string_view::npos && (s[start] == '{' || s[start] == '[')) {
        return InputFormat::KinetoJson;
    }
    if (looksLikeSqlite(firstBytes)) {
        return InputFormat::NsysSqlite;
    }
    return formatFromName(fileName);
}

Result<LoadedTrace> openTraceBytes(const std::string& bytes, const std::string& name,
                                   const ReadOptions& options) {
    auto checked = [](Result<LoadedTrace> trace) {
        if (trace) {
            dropImplausibleEvents(trace->data);
        }
        return trace;
    };
    switch (detectFormat(bytes, name)) {
        case InputFormat::Vscope: {
            auto read = readTraceBytes(bytes, name, options);
            if (read && read->data.header.producer == kJobIndexProducer) {
                // An index lists rank files and holds no events: reading it as a trace would
                // answer "no GPU" about a job that has many.
                return Error::make(ErrorCode::Unsupported, name,
                                   "is a job index (written by vramscope-cli summarize), not a "
                                   "trace: open it in the viewer (vramscope " +
                                       name + "), or give the rank files it lists");
            }
            return checked(std::move(read));
        }
        case InputFormat::PytorchSnapshot:
            return checked(importPytorchSnapshot(bytes, name, options));
        case InputFormat::KinetoJson:
            if (bytes.starts_with("\xEF\xBB\xBF")) {  // a UTF-8 byte order mark: not JSON's
                return checked(importKinetoJson(std::string_view(bytes).substr(3), name, options));
            }
            return checked(importKinetoJsonBuffer(bytes, name, options));
        case InputFormat::NsysSqlite:
            return onlyProcess(importNsysSqliteBytes(bytes, name, options), name);
        case InputFormat::Unknown:
            break;
    }
    if (bytes.empty()) {
        return Error::make(ErrorCode::Truncated, name,
                           "there is nothing to read: the input is empty");
    }
    if (isTarBytes(bytes)) {  // a .tar.gz given as bytes (standard input): libarchive needs a file
        return Error::make(ErrorCode::Unsupported, name,
                           name == kStandardInputName
                               ? std::string(kTarOnStandardInput)
                               : std::string("a tar archive: open it by its path"));
    }
    if (auto refused = refuseNsysReport(name, false)) {
        return *refused;
    }
    return Error::make(ErrorCode::Unsupported, name, unsupportedMessage());
}

Result<LoadedTrace> openTrace(const std::string& path, const ReadOptions& options) {
    if (isArchiveName(path)) {
        Job job;
        openArchive(job, path, options);
        if (job.ranks.size() == 1) {
            return std::move(job.ranks.front().trace);
        }
        if (job.ranks.empty()) {
            return job.skipped.empty() ? Error::make(ErrorCode::Unsupported, path,
                                                     "the archive holds no supported trace")
                                       : job.skipped.front();
        }
        return Error::make(ErrorCode::Invalid, path,
                           "the archive holds " + std::to_string(job.ranks.size()) +
                               " traces (one per rank): open it as a job");
    }
    if (auto refused = refuseNsysReport(path)) {
        return *refused;
    }
    if (isSqliteFile(path)) {
        return onlyProcess(importNsysSqlite(path, options), path);
    }
    InputNotes notes;
    const bool standardInput = isStandardInput(path);
    const std::string name = standardInput ? kStandardInputName : path;
    auto bytes = standardInput
                     ? readStandardInput(notes, options.maxInputBytes)
                     : readInputBytes(path, options.maxInputBytes, &notes, judgeFileStart);
    if (!bytes) {
        return bytes.error();
    }
    if (bytes->empty() && !notes.problems.empty()) {  // e.g. a gzip stream damaged from its start
        return notes.problems.front();
    }
    auto trace = openTraceBytes(*bytes, name, options);
    if (trace) {
        addNotes(*trace, notes);
    }
    return trace;
}

bool isJobMemberName(std::string_view fileName) {
    // The job's notes sidecar (notesSidecarPath: "<dir>/vscope-notes.json") and notes files
    // beside single traces are JSON too, but not traces.
    const std::string_view name = fileNameOf(fileName);
    const bool notesFile = name.ends_with("vscope-notes.json");
    return isSupportedName(name) && !notesFile;
}

Result<Job> openJob(const std::vector<std::string>& paths, const ReadOptions& options) {
    Job job;
    if (std::count_if(paths.begin(), paths.end(), isStandardInput) > 1) {
        return Error::make(ErrorCode::Invalid, kStandardInputName,
                           "standard input (-) can be read only once; give it one time");
    }
    for (const auto& path : paths) {
        std::error_code ec;
        if (!fs::is_directory(path, ec)) {
            openOne(job, path, options);
            continue;
        }
        std::vector<std::string> files;
        for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
            std::error_code typeError;
            if (it->is_regular_file(typeError) && isJobMemberName(it->path().filename().string())) {
                files.push_back(it->path().string());
            }
        }
        if (ec) {
            job.skipped.push_back(
                Error::make(ErrorCode::Io, path, "cannot list the directory: " + ec.message()));
        } else if (files.empty()) {
            job.skipped.push_back(Error::make(ErrorCode::Unsupported, path,
                                              "the directory holds no supported trace file"));
        }
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            openOne(job, f, options);
        }
    }
    if (job.ranks.empty()) {
        if (!job.skipped.empty()) {
            Error first = job.skipped.front();
            if (job.skipped.size() > 1) {
                first.message += " (and " + std::to_string(job.skipped.size() - 1) +
                                 " more inputs could not be opened)";
            }
            return first;
        }
        return Error::make(ErrorCode::Invalid, "", "no input to open");
    }
    dropRepeatedRanks(job);
    std::stable_sort(job.ranks.begin(), job.ranks.end(),
                     [](const RankTrace& a, const RankTrace& b) {
                         const RankId ra = a.trace.data.header.rank;
                         const RankId rb = b.trace.data.header.rank;
                         const bool ua = ra == kUnknownRank;
                         const bool ub = rb == kUnknownRank;
                         if (ua != ub) {
                             return ub;
                         }
                         if (ua) {
                             return a.path < b.path;
                         }
                         return ra != rb ? ra < rb : a.path < b.path;
                     });
    return job;
}

bool sameRankContent(const TraceData& a, const TraceData& b) {
    return sameHeader(a.header, b.header) && a.memory.size() == b.memory.size() &&
           a.kernels.size() == b.kernels.size() && a.collectives.size() == b.collectives.size() &&
           a.ranges.size() == b.ranges.size() && a.counters.size() == b.counters.size() &&
           a.ooms.size() == b.ooms.size() &&
           timeRange(a.memory.timestampNs) == timeRange(b.memory.timestampNs) &&
           timeRange(a.kernels.startNs) == timeRange(b.kernels.startNs) &&
           timeRange(a.kernels.endNs) == timeRange(b.kernels.endNs) &&
           timeRange(a.collectives.startNs) == timeRange(b.collectives.startNs) &&
           timeRange(a.ranges.startNs) == timeRange(b.ranges.startNs) &&
           timeRange(a.counters.timestampNs) == timeRange(b.counters.timestampNs);
}

RankId rankFromFileName(std::string_view fileName) {
    const std::string name = lower(fileNameOf(fileName));
    for (std::string_view word : {std::string_view("rank"), std::string_view("worker")}) {
        for (size_t at = name.find(word); at != std::string::npos; at = name.find(word, at + 1)) {
            if (at > 0 && std::isalpha(static_cast<unsigned char>(name[at - 1])) != 0) {
                continue;
            }
            size_t i = at + word.size();
            if (i < name.size() && (name[i] == '-' || name[i] == '_')) {
                ++i;
            }
            int64_t value = 0;
            size_t digits = 0;
            while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) != 0 &&
                   digits < 9) {
                value = value * 10 + (name[i] - '0');
                ++i;
                ++digits;
            }
            if (digits > 0) {
                return static_cast<RankId>(value);
            }
        }
    }
    return kUnknownRank;
}

bool isArchiveName(std::string_view fileName) {
    const std::string n = lower(fileNameOf(fileName));
    return n.ends_with(".tar") || n.ends_with(".tar.gz") || n.ends_with(".tgz");
}

}  // namespace vramscope::trace
