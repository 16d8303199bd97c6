#pragma once
// Reading a real Kineto / Chrome-trace file in a test, independently of vramscope's importer:
// zlib's gz* API (which also reads files that are not gzipped) and nlohmann-json; and the union
// of its event intervals, computed here rather than by the analysis under test.

#include <zlib.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gz_file.h"

namespace vramscope::testdata {

/// The whole file, gunzipped and parsed; null when it cannot be opened. nlohmann keeps integers
/// above INT64_MAX as unsigned, so the large-integer trace parses too. Throws on malformed JSON.
inline nlohmann::json loadGzJson(const std::string& path) {
    std::unique_ptr<gzFile_s, int (*)(gzFile)> probe(gzopen(path.c_str(), "rb"), gzclose);
    if (!probe) {
        return nullptr;
    }
    return nlohmann::json::parse(readGzFile(path));
}

/// The event list of a trace document: the document itself when it is an array, else its
/// "traceEvents".
inline const nlohmann::json& eventsOf(const nlohmann::json& doc) {
    return doc.is_array() ? doc : doc.at("traceEvents");
}

/// [start, end) of an event in us, as Kineto JSON writes "ts" and "ts" + "dur".
using IntervalUs = std::pair<double, double>;

/// Length of the union of `intervals` (us); intervals that touch merge. `merged`, when given,
/// receives the union as disjoint intervals by start.
inline double unionUs(std::vector<IntervalUs> intervals,
                      std::vector<IntervalUs>* merged = nullptr) {
    std::sort(intervals.begin(), intervals.end());
    std::vector<IntervalUs> m;
    for (const IntervalUs& i : intervals) {
        if (!m.empty() && i.first <= m.back().second) {
            m.back().second = std::max(m.back().second, i.second);
        } else {
            m.push_back(i);
        }
    }
    double total = 0;
    for (const IntervalUs& i : m) {
        total += i.second - i.first;
    }
    if (merged) {
        *merged = std::move(m);
    }
    return total;
}

}  // namespace vramscope::testdata
