#pragma once
// The Unix socket address of a live socket path, shared by the server and the client side
// (private to trace_io).

#include <sys/un.h>

#include <cstring>
#include <string>

#include "vramscope/trace/error.h"

namespace vramscope::trace::detail {

/// Fills `addr` (AF_UNIX) with `path`; ErrorCode::Invalid naming the path when it does not fit
/// sun_path (108 bytes on Linux, the terminating NUL included).
inline Status unixAddress(const std::string& path, sockaddr_un& addr) {
    addr = sockaddr_un{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) {
        return Error::make(ErrorCode::Invalid, path,
                           "the socket path is longer than a Unix socket address allows (" +
                               std::to_string(sizeof addr.sun_path - 1) + " bytes)");
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    return Status::success();
}

}  // namespace vramscope::trace::detail
