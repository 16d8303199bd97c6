// CRC-32C (Castagnoli), as used by iSCSI (RFC 3720 appendix B.4) and the .vscope frame trailer.
// The polynomial 0x1EDC6F41 is processed bit-reflected (0x82F63B78); the register starts at all
// ones and is inverted at the end, so that crc32c("123456789") == 0xE3069283.
//
// Two implementations give identical results: the SSE4.2 CRC32 instruction (which computes exactly
// this CRC) when the CPU has it, checked at run time, and a slicing-by-8 table otherwise.

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "vramscope/trace/trace_file.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define VRAMSCOPE_CRC32C_HAVE_SSE42 1
#endif

namespace vramscope::trace {
namespace {

constexpr uint32_t kReflectedPolynomial = 0x82F63B78u;

/// tables[k][b]: the CRC register after feeding byte b followed by k zero bytes.
struct Tables {
    std::array<std::array<uint32_t, 256>, 8> t{};
    constexpr Tables() {
        for (uint32_t b = 0; b < 256; ++b) {
            uint32_t c = b;
            for (int bit = 0; bit < 8; ++bit) {
                c = (c & 1u) ? (c >> 1) ^ kReflectedPolynomial : c >> 1;
            }
            t[0][b] = c;
        }
        for (uint32_t b = 0; b < 256; ++b) {
            for (size_t k = 1; k < 8; ++k) {
                t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
            }
        }
    }
};

constexpr Tables kTables;

uint32_t updateTable(uint32_t state, const unsigned char* p, size_t n) {
    const auto& t = kTables.t;
    while (n >= 8) {
        uint32_t lo;
        uint32_t hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + 4, 4);
        if constexpr (std::endian::native == std::endian::big) {
            lo = __builtin_bswap32(lo);
            hi = __builtin_bswap32(hi);
        }
        lo ^= state;
        state = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^
                t[4][lo >> 24] ^ t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^
                t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) {
        state = (state >> 8) ^ t[0][(state ^ *p++) & 0xFFu];
    }
    return state;
}

#ifdef VRAMSCOPE_CRC32C_HAVE_SSE42
__attribute__((target("sse4.2"))) uint32_t updateSse42(uint32_t state, const unsigned char* p,
                                                       size_t n) {
#if defined(__x86_64__)
    uint64_t s = state;
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        s = _mm_crc32_u64(s, v);
        p += 8;
        n -= 8;
    }
    state = static_cast<uint32_t>(s);
#endif
    while (n-- > 0) {
        state = _mm_crc32_u8(state, *p++);
    }
    return state;
}

bool haveSse42() {
    // Evaluated once; the answer never changes while the process runs.
    static const bool have = __builtin_cpu_supports("sse4.2");
    return have;
}
#endif

}  // namespace

uint32_t crc32c(std::string_view bytes, uint32_t crc) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    uint32_t state = ~crc;
#ifdef VRAMSCOPE_CRC32C_HAVE_SSE42
    if (haveSse42()) {
        return ~updateSse42(state, p, bytes.size());
    }
#endif
    return ~updateTable(state, p, bytes.size());
}

uint32_t crc32cPortable(std::string_view bytes, uint32_t crc) {
    return ~updateTable(~crc, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

}  // namespace vramscope::trace
