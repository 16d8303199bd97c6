#pragma once
// Reading whole input files, transparently gunzipping .gz content (zlib).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"

namespace vramscope::trace {

/// Spare capacity (bytes) that readInputBytes() leaves zeroed after the content of the string it
/// returns. It equals simdjson::SIMDJSON_PADDING (the JSON importer checks this at compile time):
/// simdjson reads up to that many bytes past the end of its input, so a string with this much
/// spare capacity is parsed in place, without a padded copy of a file that may be gigabytes long.
inline constexpr size_t kInputPaddingBytes = 64;

/// Problems that did not stop a read: e.g. a .gz cut short (the bytes before the cut are kept).
struct InputNotes {
    std::vector<Error> problems;
};

/// Reads `path` into memory. When the content starts with the gzip magic (1f 8b) it is
/// decompressed with zlib (concatenated gzip members are read one after another). The returned
/// string has at least kInputPaddingBytes of zeroed spare capacity after its size().
/// Errors name the file: unreadable, a damaged gzip stream (with the compressed byte offset), or
/// an uncompressed size above `maxBytes`. A gzip stream that ends early (a file cut while it was
/// written) returns what was decompressed before the cut when `notes` is given, with the cut
/// recorded there; without `notes` it is an Error.
Result<std::string> readInputBytes(const std::string& path, uint64_t maxBytes = (64ull << 30),
                                   InputNotes* notes = nullptr);

/// Same as readInputBytes for bytes already in memory (e.g. an archive member); `name` is used in
/// messages. Uncompressed input is copied once, into a string with the same spare capacity.
Result<std::string> decodeInputBytes(std::string_view bytes, const std::string& name,
                                     uint64_t maxBytes = (64ull << 30),
                                     InputNotes* notes = nullptr);

/// The name standard input goes by in messages and as a trace's path ("-" on a command line).
inline constexpr const char* kStandardInputName = "<stdin>";

/// Same as readInputBytes for a stream that has no size up front (a pipe, standard input: fd 0):
/// reads `fd` to its end, gunzipping gzip content, with the same padding. `name` is used in
/// messages. The bytes read (compressed or not) and the decompressed size are each refused above
/// `maxBytes` as soon as they pass it, so a stream without end never takes more than `maxBytes`
/// of memory. `refuseStart`, when given, judges the start of the stream: it sees the bytes read
/// so far once there are kStreamProbeBytes of them (or the whole stream when it is shorter), and
/// again after every further read while it answers nullopt (cannot tell yet); "" accepts, any
/// other answer stops reading there and is the Error's message (ErrorCode::Unsupported), so
/// content no reader takes is refused from its first bytes instead of being read to the limit.
/// Errors: a read error (with the byte offset reached), the limit, damaged gzip, a refused start.
/// Does not close `fd`.
using StreamStartCheck = std::function<std::optional<std::string>(std::string_view start)>;
Result<std::string> readInputStream(int fd, const std::string& name,
                                    uint64_t maxBytes = (64ull << 30), InputNotes* notes = nullptr,
                                    const StreamStartCheck& refuseStart = {});

/// How many first bytes readInputStream shows `refuseStart`: enough for every format's magic,
/// a tar header's "ustar" at offset 257 included.
inline constexpr size_t kStreamProbeBytes = 512;

/// True when `bytes` starts with the gzip magic 1f 8b (RFC 1952 section 2.3.1).
bool isGzip(std::string_view bytes);

}  // namespace vramscope::trace
