#pragma once
// A reader for Python pickles of plain data (dicts, lists, tuples, sets, strings, bytes, ints,
// floats, bools, None) that never executes pickle code.
//
// Opcode meanings and encodings follow CPython's Lib/pickletools.py (protocols 0-5) and PEP 3154
// (protocol 4: FRAME, MEMOIZE, SHORT_BINUNICODE) / PEP 574 (protocol 5: BYTEARRAY8). Only the
// binary opcodes that build plain data are understood; opcodes that import or call code (GLOBAL,
// STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID) are
// refused with an Error naming the opcode and its byte offset, before anything is built.
// Public beside the snapshot importer (its main user) for tools that inspect a pickle's values.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/trace/error.h"

namespace vramscope::trace {

/// Type of one value in a parsed pickle.
enum class PickleKind : uint8_t {
    None = 0,
    Bool = 1,
    Int = 2,     ///< fits in int64
    BigInt = 3,  ///< an integer that does not fit in int64; its bytes are kept, its value is not
    Float = 4,
    String = 5,  ///< str (UTF-8 as pickled, not validated) or a protocol-1 BINSTRING
    Bytes = 6,   ///< bytes or bytearray
    List = 7,
    Tuple = 8,
    Dict = 9,
    Set = 10,  ///< set or frozenset
};

/// Index of a value inside a PickleDocument.
using PickleNodeId = uint32_t;
inline constexpr PickleNodeId kNoPickleNode = UINT32_MAX;

/// Bounds applied while parsing; inputs past them are refused with an Error.
struct PickleLimits {
    uint32_t maxDepth = 256;  ///< deepest nesting of containers (a cycle counts as too deep)
    uint32_t maxMarks = 256;  ///< deepest nesting of MARKs open at once
};

/// The value tree of one pickle, stored compactly: one 16-byte node per value, one item vector
/// per container. Strings, bytes and big ints are views into the input bytes, which must outlive
/// the document. Values a pickle shares through its memo are one node (the tree is a DAG, never
/// cyclic, depth at most PickleLimits::maxDepth). Immutable after parsing; safe to read from
/// several threads.
class PickleDocument {
public:
    /// The top-level value (what Python's pickle.loads returns).
    PickleNodeId root() const { return m_root; }
    size_t nodeCount() const { return m_nodes.size(); }

    /// Kind of `node`; None for kNoPickleNode or an out-of-range id.
    PickleKind kind(PickleNodeId node) const;
    /// The value of an Int or Bool node; nullopt for any other kind (a BigInt included).
    std::optional<int64_t> asInt(PickleNodeId node) const;
    /// The value of a Float, Int or Bool node; nullopt for any other kind.
    std::optional<double> asFloat(PickleNodeId node) const;
    /// The bytes of a String or Bytes node; nullopt for any other kind.
    std::optional<std::string_view> asString(PickleNodeId node) const;
    /// Little-endian two's-complement bytes of a BigInt node (as LONG1/LONG4 store them).
    std::string_view bigIntBytes(PickleNodeId node) const;
    /// Elements of a List, Tuple or Set; for a Dict, keys and values interleaved
    /// (k0, v0, k1, v1, ...), in insertion order. Empty for scalars.
    std::span<const PickleNodeId> items(PickleNodeId node) const;
    /// The value stored under string key `key` in Dict `dict` (the last one when the key was set
    /// twice, as Python keeps); kNoPickleNode when absent or when `dict` is not a Dict.
    PickleNodeId get(PickleNodeId dict, std::string_view key) const;

private:
    friend class PickleParser;
    struct Node {
        PickleKind kind = PickleKind::None;
        uint32_t length = 0;   ///< String/Bytes/BigInt: byte length; containers: container index
        uint64_t payload = 0;  ///< Int: value bits; Float: double bits; String/Bytes/BigInt: offset
    };
    std::string_view m_input;
    std::vector<Node> m_nodes;
    std::vector<std::vector<PickleNodeId>> m_containers;
    PickleNodeId m_root = kNoPickleNode;
};

/// Parses `bytes` (one pickle, protocol 0-5 binary opcodes; data after STOP is ignored) into a
/// PickleDocument that views `bytes`. Errors carry `name`, the byte offset of the offending opcode
/// and a sentence: code-running opcodes ("refused opcode GLOBAL at byte 2: ..."), opcodes not
/// supported (protocol-0 text opcodes, out-of-band buffers), a length or memo index that does not
/// fit, input that ends before STOP, nesting past `limits`, or a stack misuse. Time and memory
/// are linear in the input size.
Result<PickleDocument> parsePickle(std::string_view bytes, const std::string& name,
                                   const PickleLimits& limits = {});

/// CPython's name of opcode byte `op` ("GLOBAL", "BINUNICODE", ...), or nullptr when it is none.
const char* pickleOpcodeName(uint8_t op);

}  // namespace vramscope::trace
