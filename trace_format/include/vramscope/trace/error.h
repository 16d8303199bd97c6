#pragma once
// Errors as values for trace_format and analysis (STYLE.md "Errors").

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace vramscope::trace {

/// What kind of failure an Error is, for callers that react differently (a cancelled load is
/// not reported as a failure).
enum class ErrorCode { Invalid, Cancelled };

/// What went wrong, where: a file, a byte offset and a record (frame / event) index when known,
/// and a sentence a user can act on.
struct Error {
    std::string file;          ///< path or display name of the input, may be empty
    int64_t byteOffset = -1;   ///< offset in the (uncompressed) input, -1 = not applicable
    int64_t recordIndex = -1;  ///< frame or event index, -1 = not applicable
    std::string message;       ///< e.g. "the file ends inside frame 18422"
    ErrorCode code = ErrorCode::Invalid;

    /// The error of work stopped on request, with one wording everywhere.
    static Error cancelled(std::string file);

    /// "FILE: byte 7340112, frame 18422: MESSAGE" (parts that are unknown are left out).
    std::string describe() const;
};

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
