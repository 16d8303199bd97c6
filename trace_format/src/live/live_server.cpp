// LiveServer: one producer's .vscope stream served to any number of viewers on a Unix socket,
// with a bounded ring for late viewers and a bounded queue per viewer (live.h).

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

#include "live/live_address.h"
#include "vramscope/trace/live.h"

namespace vramscope::trace::live {

using Bytes = std::shared_ptr<const std::string>;

namespace {

/// One attached viewer. Its queue holds references to frames shared with the ring and the other
/// viewers; `sent` bytes of the front frame are already on the socket.
struct Viewer {
    int fd = -1;
    std::deque<Bytes> queue;
    size_t sent = 0;
    uint64_t queuedBytes = 0;
    uint64_t limitBytes = 0;   ///< queuedBytes above which a new frame is dropped
    uint64_t pendingLoss = 0;  ///< frames dropped since the last DataLoss frame queued
    bool closing = false;
};

}  // namespace

struct LiveServer::Impl {
    ServerOptions options;
    std::string path;
    int listenFd = -1;
    int wakeRead = -1;
    int wakeWrite = -1;
    ino_t socketInode = 0;
    std::thread thread;
    bool stopping = false;  // under mu

    mutable std::mutex mu;
    std::condition_variable changed;  ///< a queue shrank or a viewer came or went
    Bytes preamble;
    Bytes header;
    bool sticky = false;
    std::vector<Bytes> tables;  ///< table frames (setSticky), never evicted
    std::deque<Bytes> ring;
    uint64_t ringBytes = 0;
    std::vector<std::unique_ptr<Viewer>> viewers;
    ServerStats stats;

    ~Impl() {
        for (int fd : {listenFd, wakeRead, wakeWrite}) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    }

    void wake() const {
        const char c = 1;
        [[maybe_unused]] const ssize_t n = ::write(wakeWrite, &c, 1);  // EAGAIN: already woken
    }

    /// Queues `frame` for `v` (under mu); `always`: preamble, header and backlog, never dropped.
    void enqueue(Viewer& v, const Bytes& frame, bool always) {
        if (!always && v.queuedBytes + frame->size() > v.limitBytes) {
            ++v.pendingLoss;
            ++stats.framesDropped;
            return;
        }
        if (v.pendingLoss > 0 && header) {
            auto loss = std::make_shared<const std::string>(dataLossFrame(
                v.pendingLoss, "this viewer read too slowly; the producer dropped them for it"));
            v.queue.push_back(loss);
            v.queuedBytes += loss->size();
            v.pendingLoss = 0;
        }
        v.queue.push_back(frame);
        v.queuedBytes += frame->size();
    }

    /// Tells every viewer with unreported drops how many (under mu), at the end of the stream.
    void queuePendingLoss() {
        for (auto& v : viewers) {
            if (v->pendingLoss > 0 && header) {
                auto loss = std::make_shared<const std::string>(
                    dataLossFrame(v->pendingLoss,
                                  "this viewer read too slowly; the producer dropped them for it"));
                v->queue.push_back(loss);
                v->queuedBytes += loss->size();
                v->pendingLoss = 0;
            }
        }
    }

    void acceptViewer() {
        const int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            return;
        }
        ucred peer{};
        socklen_t len = sizeof peer;
        std::lock_guard lock(mu);
        const bool sameUser =
            ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.uid == ::geteuid();
        if (!sameUser || viewers.size() >= static_cast<size_t>(std::max(options.maxViewers, 0))) {
            ::close(fd);
            ++stats.viewersRefused;
            return;
        }
        auto v = std::make_unique<Viewer>();
        v->fd = fd;
        if (preamble) {
            enqueue(*v, preamble, true);
        }
        if (header) {
            enqueue(*v, header, true);
            for (const Bytes& t : tables) {
                enqueue(*v, t, true);
            }
            if (stats.backlogEvicted > 0) {
                enqueue(*v,
                        std::make_shared<const std::string>(dataLossFrame(
                            stats.backlogEvicted,
                            "they had left the producer's ring before this viewer attached")),
                        true);
            }
        }
        for (const Bytes& f : ring) {
            enqueue(*v, f, true);
        }
        v->limitBytes = v->queuedBytes + options.queueBytesPerViewer;
        viewers.push_back(std::move(v));
        ++stats.viewersAccepted;
        stats.viewersNow = viewers.size();
        changed.notify_all();
    }

    /// Sends what the socket takes of `v`'s queue; false when the viewer is gone.
    bool sendSome(Viewer& v) {
        for (;;) {
            Bytes front;
            size_t offset = 0;
            {
                std::lock_guard lock(mu);
                if (v.queue.empty()) {
                    return true;
                }
                front = v.queue.front();
                offset = v.sent;
            }
            const ssize_t n = ::send(v.fd, front->data() + offset, front->size() - offset,
                                     MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0) {
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
            }
            std::lock_guard lock(mu);
            stats.bytesSent += static_cast<uint64_t>(n);
            v.sent += static_cast<size_t>(n);
            if (v.sent == front->size()) {
                v.queue.pop_front();
                v.queuedBytes -= front->size();
                v.sent = 0;
                changed.notify_all();
            }
        }
    }

    void run() {
        std::vector<pollfd> fds;
        std::vector<Viewer*> order;
        for (;;) {
            fds.clear();
            order.clear();
            fds.push_back({listenFd, POLLIN, 0});
            fds.push_back({wakeRead, POLLIN, 0});
            {
                std::lock_guard lock(mu);
                if (stopping) {
                    return;
                }
                for (auto& v : viewers) {
                    const short events =
                        static_cast<short>(POLLIN | (v->queue.empty() ? 0 : POLLOUT));
                    fds.push_back({v->fd, events, 0});
                    order.push_back(v.get());
                }
            }
            if (::poll(fds.data(), fds.size(), 250) < 0 && errno != EINTR) {
                return;
            }
            if ((fds[1].revents & POLLIN) != 0) {
                char buf[256];
                while (::read(wakeRead, buf, sizeof buf) > 0) {
                }
            }
            for (size_t i = 0; i < order.size(); ++i) {
                Viewer& v = *order[i];
                const short re = fds[i + 2].revents;
                bool alive = (re & (POLLERR | POLLNVAL)) == 0;
                if (alive && (re & POLLIN) != 0) {
                    char buf[512];  // viewers send nothing yet: read and forget, or see EOF
                    const ssize_t n = ::recv(v.fd, buf, sizeof buf, MSG_DONTWAIT);
                    alive = n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
                }
                if (alive && (re & POLLHUP) != 0) {
                    alive = false;
                }
                if (alive && (re & POLLOUT) != 0) {
                    alive = sendSome(v);
                }
                v.closing = !alive;
            }
            {
                std::lock_guard lock(mu);
                for (auto it = viewers.begin(); it != viewers.end();) {
                    if ((*it)->closing) {
                        ::close((*it)->fd);
                        it = viewers.erase(it);
                    } else {
                        ++it;
                    }
                }
                stats.viewersNow = viewers.size();
                changed.notify_all();
            }
            if ((fds[0].revents & POLLIN) != 0) {
                acceptViewer();
            }
        }
    }
};

LiveServer::LiveServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

Result<std::unique_ptr<LiveServer>> LiveServer::start(ServerOptions options) {
    auto impl = std::make_unique<Impl>();
    std::string path = options.socketPath;
    if (path.empty()) {
        const std::string dir = socketDirectory();
        if (Status s = prepareSocketDirectory(dir); !s.ok()) {
            return s.error();
        }
        path = socketPath(dir, hostName(), ::getpid());
    } else {
        const std::string dir = std::filesystem::path(path).parent_path().string();
        if (Status s = checkSocketDirectory(dir.empty() ? "." : dir); !s.ok()) {
            return s.error();
        }
    }
    sockaddr_un addr{};
    if (Status s = detail::unixAddress(path, addr); !s.ok()) {
        return s.error();
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            return Error::make(ErrorCode::Invalid, path,
                               "a file that is not a socket is in the way; refusing to replace it");
        }
        auto probe = connectSocket(path);
        if (probe.ok()) {
            ::close(probe.value());
            return Error::make(ErrorCode::Invalid, path,
                               "another live producer already serves this socket");
        }
        ::unlink(path.c_str());  // stale: its process is gone
    }
    impl->listenFd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (impl->listenFd < 0) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot create a socket: ") + std::strerror(errno));
    }
    if (::bind(impl->listenFd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot create the socket: ") + std::strerror(errno));
    }
    if (::chmod(path.c_str(), 0600) != 0 || ::lstat(path.c_str(), &st) != 0 ||
        ::listen(impl->listenFd, 16) != 0) {
        const int e = errno;
        ::unlink(path.c_str());
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot serve the socket: ") + std::strerror(e));
    }
    impl->socketInode = st.st_ino;
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC | O_NONBLOCK) != 0) {
        ::unlink(path.c_str());
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    impl->wakeRead = pipeFds[0];
    impl->wakeWrite = pipeFds[1];
    impl->path = path;
    impl->options = std::move(options);
    Impl* raw = impl.get();
    impl->thread = std::thread([raw] { raw->run(); });
    return std::unique_ptr<LiveServer>(new LiveServer(std::move(impl)));
}

LiveServer::~LiveServer() {
    stop();
}

void LiveServer::stop() {
    {
        std::lock_guard lock(m_impl->mu);
        if (m_impl->stopping) {
            return;
        }
        m_impl->stopping = true;
    }
    m_impl->wake();
    if (m_impl->thread.joinable()) {
        m_impl->thread.join();
    }
    std::lock_guard lock(m_impl->mu);
    for (auto& v : m_impl->viewers) {
        ::close(v->fd);
    }
    m_impl->viewers.clear();
    m_impl->stats.viewersNow = 0;
    struct stat st {};
    if (::lstat(m_impl->path.c_str(), &st) == 0 && st.st_ino == m_impl->socketInode) {
        ::unlink(m_impl->path.c_str());
    }
}

Status LiveServer::write(std::string_view bytes) {
    auto frame = std::make_shared<const std::string>(bytes);
    {
        std::lock_guard lock(m_impl->mu);
        Impl& s = *m_impl;
        if (s.stopping) {
            return Status::success();
        }
        ++s.stats.framesWritten;
        s.stats.bytesWritten += bytes.size();
        if (!s.preamble) {
            --s.stats.framesWritten;  // the preamble is no frame
            s.preamble = frame;
            for (auto& v : s.viewers) {
                s.enqueue(*v, frame, true);
                v->limitBytes += frame->size();
            }
        } else if (!s.header) {
            s.header = frame;
            for (auto& v : s.viewers) {
                s.enqueue(*v, frame, true);
                v->limitBytes += frame->size();
            }
        } else if (s.sticky) {
            s.tables.push_back(frame);
            s.stats.stickyBytes += frame->size();
            for (auto& v : s.viewers) {
                s.enqueue(*v, frame, true);  // a viewer without its tables would be lost
                v->limitBytes += frame->size();
            }
        } else {
            if (s.options.backlogBytes > 0) {
                s.ring.push_back(frame);
                s.ringBytes += frame->size();
                while (s.ringBytes > s.options.backlogBytes && !s.ring.empty()) {
                    s.ringBytes -= s.ring.front()->size();
                    s.ring.pop_front();
                    ++s.stats.backlogEvicted;
                }
            } else {
                s.ring.push_back(frame);
                s.ringBytes += frame->size();
            }
            for (auto& v : s.viewers) {
                s.enqueue(*v, frame, false);
            }
        }
    }
    m_impl->wake();
    return Status::success();
}

Result<uint64_t> LiveServer::writeRing(const std::string& path) const {
    std::vector<Bytes> parts;
    uint64_t evicted = 0;
    size_t tableFrames = 0;
    {
        std::lock_guard lock(m_impl->mu);
        if (!m_impl->preamble || !m_impl->header) {
            return Error::make(ErrorCode::Invalid, path,
                               "nothing to write yet: the producer has not sent its header");
        }
        parts = {m_impl->preamble, m_impl->header};
        parts.insert(parts.end(), m_impl->tables.begin(), m_impl->tables.end());
        tableFrames = m_impl->tables.size();
        evicted = m_impl->stats.backlogEvicted;
        parts.insert(parts.end(), m_impl->ring.begin(), m_impl->ring.end());
    }
    if (evicted > 0) {
        parts.insert(parts.begin() + 2 + std::ptrdiff_t(tableFrames),
                     std::make_shared<const std::string>(dataLossFrame(
                         evicted, "they had left the ring before it was written to this file")));
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot create: ") + std::strerror(errno));
    }
    uint64_t written = 0;
    for (const Bytes& part : parts) {
        for (size_t done = 0; done < part->size();) {
            const ssize_t n = ::write(fd, part->data() + done, part->size() - done);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                const int e = errno;
                ::close(fd);
                return Error::make(ErrorCode::Io, path,
                                   std::string("cannot write: ") + std::strerror(e))
                    .atByte(static_cast<int64_t>(written));
            }
            done += static_cast<size_t>(n);
            written += static_cast<uint64_t>(n);
        }
    }
    if (::close(fd) != 0) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot write: ") + std::strerror(errno));
    }
    return written;
}

void LiveServer::setSticky(bool sticky) {
    std::lock_guard lock(m_impl->mu);
    m_impl->sticky = sticky;
}

bool LiveServer::drain(int timeoutMs) {
    std::unique_lock lock(m_impl->mu);
    m_impl->queuePendingLoss();
    lock.unlock();
    m_impl->wake();
    lock.lock();
    return m_impl->changed.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] {
        for (const auto& v : m_impl->viewers) {
            if (!v->queue.empty()) {
                return false;
            }
        }
        return true;
    });
}

bool LiveServer::waitForViewers(uint64_t viewers, int timeoutMs) {
    std::unique_lock lock(m_impl->mu);
    return m_impl->changed.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                                    [&] { return m_impl->stats.viewersNow >= viewers; });
}

const std::string& LiveServer::path() const {
    return m_impl->path;
}

ServerStats LiveServer::stats() const {
    std::lock_guard lock(m_impl->mu);
    return m_impl->stats;
}

namespace {

class LiveTee final : public ByteSink {
public:
    LiveTee(std::unique_ptr<ByteSink> primary, std::shared_ptr<LiveServer> live)
        : m_primary(std::move(primary)), m_live(std::move(live)) {}
    Status write(std::string_view bytes) override {
        if (m_live) {
            (void)m_live->write(bytes);
        }
        return m_primary ? m_primary->write(bytes) : Status::success();
    }
    Status flush() override { return m_primary ? m_primary->flush() : Status::success(); }

private:
    std::unique_ptr<ByteSink> m_primary;
    std::shared_ptr<LiveServer> m_live;
};

}  // namespace

std::unique_ptr<ByteSink> makeLiveTee(std::unique_ptr<ByteSink> primary,
                                      std::shared_ptr<LiveServer> live) {
    return std::make_unique<LiveTee>(std::move(primary), std::move(live));
}

}  // namespace vramscope::trace::live
