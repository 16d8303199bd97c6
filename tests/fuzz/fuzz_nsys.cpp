// Fuzz target: the Nsight Systems SQLite importer. The input is written to a file and opened
// through importNsysSqlite (the path openTrace takes for a .sqlite file: read-only, immutable).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_entry.h"
#include "vramscope/trace/importers.h"

namespace {

// One scratch file per process, rewritten for every input and removed at exit.
struct ScratchFile {
    std::string path;
    ScratchFile() {
        const char* dir = std::getenv("TMPDIR");
        std::string pattern = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                              "/vramscope-fuzz-nsys-XXXXXX";
        const int fd = mkstemp(pattern.data());
        if (fd >= 0) {
            close(fd);
            path = pattern;
        }
    }
    ~ScratchFile() {
        if (!path.empty()) {
            std::remove(path.c_str());
        }
    }
};

}  // namespace

VRAMSCOPE_FUZZ_ENTRY(nsys)(const uint8_t* data, size_t size) {
    static ScratchFile scratch;
    if (scratch.path.empty()) {
        std::abort();  // no scratch file: nothing this target checks could run
    }
    std::FILE* file = std::fopen(scratch.path.c_str(), "wb");
    if (file == nullptr) {
        std::abort();
    }
    const bool written = size == 0 || std::fwrite(data, 1, size, file) == size;
    if (std::fclose(file) != 0 || !written) {
        std::abort();
    }
    auto loaded = vramscope::trace::importNsysSqlite(scratch.path);
    if (loaded) {
        for (const auto& trace : *loaded) {
            (void)trace.report.summary();
        }
    } else {
        (void)loaded.error().describe();
    }
    return 0;
}
