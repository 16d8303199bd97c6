#pragma once
// Reading a real input file in a test, gunzipped when it is gzip (zlib's gz* API reads files that
// are not gzipped as they are), independently of vramscope's own input reading.

#include <zlib.h>

#include <memory>
#include <string>

namespace vramscope::testdata {

/// The whole file, gunzipped when it is gzip; empty when it cannot be opened or read.
inline std::string readGzFile(const std::string& path) {
    std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzopen(path.c_str(), "rb"), gzclose);
    if (!gz) {
        return {};
    }
    std::string text;
    char buf[1 << 16];
    int n = 0;
    while ((n = gzread(gz.get(), buf, sizeof buf)) > 0) {
        text.append(buf, static_cast<size_t>(n));
    }
    return n < 0 ? std::string() : text;
}

}  // namespace vramscope::testdata
