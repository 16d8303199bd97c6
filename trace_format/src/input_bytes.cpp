#include "vramscope/trace/input_bytes.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <optional>

#include <sys/stat.h>
#include <unistd.h>

namespace vramscope::trace {
namespace {

/// Shrinks `s` to `size` bytes, leaving kInputPaddingBytes of zeroed spare capacity after them.
void finishPadded(std::string& s, size_t size) {
    s.resize(size + kInputPaddingBytes);
    std::fill(s.begin() + static_cast<ptrdiff_t>(size), s.end(), '\0');
    s.resize(size);
}

/// Uncompressed size of the last gzip member modulo 2^32 (the ISIZE trailer, RFC 1952 2.3.1).
uint64_t gzipTrailerSize(std::string_view in) {
    if (in.size() < 18) {
        return 0;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
    return uint64_t{p[0]} | (uint64_t{p[1]} << 8) | (uint64_t{p[2]} << 16) | (uint64_t{p[3]} << 24);
}

Result<std::string> gunzip(std::string_view in, const std::string& name, uint64_t maxBytes,
                           InputNotes* notes) {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK) {
        return Error::make(ErrorCode::Limit, name, "cannot start gzip decompression (zlib)");
    }
    std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
    // Deflate cannot expand by more than ~1032x; never trust the trailer beyond that or maxBytes.
    const uint64_t ratioCap = static_cast<uint64_t>(in.size()) * 1032u;
    uint64_t guess = std::max<uint64_t>(gzipTrailerSize(in), static_cast<uint64_t>(in.size()) * 4);
    guess = std::min({guess, ratioCap, maxBytes}) + 1;
    // The trailer only reserves address space: untouched pages are not resident, and pages are
    // made resident only as output arrives. A cut file's "trailer" is whatever compressed bytes
    // the cut left last (up to ratioCap, 1032x the input), so it must never be filled up front.
    std::string out;
    try {
        out.reserve(static_cast<size_t>(guess) + kInputPaddingBytes);
    } catch (const std::bad_alloc&) {
        // A reservation the system refuses: grow by doubling instead.
    }
    out.resize(static_cast<size_t>(
        std::min<uint64_t>(guess, static_cast<uint64_t>(in.size()) * 4 + (1u << 20)) +
        kInputPaddingBytes));
    size_t produced = 0;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    size_t inLeft = in.size();
    for (;;) {
        if (zs.avail_in == 0 && inLeft > 0) {
            const auto chunk = static_cast<uInt>(std::min<size_t>(inLeft, 1u << 30));
            zs.avail_in = chunk;
            inLeft -= chunk;
        }
        if (produced == out.size()) {
            if (produced > maxBytes) {
                return Error::make(ErrorCode::Limit, name,
                                   "the decompressed content is larger than the limit of " +
                                       std::to_string(maxBytes) + " bytes");
            }
            // Doubling stays inside the reservation (no copy) until the reservation is used up.
            const uint64_t doubled = static_cast<uint64_t>(out.size()) * 2;
            const uint64_t reserved = out.capacity();
            out.resize(static_cast<size_t>(
                std::min<uint64_t>(reserved > out.size() ? std::min(doubled, reserved) : doubled,
                                   maxBytes + 1 + kInputPaddingBytes)));
        }
        const size_t room = std::min<size_t>(out.size() - produced, 1u << 30);
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
        zs.avail_out = static_cast<uInt>(room);
        const int rc = inflate(&zs, Z_NO_FLUSH);
        produced += room - zs.avail_out;
        if (rc == Z_STREAM_END) {
            const size_t consumed = in.size() - inLeft - zs.avail_in;
            if (zs.avail_in == 0 && inLeft == 0) {
                break;
            }
            if (!isGzip(in.substr(consumed))) {
                break;  // trailing bytes after the last member (zero padding from tar, ...)
            }
            inflateReset(&zs);
            continue;
        }
        const auto at = static_cast<int64_t>(in.size() - inLeft - zs.avail_in);
        if (rc == Z_BUF_ERROR && zs.avail_in == 0 && inLeft == 0) {
            Error cut = Error::make(ErrorCode::Truncated, name,
                                    "the gzip stream ends early (the file was cut); " +
                                        std::to_string(produced) +
                                        " decompressed bytes before the cut are kept")
                            .atByte(at);
            if (notes == nullptr) {
                return cut;
            }
            notes->problems.push_back(std::move(cut));
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            return Error::make(ErrorCode::Corrupt, name,
                               std::string("the gzip data is damaged (zlib: ") +
                                   (zs.msg != nullptr ? zs.msg : "error") + ")")
                .atByte(at);
        }
    }
    if (produced > maxBytes) {
        return Error::make(ErrorCode::Limit, name,
                           "the decompressed content is larger than the limit of " +
                               std::to_string(maxBytes) + " bytes");
    }
    finishPadded(out, produced);
    return out;
}

}  // namespace

bool isGzip(std::string_view bytes) {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> decodeInputBytes(std::string_view bytes, const std::string& name,
                                     uint64_t maxBytes, InputNotes* notes) {
    if (isGzip(bytes)) {
        return gunzip(bytes, name, maxBytes, notes);
    }
    if (bytes.size() > maxBytes) {
        return Error::make(
            ErrorCode::Limit, name,
            "the input is larger than the limit of " + std::to_string(maxBytes) + " bytes");
    }
    std::string out;
    out.reserve(bytes.size() + kInputPaddingBytes);
    out.assign(bytes);
    finishPadded(out, bytes.size());
    return out;
}

Result<std::string> readInputBytes(const std::string& path, uint64_t maxBytes, InputNotes* notes) {
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!file) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot open the file: ") + std::strerror(errno));
    }
    struct stat st {};
    if (fstat(fileno(file.get()), &st) != 0 || !S_ISREG(st.st_mode)) {
        return Error::make(ErrorCode::Io, path, "not a regular file");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > maxBytes) {
        return Error::make(
            ErrorCode::Limit, path,
            "the file is larger than the limit of " + std::to_string(maxBytes) + " bytes");
    }
    std::string raw;
    raw.resize(static_cast<size_t>(size) + kInputPaddingBytes);
    const size_t got = std::fread(raw.data(), 1, static_cast<size_t>(size), file.get());
    if (got != size && std::ferror(file.get())) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot read the file: ") + std::strerror(errno))
            .atByte(static_cast<int64_t>(got));
    }
    if (isGzip(std::string_view(raw.data(), got))) {
        return gunzip(std::string_view(raw.data(), got), path, maxBytes, notes);
    }
    finishPadded(raw, got);
    return raw;
}

Result<std::string> readInputStream(int fd, const std::string& name, uint64_t maxBytes,
                                    InputNotes* notes, const StreamStartCheck& refuseStart) {
    std::string raw;
    size_t got = 0;
    bool decided = !refuseStart;
    auto refused = [&]() -> std::optional<Error> {
        std::optional<std::string> why = refuseStart(std::string_view(raw.data(), got));
        decided = why.has_value();
        if (!why || why->empty()) {
            return std::nullopt;
        }
        return Error::make(ErrorCode::Unsupported, name, std::move(*why));
    };
    constexpr size_t kChunk = 1u << 20;
    for (;;) {
        if (raw.size() < got + kChunk + kInputPaddingBytes) {
            raw.resize(std::max(raw.size() * 2, got + kChunk + kInputPaddingBytes));
        }
        const ssize_t n = ::read(fd, raw.data() + got, kChunk);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return Error::make(ErrorCode::Io, name,
                               std::string("cannot read the stream: ") + std::strerror(errno))
                .atByte(static_cast<int64_t>(got));
        }
        if (n == 0) {
            break;
        }
        got += static_cast<size_t>(n);
        if (!decided && got >= kStreamProbeBytes) {
            if (auto e = refused()) {
                return *e;
            }
        }
        if (got > maxBytes) {
            return Error::make(ErrorCode::Limit, name,
                               "the input is larger than the limit of " + std::to_string(maxBytes) +
                                   " bytes")
                .atByte(static_cast<int64_t>(got));
        }
    }
    if (!decided && got > 0 && got < kStreamProbeBytes) {  // shorter than the probe: all of it
        if (auto e = refused()) {
            return *e;
        }
    }
    if (isGzip(std::string_view(raw.data(), got))) {
        return gunzip(std::string_view(raw.data(), got), name, maxBytes, notes);
    }
    finishPadded(raw, got);
    return raw;
}

}  // namespace vramscope::trace
