// Live viewing, the parts both sides share: where sockets live, the ownership checks, finding
// and connecting to a producer, and the .vscope framing facts a stream reader needs. No
// libprotobuf here (vramscope::trace_write): the hello is decoded in live_receiver.cpp.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "live/live_address.h"
#include "vramscope/trace/chunk_encoder.h"
#include "vramscope/trace/live.h"
#include "vscope/frame_bytes.h"

namespace vramscope::trace::live {
namespace {

std::string errnoText(int e) {
    return std::strerror(e);
}

/// The pid of a socket file name "<host>-<pid>.sock", 0 when it does not have that shape.
bool parseSocketName(std::string_view name, std::string& host, int64_t& pid) {
    constexpr std::string_view kSuffix = ".sock";
    if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) {
        return false;
    }
    name.remove_suffix(kSuffix.size());
    const size_t dash = name.rfind('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == name.size()) {
        return false;
    }
    int64_t value = 0;
    for (char c : name.substr(dash + 1)) {
        if (c < '0' || c > '9' || value > (INT64_MAX - 9) / 10) {
            return false;
        }
        value = value * 10 + (c - '0');
    }
    host = std::string(name.substr(0, dash));
    pid = value;
    return pid > 0;
}

bool processAlive(int64_t pid) {
    if (pid <= 0 || pid > INT32_MAX) {
        return false;
    }
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

std::string socketDirectory() {
    if (const char* dir = std::getenv("VRAMSCOPE_LIVE_DIR"); dir != nullptr && dir[0] != '\0') {
        return dir;
    }
    if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run != nullptr && run[0] == '/') {
        return std::string(run) + "/vramscope";
    }
    return "/tmp/vramscope-" + std::to_string(::geteuid());
}

Status checkSocketDirectory(const std::string& dir) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        const int e = errno;
        return Error::make(e == ENOENT ? ErrorCode::Io : ErrorCode::Invalid, dir,
                           "cannot use the live socket directory: " + errnoText(e));
    }
    if (S_ISLNK(st.st_mode)) {
        return Error::make(ErrorCode::Invalid, dir,
                           "the live socket directory is a symbolic link; refusing to use it");
    }
    if (!S_ISDIR(st.st_mode)) {
        return Error::make(ErrorCode::Invalid, dir,
                           "the live socket directory is not a directory; refusing to use it");
    }
    if (st.st_uid != ::geteuid()) {
        return Error::make(ErrorCode::Invalid, dir,
                           "the live socket directory belongs to uid " + std::to_string(st.st_uid) +
                               ", not to this user (uid " + std::to_string(::geteuid()) +
                               "); refusing to use it");
    }
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return Error::make(ErrorCode::Invalid, dir,
                           std::string("the live socket directory has mode ") + mode +
                               ": others may reach it (it must be 0700); refusing to use it");
    }
    return Status::success();
}

Status prepareSocketDirectory(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return Error::make(ErrorCode::Io, dir,
                           "cannot create the live socket directory: " + errnoText(errno));
    }
    return checkSocketDirectory(dir);
}

std::string socketPath(const std::string& dir, std::string_view host, int64_t pid) {
    std::string safe(host.substr(0, 64));
    for (char& c : safe) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        c = ok ? c : '_';
    }
    if (safe.empty()) {
        safe = "host";
    }
    return dir + "/" + safe + "-" + std::to_string(pid) + ".sock";
}

std::string hostName() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) {
        return "localhost";
    }
    std::string h(buf);
    const size_t dot = h.find('.');
    return dot == std::string::npos ? h : h.substr(0, dot);
}

Result<std::vector<LiveSocket>> listSockets(const std::string& dir, bool removeStale,
                                            std::vector<std::string>* removed) {
    if (Status s = checkSocketDirectory(dir); !s.ok()) {
        return s.error();
    }
    std::vector<LiveSocket> found;
    std::error_code ec;
    const std::string self = hostName();
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        LiveSocket s;
        if (!parseSocketName(entry.path().filename().string(), s.host, s.pid)) {
            continue;
        }
        struct stat st {};
        if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) ||
            st.st_uid != ::geteuid()) {
            continue;
        }
        s.path = entry.path().string();
        s.alive = s.host != self || processAlive(s.pid);
        if (!s.alive && removeStale) {
            if (::unlink(s.path.c_str()) == 0 && removed != nullptr) {
                removed->push_back(s.path);
            }
            continue;
        }
        found.push_back(std::move(s));
    }
    if (ec) {
        return Error::make(ErrorCode::Io, dir, "cannot list the live sockets: " + ec.message());
    }
    std::sort(found.begin(), found.end(), [](const LiveSocket& a, const LiveSocket& b) {
        return a.host != b.host ? a.host < b.host : a.pid < b.pid;
    });
    return found;
}

Result<int> connectSocket(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        return Error::make(ErrorCode::Io, path, "no live job at this socket: " + errnoText(errno));
    }
    if (!S_ISSOCK(st.st_mode)) {
        return Error::make(ErrorCode::Invalid, path, "not a socket; refusing to connect");
    }
    if (st.st_uid != ::geteuid()) {
        return Error::make(ErrorCode::Invalid, path,
                           "a socket of uid " + std::to_string(st.st_uid) +
                               ", not of this user; refusing to connect");
    }
    const std::string dir = std::filesystem::path(path).parent_path().string();
    if (Status s = checkSocketDirectory(dir.empty() ? "." : dir); !s.ok()) {
        return s.error();
    }
    sockaddr_un addr{};
    if (Status s = detail::unixAddress(path, addr); !s.ok()) {
        return s.error();
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return Error::make(ErrorCode::Io, path, "cannot create a socket: " + errnoText(errno));
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int e = errno;
        ::close(fd);
        return Error::make(ErrorCode::Io, path,
                           e == ECONNREFUSED ? std::string("no process serves this socket any more "
                                                           "(the job ended); it is stale")
                                             : "cannot connect: " + errnoText(e));
    }
    ucred peer{};
    socklen_t len = sizeof peer;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != ::geteuid()) {
        ::close(fd);
        return Error::make(ErrorCode::Invalid, path,
                           "the process serving this socket runs as another user; refusing it");
    }
    return fd;
}

size_t wholeFramesPrefix(std::string_view stream) {
    if (stream.size() < kPreambleBytes) {
        return 0;
    }
    size_t at = kPreambleBytes;
    while (stream.size() - at >= kFrameHeadBytes) {
        const uint64_t frame =
            kFrameHeadBytes + uint64_t{detail::readLe32(stream.data() + at)} + kFrameTailBytes;
        if (frame > stream.size() - at) {
            break;
        }
        at += frame;
    }
    return at;
}

std::string dataLossFrame(uint64_t count, const std::string& reason) {
    std::string bytes;
    WriterOptions options;
    options.compress = false;
    options.summaries = false;
    // The protozero encoder: the live server (and so the capture agent) needs no libprotobuf.
    TraceStreamWriter writer(makeStringSink(bytes), options, makeProtozeroChunkEncoder());
    FileHeader header;
    if (!writer.writeHeader(header).ok()) {
        return {};
    }
    const size_t before = bytes.size();
    TraceData d;
    d.dataLoss.push_back({LossCounter::LiveFramesDropped, count, reason, 0, 0});
    if (!writer.writeEvents(d).ok()) {
        return {};
    }
    return bytes.substr(before);
}

}  // namespace vramscope::trace::live
