#include "vramscope/trace/error.h"

namespace vramscope::trace {

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

Error Error::cancelled(std::string file) {
    return Error{std::move(file), -1, -1, "cancelled", ErrorCode::Cancelled};
}

}  // namespace vramscope::trace
