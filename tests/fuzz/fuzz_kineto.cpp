// Fuzz target: the Kineto / Chrome trace JSON importer (importKinetoJson), as openTrace calls it
// for a .json file (already gunzipped). Every input must end in a trace or an Error.
#include <string_view>

#include "fuzz_entry.h"
#include "vramscope/trace/importers.h"

VRAMSCOPE_FUZZ_ENTRY(kineto)(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto loaded = vramscope::trace::importKinetoJson(bytes, "fuzz.json");
    if (loaded) {
        (void)loaded->report.summary();
    } else {
        (void)loaded.error().describe();
    }
    return 0;
}
