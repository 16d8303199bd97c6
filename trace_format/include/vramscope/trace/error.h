#pragma once
// Errors as values for trace_format and analysis (docs/DESIGN.md "Errors as values").

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace vramscope::trace {

/// What kind of failure an Error is, for callers that act on it (a GUI that says nothing after a
/// cancel, a CLI exit code, a test). The message stays the sentence a user reads; the code never
/// replaces it. Which situations get which code:
enum class ErrorCode : uint8_t {
    /// The caller asked for something that cannot be done: an API called out of order, arguments
    /// that contradict each other, an analysis without the inputs it needs.
    Invalid = 0,
    /// The operating system refused: a file that cannot be opened, read, created or written, a
    /// directory where a file was expected.
    Io = 1,
    /// The input ends before a structure it started: a .vscope cut inside its preamble or header
    /// frame, a gzip stream cut short, a pickle without its STOP opcode.
    Truncated = 2,
    /// The bytes that are there are wrong: a CRC mismatch, an undecodable payload, malformed JSON
    /// or gzip, a damaged archive, a pickle byte that is no opcode or a stack misuse.
    Corrupt = 3,
    /// A sound input of a kind, version or feature this build does not read: not a .vscope
    /// (wrong magic), a newer format major, an unknown format, pickle opcodes that run code.
    Unsupported = 4,
    /// A size above a safety limit (frame length, decompressed size, archive member, the JSON
    /// parser's 4 GiB) or memory that ran out.
    Limit = 5,
    /// The progress callback asked to stop. Always made by Error::cancelled().
    Cancelled = 6,
};

/// "invalid", "io", "truncated", "corrupt", "unsupported", "limit", "cancelled".
const char* toString(ErrorCode code);

/// What went wrong, where: a code, a file, a byte offset and a record (frame / event) index when
/// known, and a sentence a user can act on. Made only by Error::make() or Error::cancelled(); a
/// plain value, copied freely.
struct Error {
    ErrorCode code = ErrorCode::Invalid;
    std::string file;          ///< path or display name of the input, may be empty
    int64_t byteOffset = -1;   ///< offset in the (uncompressed) input, -1 = not applicable
    int64_t recordIndex = -1;  ///< frame or event index, -1 = not applicable
    std::string message;       ///< e.g. "the file ends inside frame 18422"

    /// The one way to make an Error: `Error::make(ErrorCode::Corrupt, name, "...").atByte(off)`.
    /// `file` may be empty (an error not about one input).
    static Error make(ErrorCode code, std::string file, std::string message);
    /// The error of an operation stopped by its progress callback; its message is kCancelledMessage
    /// wherever the cancel came from (reader, importers, job loading).
    static Error cancelled(std::string file);
    /// Sets the byte offset (-1 = none) and returns the error, for chaining after make().
    Error atByte(int64_t offset) && {
        byteOffset = offset;
        return std::move(*this);
    }
    /// Sets the record (frame / event / trace entry) index (-1 = none), for chaining.
    Error atRecord(int64_t index) && {
        recordIndex = index;
        return std::move(*this);
    }

    /// "FILE: byte 7340112, record 18422: MESSAGE" (parts that are unknown are left out).
    std::string describe() const;

private:
    Error(ErrorCode c, std::string f, std::string m)
        : code(c), file(std::move(f)), message(std::move(m)) {}
};

/// The message of every cancelled operation.
inline constexpr const char* kCancelledMessage = "cancelled before the input was fully read";

/// Either a value or an Error. Modelled on std::expected (C++23), which GCC 12 lacks.
template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Error error) : m_v(std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(m_v); }
    const T& value() const& { return std::get<0>(m_v); }
    T&& value() && { return std::get<0>(std::move(m_v)); }
    T* operator->() { return &std::get<0>(m_v); }
    const T* operator->() const { return &std::get<0>(m_v); }
    T& operator*() & { return std::get<0>(m_v); }
    const Error& error() const { return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

/// Result of an operation that yields nothing but may fail.
class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Error error) : m_error(std::move(error)) {}
    static Status success() { return Status(); }

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return *m_error; }

private:
    std::optional<Error> m_error;
};

}  // namespace vramscope::trace
