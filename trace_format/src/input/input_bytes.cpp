#include "vramscope/trace/input_bytes.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
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

Error tooLarge(const std::string& name, uint64_t maxBytes) {
    return Error::make(ErrorCode::Limit, name,
                       inputLimitText("the decompressed content is larger than", maxBytes));
}

/// The first output buffer of gunzip: the ISIZE trailer says how large the content is, but a
/// hostile file can lie, so it is believed only up to kTrustedRatio times the compressed size
/// (real traces compress 14-30:1, measured on shared/realdata); beyond, the buffer doubles as
/// content actually arrives. While the start is not judged yet, at most kStartBufferBytes.
size_t firstBufferSize(std::string_view in, uint64_t maxBytes, bool judging) {
    constexpr uint64_t kTrustedRatio = 32;
    constexpr uint64_t kStartBufferBytes = 1u << 20;
    const uint64_t compressed = in.size();
    uint64_t guess =
        std::min(std::max(gzipTrailerSize(in), compressed * 4), compressed * kTrustedRatio);
    if (judging) {
        guess = std::min(guess, kStartBufferBytes);
    }
    return static_cast<size_t>(std::min(std::max<uint64_t>(guess, 4096), maxBytes + 1));
}

/// A gzip bomb: more than kBombRatio:1 once kBombCheckBytes are out. Deflate's ceiling is
/// ~1032:1; real traces compress 14-30:1 (shared/realdata, measured). Content far above that is
/// long runs of one byte (zeros, or a JSON prefix and gigabytes of spaces), which no trace is.
constexpr uint64_t kBombCheckBytes = 64ull << 20;

std::optional<Error> refuseBomb(const std::string& name, size_t produced, size_t consumed) {
    constexpr uint64_t kBombRatio = 200;
    if (produced < kBombCheckBytes || produced / std::max<size_t>(consumed, 1) <= kBombRatio) {
        return std::nullopt;
    }
    return Error::make(ErrorCode::Limit, name,
                       std::to_string(consumed) + " compressed bytes decompressed to " +
                           std::to_string(produced) + " (more than " + std::to_string(kBombRatio) +
                           ":1): a gzip bomb, not a trace; reading stopped (a real trace this "
                           "repetitive opens once decompressed: gunzip it first)")
        .atByte(static_cast<int64_t>(consumed));
}

/// A gzip stream that ends early at compressed byte `at` after `produced` bytes.
Error streamCut(const std::string& name, size_t produced, int64_t at) {
    return Error::make(ErrorCode::Truncated, name,
                       "the gzip stream ends early (the file was cut); " +
                           std::to_string(produced) + " decompressed bytes before the cut are kept")
        .atByte(at);
}

/// Decompresses `in` (one or more gzip members) with memory in proportion to what it makes: the
/// buffer grows by doubling (never from the trailer alone), `refuseStart` judges the first
/// decompressed bytes before the rest is made, and a gzip bomb is refused (refuseBomb).
Result<std::string> gunzip(std::string_view in, const std::string& name, uint64_t maxBytes,
                           InputNotes* notes, const StreamStartCheck& refuseStart) {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK) {
        return Error::make(ErrorCode::Limit, name, "cannot start gzip decompression (zlib)");
    }
    std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
    bool decided = !refuseStart;
    std::string out(firstBufferSize(in, maxBytes, !decided), '\0');
    const uint64_t trusted = firstBufferSize(in, maxBytes, false);
    size_t produced = 0;
    // Asks refuseStart about the bytes made so far; an Error when it refuses them.
    auto judge = [&](bool atEnd) -> std::optional<Error> {
        if (decided || produced == 0 || (produced < kStreamProbeBytes && !atEnd)) {
            return std::nullopt;
        }
        std::optional<std::string> why = refuseStart(std::string_view(out.data(), produced));
        decided = why.has_value() || atEnd;
        if (!why || why->empty()) {
            return std::nullopt;
        }
        return Error::make(ErrorCode::Unsupported, name,
                           "decompressed content refused from its first bytes: " + *why);
    };
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
                return tooLarge(name, maxBytes);
            }
            // Trusted sizes only once the start is taken, and above kBombCheckBytes only once
            // the bomb check has seen that much.
            uint64_t next = static_cast<uint64_t>(out.size()) * 2;
            if (decided) {
                next = std::max(next, produced >= kBombCheckBytes
                                          ? trusted
                                          : std::min<uint64_t>(trusted, kBombCheckBytes));
            }
            out.resize(static_cast<size_t>(std::min<uint64_t>(next, maxBytes + 1)));
        }
        // Small steps until the start is judged (a refusal after kilobytes), then 64 MiB steps
        // so the bomb check sees the ratio before a GiB is made.
        const size_t step = decided ? (64u << 20) : (64u << 10);
        const size_t room = std::min<size_t>(out.size() - produced, step);
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
        zs.avail_out = static_cast<uInt>(room);
        const int rc = inflate(&zs, Z_NO_FLUSH);
        produced += room - zs.avail_out;
        const size_t consumed = in.size() - inLeft - zs.avail_in;
        if (auto refused = judge(false)) {
            return *refused;
        }
        if (auto bomb = refuseBomb(name, produced, consumed)) {
            return *bomb;
        }
        if (rc == Z_STREAM_END) {
            if (zs.avail_in == 0 && inLeft == 0) {
                break;
            }
            if (!isGzip(in.substr(consumed))) {
                break;  // trailing bytes after the last member (zero padding from tar, ...)
            }
            inflateReset(&zs);
            continue;
        }
        const auto at = static_cast<int64_t>(consumed);
        if (rc == Z_BUF_ERROR && zs.avail_in == 0 && inLeft == 0) {
            Error cut = streamCut(name, produced, at);
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
        return tooLarge(name, maxBytes);
    }
    if (auto refused = judge(true)) {
        return *refused;
    }
    finishPadded(out, produced);
    return out;
}

/// Asks `refuseStart` about plain (not gzipped) bytes: the Error when it refuses them.
std::optional<Error> judgePlain(std::string_view head, const std::string& name,
                                const StreamStartCheck& refuseStart) {
    if (!refuseStart || head.empty()) {
        return std::nullopt;
    }
    std::optional<std::string> why = refuseStart(head);
    if (!why || why->empty()) {
        return std::nullopt;
    }
    return Error::make(ErrorCode::Unsupported, name, std::move(*why));
}

}  // namespace

Result<uint64_t> maxInputBytesSetting() {
    const char* text = std::getenv("VRAMSCOPE_MAX_INPUT_GIB");
    if (text == nullptr) {
        return kDefaultMaxInputBytes;
    }
    const std::string_view v(text);
    uint64_t gib = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), gib);
    if (ec != std::errc() || end != v.data() + v.size() || gib == 0 || gib > (1u << 20)) {
        return Error::make(
            ErrorCode::Invalid, "VRAMSCOPE_MAX_INPUT_GIB",
            "must be a whole number of GiB from 1 to 1048576, not '" + std::string(v) + "'");
    }
    return gib << 30;
}

std::string inputLimitText(const std::string& what, uint64_t maxBytes) {
    std::string size = std::to_string(maxBytes) + " bytes (";
    if (maxBytes >= (1ull << 30) && maxBytes % (1ull << 30) == 0) {
        size += std::to_string(maxBytes >> 30) + " GiB; ";
    }
    return what + " the limit of " + size +
           "raise it with VRAMSCOPE_MAX_INPUT_GIB or vramscope-cli --max-input-gib)";
}

bool isGzip(std::string_view bytes) {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> decodeInputBytes(std::string_view bytes, const std::string& name,
                                     uint64_t maxBytes, InputNotes* notes,
                                     const StreamStartCheck& refuseStart) {
    if (isGzip(bytes)) {
        return gunzip(bytes, name, maxBytes, notes, refuseStart);
    }
    if (bytes.size() > maxBytes) {
        return Error::make(ErrorCode::Limit, name,
                           inputLimitText("the input is larger than", maxBytes));
    }
    if (auto refused = judgePlain(bytes.substr(0, kStartJudgeBytes), name, refuseStart)) {
        return *refused;
    }
    std::string out;
    out.reserve(bytes.size() + kInputPaddingBytes);
    out.assign(bytes);
    finishPadded(out, bytes.size());
    return out;
}

Result<std::string> readInputBytes(const std::string& path, uint64_t maxBytes, InputNotes* notes,
                                   const StreamStartCheck& refuseStart) {
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
    // The first bytes are judged before the rest is read (or even allocated): a 2 GB file of
    // zeros is refused after kStartJudgeBytes of it, not after reading all of it into memory.
    std::string head(static_cast<size_t>(std::min<uint64_t>(size, kStartJudgeBytes)), '\0');
    size_t got = std::fread(head.data(), 1, head.size(), file.get());
    if (got != head.size() && std::ferror(file.get())) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot read the file: ") + std::strerror(errno))
            .atByte(static_cast<int64_t>(got));
    }
    head.resize(got);
    if (!isGzip(head)) {
        if (auto refused = judgePlain(head, path, refuseStart)) {
            return *refused;
        }
    }
    if (size > maxBytes) {
        return Error::make(ErrorCode::Limit, path,
                           inputLimitText("the file is larger than", maxBytes));
    }
    std::string raw;
    raw.reserve(static_cast<size_t>(size) + kInputPaddingBytes);
    raw.assign(head);
    head = std::string();
    raw.resize(static_cast<size_t>(size) + kInputPaddingBytes);
    const size_t rest =
        std::fread(raw.data() + got, 1, static_cast<size_t>(size) - got, file.get());
    if (got + rest != size && std::ferror(file.get())) {
        return Error::make(ErrorCode::Io, path,
                           std::string("cannot read the file: ") + std::strerror(errno))
            .atByte(static_cast<int64_t>(got + rest));
    }
    got += rest;
    if (isGzip(std::string_view(raw.data(), got))) {
        return gunzip(std::string_view(raw.data(), got), path, maxBytes, notes, refuseStart);
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
                               inputLimitText("the input is larger than", maxBytes))
                .atByte(static_cast<int64_t>(got));
        }
    }
    if (!decided && got > 0 && got < kStreamProbeBytes) {  // shorter than the probe: all of it
        if (auto e = refused()) {
            return *e;
        }
    }
    if (isGzip(std::string_view(raw.data(), got))) {  // the start was judged on the raw bytes
        return gunzip(std::string_view(raw.data(), got), name, maxBytes, notes, {});
    }
    finishPadded(raw, got);
    return raw;
}

}  // namespace vramscope::trace
