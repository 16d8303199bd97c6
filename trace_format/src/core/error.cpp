#include "vramscope/trace/error.h"

namespace vramscope::trace {

const char* toString(ErrorCode code) {
    switch (code) {
        case ErrorCode::Invalid:
            return "invalid";
        case ErrorCode::Io:
            return "io";
        case ErrorCode::Truncated:
            return "truncated";
        case ErrorCode::Corrupt:
            return "corrupt";
        case ErrorCode::Unsupported:
            return "unsupported";
        case ErrorCode::Limit:
            return "limit";
        case ErrorCode::Cancelled:
            return "cancelled";
    }
    return "invalid";
}

Error Error::make(ErrorCode code, std::string file, std::string message) {
    return Error(code, std::move(file), std::move(message));
}

Error Error::cancelled(std::string file) {
    return Error(ErrorCode::Cancelled, std::move(file), kCancelledMessage);
}

std::string Error::describe() const {
    std::string out = file;
    std::string where;
    if (byteOffset >= 0) {
        where = "byte " + std::to_string(byteOffset);
    }
    if (recordIndex >= 0) {
        where += (where.empty() ? "" : ", ") + std::string("record ") + std::to_string(recordIndex);
    }
    if (!where.empty()) {
        out += (out.empty() ? "" : ": ") + where;
    }
    out += (out.empty() ? "" : ": ") + message;
    return out;
}

}  // namespace vramscope::trace
