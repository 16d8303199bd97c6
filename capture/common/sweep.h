#pragma once
// vramscope-run --sweep: the pure rules of a batch sweep (spec parsing, {NAME} substitution, run
// directory names, PyTorch out-of-memory messages, when to stop, the batch-fit command line).
//
// No CUDA, no processes, no I/O: launcher/sweep_driver.cpp runs the commands around these
// functions, so what the sweep decides is unit-tested without a GPU.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramscope::capture {

/// One value of the swept variable, as the user wrote it ("16", "0.5") and as a number.
struct SweepValue {
    std::string text;  ///< used verbatim in the environment, {NAME} and the directory name
    double number = 0.0;
};

/// `--sweep NAME=V1,V2,...`: the variable and its values in the order they run.
struct SweepSpec {
    std::string name;
    std::vector<SweepValue> values;
};

struct ParsedSweepSpec {
    std::optional<SweepSpec> spec;  ///< set on success
    std::string error;              ///< a sentence for the user, when spec is empty
};

/// Parses "NAME=V1,V2,...". NAME is an environment variable name ([A-Za-z_][A-Za-z0-9_]*), not
/// one vramscope-run sets or one that decides what runs (VRAMSCOPE_*, CUDA_INJECTION64_PATH,
/// NVTX_INJECTION64_PATH, LD_PRELOAD, LD_LIBRARY_PATH, PATH). Each
/// value is a positive decimal number, digits with at most one '.' ("8", "0.25"; no sign, no
/// exponent), because batch-fit fits a line over the values and the text names a directory.
/// Errors: no '=', a bad NAME, an empty list or an empty item, a value that is not such a
/// number or is 0, the same number twice ("8" and "8.0" are one value).
ParsedSweepSpec parseSweepSpec(std::string_view text);

/// `args` with every "{NAME}" in every argument replaced by `value` (other braces untouched).
std::vector<std::string> substituteSweepValue(const std::vector<std::string>& args,
                                              const std::string& name, const std::string& value);

/// The directory of one run: "<dir>/<NAME>-<value>" (one trailing '/' of `dir` dropped).
std::string sweepRunDirectory(const std::string& dir, const std::string& name,
                              const std::string& value);

/// A PyTorch CUDA out-of-memory message found on a run's standard error.
struct OomMessage {
    std::string line;  ///< the line that holds it, without its newline
    /// The request in bytes, parsed from "Tried to allocate X UNIT" (PyTorch prints two decimals,
    /// so this is within 0.005 UNIT of what was asked); empty when the message names none.
    std::optional<uint64_t> requestedBytes;
    std::string requestedText;  ///< "1000.00 MiB" as printed, empty when none
};

/// Finds the last PyTorch CUDA OOM message in `stderrText`: "torch.OutOfMemoryError: CUDA out of
/// memory." (PyTorch >= 2.1), "torch.cuda.OutOfMemoryError: CUDA out of memory." (1.13-2.0) or
/// "RuntimeError: CUDA out of memory." (older). Sizes use PyTorch's format_size units: bytes, KiB,
/// MiB, GiB, TiB (powers of 1024; also "B", "KB"... read as the same powers). nullopt when none.
std::optional<OomMessage> findOomMessage(std::string_view stderrText);

/// How one run ended, as the driver saw it.
struct SweepRunResult {
    int exitCode = 0;             ///< the command's exit code, or 128 + signal
    bool killedBySignal = false;  ///< the command ended on a signal (exitCode = 128 + signal)
    /// Out-of-memory events in the run's trace files, and the request of the last one.
    uint64_t traceOomEvents = 0;
    uint64_t traceOomRequestedBytes = 0;
    std::optional<OomMessage> stderrOom;  ///< from the bounded tail of its standard error
};

enum class SweepVerdict {
    Finished,     ///< exit 0: a stable value, the sweep goes on
    OutOfMemory,  ///< failed with an out-of-memory: the sweep stops here, the answer is found
    Failed,       ///< failed for another reason: the sweep stops with the run's exit status
};

/// The rule: exit 0 is Finished even when the trace holds OOM events (PyTorch's caching allocator
/// frees its cache and retries a failed cudaMalloc, so a recovered failure is no failure of the
/// run); a non-zero exit, not by a signal, is OutOfMemory when the trace holds an OOM event or
/// stderr holds PyTorch's OOM message, else Failed. A signal is always Failed: the host's OOM
/// killer (SIGKILL) and a crash are not the GPU running out of memory.
SweepVerdict judgeSweepRun(const SweepRunResult& run);

/// The OOM run's request for the report: "4.00 GiB (4294967296 bytes, from the trace's OOM
/// event)", "... (about 4294967296 bytes, from PyTorch's message, which rounds to two decimals)",
/// or "unknown (neither the trace nor the message names it)". `formatBytes` is not linked here,
/// so the trace's bytes are printed in the same two-decimal binary units PyTorch uses.
std::string describeOomRequest(const SweepRunResult& run);

/// Bytes as PyTorch's format_size prints them: "1024 bytes", "1.50 KiB", "1024.00 MiB" (1 GiB),
/// "4.00 GiB"; GiB above 1 GiB, however large.
std::string formatSizeLikePyTorch(uint64_t bytes);

/// Keeps the last `capacity` bytes of a stream (the stderr tail the OOM message is looked for in).
class BoundedTail {
public:
    explicit BoundedTail(size_t capacity) : m_capacity(capacity) {}
    void append(std::string_view bytes);
    const std::string& text() const { return m_text; }

private:
    size_t m_capacity;
    std::string m_text;
};

/// The argument list of `vramscope-cli batch-fit` over the finished runs: "batch-fit
/// <dir1>:<v1> <dir2>:<v2> ...", in run order. `runs` pairs a run directory with its value text.
std::vector<std::string> batchFitArguments(
    const std::vector<std::pair<std::string, std::string>>& runs);

/// Where to look for vramscope-cli, in order, given the directory of the vramscope-run binary:
/// the same directory (installed, bin/), then ../app/cli (the build tree).
std::vector<std::string> cliCandidates(const std::string& launcherDir);

/// One run of a sweep as the driver recorded it.
struct SweepRecord {
    SweepValue value;
    std::string directory;  ///< DIR/NAME-V
    SweepRunResult result;
    SweepVerdict verdict = SweepVerdict::Finished;
    size_t traceFiles = 0;  ///< .vscope files the run left in its directory
};

/// The largest value among the Finished runs that wrote a trace (a run without one measured
/// nothing); nullopt when there is none.
std::optional<SweepValue> largestStableValue(const std::vector<SweepRecord>& records);

/// The sweep's report before batch-fit, one line per run made and per value not run, then the
/// largest stable value and the OOM run's value, exit status, request (describeOomRequest) and
/// PyTorch's message line, or the failed run's exit status. Ends with a newline.
std::string sweepSummaryText(const SweepSpec& spec, const std::vector<SweepRecord>& records);

/// vramscope-run --sweep exit codes (also in runUsage()).
inline constexpr int kSweepExitDone = 0;          ///< stopped at an OOM or ran every value
inline constexpr int kSweepExitFailed = 1;        ///< a run failed for another reason
inline constexpr int kSweepExitUsage = 2;         ///< usage, no agent, no output directory
inline constexpr int kSweepExitNoneFinished = 3;  ///< not one run finished
/// runs finished, but batch-fit could not be run or read them (its exit 2 or 3)
inline constexpr int kSweepExitNoFit = 4;

/// The exit code: kSweepExitFailed when the last run Failed, else kSweepExitNoneFinished when no
/// run finished or no finished run wrote a trace (nothing was measured), else kSweepExitNoFit when
/// `fitRan` is false, else kSweepExitDone. `fitRan` is true when batch-fit was not needed (fewer
/// than two runs with traces) or gave its answer.
int sweepExitCode(const std::vector<SweepRecord>& records, bool fitRan);

}  // namespace vramscope::capture
