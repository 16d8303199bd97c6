// Kineto / Chrome trace JSON import speed and memory (run by bench/run_kineto_bench.sh).
//
// Reads a trace (.json or .json.gz) into memory first (gunzip is not timed), then imports it
// `--repeat` times on one thread and prints the speed in MB/s of uncompressed JSON (by wall
// clock, and by the CPU time of the process, which a busy machine disturbs less), the events
// imported, and the peak resident memory the first import added (VmHWM from /proc/self/status
// before and after), per imported event. Output: `key value` lines, one per figure.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "vramscope/trace/importers.h"
#include "vramscope/trace/input_bytes.h"

namespace {

using vramscope::trace::importKinetoJsonBuffer;
using vramscope::trace::readInputBytes;

/// Peak resident set size of this process in bytes (Linux VmHWM), 0 when unknown.
long long peakResidentBytes() {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        if (key == "VmHWM:") {
            long long kib = 0;
            status >> kib;
            return kib * 1024;
        }
        status.ignore(1 << 12, '\n');
    }
    return 0;
}

/// CPU time of this process in seconds (the import runs on one thread).
double cpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int usage() {
    std::fprintf(stderr, "usage: kineto_import_bench TRACE.json[.gz] [--repeat N]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        return usage();
    }
    const std::string path = argv[1];
    int repeat = 5;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (std::string(argv[i]) == "--repeat") {
            repeat = std::max(1, std::atoi(argv[i + 1]));
        } else {
            return usage();
        }
    }
    auto bytes = readInputBytes(path);
    if (!bytes) {
        std::fprintf(stderr, "%s\n", bytes.error().describe().c_str());
        return 1;
    }
    const double megabytes = static_cast<double>(bytes->size()) / 1e6;
    const long long rssBefore = peakResidentBytes();
    std::vector<double> seconds;
    std::vector<double> cpu;
    size_t events = 0;
    long long rssGrowth = 0;
    for (int run = 0; run < repeat; ++run) {
        const double cpuStart = cpuSeconds();
        const auto start = std::chrono::steady_clock::now();
        auto trace = importKinetoJsonBuffer(*bytes, path);
        const auto stop = std::chrono::steady_clock::now();
        cpu.push_back(cpuSeconds() - cpuStart);
        if (!trace) {
            std::fprintf(stderr, "%s\n", trace.error().describe().c_str());
            return 1;
        }
        seconds.push_back(std::chrono::duration<double>(stop - start).count());
        if (run == 0) {
            events = trace->data.eventCount();
            rssGrowth = peakResidentBytes() - rssBefore;  // parser buffers + the trace, at peak
        }
    }
    std::sort(seconds.begin(), seconds.end());
    std::sort(cpu.begin(), cpu.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("input_mb %.1f\n", megabytes);
    std::printf("events_imported %zu\n", events);
    std::printf("import_s_best %.3f\n", seconds.front());
    std::printf("import_s_median %.3f\n", median);
    std::printf("import_mb_per_s_best %.1f\n", megabytes / seconds.front());
    std::printf("import_mb_per_s_median %.1f\n", megabytes / median);
    std::printf("import_mb_per_cpu_s_best %.1f\n", megabytes / cpu.front());
    std::printf("import_mb_per_cpu_s_median %.1f\n", megabytes / cpu[cpu.size() / 2]);
    std::printf("peak_rss_before_import_mb %.1f\n", static_cast<double>(rssBefore) / 1e6);
    std::printf("peak_rss_added_by_import_mb %.1f\n", static_cast<double>(rssGrowth) / 1e6);
    std::printf("peak_rss_added_bytes_per_event %.0f\n",
                events > 0 ? static_cast<double>(rssGrowth) / static_cast<double>(events) : 0.0);
    std::printf("peak_rss_total_bytes_per_event %.0f\n",
                events > 0
                    ? static_cast<double>(rssBefore + rssGrowth) / static_cast<double>(events)
                    : 0.0);
    return 0;
}
