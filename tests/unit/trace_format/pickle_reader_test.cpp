// The data-only pickle reader, on hand-built byte strings. Opcode bytes and argument encodings
// are written out from CPython's Lib/pickletools.py documentation, independently of the reader.

#include "vramscope/trace/pickle_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>

#include "refusal.h"

using namespace std::string_literals;

namespace vramscope::trace {
namespace {

using ::vramscope::test::refused;

// Protocol-4 header, then `body`, then STOP.
std::string p4(const std::string& body) {
    return "\x80\x04"s + body + ".";
}

// A document views its input: keep every input alive for the whole test program.
Result<PickleDocument> parseWith(const PickleLimits& limits, const std::string& bytes) {
    static std::deque<std::string> inputs;
    inputs.push_back(bytes);
    return parsePickle(inputs.back(), "test.pickle", limits);
}

Result<PickleDocument> parse(const std::string& bytes) {
    return parseWith(PickleLimits{}, bytes);
}

std::string le32(uint32_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) {
        s[i] = char((v >> (8 * i)) & 0xff);
    }
    return s;
}

std::string le64(uint64_t v) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) {
        s[i] = char((v >> (8 * i)) & 0xff);
    }
    return s;
}

TEST(PickleReader, ReadsEveryScalarOpcode) {
    // A list: ] ( items... e
    const std::string body =
        "](N"s + "\x88" + "\x89"                // None, True, False
        + "J" + le32(0xfffffff6u)               // BININT -10
        + "K\xc8"                               // BININT1 200
        + "M\x39\x30"                           // BININT2 12345
        + "\x8a\x02\x00\x80"s                   // LONG1 2 bytes: 0x8000, two's complement = -32768
        + "\x8a\x01\xff"                        // LONG1 1 byte: -1
        + "\x8a\x00"s                           // LONG1 0 bytes: 0
        + "\x8b" + le32(3) + "\x01\x00\x01"s    // LONG4: 0x010001 = 65537
        + "G\x3f\xf8\x00\x00\x00\x00\x00\x00"s  // BINFLOAT 1.5 (big-endian)
        +
        "\x8c\x03"
        "abc"                         // SHORT_BINUNICODE
        + "X" + le32(2) + "\xc3\xa9"  // BINUNICODE "é"
        + "\x8d" + le64(1) + "z"      // BINUNICODE8
        + "U\x02hi"                   // SHORT_BINSTRING
        + "T" + le32(1) + "q"         // BINSTRING
        + "C\x02\x00\x01"s            // SHORT_BINBYTES
        + "B" + le32(1) + "\xff"      // BINBYTES
        + "\x8e" + le64(0)            // BINBYTES8 (empty)
        + "\x96" + le64(2) + "ab"     // BYTEARRAY8
        + "e";
    auto doc = parse(p4(body));
    ASSERT_TRUE(doc.ok()) << doc.error().describe();
    const auto items = doc->items(doc->root());
    ASSERT_EQ(doc->kind(doc->root()), PickleKind::List);
    ASSERT_EQ(items.size(), 20u);
    EXPECT_EQ(doc->kind(items[0]), PickleKind::None);
    EXPECT_EQ(doc->kind(items[1]), PickleKind::Bool);
    EXPECT_EQ(doc->asInt(items[1]), 1);
    EXPECT_EQ(doc->asInt(items[2]), 0);
    EXPECT_EQ(doc->asInt(items[3]), -10);
    EXPECT_EQ(doc->asInt(items[4]), 200);
    EXPECT_EQ(doc->asInt(items[5]), 12345);
    EXPECT_EQ(doc->asInt(items[6]), -32768);
    EXPECT_EQ(doc->asInt(items[7]), -1);
    EXPECT_EQ(doc->asInt(items[8]), 0);
    EXPECT_EQ(doc->asInt(items[9]), 65537);
    EXPECT_EQ(doc->kind(items[10]), PickleKind::Float);
    EXPECT_EQ(doc->asFloat(items[10]), 1.5);
    EXPECT_EQ(doc->asString(items[11]), "abc");
    EXPECT_EQ(doc->asString(items[12]), "\xc3\xa9");
    EXPECT_EQ(doc->asString(items[13]), "z");
    EXPECT_EQ(doc->asString(items[14]), "hi");
    EXPECT_EQ(doc->asString(items[15]), "q");
    EXPECT_EQ(doc->kind(items[16]), PickleKind::Bytes);
    EXPECT_EQ(doc->asString(items[16]), "\x00\x01"s);
    EXPECT_EQ(doc->asString(items[17]), "\xff");
    EXPECT_EQ(doc->asString(items[18]), "");
    EXPECT_EQ(doc->asString(items[19]), "ab");
    EXPECT_FALSE(doc->asInt(items[11]).has_value());
    EXPECT_FALSE(doc->asString(items[3]).has_value());
}

TEST(PickleReader, BuildsEveryContainerKind) {
    const std::string body =
        "("s
        ")"                       // EMPTY_TUPLE
        "K\x01\x85"               // TUPLE1 (1,)
        "K\x01K\x02\x86"          // TUPLE2
        "K\x01K\x02K\x03\x87"     // TUPLE3
        "(K\x01K\x02K\x03K\x04t"  // TUPLE (mark)
        "(K\x05l"                 // LIST (mark)
        "(\x8c\x01"
        "aK\x01"
        "d"  // DICT (mark)
        "}\x8c\x01"
        "bK\x02s"  // EMPTY_DICT + SETITEM
        "](K\x07K\x08"
        "eK\x09"
        "a"                    // APPENDS then APPEND
        "\x8f(K\x01K\x02\x90"  // EMPTY_SET + ADDITEMS
        "(K\x03\x91"           // FROZENSET
        "t";
    auto doc = parse(p4(body));
    ASSERT_TRUE(doc.ok()) << doc.error().describe();
    ASSERT_EQ(doc->kind(doc->root()), PickleKind::Tuple);
    const auto items = doc->items(doc->root());
    ASSERT_EQ(items.size(), 11u);
    const size_t sizes[] = {0, 1, 2, 3, 4, 1, 2, 2, 3, 2, 1};
    const PickleKind kinds[] = {PickleKind::Tuple, PickleKind::Tuple, PickleKind::Tuple,
                                PickleKind::Tuple, PickleKind::Tuple, PickleKind::List,
                                PickleKind::Dict,  PickleKind::Dict,  PickleKind::List,
                                PickleKind::Set,   PickleKind::Set};
    for (size_t i = 0; i < items.size(); ++i) {
        EXPECT_EQ(doc->kind(items[i]), kinds[i]) << i;
        EXPECT_EQ(doc->items(items[i]).size(), sizes[i]) << i;
    }
    EXPECT_EQ(doc->asInt(doc->items(items[4])[3]), 4);
    EXPECT_EQ(doc->asInt(doc->get(items[6], "a")), 1);
    EXPECT_EQ(doc->asInt(doc->get(items[7], "b")), 2);
    EXPECT_EQ(doc->get(items[7], "a"), kNoPickleNode);
    EXPECT_EQ(doc->asInt(doc->items(items[8])[2]), 9);
}

TEST(PickleReader, KeepsTheLastValueOfARepeatedKey) {
    auto doc = parse(p4("}(\x8c\x01kK\x01\x8c\x01kK\x02u"));
    ASSERT_TRUE(doc.ok()) << doc.error().describe();
    EXPECT_EQ(doc->asInt(doc->get(doc->root(), "k")), 2);
}

TEST(PickleReader, KeepsInt64RangeAndMarksLargerIntsAsBig) {
    const std::string body = "("s + "\x8a\x08" + le64(uint64_t(INT64_MIN)) +   // INT64_MIN
                             "\x8a\x08" + le64(uint64_t(INT64_MAX)) +          // INT64_MAX
                             "\x8a\x09" + le64(0) + "\x01" +                   // 2**64
                             "\x8a\x09" + le64(uint64_t(1) << 63) + "\x00"s +  // 2**63
                             "\x8a\x09" + le64(5) + "\x00"s +                // 5, not minimal: fits
                             "\x8a\x0a" + le64(~uint64_t(0)) + "\xff\xff" +  // -1, not minimal
                             "\x8b" + le32(100) + std::string(99, '\0') + "\x01" +  // 2**792
                             "t";
    auto doc = parse(p4(body));
    ASSERT_TRUE(doc.ok()) << doc.error().describe();
    const auto items = doc->items(doc->root());
    ASSERT_EQ(items.size(), 7u);
    EXPECT_EQ(doc->asInt(items[0]), INT64_MIN);
    EXPECT_EQ(doc->asInt(items[1]), INT64_MAX);
    EXPECT_EQ(doc->kind(items[2]), PickleKind::BigInt);
    EXPECT_FALSE(doc->asInt(items[2]).has_value());
    EXPECT_EQ(doc->bigIntBytes(items[2]), le64(0) + "\x01");
    EXPECT_EQ(doc->kind(items[3]), PickleKind::BigInt);
    EXPECT_EQ(doc->asInt(items[4]), 5);
    EXPECT_EQ(doc->asInt(items[5]), -1);
    EXPECT_EQ(doc->kind(items[6]), PickleKind::BigInt);
    EXPECT_EQ(doc->bigIntBytes(items[6]).size(), 100u);
}

TEST(PickleReader, SharesMemoizedValues) {
    // A list L stored with BINPUT 3, with LONG_BINPUT 70000 and by MEMOIZE (which uses the number
    // of entries stored so far, 4, as Python's len(memo)), then fetched three ways; L is appended
    // to after it was fetched, which the shared value shows.
    const std::string body =
        "](\x8c\x01x\x94"s  // memo[0] = "x" (MEMOIZE)
        "\x8c\x01y\x94"     // memo[1] = "y"
        "]q\x03"            // memo[3] = [] (BINPUT 3)
        "r" +
        le32(70000) +  // memo[70000] = same list (LONG_BINPUT)
        "\x94"         // memo[4] = same list (MEMOIZE)
        "h\x03"        // BINGET 3
        "j" +
        le32(70000) +  // LONG_BINGET 70000
        "h\x04"        // BINGET 4
        "e"            // root = ["x", "y", L, L, L, L]
        "h\x03K\x01"
        "a"   // L.append(1) after the fact
        "0";  // POP it again, root stays below
    auto doc = parse(p4(body));
    ASSERT_TRUE(doc.ok()) << doc.error().describe();
    const auto items = doc->items(doc->root());
    ASSERT_EQ(items.size(), 6u);
    EXPECT_EQ(doc->asString(items[0]), "x");
    EXPECT_EQ(items[2], items[3]);
    EXPECT_EQ(items[2], items[4]);
    EXPECT_EQ(items[2], items[5]);
    ASSERT_EQ(doc->items(items[2]).size(), 1u);
    EXPECT_EQ(doc->asInt(doc->items(items[2])[0]), 1);
}

TEST(PickleReader, RefusesAMemoIndexNeverStored) {
    auto doc = parse(p4("]q\x01h\x02"));
    ASSERT_FALSE(doc.ok());
    EXPECT_NE(doc.error().message.find("BINGET"), std::string::npos) << doc.error().message;
    EXPECT_EQ(doc.error().byteOffset, 5);
    EXPECT_TRUE(refused(parse(p4("j" + le32(0xffffffffu))), ErrorCode::Corrupt,
                        {"opcode LONG_BINGET", "memo index 4294967295 was never stored"}, 2));
    EXPECT_TRUE(parse(p4("Nr" + le32(0xfffffff0u) + "0j" + le32(0xfffffff0u))).ok());
}

TEST(PickleReader, AcceptsFramesAndProtocolsUpToFive) {
    const std::string framed = "\x80\x05\x95"s + le64(3) + "K\x07.";
    auto doc = parse(framed);
    ASSERT_TRUE(doc.ok()) << doc.error().describe();
    EXPECT_EQ(doc->asInt(doc->root()), 7);
    for (int proto = 2; proto <= 5; ++proto) {
        EXPECT_TRUE(parse("\x80"s + char(proto) + "N.").ok()) << proto;
    }
    auto newer = parse("\x80\x06N.");
    ASSERT_FALSE(newer.ok());
    EXPECT_NE(newer.error().message.find("protocol 6"), std::string::npos);
    EXPECT_TRUE(parse("K\x01.").ok());  // no PROTO opcode at all (protocol 1 style)
    EXPECT_TRUE(parse(p4("N") + "trailing bytes are ignored").ok());
}

struct CodeOpcode {
    const char* name;
    std::string bytes;  // the opcode and what it needs to look plausible
};

TEST(PickleReader, RefusesEveryOpcodeThatRunsCodeNamingItAndItsOffset) {
    const CodeOpcode cases[] = {
        {"GLOBAL", "cos\nsystem\n"},
        {"STACK_GLOBAL", "\x93"},
        {"REDUCE", "R"},
        {"BUILD", "b"},
        {"INST", "ios\nsystem\n"},
        {"OBJ", "o"},
        {"NEWOBJ", "\x81"},
        {"NEWOBJ_EX", "\x92"},
        {"EXT1", "\x82\x01"},
        {"EXT2", "\x83\x01\x00"s},
        {"EXT4", "\x84\x01\x00\x00\x00"s},
        {"PERSID", "Pid\n"},
        {"BINPERSID", "Q"},
    };
    for (const auto& c : cases) {
        // Two harmless values first, so that the offending opcode sits at byte 2 + 3 + 3 = 8.
        const std::string bytes =
            "\x80\x02\x8c\x01"
            "a\x8c\x01"
            "b"s +
            c.bytes + ".";
        auto doc = parse(bytes);
        ASSERT_FALSE(doc.ok()) << c.name;
        EXPECT_EQ(doc.error().byteOffset, 8) << c.name;
        EXPECT_EQ(doc.error().file, "test.pickle");
        EXPECT_NE(doc.error().message.find(std::string("opcode ") + c.name + ":"),
                  std::string::npos)
            << doc.error().message;
        EXPECT_NE(doc.error().message.find("refused"), std::string::npos) << doc.error().message;
    }
}

TEST(PickleReader, RefusesAShellCommandPickleAndRunsNothing) {
    // What pickle.dumps produces (protocol 2) for an object whose __reduce__ returns
    // (os.system, ("touch MARKER",)): GLOBAL 'posix system', the argument tuple, REDUCE.
    const std::filesystem::path marker =
        std::filesystem::path(::testing::TempDir()) / "vramscope_pickle_marker";
    std::filesystem::remove(marker);
    const std::string command = "touch " + marker.string();
    const std::string bytes =
        "\x80\x02"
        "cposix\nsystem\n"s +
        "q\x00"s + "X" + le32(uint32_t(command.size())) + command + "q\x01\x85q\x02Rq\x03.";
    auto doc = parse(bytes);
    ASSERT_FALSE(doc.ok());
    EXPECT_EQ(doc.error().byteOffset, 2);
    EXPECT_NE(doc.error().message.find("GLOBAL"), std::string::npos) << doc.error().message;
    EXPECT_FALSE(std::filesystem::exists(marker));

    // The protocol-4 spelling: two strings and STACK_GLOBAL.
    const std::string p4bytes = "\x80\x04\x8c\x05posix\x8c\x06system\x93"s + "\x8c" +
                                char(command.size()) + command + "\x85R.";
    auto doc4 = parse(p4bytes);
    ASSERT_FALSE(doc4.ok());
    EXPECT_EQ(doc4.error().byteOffset, 17);
    EXPECT_NE(doc4.error().message.find("STACK_GLOBAL"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(PickleReader, RefusesTextOpcodesBuffersAndUnknownBytes) {
    for (const std::string& op : {"I1\n"s, "L1\n"s, "F1.0\n"s, "S'a'\n"s, "Va\n"s, "g0\n"s}) {
        auto doc = parse(p4(op));
        ASSERT_FALSE(doc.ok()) << op;
        EXPECT_NE(doc.error().message.find("not supported"), std::string::npos);
    }
    EXPECT_FALSE(parse(p4("N\x97")).ok());  // NEXT_BUFFER
    EXPECT_FALSE(parse(p4("\x98")).ok());   // READONLY_BUFFER
    auto unknown = parse(p4("\xff"));
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().byteOffset, 2);
    EXPECT_NE(unknown.error().message.find("0xff"), std::string::npos);
}

TEST(PickleReader, GivesACleanErrorWhenCutAtEveryByte) {
    // {"a": [1, 2.5, "xyz", None], "b": (True,)} with a memo and a frame.
    const std::string payload =
        "}\x94(\x8c\x01"
        "a\x94]\x94(K\x01G\x40\x04\x00\x00\x00\x00\x00\x00"s
        "\x8c\x03xyz\x94NeX\x01\x00\x00\x00"s
        "b\x88\x85\x94u."s;
    const std::string whole = "\x80\x04\x95"s + le64(payload.size()) + payload;
    auto full = parse(whole);
    ASSERT_TRUE(full.ok()) << full.error().describe();
    ASSERT_EQ(full->items(full->get(full->root(), "a")).size(), 4u);
    for (size_t cut = 0; cut < whole.size(); ++cut) {
        const std::string prefix = whole.substr(0, cut);
        auto doc = parse(prefix);
        ASSERT_FALSE(doc.ok()) << "cut at " << cut;
        EXPECT_GE(doc.error().byteOffset, 0) << cut;
        EXPECT_LE(doc.error().byteOffset, int64_t(cut)) << cut;
        EXPECT_FALSE(doc.error().message.empty());
    }
}

TEST(PickleReader, RefusesNestingBombsAndCycles) {
    // 100000 empty lists folded into each other with APPEND: depth 100000, no MARK.
    std::string lists(100000, ']');
    std::string appends(99999, 'a');
    auto deep = parse(p4(lists + appends));
    ASSERT_FALSE(deep.ok());
    EXPECT_NE(deep.error().message.find("nested deeper"), std::string::npos);

    auto marks = parse(p4(std::string(100000, '(')));
    ASSERT_FALSE(marks.ok());
    EXPECT_NE(marks.error().message.find("MARK"), std::string::npos);

    // A list that holds itself: ] BINPUT 0, BINGET 0, APPEND.
    auto cycle =
        parse(p4("]q\x00h\x00"s
                 "a"s));
    EXPECT_TRUE(refused(cycle, ErrorCode::Limit, {"a value that contains itself"}));

    // Within the limit is fine; one past it is not.
    PickleLimits limits;
    limits.maxDepth = 10;
    EXPECT_TRUE(parseWith(limits, p4(std::string(10, ']') + std::string(9, 'a'))).ok());
    EXPECT_TRUE(refused(parseWith(limits, p4(std::string(11, ']') + std::string(10, 'a'))),
                        ErrorCode::Limit, {"nested deeper than 10 levels"}));
    // A shared value is measured where it sits deepest: L (depth 6) is put in M1 and again in M6
    // at the bottom of M1 -> M2 -> ... -> M6, so M1 is 12 deep though L is visited once.
    const std::string shared = std::string(6, ']') + std::string(5, 'a') + "q\x00"s + "]" +
                               "h\x00"s
                               "a" +
                               std::string(5, ']') + "h\x00"s + std::string(6, 'a');
    auto tooDeep = parseWith(limits, p4(shared));
    EXPECT_TRUE(refused(tooDeep, ErrorCode::Limit, {"nested deeper than 10 levels"}));
    limits.maxDepth = 12;
    EXPECT_TRUE(parseWith(limits, p4(shared)).ok());
}

TEST(PickleReader, RefusesLengthsPastTheEnd) {
    const std::string cases[] = {
        "\x8d" + le64(uint64_t(1) << 62) + "abc",  // BINUNICODE8 of 4 EiB
        "X" + le32(0xffffffffu) + "abc",           // BINUNICODE of 4 GiB
        "\x8e" + le64(~uint64_t(0)),               // BINBYTES8, length 2**64-1
        "\x8b" + le32(0x7fffffffu) + "\x01",       // LONG4 of 2 GiB
        "\x8b" + le32(0xffffffffu),                // LONG4, negative length
        "T" + le32(0x80000000u),                   // BINSTRING, negative length
        "\x95" + le64(uint64_t(1) << 40),          // FRAME of 1 TiB
        "\x8c\xff"
        "ab",  // SHORT_BINUNICODE past the end
    };
    for (const std::string& c : cases) {
        auto doc = parse(p4(c));
        ASSERT_FALSE(doc.ok()) << c.size();
        EXPECT_EQ(doc.error().byteOffset, 2) << doc.error().message;
    }
}

TEST(PickleReader, RefusesStackMisuse) {
    // Each refusal names the opcode and what is wrong with the stack, at the opcode's byte
    // (the protocol header takes bytes 0 and 1).
    const auto expect = [](const std::string& bytes, ErrorCode code, std::string_view words,
                           int64_t byte) {
        EXPECT_TRUE(refused(parse(bytes), code, {words}, byte));
    };
    expect(p4(""), ErrorCode::Corrupt, "opcode STOP: STOP with nothing on the stack", 2);
    expect("\x80\x04", ErrorCode::Truncated, "the pickle ends without a STOP opcode", 2);
    expect(p4("}K\x01"
              "a"),
           ErrorCode::Corrupt, "opcode APPEND: the target is not a list", 5);
    expect(p4("](K\x01K\x02u"), ErrorCode::Corrupt,
           "opcode SETITEMS: the target below the MARK is of the wrong type", 8);
    expect(p4("}(K\x01u"), ErrorCode::Corrupt, "opcode SETITEMS: an odd number of items for a dict",
           6);
    expect(p4("(K\x01K\x02K\x03"
              "d"),
           ErrorCode::Corrupt, "opcode DICT: an odd number of items for a dict", 9);
    expect(p4("(K\x01"
              "e"),
           ErrorCode::Corrupt, "opcode APPENDS: no container below the MARK", 5);
    expect(p4("K\x01t"), ErrorCode::Corrupt, "opcode TUPLE: no MARK before it", 4);
    expect(p4("K\x01\x86"), ErrorCode::Corrupt, "opcode TUPLE2: needs 2 items on the stack", 4);
    expect(p4("0"), ErrorCode::Corrupt, "opcode POP: the stack is empty", 2);
    expect(p4("1"), ErrorCode::Corrupt, "opcode POP_MARK: no MARK to pop", 2);
    expect(p4("\x94"), ErrorCode::Corrupt,
           "opcode MEMOIZE: nothing on the stack to store in the memo", 2);
    expect(p4("(2"), ErrorCode::Corrupt, "opcode DUP: the stack is empty", 3);
}

TEST(PickleReader, PopsItemsAndMarksAsPythonDoes) {
    // K1 ( K2 K3 POP_MARK -> [1];  DUP -> [1, 1];  TUPLE2 -> (1, 1)
    auto a =
        parse(p4("K\x01(K\x02K\x03"
                 "1"
                 "2\x86"));
    ASSERT_TRUE(a.ok()) << a.error().describe();
    ASSERT_EQ(a->items(a->root()).size(), 2u);
    EXPECT_EQ(a->items(a->root())[0], a->items(a->root())[1]);
    // K1 ( POP: nothing above the MARK, so POP removes the MARK; then K2 TUPLE2 -> (1, 2)
    auto b = parse(p4("K\x01(0K\x02\x86"));
    ASSERT_TRUE(b.ok()) << b.error().describe();
    EXPECT_EQ(b->asInt(b->items(b->root())[1]), 2);
}

}  // namespace
}  // namespace vramscope::trace
