#pragma once
// Writing an output file (an export, a report) so that a failure never leaves a half-written
// file under the name asked for, and so that special files given as the output (a terminal, a
// FIFO, /dev/stdout, a shell's >(...)) are written to, not replaced.

#include <functional>
#include <iosfwd>
#include <string>

#include "vramscope/trace/error.h"

namespace vramscope::trace {

/// Writes `path` through `write`, which streams the content and returns its own Status.
/// - A path naming one of this process's open descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
///   /proc/self/fd/N): written through that descriptor, so a shell's redirection (`> f`, `>> f`,
///   a pipe, `>(cmd)`) gets the bytes where it expects them.
/// - A regular file, or a path that does not exist yet: written to a new uniquely named file
///   beside it ("<file>.partial-XXXXXX", mkstemp) and renamed onto the file once complete
///   (rename(2) is atomic within a file system), so the name never holds half a file; the
///   temporary is removed on any failure (a killed process leaves it behind). A replaced file's
///   permission bits (and owner, where allowed) are kept; a file this process may not write is
///   refused, not replaced. A symbolic link is followed (its target is written, created when
///   the link dangles; the link stays). A file with several hard links is replaced under this
///   name only (its other names keep the old content: never a half-written file under any name).
///   Where no file may be created beside an existing writable file (a directory the user cannot
///   write), the file is written in place, as a shell's `>` would.
/// - Anything else that exists (a character device, a FIFO, a socket): written in place.
/// Errors (ErrorCode::Io, naming `path` with the system's reason, e.g. "No space left on
/// device"): the file or its directory cannot be written, a directory was given, or a write
/// failed part way; `write`'s own error is returned as it is when the stream did not fail.
Status writeOutputFile(const std::string& path, const std::function<Status(std::ostream&)>& write);

}  // namespace vramscope::trace
