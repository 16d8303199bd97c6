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
#include "vramscope/trace/trace_file.h"

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

/// Judges the start of an input's content: sees its first bytes (after gzip decompression) and
/// answers "" (a reader takes it), nullopt (cannot tell yet: e.g. only blanks so far) or why no
/// reader takes it (the Error's message, ErrorCode::Unsupported). See the readers below for how
/// many bytes it sees (readInputStream shows it the raw stream, gzip or not).
using StreamStartCheck = std::function<std::optional<std::string>(std::string_view start)>;

/// How many first bytes readInputBytes / decodeInputBytes read and show `refuseStart` before
/// the rest (1 MiB + 1: one more than the blank bytes a JSON document may start with).
inline constexpr size_t kStartJudgeBytes = (1u << 20) + 1;

/// Reads `path` into memory. When the content starts with the gzip magic (1f 8b) it is
/// decompressed with zlib (concatenated gzip members are read one after another). The returned
/// string has at least kInputPaddingBytes of zeroed spare capacity after its size().
/// Errors name the file: unreadable, a damaged gzip stream (with the compressed byte offset), or
/// an uncompressed size above `maxBytes`. A gzip stream that ends early (a file cut while it was
/// written) returns what was decompressed before the cut when `notes` is given, with the cut
/// recorded there; without `notes` it is an Error.
///
/// Hostile input is refused in proportion to what was read: `refuseStart`, when given, judges the
/// first kStartJudgeBytes of plain content before the rest of the file is read or allocated, and
/// the decompressed start of gzip content after 512 bytes (kStreamProbeBytes, again in 64 KiB
/// steps while it answers nullopt) before the rest is decompressed. Decompression never
/// allocates ahead of what it made by more than 32x the compressed size (the ISIZE trailer is
/// not trusted beyond that), and content that decompresses at more than 200:1 is refused
/// (ErrorCode::Limit) once it passes 64 MiB: real traces compress 14-30:1, deflate's ceiling is
/// ~1032:1, so only long runs of one byte (a gzip bomb) get there.
Result<std::string> readInputBytes(const std::string& path,
                                   uint64_t maxBytes = kDefaultMaxInputBytes,
                                   InputNotes* notes = nullptr,
                                   const StreamStartCheck& refuseStart = {});

/// Same as readInputBytes for bytes already in memory (e.g. an archive member); `name` is used in
/// messages. Uncompressed input is copied once, into a string with the same spare capacity.
Result<std::string> decodeInputBytes(std::string_view bytes, const std::string& name,
                                     uint64_t maxBytes = kDefaultMaxInputBytes,
                                     InputNotes* notes = nullptr,
                                     const StreamStartCheck& refuseStart = {});

/// The limit on one input's decompressed size the CLI and the viewer start from: the environment
/// variable VRAMSCOPE_MAX_INPUT_GIB (a whole number of GiB, 1 to 2^20) when set, else
/// kDefaultMaxInputBytes (16 GiB). A value that is set but not such a number is an Error
/// (ErrorCode::Invalid, file "VRAMSCOPE_MAX_INPUT_GIB") rather than silently the default.
Result<uint64_t> maxInputBytesSetting();

/// The end of every "larger than the limit" message: "the limit of N bytes (G GiB; raise it with
/// VRAMSCOPE_MAX_INPUT_GIB or vramscope-cli --max-input-gib)". `what` starts the sentence, e.g.
/// "the file is larger than".
std::string inputLimitText(const std::string& what, uint64_t maxBytes);

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
Result<std::string> readInputStream(int fd, const std::string& name,
                                    uint64_t maxBytes = kDefaultMaxInputBytes,
                                    InputNotes* notes = nullptr,
                                    const StreamStartCheck& refuseStart = {});

/// How many first bytes readInputStream shows `refuseStart`: enough for every format's magic,
/// a tar header's "ustar" at offset 257 included.
inline constexpr size_t kStreamProbeBytes = 512;

/// True when `bytes` starts with the gzip magic 1f 8b (RFC 1952 section 2.3.1).
bool isGzip(std::string_view bytes);

}  // namespace vramscope::trace
