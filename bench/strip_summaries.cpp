// Rewrites a .vscope file without summary frames (WriterOptions::summaries = false): the baseline
// of bench/run_gui_open_bench.sh, a file as written before format 1.1.
// Usage: strip_summaries IN.vscope OUT.vscope

#include <cstdio>

#include "vramscope/trace/trace_file.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: strip_summaries IN.vscope OUT.vscope\n");
        return 2;
    }
    auto loaded = vramscope::trace::readTraceFile(argv[1]);
    if (!loaded.ok()) {
        std::fprintf(stderr, "%s\n", loaded.error().describe().c_str());
        return 1;
    }
    vramscope::trace::WriterOptions options;
    options.summaries = false;
    const auto written = vramscope::trace::writeTraceFile(argv[2], loaded->data, options);
    if (!written.ok()) {
        std::fprintf(stderr, "%s\n", written.error().describe().c_str());
        return 1;
    }
    return 0;
}
