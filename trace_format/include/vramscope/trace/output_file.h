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
/// - A regular file, or a path that does not exist yet: written to "<file>.partial" in the same
///   directory and renamed onto the file once complete (rename(2) is atomic within a file
///   system); the partial file is removed on any failure. A symbolic link to a regular file is
///   followed: its target is replaced the same way and the link stays.
/// - Anything else that exists (a character device, a FIFO, a socket: /dev/null, /dev/stdout,
///   /dev/fd/N from a shell's process substitution): opened and written in place.
/// Errors (ErrorCode::Io, naming `path` and the system's reason): the file or its directory
/// cannot be written, a directory was given, or the stream failed part way; `write`'s own error
/// is returned as it is.
Status writeOutputFile(const std::string& path, const std::function<Status(std::ostream&)>& write);

}  // namespace vramscope::trace
