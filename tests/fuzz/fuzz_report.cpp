// Fuzz target: what `vramscope-cli report FILE` does, end to end. The input is written to a
// scratch file and opened with trace::openJob, so the format is guessed from its first bytes
// (gzip, tar, .vscope, Kineto JSON, snapshot pickle, nsys SQLite), the start judgement, the
// decompressed-size limit and the plausibility rules (plausibility.h) all run; a loaded job then
// goes through every analysis of the report and both of its output forms. The per-reader targets
// reach deeper into one format; this one finds what only appears between the layers.
#include <sstream>

#include "device_report.h"
#include "fuzz_entry.h"
#include "fuzz_scratch.h"
#include "vramscope/analysis/model/job_model.h"
#include "vramscope/trace/open_trace.h"

VRAMSCOPE_FUZZ_ENTRY(report)(const uint8_t* data, size_t size) {
    // The scratch file's name has no extension, so openJob judges the content alone.
    static vramscope_fuzz::ScratchFile scratch("vramscope-fuzz-report");
    const std::string& path = scratch.write(data, size);
    // A small limit keeps every execution fast; the limit itself is tested in hostile_input_test.
    vramscope::trace::ReadOptions options;
    options.maxInputBytes = 256ull << 20;
    auto job = vramscope::trace::openJob({path}, options);
    if (!job) {
        (void)job.error().describe();
        return 0;
    }
    auto model = vramscope::analysis::buildJobModel(std::move(job).value(), path);
    if (!model) {
        (void)model.error().describe();
        return 0;
    }
    const vramscope::app::JobReport report = vramscope::app::buildJobReport(*model);
    std::ostringstream text;
    vramscope::app::writeTextReport(report, text);
    (void)report.toJson().dump();
    return 0;
}
