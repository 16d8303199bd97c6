// Fuzz target: what `vramscope-cli report FILE` does, end to end. The input is written to a
// scratch file and opened with trace::openJob, so the format is guessed from its first bytes
// (gzip, tar, .vscope, Kineto JSON, snapshot pickle, nsys SQLite), the start judgement, the
// decompressed-size limit and the plausibility rules (plausibility.h) all run; a loaded job then
// goes through every analysis of the report and both of its output forms. The per-reader targets
// reach deeper into one format; this one finds what only appears between the layers.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "device_report.h"
#include "fuzz_entry.h"
#include "vramscope/trace/open_trace.h"

namespace {

// One scratch file per process, rewritten for every input and removed at exit. Its name has no
// extension, so openJob judges the content alone.
struct ReportScratch {
    std::string path;
    ReportScratch() {
        const char* dir = std::getenv("TMPDIR");
        std::string pattern = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                              "/vramscope-fuzz-report-XXXXXX";
        const int fd = mkstemp(pattern.data());
        if (fd >= 0) {
            close(fd);
            path = pattern;
        }
    }
    ~ReportScratch() {
        if (!path.empty()) {
            std::remove(path.c_str());
        }
    }
};

}  // namespace

VRAMSCOPE_FUZZ_ENTRY(report)(const uint8_t* data, size_t size) {
    static ReportScratch scratch;
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
    // A small limit keeps every execution fast; the limit itself is tested in hostile_input_test.
    vramscope::trace::ReadOptions options;
    options.maxInputBytes = 256ull << 20;
    auto job = vramscope::trace::openJob({scratch.path}, options);
    if (!job) {
        (void)job.error().describe();
        return 0;
    }
    const vramscope::app::JobReport report = vramscope::app::buildJobReport(*job);
    std::ostringstream text;
    vramscope::app::writeTextReport(report, text);
    (void)report.toJson().dump();
    return 0;
}
