#include <gtest/gtest.h>

#include <random>
#include <string>

#include "vramscope/trace/trace_file.h"

using namespace vramscope::trace;

namespace {

std::string ascending32() {
    std::string s;
    for (int i = 0; i < 32; ++i) {
        s.push_back(static_cast<char>(i));
    }
    return s;
}

}  // namespace

// Expected values: RFC 3720 appendix B.4 (iSCSI CRC examples) and the common "123456789" check
// value of CRC-32C (Castagnoli).
TEST(Crc32c, MatchesRfc3720TestVectors) {
    EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
    EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
    EXPECT_EQ(crc32c(ascending32()), 0x46DD794Eu);
    EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
}

TEST(Crc32c, PortableCodeMatchesRfc3720TestVectors) {
    EXPECT_EQ(crc32cPortable(std::string(32, '\0')), 0x8A9136AAu);
    EXPECT_EQ(crc32cPortable(std::string(32, '\xFF')), 0x62A8AB43u);
    EXPECT_EQ(crc32cPortable(ascending32()), 0x46DD794Eu);
    EXPECT_EQ(crc32cPortable("123456789"), 0xE3069283u);
}

TEST(Crc32c, EmptyInputGivesZero) {
    EXPECT_EQ(crc32c(""), 0u);
    EXPECT_EQ(crc32cPortable(""), 0u);
}

TEST(Crc32c, ContinuingInPiecesEqualsOneCall) {
    const std::string s = "123456789";
    for (size_t cut = 0; cut <= s.size(); ++cut) {
        const uint32_t first = crc32c(std::string_view(s).substr(0, cut));
        EXPECT_EQ(crc32c(std::string_view(s).substr(cut), first), 0xE3069283u) << "cut " << cut;
    }
}

TEST(Crc32c, HardwareAndPortableAgreeOnEveryLengthAndAlignment) {
    std::mt19937 rng(7);
    std::string buf(300, '\0');
    for (auto& c : buf) {
        c = static_cast<char>(rng());
    }
    for (size_t start = 0; start < 9; ++start) {
        for (size_t len = 0; start + len <= buf.size(); len += 1 + len / 8) {
            const auto piece = std::string_view(buf).substr(start, len);
            ASSERT_EQ(crc32c(piece), crc32cPortable(piece)) << start << "+" << len;
            ASSERT_EQ(crc32c(piece, 0x12345678u), crc32cPortable(piece, 0x12345678u));
        }
    }
}

TEST(Crc32c, DetectsAFlippedBit) {
    std::string s = "a frame payload of some length";
    const uint32_t before = crc32c(s);
    s[5] = static_cast<char>(s[5] ^ 0x10);
    EXPECT_NE(crc32c(s), before);
}
