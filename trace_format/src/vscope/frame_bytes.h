#pragma once
// Small byte and wording helpers of the .vscope framing (trace.proto: little-endian lengths and
// CRCs), shared by the trace writer, the trace reader, the summary reader and the job index
// (private to trace_io).

#include <cstdint>
#include <string>

namespace vramscope::trace::detail {

/// The little-endian uint32 at p[0..3].
inline uint32_t readLe32(const char* p) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return uint32_t{u[0]} | (uint32_t{u[1]} << 8) | (uint32_t{u[2]} << 16) | (uint32_t{u[3]} << 24);
}

/// Appends `v` as a little-endian uint32 (frame lengths and CRCs).
inline void putLe32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
    }
}

/// The little-endian uint16 at p[0..1].
inline uint16_t readLe16(const char* p) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return static_cast<uint16_t>(u[0] | (u[1] << 8));
}

/// The readers report progress each time this many more bytes of a file are read.
inline constexpr uint64_t kProgressStepBytes = 4u << 20;

/// "1 frame", "3 frames".
inline std::string plural(uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace vramscope::trace::detail
