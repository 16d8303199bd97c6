#include <algorithm>
#include <string>

#include "vramscope/bundled_sample.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope {

trace::Result<trace::Job> openBundledSample() {
    trace::Job job;
    for (const auto& file : bundledSampleTraces()) {
        const std::string path = std::string(kBundledPathPrefix) + std::string(file.name);
        auto loaded = trace::readTraceBytes(file.bytes, path);
        if (!loaded.ok()) {
            return loaded.error();
        }
        trace::RankTrace rank;
        rank.path = path;
        rank.format = trace::InputFormat::Vscope;
        rank.trace = std::move(loaded).value();
        rank.rankSource = "header";
        job.ranks.push_back(std::move(rank));
    }
    if (job.ranks.empty()) {
        return trace::Error::make(trace::ErrorCode::Io, "bundled sample",
                                  "this build has no bundled sample traces");
    }
    std::stable_sort(job.ranks.begin(), job.ranks.end(),
                     [](const trace::RankTrace& a, const trace::RankTrace& b) {
                         return a.trace.data.header.rank < b.trace.data.header.rank;
                     });
    return job;
}

}  // namespace vramscope
