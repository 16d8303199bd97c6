#pragma once
// The JSON documents inside a real .tar.gz of Kineto traces (the dlrm job), read in a test
// independently of vramscope's importer: libarchive and nlohmann-json.

#include <archive.h>
#include <archive_entry.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace vramscope::testdata {

/// Every member ending in ".json", parsed, by the rank its "distributedInfo" names; empty when
/// the archive cannot be opened. Throws on malformed JSON or a member without a rank.
inline std::map<int, nlohmann::json> jsonByRank(const std::string& path) {
    std::map<int, nlohmann::json> out;
    archive* a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    if (archive_read_open_filename(a, path.c_str(), 1 << 16) != ARCHIVE_OK) {
        archive_read_free(a);
        return out;
    }
    archive_entry* entry = nullptr;
    while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
        const std::string name = archive_entry_pathname(entry);
        if (name.size() < 5 || name.substr(name.size() - 5) != ".json") {
            continue;
        }
        std::string text;
        char buf[1 << 16];
        la_ssize_t n = 0;
        while ((n = archive_read_data(a, buf, sizeof buf)) > 0) {
            text.append(buf, size_t(n));
        }
        nlohmann::json doc = nlohmann::json::parse(text);
        const int rank = doc.at("distributedInfo").at("rank").get<int>();
        out[rank] = std::move(doc);
    }
    archive_read_free(a);
    return out;
}

}  // namespace vramscope::testdata
