#include "vramscope/trace/notes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

namespace vramscope::trace {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

/// The "format" value every sidecar carries, so that some other JSON file is told apart.
constexpr const char* kNotesFormatName = "vramscope-notes";
/// Sidecars are small (a note is a few hundred bytes); anything larger is not one.
constexpr uint64_t kMaxNotesFileBytes = 64ull << 20;

std::string toHex(const unsigned char* bytes, size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string out(2 * n, '0');
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    return out;
}

bool isSha256Hex(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

bool isColor(const std::string& s) {
    return s.empty() ||
           (s.size() == 7 && s[0] == '#' && std::all_of(s.begin() + 1, s.end(), [](char c) {
                return std::isxdigit(static_cast<unsigned char>(c)) != 0;
            }));
}

/// Reads an optional member of type T; false when present with another type (the note is then
/// skipped). Integers must fit T exactly.
template <class T>
bool readField(const Json& object, const char* key, T& out) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
        return true;
    }
    if constexpr (std::is_same_v<T, std::string>) {
        if (!it->is_string()) {
            return false;
        }
        out = it->template get<std::string>();
        return true;
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!it->is_boolean()) {
            return false;
        }
        out = it->template get<bool>();
        return true;
    } else {
        if (it->is_number_unsigned()) {
            const auto v = it->template get<uint64_t>();
            if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
                return false;
            }
            out = static_cast<T>(v);
            return true;
        }
        if (it->is_number_integer()) {
            const auto v = it->template get<int64_t>();
            if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
                v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
                return false;
            }
            out = static_cast<T>(v);
            return true;
        }
        return false;
    }
}

/// One note from its JSON object; nullopt when a field has the wrong type or the note makes no
/// sense (an end before its start, a colour that is not #rrggbb).
std::optional<Note> readNote(const Json& j) {
    if (!j.is_object()) {
        return std::nullopt;
    }
    Note n;
    std::string address;
    bool ok = readField(j, "id", n.id) && readField(j, "title", n.title) &&
              readField(j, "text", n.text) && readField(j, "color", n.color) &&
              readField(j, "author", n.author) &&
              readField(j, "created_unix_ms", n.createdUnixMs) &&
              readField(j, "start_ns", n.startNs) && readField(j, "end_ns", n.endNs) &&
              readField(j, "rank_index", n.rankIndex) && readField(j, "device", n.device) &&
              readField(j, "flame_frame", n.flameFrame) && readField(j, "generated", n.generated) &&
              readField(j, "kind", n.kind);
    if (!ok || !j.contains("start_ns")) {
        return std::nullopt;
    }
    if (!j.contains("end_ns")) {
        n.endNs = n.startNs;
    }
    if (const auto it = j.find("allocation"); it != j.end() && !it->is_null()) {
        if (!it->is_object() || !readField(*it, "address", address) ||
            !readField(*it, "time_ns", n.allocationTimeNs)) {
            return std::nullopt;
        }
        // Hex text: addresses pass 2^53, past which JSON numbers lose digits in many readers.
        char* end = nullptr;
        errno = 0;
        n.allocationAddress = std::strtoull(address.c_str(), &end, 16);
        if (address.empty() || errno != 0 || *end != '\0') {
            return std::nullopt;
        }
    }
    if (n.endNs < n.startNs || !isColor(n.color) || n.rankIndex < -1 || n.device < -1 ||
        (n.rankIndex >= 0) != (n.device >= 0)) {
        return std::nullopt;
    }
    return n;
}

Json writeNote(const Note& n) {
    Json j;
    j["id"] = n.id;
    j["title"] = n.title;
    j["text"] = n.text;
    j["color"] = n.color;
    j["author"] = n.author;
    j["created_unix_ms"] = n.createdUnixMs;
    j["start_ns"] = n.startNs;
    j["end_ns"] = n.endNs;
    j["rank_index"] = n.rankIndex;
    j["device"] = n.device;
    if (n.allocationAddress != 0) {
        std::ostringstream hex;
        hex << "0x" << std::hex << n.allocationAddress;
        j["allocation"] = Json{{"address", hex.str()}, {"time_ns", n.allocationTimeNs}};
    }
    if (!n.flameFrame.empty()) {
        j["flame_frame"] = n.flameFrame;
    }
    j["generated"] = n.generated;
    if (!n.kind.empty()) {
        j["kind"] = n.kind;
    }
    return j;
}

Error corrupt(const std::string& name, const std::string& message) {
    return Error::make(ErrorCode::Corrupt, name, message);
}

}  // namespace

Result<TraceIdentity> identifyTrace(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error::make(
            ErrorCode::Io, path,
            std::string("cannot be read to compute its SHA-256: ") + std::strerror(errno));
    }
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
        return Error::make(ErrorCode::Limit, path, "SHA-256 is not available (OpenSSL)");
    }
    std::vector<char> block(1 << 20);
    TraceIdentity id;
    id.name = fs::path(path).filename().string();
    while (in) {
        in.read(block.data(), static_cast<std::streamsize>(block.size()));
        const auto got = static_cast<size_t>(in.gcount());
        if (got > 0) {
            EVP_DigestUpdate(ctx.get(), block.data(), got);
            id.sizeBytes += got;
        }
    }
    if (in.bad()) {
        return Error::make(ErrorCode::Io, path, "read failed while computing its SHA-256")
            .atByte(static_cast<int64_t>(id.sizeBytes));
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx.get(), digest, &length);
    id.sha256 = toHex(digest, length);
    return id;
}

Result<std::vector<TraceIdentity>> identifyTraces(const std::vector<std::string>& rankPaths) {
    std::vector<std::string> files;
    for (std::string p : rankPaths) {
        std::error_code ec;
        // Strip ":MEMBER" parts until a regular file is left (member names may hold ':').
        while (!p.empty() && !fs::is_regular_file(p, ec)) {
            const auto colon = p.rfind(':');
            p = colon == std::string::npos ? std::string() : p.substr(0, colon);
        }
        if (!p.empty() && std::find(files.begin(), files.end(), p) == files.end()) {
            files.push_back(p);
        }
    }
    std::vector<TraceIdentity> out;
    for (const std::string& f : files) {
        auto id = identifyTrace(f);
        if (!id) {
            return id.error();
        }
        out.push_back(std::move(id.value()));
    }
    return out;
}

std::string notesSidecarPath(const std::vector<std::string>& inputs) {
    std::vector<std::string> sorted;
    for (const std::string& p : inputs) {
        if (p != "-" && !p.empty()) {
            sorted.push_back(p);
        }
    }
    if (sorted.empty()) {
        return {};
    }
    std::sort(sorted.begin(), sorted.end());
    std::error_code ec;
    if (fs::is_directory(sorted.front(), ec)) {
        return (fs::path(sorted.front()) / "vscope-notes.json").string();
    }
    return sorted.front() + ".vscope-notes.json";
}

Result<NotesDocument> parseNotes(std::string_view json, const std::string& name, size_t* skipped) {
    if (skipped) {
        *skipped = 0;
    }
    Json root;
    try {
        root = Json::parse(json.begin(), json.end());
    } catch (const Json::parse_error& e) {
        // nlohmann's byte is 1-based and points just past where parsing stopped.
        // The parser quotes the bytes it read last; invalid UTF-8 among them is escaped so that
        // the message stays text.
        std::string what;
        for (const unsigned char c : std::string_view(e.what())) {
            if (c >= 0x80 || c < 0x20) {
                static const char* digits = "0123456789abcdef";
                what += "\\x";
                what += digits[c >> 4];
                what += digits[c & 15];
            } else {
                what += static_cast<char>(c);
            }
        }
        return corrupt(name, "is not valid JSON: " + what)
            .atByte(e.byte > 0 ? static_cast<int64_t>(e.byte) - 1 : 0);
    }
    if (!root.is_object() || !root.contains("format") || root["format"] != kNotesFormatName) {
        return Error::make(ErrorCode::Unsupported, name,
                           "is not a vramscope notes file (no \"format\": \"vramscope-notes\")");
    }
    NotesDocument doc;
    if (!readField(root, "version", doc.version) || doc.version < 1) {
        return corrupt(name, "has no valid \"version\" (a whole number from 1)");
    }
    if (doc.version > kNotesFormatVersion) {
        return Error::make(ErrorCode::Unsupported, name,
                           "is notes format version " + std::to_string(doc.version) +
                               "; this vramscope reads up to version " +
                               std::to_string(kNotesFormatVersion) + ". Update vramscope.");
    }
    const auto traces = root.find("traces");
    if (traces == root.end() || !traces->is_array()) {
        return corrupt(name, "has no \"traces\" list naming the traces its notes belong to");
    }
    for (size_t i = 0; i < traces->size(); ++i) {
        const Json& t = (*traces)[i];
        TraceIdentity id;
        if (!t.is_object() || !readField(t, "name", id.name) ||
            !readField(t, "size_bytes", id.sizeBytes) || !readField(t, "sha256", id.sha256) ||
            !isSha256Hex(id.sha256)) {
            return corrupt(name, "trace " + std::to_string(i) +
                                     " has no valid \"sha256\" (64 lower-case hex digits)")
                .atRecord(static_cast<int64_t>(i));
        }
        doc.traces.push_back(std::move(id));
    }
    const auto notes = root.find("notes");
    if (notes != root.end() && !notes->is_array()) {
        return corrupt(name, "\"notes\" is not a list");
    }
    if (notes == root.end()) {
        return doc;
    }
    size_t bad = 0;
    for (const Json& j : *notes) {
        if (auto n = readNote(j)) {
            doc.notes.push_back(std::move(*n));
        } else {
            ++bad;
        }
    }
    // Ids are how edits and undo find a note: a missing or repeated one gets a fresh id rather
    // than losing the note.
    std::vector<std::string> seen;
    size_t next = 1;
    for (Note& n : doc.notes) {
        if (n.id.empty() || std::find(seen.begin(), seen.end(), n.id) != seen.end()) {
            do {
                n.id = "n" + std::to_string(next++);
            } while (std::any_of(doc.notes.begin(), doc.notes.end(),
                                 [&](const Note& o) { return &o != &n && o.id == n.id; }));
        }
        seen.push_back(n.id);
    }
    if (skipped) {
        *skipped = bad;
    }
    return doc;
}

Result<NotesDocument> readNotesFile(const std::string& path, size_t* skipped) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) {
        return Error::make(ErrorCode::Io, path, "cannot be read: " + ec.message());
    }
    if (size > kMaxNotesFileBytes) {
        return Error::make(
            ErrorCode::Limit, path,
            "is " + std::to_string(size >> 20) + " MiB; a notes file is at most 64 MiB");
    }
    std::ifstream in(path, std::ios::binary);
    std::string bytes(size, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    if (!in && !in.eof()) {
        return Error::make(ErrorCode::Io, path, "read failed");
    }
    bytes.resize(static_cast<size_t>(in.gcount()));
    return parseNotes(bytes, path, skipped);
}

std::string formatNotes(const NotesDocument& doc) {
    Json root;
    root["format"] = kNotesFormatName;
    root["version"] = doc.version;
    root["traces"] = Json::array();
    for (const TraceIdentity& t : doc.traces) {
        root["traces"].push_back(
            Json{{"name", t.name}, {"size_bytes", t.sizeBytes}, {"sha256", t.sha256}});
    }
    root["notes"] = Json::array();
    for (const Note& n : doc.notes) {
        root["notes"].push_back(writeNote(n));
    }
    // Invalid UTF-8 in a title (pasted bytes) is replaced, never a throw.
    return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status writeNotesFile(const std::string& path, const NotesDocument& doc) {
    const std::string text = formatNotes(doc);
    std::string temp = path + ".XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot be written: ") + std::strerror(errno));
    }
    ::fchmod(fd, 0644);
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            const int saved = errno;
            ::close(fd);
            ::unlink(temp.c_str());
            return Error::make(ErrorCode::Io, path,
                               std::string("cannot be written: ") + std::strerror(saved))
                .atByte(static_cast<int64_t>(done));
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
        const int saved = errno;
        ::unlink(temp.c_str());
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot be written: ") + std::strerror(saved));
    }
    return Status::success();
}

Status checkNotesBelongTo(const NotesDocument& doc, const std::vector<TraceIdentity>& job,
                          const std::string& sidecarName) {
    std::vector<std::string> want;
    for (const TraceIdentity& t : doc.traces) {
        want.push_back(t.sha256);
    }
    std::vector<std::string> have;
    for (const TraceIdentity& t : job) {
        have.push_back(t.sha256);
    }
    std::sort(want.begin(), want.end());
    std::sort(have.begin(), have.end());
    if (want == have) {
        return Status::success();
    }
    const auto shortHash = [](const std::string& h) { return h.substr(0, 12); };
    // Name the first trace of the job that the sidecar does not list, and a hash it lists instead.
    std::string message = "was written for ";
    const auto missing = std::find_if(job.begin(), job.end(), [&](const TraceIdentity& t) {
        return std::find(want.begin(), want.end(), t.sha256) == want.end();
    });
    const auto stray = std::find_if(doc.traces.begin(), doc.traces.end(), [&](const auto& t) {
        return std::find(have.begin(), have.end(), t.sha256) == have.end();
    });
    if (want.size() != have.size()) {
        message +=
            std::to_string(want.size()) + " trace(s), this job has " + std::to_string(have.size());
    } else {
        message += "a different trace";
    }
    if (stray != doc.traces.end() && missing != job.end()) {
        message += " (it names " + stray->name + " with sha256 " + shortHash(stray->sha256) +
                   "..., " + missing->name + " has " + shortHash(missing->sha256) + "...)";
    } else if (missing != job.end()) {
        message += " (" + missing->name + ", sha256 " + shortHash(missing->sha256) +
                   "..., is not among them)";
    }
    message += "; its notes are not shown";
    return Error::make(ErrorCode::Invalid, sidecarName, message);
}

}  // namespace vramscope::trace
