#pragma once
// The real PyTorch snapshot of the MAGMA27 folder written as a .vscope of 128-event frames, so
// that partial reads (readTraceFrames) have many frames to choose from, memory events in time
// order. Shared by the summary
// tests of this folder; the file is removed when the fixture goes.

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "realdata.h"
#include "realdata_paths.h"
#include "vramscope/trace/open_trace.h"
#include "vramscope/trace/summary.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::analysis::test {

/// Path of the snapshot the fixture converts (it may be missing: then tests skip).
inline std::string smallFramesInput() {
    return realdata::kMagmaSnapshot;
}

/// The snapshot's events, the written file and its summaries. ok() is false (with `problem`)
/// when any step failed.
struct SmallFramesFile {
    trace::TraceData data;
    std::string path;
    trace::TraceSummary summary;
    std::string problem;

    explicit SmallFramesFile(const std::string& tag) {
        auto full = trace::openTrace(smallFramesInput());
        if (!full.ok()) {
            problem = full.error().describe();
            return;
        }
        data = std::move(full->data);
        // The importer keeps the snapshot's own order (by segment and block, not by time); in
        // time order every frame covers a short span, as a capture's frames do, so a window
        // read leaves most of the file out.
        std::vector<size_t> order(data.memory.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::stable_sort(order.begin(), order.end(), [this](size_t a, size_t b) {
            return data.memory.timestampNs[a] < data.memory.timestampNs[b];
        });
        trace::MemoryEvents sorted;
        sorted.reserve(order.size());
        for (size_t i : order) {
            sorted.append(data.memory.at(i));
        }
        data.memory = std::move(sorted);
        path = (std::filesystem::temp_directory_path() / ("vramscope_" + tag + ".vscope")).string();
        trace::WriterOptions opt;
        opt.eventsPerChunk = 128;
        if (auto s = trace::writeTraceFile(path, data, opt); !s.ok()) {
            problem = s.error().describe();
            return;
        }
        auto read = trace::readTraceSummary(path);
        if (!read.ok() || !read->found) {
            problem = read.ok() ? "no summary frame written" : read.error().describe();
            return;
        }
        summary = std::move(read->summary);
    }
    ~SmallFramesFile() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
    SmallFramesFile(const SmallFramesFile&) = delete;
    SmallFramesFile& operator=(const SmallFramesFile&) = delete;
    bool ok() const { return problem.empty(); }
};

}  // namespace vramscope::analysis::test
