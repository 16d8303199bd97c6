#pragma once
// Reading a real Kineto / Chrome-trace file in a test, independently of vramscope's importer:
// zlib's gz* API (which also reads files that are not gzipped) and nlohmann-json.

#include <zlib.h>

#include <memory>
#include <string>

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

}  // namespace vramscope::testdata
