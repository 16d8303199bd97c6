#pragma once
// The damaged copies of one input that the corruption sweep loads: cuts and seeded byte flips.
// Plain functions over bytes, deterministic for a given seed (std::mt19937_64 raw output only, no
// distributions, whose results differ between standard libraries).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramscope_sweep {

/// How a variant was made, for the table and for reproducing one run.
enum class VariantKind { Clean, Cut, FlipRaw, FlipContent };

/// "clean", "cut", "flip" (bytes of the file as stored), "flip-content" (bytes of the gzip
/// content, compressed again).
const char* toString(VariantKind kind);

/// One damaged copy: how it was made and its bytes.
struct Variant {
    VariantKind kind = VariantKind::Clean;
    std::string label;  ///< e.g. "cut@1234", "flip#3 (5 bytes from 77)"
    std::string bytes;
};

/// `count` cut lengths in [0, size): ten inside the first 64 bytes (headers, magics, the gzip
/// header), ten within the last 4 KiB (the gzip trailer, a closing bracket, a STOP opcode, the
/// last frame), the rest evenly spread; sorted, without repeats. Fewer than `count` only when
/// `size` is smaller than that; the twenty fixed points are kept even when `count` is smaller.
std::vector<uint64_t> cutPoints(uint64_t size, size_t count);

/// `bytes` with 1..8 bytes XOR-ed with a non-zero value at seeded positions. Odd `index`es put
/// their positions in the first 64 KiB (where the structure is: headers, tables, the first
/// events), even ones anywhere. `label` receives what was flipped.
std::string flipBytes(std::string_view bytes, uint64_t seed, uint64_t index, std::string& label);

/// A gzip member (zlib, level 6) holding `content`; empty on failure.
std::string gzipCompress(std::string_view content);

/// A stable 64-bit hash of `text` (FNV-1a), to give every file its own seed.
uint64_t stableHash(std::string_view text);

}  // namespace vramscope_sweep
