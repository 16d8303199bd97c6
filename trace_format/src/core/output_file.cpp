#include "vramscope/trace/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string_view>
#include <vector>

namespace vramscope::trace {

namespace {

namespace fs = std::filesystem;

Error ioError(const std::string& path, const std::string& why) {
    return Error::make(ErrorCode::Io, path, "cannot be written: " + why);
}

/// An output stream buffer over a file descriptor (write(2) in 64 KiB pieces), keeping the errno
/// of a failed write so that the error can say why (ENOSPC: "No space left on device").
class FdBuffer : public std::streambuf {
public:
    explicit FdBuffer(int fd) : m_fd(fd), m_buffer(1 << 16) {
        setp(m_buffer.data(), m_buffer.data() + m_buffer.size());
    }
    ~FdBuffer() override { sync(); }
    int error() const { return m_errno; }

protected:
    int_type overflow(int_type c) override {
        if (sync() != 0) {
            return traits_type::eof();
        }
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override {
        const char* p = pbase();
        while (p < pptr()) {
            const ssize_t n = ::write(m_fd, p, static_cast<size_t>(pptr() - p));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                m_errno = n < 0 ? errno : EIO;
                return -1;
            }
            p += n;
        }
        setp(m_buffer.data(), m_buffer.data() + m_buffer.size());
        return 0;
    }

private:
    int m_fd;
    int m_errno = 0;
    std::vector<char> m_buffer;
};

/// Streams `write` into `fd` (not closed here); `shown` is the name used in errors.
Status writeToFd(int fd, const std::string& shown,
                 const std::function<Status(std::ostream&)>& write) {
    FdBuffer buffer(fd);
    std::ostream out(&buffer);
    const Status s = write(out);
    out.flush();
    if (buffer.error() != 0) {  // the stream failed: say why, whatever the writer made of it
        return ioError(shown, std::strerror(buffer.error()));
    }
    if (!s) {
        return s;
    }
    return out ? Status::success() : ioError(shown, "the write failed part way");
}

/// The descriptor a path names in this process (/dev/stdout, /dev/stderr, /dev/fd/N,
/// /proc/self/fd/N), or -1. Opening such a path anew would truncate a redirected file and lose
/// what the shell wrote before or appends after; writing through the descriptor keeps it.
int openDescriptorOf(std::string_view path) {
    if (path == "/dev/stdout") {
        return STDOUT_FILENO;
    }
    if (path == "/dev/stderr") {
        return STDERR_FILENO;
    }
    for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        if (path.starts_with(prefix)) {
            std::string_view digits = path.substr(prefix.size());
            int fd = -1;
            auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
            if (ec == std::errc() && end == digits.data() + digits.size() &&
                ::fcntl(fd, F_GETFD) != -1) {
                return fd;
            }
        }
    }
    return -1;
}

/// Writes into an existing file in place (devices, FIFOs, files with several hard links).
Status writeInPlace(const std::string& path, const std::function<Status(std::ostream&)>& write) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) {
        return ioError(path, std::strerror(errno));
    }
    Status s = writeToFd(fd, path, write);
    if (::close(fd) != 0 && s) {
        s = ioError(path, std::strerror(errno));
    }
    return s;
}

/// The permission bits a new file gets here (0666 less the umask).
mode_t newFileMode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

}  // namespace

Status writeOutputFile(const std::string& path, const std::function<Status(std::ostream&)>& write) {
    if (const int fd = openDescriptorOf(path); fd >= 0) {
        return writeToFd(fd, path, write);
    }
    struct stat st {};
    const bool exists = ::stat(path.c_str(), &st) == 0;  // follows symbolic links
    if (exists && S_ISDIR(st.st_mode)) {
        return ioError(path, "it is a directory; give a file name");
    }
    if (exists && !S_ISREG(st.st_mode)) {
        return writeInPlace(path, write);  // a device, FIFO or socket
    }
    if (exists && ::access(path.c_str(), W_OK) != 0) {
        return ioError(path, std::strerror(errno));  // never replace what may not be written
    }
    // A symbolic link: write its target (created when the link dangles), keep the link.
    std::error_code ec;
    std::string target = path;
    if (fs::is_symlink(fs::symlink_status(path, ec))) {
        if (const fs::path resolved = fs::canonical(path, ec); !ec) {
            target = resolved.string();
        } else if (const fs::path to = fs::read_symlink(path, ec); !ec) {
            target = (to.is_absolute() ? to : fs::path(path).parent_path() / to).string();
        }
    }
    // A unique name beside the target (never a user's own file), renamed onto it when complete.
    std::string temp = target + ".partial-XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0 && exists && (errno == EACCES || errno == EROFS || errno == EPERM)) {
        // No new file may go beside it, but the file itself may be written (as `>` would).
        return writeInPlace(path, write);
    }
    if (fd < 0) {
        const fs::path dir = fs::path(target).parent_path();
        return ioError(path, "cannot create a file in " + (dir.empty() ? "." : dir.string()) +
                                 ": " + std::strerror(errno));
    }
    // Keep the replaced file's permissions (and owner, where allowed); a new file gets the usual
    // 0666 less the umask instead of mkstemp's 0600.
    ::fchmod(fd, exists ? (st.st_mode & 07777) : newFileMode());
    if (exists) {
        [[maybe_unused]] const int ignored = ::fchown(fd, st.st_uid, st.st_gid);
    }
    Status s = writeToFd(fd, path, write);
    if (::close(fd) != 0 && s) {
        s = ioError(path, std::strerror(errno));
    }
    if (s && ::rename(temp.c_str(), target.c_str()) != 0) {
        s = ioError(path, std::strerror(errno));
    }
    if (!s) {
        ::unlink(temp.c_str());
    }
    return s;
}

}  // namespace vramscope::trace
