#include "vramscope/trace/pickle_reader.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <unordered_map>
#include <utility>

namespace vramscope::trace {

namespace {

// Opcode bytes, from CPython's Lib/pickle.py / Lib/pickletools.py.
enum Op : uint8_t {
    kMark = '(',
    kStop = '.',
    kPop = '0',
    kPopMark = '1',
    kDup = '2',
    kFloat = 'F',
    kInt = 'I',
    kBinInt = 'J',
    kBinInt1 = 'K',
    kLong = 'L',
    kBinInt2 = 'M',
    kNone = 'N',
    kPersId = 'P',
    kBinPersId = 'Q',
    kReduce = 'R',
    kString = 'S',
    kBinString = 'T',
    kShortBinString = 'U',
    kUnicode = 'V',
    kBinUnicode = 'X',
    kAppend = 'a',
    kBuild = 'b',
    kGlobal = 'c',
    kDict = 'd',
    kEmptyDict = '}',
    kAppends = 'e',
    kGet = 'g',
    kBinGet = 'h',
    kInst = 'i',
    kLongBinGet = 'j',
    kList = 'l',
    kEmptyList = ']',
    kObj = 'o',
    kPut = 'p',
    kBinPut = 'q',
    kLongBinPut = 'r',
    kSetItem = 's',
    kTuple = 't',
    kEmptyTuple = ')',
    kSetItems = 'u',
    kBinFloat = 'G',
    kBinBytes = 'B',
    kShortBinBytes = 'C',
    kProto = 0x80,
    kNewObj = 0x81,
    kExt1 = 0x82,
    kExt2 = 0x83,
    kExt4 = 0x84,
    kTuple1 = 0x85,
    kTuple2 = 0x86,
    kTuple3 = 0x87,
    kNewTrue = 0x88,
    kNewFalse = 0x89,
    kLong1 = 0x8a,
    kLong4 = 0x8b,
    kShortBinUnicode = 0x8c,
    kBinUnicode8 = 0x8d,
    kBinBytes8 = 0x8e,
    kEmptySet = 0x8f,
    kAddItems = 0x90,
    kFrozenSet = 0x91,
    kNewObjEx = 0x92,
    kStackGlobal = 0x93,
    kMemoize = 0x94,
    kFrame = 0x95,
    kByteArray8 = 0x96,
    kNextBuffer = 0x97,
    kReadonlyBuffer = 0x98,
};

constexpr uint8_t kHighestProtocol = 5;

}  // namespace

const char* pickleOpcodeName(uint8_t op) {
    struct Name {
        uint8_t op;
        const char* name;
    };
    static constexpr Name kNames[] = {{kMark, "MARK"},
                                      {kStop, "STOP"},
                                      {kPop, "POP"},
                                      {kPopMark, "POP_MARK"},
                                      {kDup, "DUP"},
                                      {kFloat, "FLOAT"},
                                      {kInt, "INT"},
                                      {kBinInt, "BININT"},
                                      {kBinInt1, "BININT1"},
                                      {kLong, "LONG"},
                                      {kBinInt2, "BININT2"},
                                      {kNone, "NONE"},
                                      {kPersId, "PERSID"},
                                      {kBinPersId, "BINPERSID"},
                                      {kReduce, "REDUCE"},
                                      {kString, "STRING"},
                                      {kBinString, "BINSTRING"},
                                      {kShortBinString, "SHORT_BINSTRING"},
                                      {kUnicode, "UNICODE"},
                                      {kBinUnicode, "BINUNICODE"},
                                      {kAppend, "APPEND"},
                                      {kBuild, "BUILD"},
                                      {kGlobal, "GLOBAL"},
                                      {kDict, "DICT"},
                                      {kEmptyDict, "EMPTY_DICT"},
                                      {kAppends, "APPENDS"},
                                      {kGet, "GET"},
                                      {kBinGet, "BINGET"},
                                      {kInst, "INST"},
                                      {kLongBinGet, "LONG_BINGET"},
                                      {kList, "LIST"},
                                      {kEmptyList, "EMPTY_LIST"},
                                      {kObj, "OBJ"},
                                      {kPut, "PUT"},
                                      {kBinPut, "BINPUT"},
                                      {kLongBinPut, "LONG_BINPUT"},
                                      {kSetItem, "SETITEM"},
                                      {kTuple, "TUPLE"},
                                      {kEmptyTuple, "EMPTY_TUPLE"},
                                      {kSetItems, "SETITEMS"},
                                      {kBinFloat, "BINFLOAT"},
                                      {kBinBytes, "BINBYTES"},
                                      {kShortBinBytes, "SHORT_BINBYTES"},
                                      {kProto, "PROTO"},
                                      {kNewObj, "NEWOBJ"},
                                      {kExt1, "EXT1"},
                                      {kExt2, "EXT2"},
                                      {kExt4, "EXT4"},
                                      {kTuple1, "TUPLE1"},
                                      {kTuple2, "TUPLE2"},
                                      {kTuple3, "TUPLE3"},
                                      {kNewTrue, "NEWTRUE"},
                                      {kNewFalse, "NEWFALSE"},
                                      {kLong1, "LONG1"},
                                      {kLong4, "LONG4"},
                                      {kShortBinUnicode, "SHORT_BINUNICODE"},
                                      {kBinUnicode8, "BINUNICODE8"},
                                      {kBinBytes8, "BINBYTES8"},
                                      {kEmptySet, "EMPTY_SET"},
                                      {kAddItems, "ADDITEMS"},
                                      {kFrozenSet, "FROZENSET"},
                                      {kNewObjEx, "NEWOBJ_EX"},
                                      {kStackGlobal, "STACK_GLOBAL"},
                                      {kMemoize, "MEMOIZE"},
                                      {kFrame, "FRAME"},
                                      {kByteArray8, "BYTEARRAY8"},
                                      {kNextBuffer, "NEXT_BUFFER"},
                                      {kReadonlyBuffer, "READONLY_BUFFER"}};
    for (const Name& n : kNames) {
        if (n.op == op) {
            return n.name;
        }
    }
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
// PickleDocument accessors

PickleKind PickleDocument::kind(PickleNodeId node) const {
    return node < m_nodes.size() ? m_nodes[node].kind : PickleKind::None;
}

std::optional<int64_t> PickleDocument::asInt(PickleNodeId node) const {
    const PickleKind k = kind(node);
    if (k != PickleKind::Int && k != PickleKind::Bool) {
        return std::nullopt;
    }
    return static_cast<int64_t>(m_nodes[node].payload);
}

std::optional<double> PickleDocument::asFloat(PickleNodeId node) const {
    const PickleKind k = kind(node);
    if (k == PickleKind::Float) {
        return std::bit_cast<double>(m_nodes[node].payload);
    }
    if (k == PickleKind::Int || k == PickleKind::Bool) {
        return static_cast<double>(static_cast<int64_t>(m_nodes[node].payload));
    }
    return std::nullopt;
}

std::optional<std::string_view> PickleDocument::asString(PickleNodeId node) const {
    const PickleKind k = kind(node);
    if (k != PickleKind::String && k != PickleKind::Bytes) {
        return std::nullopt;
    }
    return m_input.substr(m_nodes[node].payload, m_nodes[node].length);
}

std::string_view PickleDocument::bigIntBytes(PickleNodeId node) const {
    if (kind(node) != PickleKind::BigInt) {
        return {};
    }
    return m_input.substr(m_nodes[node].payload, m_nodes[node].length);
}

std::span<const PickleNodeId> PickleDocument::items(PickleNodeId node) const {
    switch (kind(node)) {
        case PickleKind::List:
        case PickleKind::Tuple:
        case PickleKind::Dict:
        case PickleKind::Set:
            return m_containers[m_nodes[node].length];
        default:
            return {};
    }
}

PickleNodeId PickleDocument::get(PickleNodeId dict, std::string_view key) const {
    if (kind(dict) != PickleKind::Dict) {
        return kNoPickleNode;
    }
    const std::vector<PickleNodeId>& kv = m_containers[m_nodes[dict].length];
    for (size_t i = kv.size(); i >= 2; i -= 2) {
        const PickleNodeId k = kv[i - 2];
        if (m_nodes[k].kind == PickleKind::String && m_nodes[k].length == key.size() &&
            m_input.compare(m_nodes[k].payload, key.size(), key) == 0) {
            return kv[i - 1];
        }
    }
    return kNoPickleNode;
}

// ---------------------------------------------------------------------------------------------
// Parser

class PickleParser {
public:
    PickleParser(std::string_view in, const std::string& name, const PickleLimits& limits)
        : m_in(in), m_name(name), m_limits(limits) {
        m_doc.m_input = in;
    }

    Result<PickleDocument> run() {
        m_doc.m_nodes.reserve(m_in.size() / 4 + 16);
        while (m_pos < m_in.size()) {
            m_opPos = m_pos;
            m_op = static_cast<uint8_t>(m_in[m_pos++]);
            if (m_op == kStop) {
                if (m_stack.size() <= markBase()) {
                    return opcodeError(ErrorCode::Corrupt, "STOP with nothing on the stack");
                }
                m_doc.m_root = m_stack.back();
                if (auto depth = checkDepth(); !depth.ok()) {
                    return depth.error();
                }
                return std::move(m_doc);
            }
            if (Status s = step(); !s.ok()) {
                return s.error();
            }
        }
        return Error::make(ErrorCode::Truncated, m_name,
                           "the pickle ends without a STOP opcode (" + std::to_string(m_in.size()) +
                               " bytes read); the file is cut short")
            .atByte(static_cast<int64_t>(m_in.size()));
    }

private:
    using Node = PickleDocument::Node;

    /// An error about the current opcode: "opcode NAME: WHAT" at the opcode's byte offset.
    Error opcodeError(ErrorCode code, const std::string& what) const {
        const char* name = pickleOpcodeName(m_op);
        return Error::make(code, m_name, std::string("opcode ") + (name ? name : "?") + ": " + what)
            .atByte(static_cast<int64_t>(m_opPos));
    }
    /// The input ends `needed` bytes before the current opcode does.
    Error cutShort(uint64_t needed) const {
        return opcodeError(ErrorCode::Truncated,
                           "the pickle ends inside this opcode (" + std::to_string(needed) +
                               " more bytes needed, " + std::to_string(m_in.size() - m_pos) +
                               " left)");
    }

    size_t markBase() const { return m_marks.empty() ? 0 : m_marks.back(); }
    size_t aboveMark() const { return m_stack.size() - markBase(); }

    // Reads an n-byte little-endian unsigned integer (n <= 8), checking what remains.
    bool readLE(size_t n, uint64_t& out) {
        if (m_in.size() - m_pos < n) {
            return false;
        }
        out = 0;
        for (size_t i = 0; i < n; ++i) {
            out |= uint64_t(static_cast<uint8_t>(m_in[m_pos + i])) << (8 * i);
        }
        m_pos += n;
        return true;
    }

    PickleNodeId addNode(PickleKind kind, uint32_t length, uint64_t payload) {
        m_doc.m_nodes.push_back(Node{kind, length, payload});
        return static_cast<PickleNodeId>(m_doc.m_nodes.size() - 1);
    }
    void push(PickleKind kind, uint32_t length, uint64_t payload) {
        m_stack.push_back(addNode(kind, length, payload));
    }
    // Creates a container holding stack[from, end) and replaces those entries by it.
    void pushContainer(PickleKind kind, size_t from) {
        const auto index = static_cast<uint32_t>(m_doc.m_containers.size());
        m_doc.m_containers.emplace_back(m_stack.begin() + static_cast<ptrdiff_t>(from),
                                        m_stack.end());
        m_stack.resize(from);
        push(kind, index, 0);
    }
    std::vector<PickleNodeId>* container(PickleNodeId node, PickleKind kind) {
        const Node& n = m_doc.m_nodes[node];
        return n.kind == kind ? &m_doc.m_containers[n.length] : nullptr;
    }

    Status pushSized(size_t lengthBytes, PickleKind kind) {
        uint64_t len = 0;
        if (!readLE(lengthBytes, len)) {
            return cutShort(lengthBytes - (m_in.size() - m_pos));
        }
        if (lengthBytes == 4 && (m_op == kBinString) && (len & 0x80000000u)) {
            return opcodeError(ErrorCode::Corrupt, "negative length");
        }
        if (len > m_in.size() - m_pos) {
            return opcodeError(ErrorCode::Truncated,
                               "length " + std::to_string(len) + " runs past the end (" +
                                   std::to_string(m_in.size() - m_pos) + " bytes left)");
        }
        if (len > UINT32_MAX) {
            return opcodeError(ErrorCode::Limit,
                               "a value of " + std::to_string(len) + " bytes is too large");
        }
        push(kind, static_cast<uint32_t>(len), m_pos);
        m_pos += len;
        return Status::success();
    }

    Status pushLong(size_t lengthBytes) {
        uint64_t len = 0;
        if (!readLE(lengthBytes, len)) {
            return cutShort(lengthBytes - (m_in.size() - m_pos));
        }
        if (lengthBytes == 4 && (len & 0x80000000u)) {
            return opcodeError(ErrorCode::Corrupt, "negative length");
        }
        if (len > m_in.size() - m_pos) {
            return opcodeError(ErrorCode::Truncated,
                               "length " + std::to_string(len) + " runs past the end (" +
                                   std::to_string(m_in.size() - m_pos) + " bytes left)");
        }
        const auto* p = reinterpret_cast<const uint8_t*>(m_in.data() + m_pos);
        // Two's complement, little-endian (pickletools: decode_long). It fits in int64 when every
        // byte past the eighth repeats the sign.
        const bool negative = len > 0 && (p[len - 1] & 0x80);
        bool fits = true;
        for (size_t i = 8; i < len; ++i) {
            fits = fits && p[i] == (negative ? 0xff : 0x00);
        }
        if (len > 8 && fits) {
            fits = ((p[7] & 0x80) != 0) == negative;
        }
        if (!fits) {
            push(PickleKind::BigInt, static_cast<uint32_t>(len), m_pos);
        } else {
            uint64_t v = negative ? ~uint64_t(0) : 0;
            for (size_t i = 0; i < len && i < 8; ++i) {
                v &= ~(uint64_t(0xff) << (8 * i));
                v |= uint64_t(p[i]) << (8 * i);
            }
            push(PickleKind::Int, 0, v);
        }
        m_pos += len;
        return Status::success();
    }

    // The memo is dense for indices up to the input size (each PUT costs at least two bytes, so
    // a pickler's own indices stay below it) and sparse above, so a huge index costs no memory.
    Status memoPut(uint64_t index) {
        if (aboveMark() == 0) {
            return opcodeError(ErrorCode::Corrupt, "nothing on the stack to store in the memo");
        }
        const PickleNodeId value = m_stack.back();
        if (index < std::max<size_t>(m_in.size(), 1024)) {
            if (index >= m_memo.size()) {
                m_memo.resize(std::max<size_t>(index + 1, m_memo.size() * 2), kNoPickleNode);
            }
            m_memoCount += m_memo[index] == kNoPickleNode ? 1 : 0;
            m_memo[index] = value;
        } else {
            m_memoCount += m_sparseMemo.count(index) ? 0 : 1;
            m_sparseMemo[index] = value;
        }
        return Status::success();
    }

    Status memoGet(uint64_t index) {
        PickleNodeId value = kNoPickleNode;
        if (index < m_memo.size()) {
            value = m_memo[index];
        } else if (auto it = m_sparseMemo.find(index); it != m_sparseMemo.end()) {
            value = it->second;
        }
        if (value == kNoPickleNode) {
            return opcodeError(ErrorCode::Corrupt,
                               "memo index " + std::to_string(index) + " was never stored");
        }
        m_stack.push_back(value);
        return Status::success();
    }

    // Pops the innermost MARK and returns the stack index where its items start.
    bool popMark(size_t& start) {
        if (m_marks.empty()) {
            return false;
        }
        start = m_marks.back();
        m_marks.pop_back();
        return true;
    }

    Status step();
    Status stepContainer(bool& handled);
    Status checkDepth();

    std::string_view m_in;
    const std::string& m_name;
    PickleLimits m_limits;
    PickleDocument m_doc;
    size_t m_pos = 0;
    size_t m_opPos = 0;
    uint8_t m_op = 0;
    std::vector<PickleNodeId> m_stack;
    std::vector<size_t> m_marks;
    std::vector<PickleNodeId> m_memo;
    std::unordered_map<uint64_t, PickleNodeId> m_sparseMemo;
    size_t m_memoCount = 0;  // entries stored: MEMOIZE's index (Python: len(memo))
};

Status PickleParser::step() {
    uint64_t v = 0;
    switch (m_op) {
        case kProto:
            if (!readLE(1, v)) {
                return cutShort(1);
            }
            if (v > kHighestProtocol) {
                return opcodeError(ErrorCode::Unsupported,
                                   "pickle protocol " + std::to_string(v) +
                                       " is newer than the highest known (5)");
            }
            return Status::success();
        case kFrame:
            // A framing hint (PEP 3154); its opcodes follow inline, so only its length is checked.
            if (!readLE(8, v)) {
                return cutShort(8 - (m_in.size() - m_pos));
            }
            if (v > m_in.size() - m_pos) {
                return opcodeError(ErrorCode::Truncated,
                                   "frame of " + std::to_string(v) + " bytes runs past the end (" +
                                       std::to_string(m_in.size() - m_pos) + " bytes left)");
            }
            return Status::success();
        case kMark:
            if (m_marks.size() >= m_limits.maxMarks) {
                return opcodeError(ErrorCode::Limit, "more than " +
                                                         std::to_string(m_limits.maxMarks) +
                                                         " nested MARKs; refusing a nesting bomb");
            }
            m_marks.push_back(m_stack.size());
            return Status::success();
        case kPop:
            if (aboveMark() > 0) {
                m_stack.pop_back();
            } else if (!m_marks.empty()) {
                m_marks.pop_back();
            } else {
                return opcodeError(ErrorCode::Corrupt, "the stack is empty");
            }
            return Status::success();
        case kPopMark: {
            size_t start = 0;
            if (!popMark(start)) {
                return opcodeError(ErrorCode::Corrupt, "no MARK to pop");
            }
            m_stack.resize(start);
            return Status::success();
        }
        case kDup:
            if (aboveMark() == 0) {
                return opcodeError(ErrorCode::Corrupt, "the stack is empty");
            }
            m_stack.push_back(m_stack.back());
            return Status::success();
        case kNone:
            push(PickleKind::None, 0, 0);
            return Status::success();
        case kNewTrue:
            push(PickleKind::Bool, 0, 1);
            return Status::success();
        case kNewFalse:
            push(PickleKind::Bool, 0, 0);
            return Status::success();
        case kBinInt:
            if (!readLE(4, v)) {
                return cutShort(4 - (m_in.size() - m_pos));
            }
            push(PickleKind::Int, 0,
                 static_cast<uint64_t>(int64_t(static_cast<int32_t>(static_cast<uint32_t>(v)))));
            return Status::success();
        case kBinInt1:
        case kBinInt2: {
            const size_t n = m_op == kBinInt1 ? 1 : 2;
            if (!readLE(n, v)) {
                return cutShort(n - (m_in.size() - m_pos));
            }
            push(PickleKind::Int, 0, v);
            return Status::success();
        }
        case kLong1:
            return pushLong(1);
        case kLong4:
            return pushLong(4);
        case kBinFloat: {
            if (m_in.size() - m_pos < 8) {
                return cutShort(8 - (m_in.size() - m_pos));
            }
            uint64_t bits = 0;  // big-endian IEEE 754 double (pickletools: float8)
            for (size_t i = 0; i < 8; ++i) {
                bits = (bits << 8) | static_cast<uint8_t>(m_in[m_pos + i]);
            }
            m_pos += 8;
            push(PickleKind::Float, 0, bits);
            return Status::success();
        }
        case kShortBinUnicode:
        case kShortBinString:
            return pushSized(1, PickleKind::String);
        case kBinUnicode:
        case kBinString:
            return pushSized(4, PickleKind::String);
        case kBinUnicode8:
            return pushSized(8, PickleKind::String);
        case kShortBinBytes:
            return pushSized(1, PickleKind::Bytes);
        case kBinBytes:
            return pushSized(4, PickleKind::Bytes);
        case kBinBytes8:
        case kByteArray8:
            return pushSized(8, PickleKind::Bytes);
        case kBinPut:
        case kLongBinPut: {
            const size_t n = m_op == kBinPut ? 1 : 4;
            if (!readLE(n, v)) {
                return cutShort(n - (m_in.size() - m_pos));
            }
            return memoPut(v);
        }
        case kMemoize:
            return memoPut(m_memoCount);
        case kBinGet:
        case kLongBinGet: {
            const size_t n = m_op == kBinGet ? 1 : 4;
            if (!readLE(n, v)) {
                return cutShort(n - (m_in.size() - m_pos));
            }
            return memoGet(v);
        }
        case kGlobal:
        case kStackGlobal:
        case kReduce:
        case kBuild:
        case kInst:
        case kObj:
        case kNewObj:
        case kNewObjEx:
        case kExt1:
        case kExt2:
        case kExt4:
        case kPersId:
        case kBinPersId:
            return opcodeError(
                ErrorCode::Unsupported,
                "refused: this opcode imports or calls Python code, which a data-only reader "
                "never does (a PyTorch memory snapshot holds only plain data)");
        case kInt:
        case kLong:
        case kFloat:
        case kString:
        case kUnicode:
        case kGet:
        case kPut:
            return opcodeError(ErrorCode::Unsupported,
                               "protocol-0 text opcodes are not supported; write the pickle with "
                               "protocol 2 or higher");
        case kNextBuffer:
        case kReadonlyBuffer:
            return opcodeError(ErrorCode::Unsupported,
                               "out-of-band buffers (protocol 5) are not supported");
        default:
            break;
    }
    bool handled = false;
    Status s = stepContainer(handled);
    if (!handled) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", m_op);
        return Error::make(
                   ErrorCode::Corrupt, m_name,
                   std::string("byte ") + hex + " is not a pickle opcode; not a pickle, or damaged")
            .atByte(static_cast<int64_t>(m_opPos));
    }
    return s;
}

// Opcodes that build tuples, lists, dicts and sets.
Status PickleParser::stepContainer(bool& handled) {
    handled = true;
    size_t start = 0;
    switch (m_op) {
        case kEmptyTuple:
            pushContainer(PickleKind::Tuple, m_stack.size());
            break;
        case kTuple1:
        case kTuple2:
        case kTuple3: {
            const size_t n = size_t(m_op - kTuple1) + 1;
            if (aboveMark() < n) {
                return opcodeError(ErrorCode::Corrupt,
                                   "needs " + std::to_string(n) + " items on the stack");
            }
            pushContainer(PickleKind::Tuple, m_stack.size() - n);
            break;
        }
        case kEmptyList:
            pushContainer(PickleKind::List, m_stack.size());
            break;
        case kEmptyDict:
            pushContainer(PickleKind::Dict, m_stack.size());
            break;
        case kEmptySet:
            pushContainer(PickleKind::Set, m_stack.size());
            break;
        case kTuple:
        case kList:
        case kDict:
        case kFrozenSet: {
            if (!popMark(start)) {
                return opcodeError(ErrorCode::Corrupt, "no MARK before it");
            }
            if (m_op == kDict && (m_stack.size() - start) % 2 != 0) {
                return opcodeError(ErrorCode::Corrupt, "an odd number of items for a dict");
            }
            const PickleKind k = m_op == kTuple  ? PickleKind::Tuple
                                 : m_op == kList ? PickleKind::List
                                 : m_op == kDict ? PickleKind::Dict
                                                 : PickleKind::Set;
            pushContainer(k, start);
            break;
        }
        case kAppend:
        case kSetItem: {
            const size_t n = m_op == kAppend ? 2 : 3;
            if (aboveMark() < n) {
                return opcodeError(ErrorCode::Corrupt,
                                   "needs " + std::to_string(n) + " items on the stack");
            }
            const PickleKind k = m_op == kAppend ? PickleKind::List : PickleKind::Dict;
            auto* items = container(m_stack[m_stack.size() - n], k);
            if (!items) {
                return opcodeError(ErrorCode::Corrupt, m_op == kAppend
                                                           ? "the target is not a list"
                                                           : "the target is not a dict");
            }
            items->insert(items->end(), m_stack.end() - static_cast<ptrdiff_t>(n - 1),
                          m_stack.end());
            m_stack.resize(m_stack.size() - (n - 1));
            break;
        }
        case kAppends:
        case kSetItems:
        case kAddItems: {
            if (!popMark(start)) {
                return opcodeError(ErrorCode::Corrupt, "no MARK before it");
            }
            if (start == markBase()) {
                return opcodeError(ErrorCode::Corrupt, "no container below the MARK");
            }
            if (m_op == kSetItems && (m_stack.size() - start) % 2 != 0) {
                return opcodeError(ErrorCode::Corrupt, "an odd number of items for a dict");
            }
            const PickleKind k = m_op == kAppends    ? PickleKind::List
                                 : m_op == kSetItems ? PickleKind::Dict
                                                     : PickleKind::Set;
            auto* items = container(m_stack[start - 1], k);
            if (!items) {
                return opcodeError(ErrorCode::Corrupt,
                                   "the target below the MARK is of the wrong type");
            }
            items->insert(items->end(), m_stack.begin() + static_cast<ptrdiff_t>(start),
                          m_stack.end());
            m_stack.resize(start);
            break;
        }
        default:
            handled = false;
            break;
    }
    return Status::success();
}

// Walks the value tree from the root once (shared values are visited once) and refuses cycles and
// nesting deeper than the limit, so that any consumer may recurse safely.
Status PickleParser::checkDepth() {
    const auto& nodes = m_doc.m_nodes;
    const auto& containers = m_doc.m_containers;
    enum : uint8_t { kUnseen = 0, kOpen = 1, kDone = 2 };
    std::vector<uint8_t> state(containers.size(), kUnseen);
    std::vector<uint32_t> depth(containers.size(), 0);
    struct Step {
        uint32_t container;
        uint32_t next;
    };
    std::vector<Step> path;
    auto isContainer = [&](PickleNodeId n) {
        const PickleKind k = nodes[n].kind;
        return k == PickleKind::List || k == PickleKind::Tuple || k == PickleKind::Dict ||
               k == PickleKind::Set;
    };
    const Error tooDeep =
        Error::make(ErrorCode::Limit, m_name,
                    "values nested deeper than " + std::to_string(m_limits.maxDepth) +
                        " levels, or a value that contains itself; refused");
    if (!isContainer(m_doc.m_root)) {
        return Status::success();
    }
    path.push_back({nodes[m_doc.m_root].length, 0});
    state[path.back().container] = kOpen;
    while (!path.empty()) {
        Step& top = path.back();
        const auto& items = containers[top.container];
        if (top.next < items.size()) {
            const PickleNodeId child = items[top.next++];
            if (!isContainer(child)) {
                continue;
            }
            const uint32_t c = nodes[child].length;
            if (state[c] == kOpen) {
                return tooDeep;
            }
            if (state[c] == kDone) {
                if (path.size() + 1 + depth[c] > m_limits.maxDepth) {
                    return tooDeep;
                }
                depth[top.container] = std::max(depth[top.container], depth[c] + 1);
                continue;
            }
            if (path.size() >= m_limits.maxDepth) {
                return tooDeep;
            }
            state[c] = kOpen;
            path.push_back({c, 0});
            continue;
        }
        const uint32_t done = top.container;
        state[done] = kDone;
        path.pop_back();
        if (!path.empty()) {
            depth[path.back().container] = std::max(depth[path.back().container], depth[done] + 1);
        }
    }
    return Status::success();
}

Result<PickleDocument> parsePickle(std::string_view bytes, const std::string& name,
                                   const PickleLimits& limits) {
    return PickleParser(bytes, name, limits).run();
}

}  // namespace vramscope::trace
