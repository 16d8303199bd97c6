#pragma once
// Name matching that several analyses share (internal to analysis): kernel, frame and range names
// are ASCII identifiers, compared without regard to case.

#include <cctype>
#include <string>
#include <string_view>

namespace vramscope::analysis {

/// `s` in lower case, byte by byte (std::tolower).
inline std::string asciiLower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

}  // namespace vramscope::analysis
