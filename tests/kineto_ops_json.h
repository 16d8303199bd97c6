#pragma once
// What CPU operators and Python calls enclose each CUDA `[memory]` event of a Kineto trace,
// recomputed here from the parsed JSON (nlohmann-json) by brute force, independently of
// vramscope's importer, for the tests of Kineto attribution and of the operator table.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "realdata_json.h"

namespace vramscope::testdata {

/// A pid or tid as text: numbers and numeric strings ("25738", as 2021 traces write tids) alike.
inline std::string laneId(const nlohmann::json& v) {
    if (v.is_string()) {
        return v.get<std::string>();
    }
    return v.is_number() ? std::to_string(v.get<int64_t>()) : std::string();
}

/// ts / dur in microseconds to ns.
inline int64_t usToNs(const nlohmann::json& v) {
    return v.is_number() ? std::llround(v.get<double>() * 1000.0) : 0;
}

/// A cpu_op / Operator / user_annotation (python = false) or python_function event.
struct JsonSpan {
    std::string lane;  ///< pid/tid
    int64_t startNs = 0;
    int64_t endNs = 0;
    std::string name;
    bool python = false;
    size_t order = 0;  ///< position in the file
};

/// A CUDA `[memory]` event (args Device Type 1).
struct JsonMemory {
    std::string lane;
    int64_t tsNs = 0;
    int64_t bytes = 0;  ///< > 0 alloc
    uint64_t address = 0;
    int64_t device = 0;
    int64_t eventIndex = -1;
    size_t order = 0;
};

inline std::string lowerCase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

inline std::vector<JsonSpan> cpuSpans(const nlohmann::json& doc) {
    std::vector<JsonSpan> out;
    size_t order = 0;
    for (const auto& e : eventsOf(doc)) {
        ++order;
        if (!e.is_object() || e.value("ph", "") != "X" || !e.contains("cat") ||
            !e["cat"].is_string()) {
            continue;
        }
        const std::string cat = lowerCase(e["cat"].get<std::string>());
        const bool op = cat == "cpu_op" || cat == "operator" || cat == "user_annotation";
        if (!op && cat != "python_function") {
            continue;
        }
        JsonSpan s;
        s.lane = laneId(e.value("pid", nlohmann::json())) + "/" +
                 laneId(e.value("tid", nlohmann::json()));
        s.startNs = usToNs(e["ts"]);
        s.endNs = s.startNs + usToNs(e.value("dur", nlohmann::json(0)));
        s.name = e.value("name", "");
        s.python = !op;
        s.order = order;
        if (s.endNs > s.startNs) {
            out.push_back(s);
        }
    }
    return out;
}

inline std::vector<JsonMemory> cudaMemory(const nlohmann::json& doc) {
    std::vector<JsonMemory> out;
    size_t order = 0;
    for (const auto& e : eventsOf(doc)) {
        ++order;
        if (!e.is_object() || e.value("name", "") != "[memory]" || !e.contains("args") ||
            e["args"].value("Device Type", -1) != 1) {
            continue;
        }
        const auto& a = e["args"];
        JsonMemory m;
        m.lane = laneId(e.value("pid", nlohmann::json())) + "/" +
                 laneId(e.value("tid", nlohmann::json()));
        m.tsNs = usToNs(e["ts"]);
        m.bytes = a.value("Bytes", int64_t{0});
        m.address = a.value("Addr", uint64_t{0});
        m.device = a.value("Device Id", int64_t{0});
        m.eventIndex = a.value("Ev Idx", int64_t{-1});
        m.order = order;
        out.push_back(m);
    }
    // Time order, the producer's Ev Idx breaking ties, as the importer orders them.
    std::stable_sort(out.begin(), out.end(), [](const JsonMemory& a, const JsonMemory& b) {
        if (a.tsNs != b.tsNs) {
            return a.tsNs < b.tsNs;
        }
        return a.eventIndex >= 0 && b.eventIndex >= 0 && a.eventIndex < b.eventIndex;
    });
    return out;
}

/// "name|file|line" of the frame a span becomes: an operator is "name||0"; a Python call
/// "file(line): name" is "name|file|line", any other Python name "name||0".
inline std::string expectedFrame(const JsonSpan& s) {
    static const std::regex located(R"(^(.+?)\((\d+)\): (.*)$)");
    std::smatch m;
    if (s.python && std::regex_match(s.name, m, located)) {
        return m[3].str() + "|" + m[1].str() + "|" + m[2].str();
    }
    return s.name + "||0";
}

/// The stack of a memory event, innermost first: every enclosing span (ts <= t < ts + dur on the
/// same pid/tid), operators and Python calls alike, inner to outer: later start, then earlier
/// end, then (at an equal interval) an operator inside a Python call, then later in the file.
inline std::vector<std::string> expectedStack(const std::vector<JsonSpan>& spans,
                                              const JsonMemory& m) {
    std::vector<const JsonSpan*> enclosing;
    for (const JsonSpan& s : spans) {
        if (s.lane == m.lane && s.startNs <= m.tsNs && m.tsNs < s.endNs) {
            enclosing.push_back(&s);
        }
    }
    auto inner = [](const JsonSpan* a, const JsonSpan* b) {
        if (a->startNs != b->startNs) {
            return a->startNs > b->startNs;
        }
        if (a->endNs != b->endNs) {
            return a->endNs < b->endNs;
        }
        if (a->python != b->python) {
            return !a->python;
        }
        return a->order > b->order;
    };
    std::sort(enclosing.begin(), enclosing.end(), inner);
    std::vector<std::string> out;
    for (const JsonSpan* s : enclosing) {
        out.push_back(expectedFrame(*s));
    }
    return out;
}

/// The innermost enclosing operator's name, "" when none encloses the event.
inline std::string innermostOperator(const std::vector<JsonSpan>& spans, const JsonMemory& m) {
    const JsonSpan* best = nullptr;
    for (const JsonSpan& s : spans) {
        if (s.python || s.lane != m.lane || s.startNs > m.tsNs || m.tsNs >= s.endNs) {
            continue;
        }
        if (best == nullptr || s.startNs > best->startNs ||
            (s.startNs == best->startNs &&
             (s.endNs < best->endNs || (s.endNs == best->endNs && s.order > best->order)))) {
            best = &s;
        }
    }
    return best == nullptr ? std::string() : best->name;
}

}  // namespace vramscope::testdata
