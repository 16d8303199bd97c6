// Kineto / Chrome trace JSON, first pass: the reader of one trace event's values (name, times,
// args) into the raw rows of kineto_parse.h. Internal to trace_format; kineto_parse.cpp walks the
// document and kineto_event_reader.cpp files each event into its row kind.
#pragma once

#include <simdjson.h>

#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <string_view>

#include "import/kineto/kineto_parse.h"
#include "import/kineto/kineto_text.h"

namespace vramscope::trace::kineto {

using simdjson::error_code;
namespace od = simdjson::ondemand;

/// Errors that concern one value only (a wrong type, an odd number): the value is skipped and
/// the stream goes on. Anything else means the document structure is broken.
inline bool isFatal(error_code e) {
    switch (e) {
        case simdjson::SUCCESS:
        case simdjson::INCORRECT_TYPE:
        case simdjson::NUMBER_ERROR:
        case simdjson::NUMBER_OUT_OF_RANGE:
        case simdjson::STRING_ERROR:
        case simdjson::NO_SUCH_FIELD:
            return false;
        default:
            return true;
    }
}

using Cat = EventCategory;

constexpr std::string_view kMemoryEventName = "[memory]";
constexpr std::string_view kCommsOpName = "record_param_comms";
constexpr std::string_view kNcclOpPrefix = "nccl:";  ///< ProcessGroupNCCL's op, "nccl:all_to_all"
constexpr std::string_view kStepPrefix = "ProfilerStep#";

inline bool isStep(std::string_view name) {
    return name.starts_with(kStepPrefix);
}

struct Args {
    std::optional<int64_t> device, stream, deviceType, deviceId, memBytes, totalAllocated,
        totalReserved, eventIndex;
    std::optional<uint64_t> correlation, bytes, address;
    CollectiveArgs collective;
    std::string_view inputType;  ///< first non-empty "Input type" entry
};

struct Fields {
    char ph = 0;
    bool hasCat = false;
    Cat category = Cat::None;  ///< eventCategory(cat), set when cat is read
    bool hasName = false;
    std::string_view cat;
    std::string_view name;
    std::optional<int64_t> pid;
    std::optional<uint64_t> tid;
    std::optional<int64_t> tsNs;
    int64_t durNs = 0;
    bool hasDur = false;
    Args args;
};

/// Whether an event has what a RawSpan needs, so that the rest of it (its args) can be skipped.
inline bool spanComplete(const Fields& f) {
    return f.hasName && f.tsNs && f.hasDur && f.pid && f.tid;
}

/// Reads values of one event, counting what it must skip into `out`.
class EventReader {
public:
    explicit EventReader(RawKineto& out) : m_out(out) {}

    error_code readString(od::value v, std::string_view& dst) {
        const error_code e = v.get_string().get(dst);
        return isFatal(e) ? e : simdjson::SUCCESS;
    }

    /// A number written bare or as a string ("123"), parsed from its text by `parse`; a numeric
    /// text that `parse` cannot hold (e.g. above INT64_MAX) is counted, not fatal.
    template <class Parse>
    error_code readNumberText(od::value v, std::optional<int64_t>& dst, Parse parse) {
        std::string_view tok = v.raw_json_token();
        if (!tok.empty() && tok[0] == '"') {
            std::string_view s;
            if (const error_code e = readString(v, s)) {
                return e;
            }
            tok = s;
        }
        if (auto p = parse(tok)) {
            dst = p;
        } else if (looksNumeric(tok)) {
            ++m_out.valuesOutOfRange;
        }
        return simdjson::SUCCESS;
    }

    error_code readInt(od::value v, std::optional<int64_t>& dst) {
        return readNumberText(v, dst, [](std::string_view t) { return parseInt(t); });
    }

    error_code readUint(od::value v, std::optional<uint64_t>& dst) {
        std::optional<int64_t> asInt;
        std::string_view tok = v.raw_json_token();
        if (!tok.empty() && tok[0] != '"') {
            if (auto p = parseUint(tok)) {
                dst = p;
            } else if (looksNumeric(tok)) {
                ++m_out.valuesOutOfRange;
            }
            return simdjson::SUCCESS;
        }
        const error_code e = readInt(v, asInt);
        if (asInt && *asInt >= 0) {
            dst = static_cast<uint64_t>(*asInt);
        }
        return e;
    }

    /// pid / tid: an integer, or a string such as "stream 7" or "25738".
    error_code readId(od::value v, std::optional<uint64_t>& dst) {
        std::string_view tok = v.raw_json_token();
        if (!tok.empty() && tok[0] == '"') {
            std::string_view s;
            if (const error_code e = readString(v, s)) {
                return e;
            }
            auto n = firstNumberIn(s);
            dst = n ? *n : fnv1a64(s);
            return simdjson::SUCCESS;
        }
        if (auto p = parseInt(tok)) {
            dst = static_cast<uint64_t>(*p);
        }
        return simdjson::SUCCESS;
    }

    error_code readTime(od::value v, std::optional<int64_t>& dstNs) {
        return readNumberText(v, dstNs, [](std::string_view t) { return parseMicrosToNs(t); });
    }

    /// The first non-empty string of an array ("Input type": ["", "c10::BFloat16", ...]).
    error_code readFirstType(od::value v, std::string_view& dst) {
        od::array types;
        if (const error_code e = v.get_array().get(types)) {
            return isFatal(e) ? e : simdjson::SUCCESS;
        }
        for (auto element : types) {
            od::value t;
            if (const error_code e = std::move(element).get(t)) {
                return e;
            }
            std::string_view s;
            if (dst.empty() && t.get_string().get(s) == simdjson::SUCCESS) {
                dst = s;
            }
        }
        return simdjson::SUCCESS;
    }

    /// "Input Dims": [[6144], [], ...]: the product of the first entry's dims into `elems`
    /// (left alone when that entry is empty, not an array of non-negative integers, or the
    /// product overflows int64).
    error_code readFirstDims(od::value v, int64_t& elems) {
        od::array dims;
        if (const error_code e = v.get_array().get(dims)) {
            return isFatal(e) ? e : simdjson::SUCCESS;
        }
        bool first = true;
        for (auto element : dims) {
            od::value entry;
            if (const error_code e = std::move(element).get(entry)) {
                return e;
            }
            if (!first) {
                continue;  // the rest is skipped by the parser
            }
            first = false;
            od::array shape;
            if (entry.get_array().get(shape) != simdjson::SUCCESS) {
                continue;
            }
            int64_t product = 1;
            size_t n = 0;
            bool ok = true;
            for (auto d : shape) {
                int64_t x = -1;
                if (std::move(d).get_int64().get(x) != simdjson::SUCCESS || x < 0 ||
                    (x > 0 && product > INT64_MAX / x)) {
                    ok = false;
                    continue;
                }
                product *= x;
                ++n;
            }
            if (ok && n > 0) {
                elems = product;
            }
        }
        return simdjson::SUCCESS;
    }

    error_code readArgs(od::value v, Args& a) {
        od::object obj;
        if (const error_code e = v.get_object().get(obj)) {
            return isFatal(e) ? e : simdjson::SUCCESS;
        }
        for (auto fieldResult : obj) {
            od::field field;
            std::string_view key;
            if (const error_code e = std::move(fieldResult).get(field)) {
                return e;
            }
            if (const error_code e = field.unescaped_key().get(key)) {
                return e;
            }
            const error_code e = readArg(key, field.value(), a);
            if (isFatal(e)) {
                return e;
            }
        }
        a.collective.inputType = a.inputType;
        return simdjson::SUCCESS;
    }

    error_code readArg(std::string_view key, od::value v, Args& a) {
        CollectiveArgs& c = a.collective;
        std::optional<int64_t> tmp;
        if (key == "device")
            return readInt(v, a.device);
        if (key == "stream")
            return readInt(v, a.stream);
        if (key == "correlation")
            return readUint(v, a.correlation);
        if (key == "bytes")
            return readUint(v, a.bytes);
        if (key == "Device Type")
            return readInt(v, a.deviceType);
        if (key == "Device Id")
            return readInt(v, a.deviceId);
        if (key == "Addr")
            return readUint(v, a.address);
        if (key == "Bytes")
            return readInt(v, a.memBytes);
        if (key == "Total Allocated")
            return readInt(v, a.totalAllocated);
        if (key == "Total Reserved")
            return readInt(v, a.totalReserved);
        if (key == "Ev Idx")
            return readInt(v, a.eventIndex);
        if (key == "Collective name")
            return readString(v, c.collectiveName);
        if (key == "dtype")
            return readString(v, c.dtype);
        if (key == "Process Group Name")
            return readString(v, c.groupName);
        if (key == "Process Group Ranks")
            return readString(v, c.groupRanks);
        if (key == "Process Group ID")
            return readUint(v, c.groupId);
        if (key == "Input type")
            return readFirstType(v, a.inputType);
        if (key == "Input Dims")
            return readFirstDims(v, c.inputElems);
        error_code e = simdjson::SUCCESS;
        int64_t* dst = nullptr;
        if (key == "In msg nelems") {
            dst = &c.inNelems;
        } else if (key == "Out msg nelems") {
            dst = &c.outNelems;
        } else if (key == "Group size") {
            dst = &c.groupSize;
        } else if (key == "Seq" || key == "seq") {
            dst = &c.seq;
        }
        if (dst != nullptr) {
            e = readInt(v, tmp);
            if (tmp) {
                *dst = *tmp;
            }
        }
        return e;
    }

    /// Whether the args of an event may matter, judged from the fields read so far.
    static bool wantArgs(const Fields& f) {
        if (f.ph == 'C') {
            return !f.hasName || memoryCounterOf(f.name).has_value();
        }
        if (!f.hasCat) {
            return true;  // old [memory] events have no cat; or cat comes after args
        }
        switch (f.category) {
            case Cat::Kernel:
            case Cat::Memcpy:
            case Cat::Memset:
            case Cat::Runtime:
            case Cat::GpuUserAnnotation:
                return true;
            case Cat::CpuOp:
                return !f.hasName || f.name == kCommsOpName || isPrecisionOp(f.name) ||
                       f.name.starts_with(kNcclOpPrefix);
            case Cat::Instant:
            case Cat::None:
            case Cat::Other:
                return !f.hasName || f.name == kMemoryEventName;
            case Cat::UserAnnotation:
                // "nccl:<collective>" ops carry the message's Input Dims in older traces.
                return f.hasName && f.name.starts_with(kNcclOpPrefix);
            case Cat::Python:
                return false;
        }
        return true;
    }

    error_code readEvent(od::object obj, Fields& f) {
        for (auto fieldResult : obj) {
            od::field field;
            std::string_view key;
            if (const error_code e = std::move(fieldResult).get(field)) {
                return e;
            }
            if (const error_code e = field.unescaped_key().get(key)) {
                return e;
            }
            od::value v = field.value();
            error_code e = simdjson::SUCCESS;
            if (key == "ph") {
                std::string_view ph;
                e = readString(v, ph);
                f.ph = ph.empty() ? 0 : ph[0];
            } else if (key == "cat") {
                e = readString(v, f.cat);
                f.hasCat = true;
                f.category = eventCategory(f.cat);
            } else if (key == "name") {
                e = readString(v, f.name);
                f.hasName = true;
            } else if (key == "ts") {
                e = readTime(v, f.tsNs);
            } else if (key == "dur") {
                std::optional<int64_t> dur;
                e = readTime(v, dur);
                f.durNs = dur.value_or(0);
                f.hasDur = dur.has_value();
            } else if (key == "pid") {
                std::optional<uint64_t> pid;
                e = readId(v, pid);
                if (pid) {
                    f.pid = static_cast<int64_t>(*pid);
                }
            } else if (key == "tid") {
                e = readId(v, f.tid);
            } else if (key == "args" && wantArgs(f)) {
                e = readArgs(v, f.args);
            }
            if (isFatal(e)) {
                return e;
            }
            if (irrelevant(f)) {
                // NOTE(simdjson): leaving an object early is allowed; the array iterator skips
                // the rest of it. Most events (flows, Python functions, CPU ops) end here.
                return simdjson::SUCCESS;
            }
        }
        return simdjson::SUCCESS;
    }

    /// True when the fields read so far show that commit() will drop the event.
    static bool irrelevant(const Fields& f) {
        if (f.ph == 0) {
            return false;
        }
        if (f.ph == 'C') {
            return f.hasName && !memoryCounterOf(f.name);
        }
        if (f.ph != 'X' && f.ph != 'i' && f.ph != 'I') {
            return true;
        }
        if (!f.hasName) {
            return false;
        }
        if (f.ph != 'X') {
            return f.name != kMemoryEventName;
        }
        if (!f.hasCat || isStep(f.name)) {
            return false;
        }
        switch (f.category) {
            case Cat::CpuOp:
                // Kept as a RawSpan: its time and thread are needed, its args (shapes) are not,
                // except the input type of a matmul / convolution.
                return spanComplete(f) && f.name != kCommsOpName && !isPrecisionOp(f.name);
            case Cat::Python:
                return spanComplete(f);
            case Cat::Other:
            case Cat::Instant:
                return true;
            default:
                return false;
        }
    }

    void commit(const Fields& f);

private:
    void commitGpuOp(const Fields& f, GpuOpKind kind);
    /// Keeps a ProcessGroupNCCL op ("nccl:all_to_all") as RawComms with opName set.
    void noteNcclOp(const Fields& f);
    void commitMemory(const Fields& f);
    void commitCounter(const Fields& f);
    void commitRange(const Fields& f, RangeKind kind, DeviceIndex device);
    /// Keeps an operator or Python call that may enclose memory events of its thread.
    void noteSpan(const Fields& f, bool python) {
        if (f.tsNs && f.durNs > 0) {
            const std::string_view type =
                !python && isPrecisionOp(f.name) ? f.args.inputType : std::string_view{};
            m_out.spans.push_back(RawSpan{*f.tsNs, f.durNs, f.pid.value_or(0), f.tid.value_or(0),
                                          f.name, type, python});
        }
    }
    void noteHostPid(const Fields& f) {
        if (!m_out.hostPid && f.pid) {
            m_out.hostPid = f.pid;
        }
    }

    RawKineto& m_out;
};

}  // namespace vramscope::trace::kineto
