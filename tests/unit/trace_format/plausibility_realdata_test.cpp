// Every real input in ../shared/realdata loads through openJob with no event flagged by the
// plausibility rules (sizes_out_of_range, times_out_of_span) and no file refused by the start
// judgement: for each plain file, the events the importer itself makes (called directly, before
// openTrace's rules) are all there after openJob, with the same first and last times.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "realdata.h"
#include "vramscope/trace/importers.h"
#include "vramscope/trace/input_bytes.h"
#include "vramscope/trace/open_trace.h"

namespace vramscope::trace {
namespace {

namespace fs = std::filesystem;

bool isTraceName(const std::string& name) {
    for (const char* ext : {".json", ".json.gz", ".pickle", ".pickle.gz", ".pkl", ".vscope",
                            ".sqlite", ".tar", ".tar.gz", ".tgz"}) {
        if (name.ends_with(ext)) {
            return true;
        }
    }
    return false;
}

/// First and last instant of every event kind, and the count of each kind.
struct Extent {
    std::vector<size_t> counts;
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
    bool operator==(const Extent&) const = default;
};

Extent extentOf(const TraceData& d) {
    Extent e;
    e.counts = {d.memory.size(), d.kernels.size(),  d.collectives.size(),
                d.ranges.size(), d.counters.size(), d.ooms.size()};
    auto see = [&e](const std::vector<TimestampNs>& column) {
        for (TimestampNs t : column) {
            e.first = std::min(e.first, t);
            e.last = std::max(e.last, t);
        }
    };
    see(d.memory.timestampNs);
    see(d.kernels.startNs);
    see(d.kernels.endNs);
    see(d.collectives.startNs);
    see(d.collectives.endNs);
    see(d.ranges.startNs);
    see(d.ranges.endNs);
    see(d.counters.timestampNs);
    return e;
}

/// The importer's own result for a plain (not archive, not SQLite) file, before openTrace.
Result<LoadedTrace> importDirectly(const std::string& path) {
    auto bytes = readInputBytes(path);
    if (!bytes) {
        return bytes.error();
    }
    switch (detectFormat(*bytes, path)) {
        case InputFormat::Vscope:
            return readTraceBytes(*bytes, path);
        case InputFormat::PytorchSnapshot:
            return importPytorchSnapshot(*bytes, path);
        case InputFormat::KinetoJson:
            return importKinetoJson(*bytes, path);
        default:
            return Error::make(ErrorCode::Unsupported, path, "not a plain trace file");
    }
}

TEST(PlausibilityRealdata, NoRealEventIsFlaggedAndNoRealFileIsRefused) {
    const fs::path root = VRAMSCOPE_REALDATA_DIR;
    VRAMSCOPE_REQUIRE_INPUT(root);
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (entry.is_regular_file() && isTraceName(entry.path().filename().string())) {
            files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 20u);  // 21 in shared/realdata when this was written
    size_t ranks = 0;
    size_t compared = 0;
    for (const std::string& path : files) {
        SCOPED_TRACE(path);
        auto job = openJob({path});
        const bool plain = !isArchiveName(path) && !path.ends_with(".sqlite");
        auto direct = plain ? importDirectly(path)
                            : Result<LoadedTrace>(
                                  Error::make(ErrorCode::Unsupported, path, "archive or SQLite"));
        if (plain && direct.ok()) {
            // The importer takes it, so the start judgement must not refuse it.
            ASSERT_TRUE(job.ok()) << job.error().describe();
            ASSERT_EQ(job->ranks.size(), 1u);
            EXPECT_EQ(extentOf(job->ranks[0].trace.data), extentOf(direct->data));
            ++compared;
        }
        if (!job.ok()) {
            continue;
        }
        for (const RankTrace& r : job->ranks) {
            ++ranks;
            for (const DataLoss& l : r.trace.data.dataLoss) {
                EXPECT_NE(l.counter, LossCounter::SizesOutOfRange) << r.path << ": " << l.reason;
                EXPECT_NE(l.counter, LossCounter::TimesOutOfSpan) << r.path << ": " << l.reason;
            }
        }
    }
    EXPECT_GE(compared, 18u);  // the plain files (not archives, not SQLite)
    std::printf("%zu real files, %zu ranks checked, %zu compared with their importer\n",
                files.size(), ranks, compared);
}

}  // namespace
}  // namespace vramscope::trace
