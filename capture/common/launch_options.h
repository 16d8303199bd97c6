#pragma once
// vramscope-run's command line and the environment it hands to the traced command.
//
// Pure functions (no CUDA, no process control) so that the launcher's behaviour is unit-tested;
// launcher/run_main.cpp only does the fork/exec/wait around them.

#include <optional>
#include <string>
#include <vector>

#include "output_naming.h"
#include "sweep.h"

namespace vramscope::capture {

/// Flush period bounds, ms: CUPTI buffers are handed over at least this often (records are lost
/// at exit unless the agent flushes while running: docs/DESIGN.md "Capture: CUDA injection and
/// CUPTI").
inline constexpr int kDefaultFlushMs = 200;
inline constexpr int kMinFlushMs = 10;
inline constexpr int kMaxFlushMs = 10000;

/// What vramscope-run asks of NCCL (--nccl): nothing, collectives + P2P + kernel channels, or
/// those plus proxy operations. Handed to the agent as VRAMSCOPE_NCCL=off|coll|full.
enum class NcclCapture { Off, Coll, Full };

struct RunOptions {
    std::string output = "vramscope-traces";  ///< DIR, FILE.vscope or unix:PATH
    bool perTensor = false;                   ///< PyTorch: backend:cudaMallocAsync
    std::optional<int> flushMs;               ///< unset = the agent's default
    std::string job;                          ///< empty = derived from the command
    NcclCapture nccl = NcclCapture::Coll;     ///< --nccl off|coll|full
    bool live = true;                         ///< --live on|off: serve a live socket
    std::optional<int> ringMib;               ///< --ring-mib N; unset = the agent's default
    bool file = true;                         ///< false with --no-file: the live socket only
    bool nvtxLibraries = false;               ///< --nvtx-libraries: keep library NVTX domains too
    bool help = false;
    std::optional<SweepSpec> sweep;    ///< --sweep NAME=V1,V2,...: one run per value
    std::vector<std::string> command;  ///< what to run, argv[0] first
};

struct ParsedRunOptions {
    std::optional<RunOptions> options;  ///< set on success
    std::string error;                  ///< a sentence for the user, when options is empty
};

/// Parses `vramscope-run [-o DIR_OR_FILE] [--per-tensor] [--flush-ms N] [--job NAME]
/// [--nccl off|coll|full] [--live on|off] [--ring-mib N] [--no-file] [--nvtx-libraries]
/// [--sweep NAME=V1,V2,...] --
/// COMMAND...`
/// (`args` excludes argv[0]). The
/// "--" may be left out when COMMAND does not start with '-'. With --sweep, -o must name a
/// directory (each run gets its own NAME-V folder in it) and the spec must parse (parseSweepSpec).
ParsedRunOptions parseRunArguments(const std::vector<std::string>& args);

/// The usage text printed by --help and after an argument error.
std::string runUsage();

/// A job name for file names from the command: the first word that is not an interpreter or
/// launcher (python*, torchrun, srun, mpirun, mpiexec, env, uv, bash, sh, ...) nor an option,
/// without directories and extension ("python3 train.py" -> "train"). "job" when none is left.
std::string jobNameFromCommand(const std::vector<std::string>& command);

/// PYTORCH_CUDA_ALLOC_CONF with backend:cudaMallocAsync, keeping the other settings: "" ->
/// "backend:cudaMallocAsync"; "expandable_segments:True" -> "expandable_segments:True,backend:
/// cudaMallocAsync"; an existing backend:X is replaced. (PyTorch's format: comma-separated
/// key:value pairs, see torch.cuda memory management docs.)
std::string withCudaMallocAsyncBackend(const std::string& existing);

struct EnvAssignment {
    std::string name;
    std::string value;
};

/// The variables vramscope-run sets for the command (and so for all its children, which inherit
/// them): CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH = `agentPath` (absolute),
/// VRAMSCOPE_OUTPUT = `outputAbsolute`, VRAMSCOPE_JOB, VRAMSCOPE_FLUSH_MS when set,
/// VRAMSCOPE_NCCL = off|coll|full, VRAMSCOPE_NVTX_LIBRARIES=1 with --nvtx-libraries,
/// NCCL_PROFILER_PLUGIN = `agentPath` unless --nccl off or the
/// user's environment already sets it (ncclPluginWarning), and with --per-tensor both
/// PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF (PyTorch before 2.9 reads only the latter) to
/// withCudaMallocAsyncBackend() of the job's own settings: `env`'s PYTORCH_ALLOC_CONF, else its
/// PYTORCH_CUDA_ALLOC_CONF (PyTorch reads the current name first and warns when the two differ).
/// `env` is the launcher's own environment. VRAMSCOPE_ROOT_PID is set by the child itself.
std::vector<EnvAssignment> launchEnvironment(const RunOptions& options,
                                             const std::string& agentPath,
                                             const std::string& outputAbsolute,
                                             const std::string& job, const GetEnv& env);

/// "off", "coll" or "full".
const char* toString(NcclCapture nccl);

/// The line vramscope-run prints when the user's NCCL_PROFILER_PLUGIN is kept (NCCL loads one
/// profiler plugin, so ours is then off); empty when there is nothing to say (--nccl off, or the
/// variable unset, or already naming `agentPath`).
std::string ncclPluginWarning(const RunOptions& options, const std::string& agentPath,
                              const GetEnv& env);

/// Where to look for libvramscope_capture.so, in order, given the directory of the vramscope-run
/// binary: the same directory (build tree), ../lib/vramscope, ../lib, ../lib64 (installed).
std::vector<std::string> agentLibraryCandidates(const std::string& launcherDir);

/// The launcher's exit code for a waitpid() status: the exit code, or 128 + signal when the
/// command was killed (the shell convention).
int exitCodeFromWaitStatus(int status);

/// One line telling where traces go, e.g. "traces go to /abs/dir/train-rank<R>.vscope (one file
/// per rank; <host>-<pid> for processes without a rank)".
std::string describeOutput(const OutputSpec& spec, const std::string& job);

}  // namespace vramscope::capture
