#include "trace_output.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vramscope::capture {

namespace {

class DescriptorSink final : public trace::ByteSink {
public:
    DescriptorSink(int fd, std::string name, bool isSocket)
        : m_fd(fd), m_name(std::move(name)), m_socket(isSocket) {}
    ~DescriptorSink() override {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }

    trace::Status write(std::string_view bytes) override {
        const char* p = bytes.data();
        size_t left = bytes.size();
        while (left > 0) {
            const ssize_t n =
                m_socket ? ::send(m_fd, p, left, MSG_NOSIGNAL) : ::write(m_fd, p, left);
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return trace::Error::make(trace::ErrorCode::Io, m_name,
                                          std::string("cannot write: ") + std::strerror(errno));
            }
            p += n;
            left -= static_cast<size_t>(n);
        }
        return trace::Status::success();
    }

private:
    int m_fd;
    std::string m_name;
    bool m_socket;
};

std::string errnoText(const std::string& what, const std::string& path) {
    return what + " " + path + ": " + std::strerror(errno);
}

/// mkdir -p of the directory part of `path`.
bool makeParents(const std::string& path) {
    for (size_t i = 1; i < path.size(); ++i) {
        if (path[i] != '/') {
            continue;
        }
        const std::string dir = path.substr(0, i);
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
            return false;
        }
    }
    return true;
}

/// Opens and locks `path`; -1 with errno = EWOULDBLOCK when another process holds the lock.
int openLocked(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        return -1;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int saved = errno;
        ::close(fd);
        errno = saved;
        return -1;
    }
    if (::ftruncate(fd, 0) != 0) {
        const int saved = errno;
        ::close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

OpenedOutput openFile(const std::string& path, int64_t pid) {
    OpenedOutput out;
    if (!makeParents(path)) {
        out.error = errnoText("cannot create the directory of", path);
        return out;
    }
    std::string used = path;
    int fd = openLocked(used);
    if (fd < 0 && errno == EWOULDBLOCK) {
        used = collisionFallbackPath(path, pid);
        fd = openLocked(used);
    }
    if (fd < 0) {
        out.error = errnoText("cannot open", used);
        return out;
    }
    out.sink = makeDescriptorSink(fd, used, false);
    out.path = used;
    return out;
}

OpenedOutput openSocket(const std::string& path) {
    OpenedOutput out;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
        out.error = "the Unix socket path '" + path + "' is empty or too long";
        return out;
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        out.error = errnoText("cannot create a socket for", path);
        return out;
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
        out.error = errnoText("cannot connect to", path);
        ::close(fd);
        return out;
    }
    timeval timeout{};
    timeout.tv_sec = 2;
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    out.sink = makeDescriptorSink(fd, path, true);
    out.path = path;
    return out;
}

}  // namespace

std::unique_ptr<trace::ByteSink> makeDescriptorSink(int fd, std::string name, bool isSocket) {
    return std::make_unique<DescriptorSink>(fd, std::move(name), isSocket);
}

OpenedOutput openTraceOutput(const OutputSpec& spec, const std::string& path, int64_t pid) {
    if (spec.kind == OutputKind::UnixSocket) {
        return openSocket(path);
    }
    return openFile(path, pid);
}

}  // namespace vramscope::capture
