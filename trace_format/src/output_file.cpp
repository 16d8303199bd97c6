#include "vramscope/trace/output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace vramscope::trace {

namespace {

namespace fs = std::filesystem;

Error ioError(const std::string& path, const std::string& why) {
    return Error::make(ErrorCode::Io, path, "cannot be written: " + why);
}

/// Opens `target` for writing and streams into it; `shown` is the name used in errors.
Status writeInto(const std::string& target, const std::string& shown,
                 const std::function<Status(std::ostream&)>& write) {
    std::ofstream file(target, std::ios::binary | std::ios::trunc);
    if (!file) {
        return ioError(shown, std::strerror(errno));
    }
    if (Status s = write(file); !s) {
        return s;
    }
    file.flush();
    if (!file) {
        return ioError(shown, "the write failed part way (disk full?)");
    }
    file.close();
    if (file.fail()) {
        return ioError(shown, "closing the file failed");
    }
    return Status::success();
}

}  // namespace

Status writeOutputFile(const std::string& path, const std::function<Status(std::ostream&)>& write) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);  // follows symbolic links
    if (fs::is_directory(st)) {
        return ioError(path, "it is a directory; give a file name");
    }
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        return writeInto(path, path, write);  // a device, FIFO or socket: write in place
    }
    // A link to a regular file: replace its target, keep the link.
    std::string target = path;
    if (fs::is_symlink(fs::symlink_status(path, ec))) {
        const fs::path resolved = fs::canonical(path, ec);
        if (!ec) {
            target = resolved.string();
        }
    }
    const std::string partial = target + ".partial";
    if (Status s = writeInto(partial, path, write); !s) {
        fs::remove(partial, ec);
        return s;
    }
    fs::rename(partial, target, ec);
    if (ec) {
        fs::remove(partial, ec);
        return ioError(path, ec.message());
    }
    return Status::success();
}

}  // namespace vramscope::trace
