// The viewer side of live viewing (live.h): the hello, read with the .vscope reader, and the
// Receiver, several producers' streams read on one thread.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "vramscope/trace/live.h"
#include "vscope/frame_bytes.h"

namespace vramscope::trace::live {
namespace {

/// Milliseconds left until `deadline`, at least 0.
int msLeft(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<int64_t>(0, left.count()));
}

}  // namespace

Result<FileHeader> readHello(int fd, const std::string& name, int timeoutMs,
                             std::string* received) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    std::string bytes;
    size_t need = kPreambleBytes + kFrameHeadBytes;
    while (bytes.size() < need) {
        pollfd p{fd, POLLIN, 0};
        const int left = msLeft(deadline);
        const int r = ::poll(&p, 1, left);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return Error::make(
                       ErrorCode::Truncated, name,
                       "no hello from the producer within " + std::to_string(timeoutMs) + " ms")
                .atByte(static_cast<int64_t>(bytes.size()));
        }
        char buf[65536];
        const size_t want = std::min(sizeof buf, need - bytes.size());
        const ssize_t n = ::recv(fd, buf, want, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return Error::make(ErrorCode::Truncated, name,
                               "the producer closed the connection inside its hello")
                .atByte(static_cast<int64_t>(bytes.size()));
        }
        bytes.append(buf, static_cast<size_t>(n));
        if (bytes.size() >= kPreambleBytes + kFrameHeadBytes &&
            need == kPreambleBytes + kFrameHeadBytes) {
            if (!bytes.starts_with(kMagic)) {
                return Error::make(ErrorCode::Unsupported, name,
                                   "the socket does not speak the .vscope framing")
                    .atByte(0);
            }
            const uint32_t length = detail::readLe32(bytes.data() + kPreambleBytes);
            if (length > kMaxFramePayloadBytes) {
                return Error::make(ErrorCode::Limit, name,
                                   "the hello frame declares " + std::to_string(length) +
                                       " bytes, more than the frame limit")
                    .atByte(static_cast<int64_t>(kPreambleBytes));
            }
            need = kPreambleBytes + kFrameHeadBytes + length + kFrameTailBytes;
        }
    }
    auto loaded = readTraceBytes(bytes, name);
    if (!loaded.ok()) {
        return loaded.error();
    }
    if (received != nullptr) {
        received->append(bytes);
    }
    return std::move(loaded.value().data.header);
}

struct Receiver::Impl {
    struct Stream {
        int fd = -1;
        std::string bytes;
        uint64_t whole = 0;
        bool ended = false;
    };
    mutable std::mutex mu;
    mutable std::condition_variable arrived;
    std::vector<Stream> streams;
    bool stopping = false;
    int wakeRead = -1;
    int wakeWrite = -1;
    std::thread thread;

    void closeAll() {
        for (Stream& s : streams) {
            if (s.fd >= 0) {
                ::close(s.fd);
                s.fd = -1;
            }
        }
    }

    void run() {
        std::vector<pollfd> fds;
        std::vector<size_t> which;
        std::vector<char> buf(size_t{1} << 16);
        for (;;) {
            fds.clear();
            which.clear();
            fds.push_back({wakeRead, POLLIN, 0});
            {
                std::lock_guard lock(mu);
                if (stopping) {
                    return;
                }
                for (size_t i = 0; i < streams.size(); ++i) {
                    if (streams[i].fd >= 0) {
                        fds.push_back({streams[i].fd, POLLIN, 0});
                        which.push_back(i);
                    }
                }
            }
            if (which.empty()) {
                arrived.notify_all();
                return;
            }
            if (::poll(fds.data(), fds.size(), 500) < 0 && errno != EINTR) {
                return;
            }
            if ((fds[0].revents & POLLIN) != 0) {
                return;  // stop() woke us
            }
            for (size_t k = 0; k < which.size(); ++k) {
                if ((fds[k + 1].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
                    continue;
                }
                const ssize_t n = ::recv(fds[k + 1].fd, buf.data(), buf.size(), MSG_DONTWAIT);
                std::lock_guard lock(mu);
                Stream& s = streams[which[k]];
                if (n > 0) {
                    s.bytes.append(buf.data(), size_t(n));
                    s.whole = wholeFramesPrefix(s.bytes);
                } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                    ::close(s.fd);
                    s.fd = -1;
                    s.ended = true;
                }
                arrived.notify_all();
            }
        }
    }
};

Receiver::Receiver(std::vector<Source> sources, std::unique_ptr<Impl> impl)
    : m_sources(std::move(sources)), m_impl(std::move(impl)) {}

Result<std::unique_ptr<Receiver>> Receiver::connect(const std::vector<std::string>& paths,
                                                    int helloTimeoutMs,
                                                    std::vector<Error>* failures) {
    auto impl = std::make_unique<Impl>();
    std::vector<Source> sources;
    std::optional<Error> first;
    for (const std::string& path : paths) {
        auto fd = connectSocket(path);
        Impl::Stream stream;
        Result<FileHeader> hello = fd.ok()
                                       ? readHello(fd.value(), path, helloTimeoutMs, &stream.bytes)
                                       : Result<FileHeader>(fd.error());
        if (!hello.ok()) {
            if (fd.ok()) {
                ::close(fd.value());
            }
            first = first ? first : hello.error();
            if (failures != nullptr) {
                failures->push_back(hello.error());
            }
            continue;
        }
        stream.fd = fd.value();
        stream.whole = wholeFramesPrefix(stream.bytes);
        impl->streams.push_back(std::move(stream));
        sources.push_back({path, std::move(hello.value())});
    }
    if (sources.empty()) {
        return first ? *first : Error::make(ErrorCode::Invalid, "", "no live socket was given");
    }
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC | O_NONBLOCK) != 0) {
        impl->closeAll();
        return Error::make(ErrorCode::Io, "",
                           std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    impl->wakeRead = pipeFds[0];
    impl->wakeWrite = pipeFds[1];
    Impl* raw = impl.get();
    impl->thread = std::thread([raw] { raw->run(); });
    return std::unique_ptr<Receiver>(new Receiver(std::move(sources), std::move(impl)));
}

Receiver::~Receiver() {
    stop();
    ::close(m_impl->wakeRead);
    ::close(m_impl->wakeWrite);
}

void Receiver::stop() {
    {
        std::lock_guard lock(m_impl->mu);
        if (m_impl->stopping) {
            return;
        }
        m_impl->stopping = true;
    }
    const char c = 1;
    [[maybe_unused]] const ssize_t n = ::write(m_impl->wakeWrite, &c, 1);
    if (m_impl->thread.joinable()) {
        m_impl->thread.join();
    }
    std::lock_guard lock(m_impl->mu);
    m_impl->closeAll();
    m_impl->arrived.notify_all();
}

uint64_t Receiver::wholeBytes(size_t i) const {
    std::lock_guard lock(m_impl->mu);
    return m_impl->streams[i].whole;
}

uint64_t Receiver::receivedBytes(size_t i) const {
    std::lock_guard lock(m_impl->mu);
    return m_impl->streams[i].bytes.size();
}

std::string Receiver::copyWhole(size_t i, uint64_t from) const {
    std::lock_guard lock(m_impl->mu);
    const Impl::Stream& s = m_impl->streams[i];
    return from < s.whole ? s.bytes.substr(from, s.whole - from) : std::string();
}

bool Receiver::ended(size_t i) const {
    std::lock_guard lock(m_impl->mu);
    return m_impl->streams[i].ended;
}

bool Receiver::allEnded() const {
    std::lock_guard lock(m_impl->mu);
    for (const Impl::Stream& s : m_impl->streams) {
        if (!s.ended) {
            return false;
        }
    }
    return true;
}

void Receiver::waitForData(int timeoutMs) const {
    std::unique_lock lock(m_impl->mu);
    size_t before = 0;
    for (const Impl::Stream& s : m_impl->streams) {
        before += s.bytes.size();
    }
    m_impl->arrived.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] {
        size_t now = 0;
        bool allEnded = true;
        for (const Impl::Stream& s : m_impl->streams) {
            now += s.bytes.size();
            allEnded = allEnded && (s.ended || s.fd < 0);
        }
        return now != before || allEnded || m_impl->stopping;
    });
}

}  // namespace vramscope::trace::live
