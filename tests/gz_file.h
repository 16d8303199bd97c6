#pragma once
// Reading a real input file in a test, gunzipped when it is gzip (zlib's gz* API reads files that
// are not gzipped as they are), and gzipping bytes for a test's own inputs, independently of
// vramscope's own input reading.

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

/// `bytes` as one gzip member (zlib's deflate, level 6); empty when zlib fails.
inline std::string gzipBytes(const std::string& bytes) {
    z_stream zs{};
    if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        return {};
    }
    std::string out(deflateBound(&zs, static_cast<uLong>(bytes.size())) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs.avail_in = static_cast<uInt>(bytes.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return status == Z_STREAM_END ? out : std::string();
}

}  // namespace vramscope::testdata
