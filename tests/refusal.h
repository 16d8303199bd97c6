#pragma once
// Refusal tests name the error they expect: the error code, the words of the message that a user
// reads (the file name, the opcode, the limit), and the byte offset where the input went wrong
// when the reader knows it. A refusal for the wrong reason then fails the test.

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "vramscope/trace/error.h"

namespace vramscope::test {

/// Byte offset argument of refused(): do not check it.
inline constexpr int64_t kAnyByte = -2;

/// Success when `result` (a trace::Result<T> or trace::Status) failed with `code`, a message
/// holding each of `words` (case-sensitive) and, unless `byte` is kAnyByte, that byte offset
/// (-1 = none). On failure the whole error is printed. Use: EXPECT_TRUE(refused(r, code, {...})).
template <class R>
::testing::AssertionResult refused(const R& result, trace::ErrorCode code,
                                   std::initializer_list<std::string_view> words,
                                   int64_t byte = kAnyByte) {
    if (result.ok()) {
        return ::testing::AssertionFailure()
               << "accepted; expected a refusal (" << trace::toString(code) << ")";
    }
    const trace::Error& e = result.error();
    if (e.code != code) {
        return ::testing::AssertionFailure() << "code " << trace::toString(e.code) << ", expected "
                                             << trace::toString(code) << ": " << e.describe();
    }
    for (std::string_view w : words) {
        if (e.message.find(w) == std::string::npos && e.file.find(w) == std::string::npos) {
            return ::testing::AssertionFailure() << "no \"" << w << "\" in: " << e.describe();
        }
    }
    if (byte != kAnyByte && e.byteOffset != byte) {
        return ::testing::AssertionFailure()
               << "byte " << e.byteOffset << ", expected " << byte << ": " << e.describe();
    }
    return ::testing::AssertionSuccess();
}

}  // namespace vramscope::test
