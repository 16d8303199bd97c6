#include "import/kineto/kineto_parse.h"

#include <array>
#include <cctype>

#include "import/kineto/kineto_event_reader.h"

namespace vramscope::trace::kineto {
namespace {

/// Reads the root object's metadata fields (everything but traceEvents).
class HeaderReader {
public:
    explicit HeaderReader(RawKineto& out) : m_out(out), m_values(out) {}

    error_code read(std::string_view key, od::value v) {
        if (key == "distributedInfo") {
            return readDistributed(v);
        }
        if (key == "deviceProperties") {
            return readDevices(v);
        }
        if (key == "baseTimeNanoseconds") {
            return m_values.readInt(v, m_out.baseTimeNs);
        }
        static constexpr std::array<std::string_view, 7> kKept{
            "schemaVersion",       "cuda_runtime_version", "cuda_driver_version", "cupti_version",
            "hip_runtime_version", "hip_driver_version",   "roctracer_version"};
        for (auto k : kKept) {
            if (key == k) {
                return keepSetting(std::string("kineto.") + std::string(key), v);
            }
        }
        return simdjson::SUCCESS;
    }

private:
    error_code keepSetting(std::string key, od::value v) {
        std::string_view tok = v.raw_json_token();
        if (!tok.empty() && tok[0] == '"') {
            if (const error_code e = m_values.readString(v, tok)) {
                return e;
            }
        } else if (!tok.empty() && (tok[0] == '{' || tok[0] == '[')) {
            return simdjson::SUCCESS;
        }
        while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back())) != 0) {
            tok.remove_suffix(1);
        }
        m_out.settings.emplace_back(std::move(key), std::string(tok.substr(0, 256)));
        return simdjson::SUCCESS;
    }

    error_code readDistributed(od::value v) {
        od::object obj;
        if (const error_code e = v.get_object().get(obj)) {
            return isFatal(e) ? e : simdjson::SUCCESS;
        }
        for (auto fieldResult : obj) {
            od::field field;
            std::string_view key;
            if (error_code e = std::move(fieldResult).get(field);
                e || (e = field.unescaped_key().get(key))) {
                return e;
            }
            std::optional<int64_t> n;
            error_code e = simdjson::SUCCESS;
            if (key == "rank" || key == "world_size") {
                e = m_values.readInt(field.value(), n);
                if (n && *n >= 0 && *n <= INT32_MAX) {
                    if (key == "rank") {
                        m_out.rank = static_cast<RankId>(*n);
                    } else {
                        m_out.worldSize = static_cast<int32_t>(*n);
                    }
                }
            } else if (key == "backend" || key == "nccl_version") {
                e = keepSetting("kineto." + std::string(key), field.value());
            }
            if (isFatal(e)) {
                return e;
            }
        }
        return simdjson::SUCCESS;
    }

    error_code readDevices(od::value v) {
        od::array arr;
        if (const error_code e = v.get_array().get(arr)) {
            return isFatal(e) ? e : simdjson::SUCCESS;
        }
        for (auto elem : arr) {
            od::object obj;
            if (const error_code e = elem.get_object().get(obj)) {
                if (isFatal(e)) {
                    return e;
                }
                continue;
            }
            DeviceInfo d;
            std::optional<int64_t> id;
            std::optional<int64_t> mem;
            for (auto fieldResult : obj) {
                od::field field;
                std::string_view key;
                if (error_code e = std::move(fieldResult).get(field);
                    e || (e = field.unescaped_key().get(key))) {
                    return e;
                }
                error_code e = simdjson::SUCCESS;
                std::string_view s;
                if (key == "id") {
                    e = m_values.readInt(field.value(), id);
                } else if (key == "totalGlobalMem") {
                    e = m_values.readInt(field.value(), mem);
                } else if (key == "name") {
                    e = m_values.readString(field.value(), s);
                    d.name = std::string(s.substr(0, 256));
                } else if (key == "uuid") {
                    e = m_values.readString(field.value(), s);
                    d.uuid = std::string(s.substr(0, 64));
                }
                if (isFatal(e)) {
                    return e;
                }
            }
            if (id && *id >= 0 && *id <= INT32_MAX) {
                d.index = static_cast<DeviceIndex>(*id);
                d.totalMemoryBytes = mem && *mem > 0 ? static_cast<uint64_t>(*mem) : 0;
                m_out.devices.push_back(std::move(d));
            }
        }
        return simdjson::SUCCESS;
    }

    RawKineto& m_out;
    EventReader m_values;
};

}  // namespace

simdjson::error_code KinetoParser::parse(const char* data, size_t size, size_t capacity,
                                         RawKineto& out, const Progress& progress,
                                         std::string_view stage) {
    if (const error_code e = m_parser.iterate(data, size, capacity).get(m_doc)) {
        return e;
    }
    od::json_type type;
    if (const error_code e = m_doc.type().get(type)) {
        return e;
    }
    EventReader events(out);
    auto stop = [&](error_code e) {
        const char* at = nullptr;
        const int64_t offset = m_doc.current_location().get(at) == simdjson::SUCCESS && at >= data
                                   ? static_cast<int64_t>(at - data)
                                   : static_cast<int64_t>(size);
        out.stop = Error::make(ErrorCode::Corrupt, "",
                               std::string("the JSON is malformed here (") +
                                   simdjson::error_message(e) + ")")
                       .atByte(offset)
                       .atRecord(static_cast<int64_t>(out.events));
    };
    auto readEvents = [&](od::array arr) -> bool {
        for (auto elem : arr) {
            od::value v;
            od::object obj;
            error_code e = std::move(elem).get(v);
            if (!e) {
                e = v.get_object().get(obj);
                if (e == simdjson::INCORRECT_TYPE) {
                    ++out.nonObjects;
                    continue;
                }
            }
            Fields f;
            if (!e) {
                e = events.readEvent(obj, f);
            }
            if (isFatal(e)) {
                stop(e);
                return false;
            }
            events.commit(f);
            if ((++out.events & 0x3fff) == 0 && progress) {
                const char* at = nullptr;
                const uint64_t done = m_doc.current_location().get(at) == simdjson::SUCCESS
                                          ? static_cast<uint64_t>(at - data)
                                          : size;
                if (!reportProgress(progress, done, size, stage)) {
                    out.stop = Error::cancelled("");
                    return false;
                }
            }
        }
        return true;
    };
    if (type == od::json_type::array) {
        od::array arr;
        if (const error_code e = m_doc.get_array().get(arr)) {
            return e;
        }
        out.sawEventArray = true;
        readEvents(arr);
        return simdjson::SUCCESS;
    }
    if (type != od::json_type::object) {
        return simdjson::INCORRECT_TYPE;
    }
    od::object root;
    if (const error_code e = m_doc.get_object().get(root)) {
        return e;
    }
    HeaderReader header(out);
    for (auto fieldResult : root) {
        od::field field;
        std::string_view key;
        error_code e = std::move(fieldResult).get(field);
        if (!e) {
            e = field.unescaped_key().get(key);
        }
        if (!e && key == "traceEvents") {
            od::array arr;
            e = field.value().get_array().get(arr);
            out.sawEventArray = out.sawEventArray || !e;
            if (!e && !readEvents(arr)) {
                return simdjson::SUCCESS;
            }
        } else if (!e) {
            e = header.read(key, field.value());
        }
        if (isFatal(e)) {
            stop(e);
            return simdjson::SUCCESS;
        }
    }
    return simdjson::SUCCESS;
}

}  // namespace vramscope::trace::kineto
