#include "sweep_variants.h"

#include <zlib.h>

#include <algorithm>
#include <random>

namespace vramscope_sweep {

const char* toString(VariantKind kind) {
    switch (kind) {
        case VariantKind::Clean:
            return "clean";
        case VariantKind::Cut:
            return "cut";
        case VariantKind::FlipRaw:
            return "flip";
        case VariantKind::FlipContent:
            return "flip-content";
    }
    return "?";
}

std::vector<uint64_t> cutPoints(uint64_t size, size_t count) {
    std::vector<uint64_t> points;
    if (size == 0 || count == 0) {
        return points;
    }
    // Inside the first bytes: a magic, a version, a gzip header (10 bytes), a pickle's PROTO.
    for (uint64_t p : {0, 1, 2, 3, 5, 8, 10, 16, 32, 63}) {
        points.push_back(p);
    }
    // Near the end: the gzip trailer (8 bytes), a last frame's CRC, a closing bracket, STOP.
    for (uint64_t back : {1, 2, 4, 8, 9, 16, 64, 256, 1024, 4096}) {
        if (back < size) {
            points.push_back(size - back);
        }
    }
    const size_t spread = count > points.size() ? count - points.size() : 0;
    for (size_t i = 1; i <= spread; ++i) {
        points.push_back(size * i / (spread + 1));
    }
    std::erase_if(points, [&](uint64_t p) { return p >= size; });
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    // Repeats removed: fill up with points between the spread ones until `count` or no room.
    for (uint64_t step = 1; points.size() < count && points.size() < size; ++step) {
        const uint64_t p = (size * step * 7919) % size;
        if (!std::binary_search(points.begin(), points.end(), p)) {
            points.insert(std::upper_bound(points.begin(), points.end(), p), p);
        }
    }
    return points;
}

std::string flipBytes(std::string_view bytes, uint64_t seed, uint64_t index, std::string& label) {
    std::string out(bytes);
    if (out.empty()) {
        label = "flip#" + std::to_string(index) + " (empty input)";
        return out;
    }
    std::mt19937_64 rng(seed ^ (index * 0x9E3779B97F4A7C15ull));
    const uint64_t span = (index % 2 == 1) ? std::min<uint64_t>(out.size(), 64 * 1024) : out.size();
    const uint64_t flips = 1 + rng() % 8;
    label = "flip#" + std::to_string(index) + " at";
    for (uint64_t i = 0; i < flips; ++i) {
        const uint64_t pos = rng() % span;
        const auto mask = static_cast<unsigned char>(1 + rng() % 255);
        out[pos] = static_cast<char>(static_cast<unsigned char>(out[pos]) ^ mask);
        label += " " + std::to_string(pos);
    }
    return out;
}

std::string gzipCompress(std::string_view content) {
    z_stream z{};
    // 15 + 16: a gzip header and trailer rather than zlib's.
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        return {};
    }
    std::string out(deflateBound(&z, content.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
    z.avail_in = static_cast<uInt>(content.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    const size_t used = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        return {};
    }
    out.resize(used);
    return out;
}

uint64_t stableHash(std::string_view text) {
    uint64_t h = 1469598103934665603ull;
    for (const char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace vramscope_sweep
