// Fuzz target: the Nsight Systems SQLite importer. The input is written to a file and opened
// through importNsysSqlite (the path openTrace takes for a .sqlite file: read-only, immutable).
#include "fuzz_entry.h"
#include "fuzz_scratch.h"
#include "vramscope/trace/importers.h"

VRAMSCOPE_FUZZ_ENTRY(nsys)(const uint8_t* data, size_t size) {
    static vramscope_fuzz::ScratchFile scratch("vramscope-fuzz-nsys");
    auto loaded = vramscope::trace::importNsysSqlite(scratch.write(data, size));
    if (loaded) {
        for (const auto& trace : *loaded) {
            (void)trace.report.summary();
        }
    } else {
        (void)loaded.error().describe();
    }
    return 0;
}
