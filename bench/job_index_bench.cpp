// Opening a whole job: read a job index (readJobIndex, summaries only) against reading every rank
// file in full (readTraceFile, all held at once, as a viewer without summaries holds them).
// Prints wall time and peak resident memory of this process; run each mode in its own process
// (bench/run_job_index_bench.sh does) so the peaks do not mix.
//
// Usage: job_index_bench index JOB.vscope-index
//        job_index_bench ranks FILE.vscope...

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "vramscope/trace/job_index.h"
#include "vramscope/trace/trace_file.h"

namespace {

double peakRssMiB() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: ru_maxrss in KiB
}

}  // namespace

int main(int argc, char** argv) {
    using namespace vramscope::trace;
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s index JOB.vscope-index | ranks FILE...\n", argv[0]);
        return 2;
    }
    const std::string mode = argv[1];
    const auto start = std::chrono::steady_clock::now();
    uint64_t ranks = 0;
    uint64_t events = 0;
    if (mode == "index") {
        auto read = readJobIndex(argv[2]);
        if (!read) {
            std::fprintf(stderr, "%s\n", read.error().describe().c_str());
            return 3;
        }
        ranks = read->index.ranks.size();
        for (const auto& e : read->index.ranks) {
            for (const uint64_t rows : e.summary.tableRows) {
                events += rows;
            }
        }
    } else {
        std::vector<LoadedTrace> all;  // held, as a viewer holds every rank it shows
        for (int i = 2; i < argc; ++i) {
            auto read = readTraceFile(argv[i]);
            if (!read) {
                std::fprintf(stderr, "%s\n", read.error().describe().c_str());
                return 3;
            }
            events += read->data.eventCount();
            all.push_back(std::move(*read));
        }
        ranks = all.size();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s: %llu ranks, %llu events covered, %.3f s, peak RSS %.1f MiB\n", mode.c_str(),
                static_cast<unsigned long long>(ranks), static_cast<unsigned long long>(events),
                seconds, peakRssMiB());
    return 0;
}
