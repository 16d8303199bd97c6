// Fuzz target: the .vscope reader (readTraceBytes), the entry point openTrace uses for a .vscope
// file. Every input must end in a loaded trace with a report or in an Error, never a crash.
#include <string_view>

#include "fuzz_entry.h"
#include "vramscope/trace/trace_file.h"

VRAMSCOPE_FUZZ_ENTRY(vscope)(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto loaded = vramscope::trace::readTraceBytes(bytes, "fuzz.vscope");
    if (loaded) {
        // The summary walks the report's problems: a message built from damaged fields must be
        // safe to format too.
        (void)loaded->report.summary();
    } else {
        (void)loaded.error().describe();
    }
    return 0;
}
