#pragma once
// A hand-made ustar header (POSIX.1-1988) for tests that need an archive member of a given size
// without writing its data: the file can be cut after the header, or extended with a hole.

#include <cstdint>
#include <cstdio>
#include <string>

namespace vramscope_test {

/// The 512-byte header of a regular file `name` of `size` bytes.
inline std::string tarHeader(const std::string& name, uint64_t size) {
    std::string h(512, '\0');
    auto put = [&h](size_t at, const std::string& s) { h.replace(at, s.size(), s); };
    put(0, name);
    put(100, "0000644");
    put(108, "0000000");
    put(116, "0000000");
    char field[16];
    std::snprintf(field, sizeof field, "%011llo", static_cast<unsigned long long>(size));
    put(124, field);
    put(136, "00000000000");
    put(156, "0");
    put(257, std::string("ustar\0"
                         "00",
                         8));
    put(148, "        ");  // the checksum counts its own field as spaces
    unsigned sum = 0;
    for (unsigned char c : h) {
        sum += c;
    }
    std::snprintf(field, sizeof field, "%06o", sum);
    put(148, std::string(field) + std::string("\0 ", 2));
    return h;
}

}  // namespace vramscope_test
