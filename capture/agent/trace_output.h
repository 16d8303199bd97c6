#pragma once
// Opening where one process's trace goes: a file (claimed with an advisory lock so that two live
// processes never share one) or a listening Unix socket.

#include <memory>
#include <string>

#include "output_naming.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::capture {

/// An opened output: the sink the writer thread writes to and the path it names.
struct OpenedOutput {
    std::unique_ptr<trace::ByteSink> sink;  ///< null on failure
    std::string path;                       ///< the file or socket actually used
    std::string error;                      ///< a sentence for the user, on failure
};

/// Opens the trace output of this process.
/// - File: creates missing parent directories (mode 0755), opens `path` (0644) and takes an
///   exclusive flock(); when another live process holds it (the same rank twice in one job) it
///   uses collisionFallbackPath(). Only then is the file truncated, so a live trace is never cut.
/// - UnixSocket: connects to a listener at `path` (a viewer); writes use MSG_NOSIGNAL so that a
///   viewer going away never raises SIGPIPE in the job, and time out after 2 s.
OpenedOutput openTraceOutput(const OutputSpec& spec, const std::string& path, int64_t pid);

/// A ByteSink over a file descriptor it owns. Sockets are written with send(MSG_NOSIGNAL).
/// Single-threaded (the agent's writer thread).
std::unique_ptr<trace::ByteSink> makeDescriptorSink(int fd, std::string name, bool isSocket);

}  // namespace vramscope::capture
