#include "sweep_driver.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "launch_process.h"
#include "sweep.h"
#include "vramscope/trace/trace_file.h"

namespace vramscope::capture {

namespace {

/// Enough for PyTorch's OOM message and the traceback line before it; older output is not kept.
constexpr size_t kStderrTailBytes = 64 * 1024;

/// True when `dir` holds a .vscope file (left from an earlier sweep: batch-fit would read it as
/// one more rank of this run).
bool holdsTraces(const std::string& dir) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) {
        return false;
    }
    bool found = false;
    while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        found = found || (name.size() > 7 && name.ends_with(".vscope"));
    }
    closedir(d);
    return found;
}

/// Counts the OOM events in the run's traces and keeps the request of the latest one.
void readTraceOoms(const std::vector<std::string>& traces, SweepRunResult& result) {
    int64_t latest = INT64_MIN;
    for (const std::string& path : traces) {
        auto loaded = trace::readTraceFile(path);
        if (!loaded.ok()) {
            std::fprintf(stderr, "vramscope-run: cannot read %s for OOM events: %s\n", path.c_str(),
                         loaded.error().describe().c_str());
            continue;
        }
        for (const trace::OomEvent& oom : loaded->data.ooms) {
            ++result.traceOomEvents;
            if (int64_t(oom.timestampNs) >= latest) {
                latest = int64_t(oom.timestampNs);
                result.traceOomRequestedBytes = oom.requestedBytes;
            }
        }
    }
}

std::string joined(const std::vector<std::string>& words) {
    std::string s;
    for (const std::string& w : words) {
        s += (s.empty() ? "" : " ") + w;
    }
    return s;
}

/// One run: the command with its value, recorded into its directory.
SweepRecord runOne(const RunOptions& options, const SweepValue& value, size_t index,
                   const std::string& baseDir, const std::string& agentPath,
                   const std::string& job) {
    const SweepSpec& spec = *options.sweep;
    SweepRecord record;
    record.value = value;
    record.directory = sweepRunDirectory(baseDir, spec.name, value.text);
    std::vector<EnvAssignment> env =
        launchEnvironment(options, agentPath, record.directory, job, processEnvironment());
    env.push_back({spec.name, value.text});
    const std::vector<std::string> command =
        substituteSweepValue(options.command, spec.name, value.text);
    std::fprintf(stderr, "vramscope-run: [%zu/%zu] %s=%s: %s -> %s/\n", index + 1,
                 spec.values.size(), spec.name.c_str(), value.text.c_str(), joined(command).c_str(),
                 record.directory.c_str());
    if (!makeDirectories(record.directory)) {
        std::fprintf(stderr, "vramscope-run: cannot create %s: %s\n", record.directory.c_str(),
                     std::strerror(errno));
        record.result.exitCode = 127;
        record.verdict = SweepVerdict::Failed;
        return record;
    }
    BoundedTail tail(kStderrTailBytes);
    const int status = runCommand(command, env, &tail);
    if (status == -1) {
        record.result.exitCode = 127;
        record.verdict = SweepVerdict::Failed;
        return record;
    }
    record.result.exitCode = exitCodeFromWaitStatus(status);
    record.result.killedBySignal = WIFSIGNALED(status);
    const std::vector<std::string> traces =
        writtenTraces({OutputKind::Directory, record.directory}, job, 0);
    record.traceFiles = traces.size();
    readTraceOoms(traces, record.result);
    record.result.stderrOom = findOomMessage(tail.text());
    record.verdict = judgeSweepRun(record.result);
    return record;
}

/// Runs vramscope-cli batch-fit over the finished runs with traces; false when it could not be
/// run or could not read them.
bool printBatchFit(const std::vector<SweepRecord>& records) {
    std::vector<std::pair<std::string, std::string>> runs;
    for (const SweepRecord& r : records) {
        if (r.verdict == SweepVerdict::Finished && r.traceFiles > 0) {
            runs.emplace_back(r.directory, r.value.text);
        }
    }
    if (runs.size() < 2) {
        std::printf(
            "batch-fit: not run: it needs at least two finished runs with traces, the "
            "sweep has %zu\n",
            runs.size());
        return true;
    }
    const std::string cli = findCli();
    if (cli.empty()) {
        if (const char* forced = std::getenv("VRAMSCOPE_CLI")) {
            std::printf("batch-fit: not run: VRAMSCOPE_CLI=%s is not an executable file\n", forced);
        } else {
            std::printf(
                "batch-fit: not run: vramscope-cli was not found beside %s nor in "
                "../app/cli (set VRAMSCOPE_CLI to its path)\n",
                selfDirectory().c_str());
        }
        return false;
    }
    std::vector<std::string> command = batchFitArguments(runs);
    command.insert(command.begin(), cli);
    std::printf("batch-fit over the %zu finished runs (%s):\n", runs.size(),
                joined(command).c_str());
    const int status = runCommand(command, {}, nullptr);
    const int code = status == -1 ? 127 : exitCodeFromWaitStatus(status);
    // batch-fit: 0 a batch fits, 1 none fits or no answer (both are answers), 2 usage or
    // capacity unknown, 3 unreadable input.
    if (code != 0 && code != 1) {
        std::printf("batch-fit: gave no fit (exit status %d; its message is on stderr)\n", code);
        return false;
    }
    return true;
}

}  // namespace

int runSweep(const RunOptions& options, const std::string& agentPath) {
    const SweepSpec& spec = *options.sweep;
    const std::string baseDir = absolutePath(options.output);
    const std::string job = options.job.empty() ? jobNameFromCommand(options.command) : options.job;
    struct stat st {};
    if (stat(baseDir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
        std::fprintf(stderr,
                     "vramscope-run: -o %s is not a directory: a sweep records each run into "
                     "DIR/%s-<V>/; give a directory\n",
                     baseDir.c_str(), spec.name.c_str());
        return kSweepExitUsage;
    }
    if (!makeDirectories(baseDir)) {
        std::fprintf(stderr, "vramscope-run: cannot create %s: %s\n", baseDir.c_str(),
                     std::strerror(errno));
        return kSweepExitUsage;
    }
    for (const SweepValue& v : spec.values) {
        const std::string dir = sweepRunDirectory(baseDir, spec.name, v.text);
        if (holdsTraces(dir)) {
            std::fprintf(stderr,
                         "vramscope-run: %s already holds traces (an earlier sweep?); batch-fit "
                         "would count them as this run's: give another -o DIR or remove them\n",
                         dir.c_str());
            return kSweepExitUsage;
        }
    }
    std::fprintf(stderr, "vramscope-run: sweep %s over %zu values; runs go to %s/%s-<V>/\n",
                 spec.name.c_str(), spec.values.size(), baseDir.c_str(), spec.name.c_str());
    std::vector<SweepRecord> records;
    for (size_t i = 0; i < spec.values.size(); ++i) {
        records.push_back(runOne(options, spec.values[i], i, baseDir, agentPath, job));
        const SweepRecord& r = records.back();
        if (r.verdict == SweepVerdict::Finished && r.traceFiles == 0) {
            std::fprintf(stderr,
                         "vramscope-run: %s=%s finished but wrote no trace (the command did not "
                         "use CUDA, or the agent stepped aside); batch-fit leaves it out\n",
                         spec.name.c_str(), r.value.text.c_str());
        }
        if (r.verdict != SweepVerdict::Finished) {
            break;
        }
    }
    std::fflush(stderr);
    std::fputs(sweepSummaryText(spec, records).c_str(), stdout);
    const bool fitRan = printBatchFit(records);
    std::fflush(stdout);
    return sweepExitCode(records, fitRan);
}

}  // namespace vramscope::capture
