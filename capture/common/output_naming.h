#pragma once
// Who a traced process is (rank, host, pid, job) and where its trace goes.
//
// Shared by the agent (which names its own file when CUDA starts, from its environment) and by
// vramscope-run (which tells the user where the files will be). No CUDA, no I/O: pure functions
// over an environment lookup, so that they are unit-tested.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace vramscope::capture {

/// Reads one environment variable; std::nullopt when it is not set.
using GetEnv = std::function<std::optional<std::string>(const std::string& name)>;

/// A lookup over the process environment (getenv).
GetEnv processEnvironment();
/// A lookup over a fixed map (tests, and the launcher's view of the child's environment).
GetEnv mapEnvironment(std::map<std::string, std::string> values);

/// Environment variables the agent reads (set by vramscope-run, or by hand).
inline constexpr const char* kEnvOutput = "VRAMSCOPE_OUTPUT";     ///< DIR, FILE.vscope or unix:PATH
inline constexpr const char* kEnvJob = "VRAMSCOPE_JOB";           ///< job name used in file names
inline constexpr const char* kEnvFlushMs = "VRAMSCOPE_FLUSH_MS";  ///< flush period, ms
inline constexpr const char* kEnvRootPid = "VRAMSCOPE_ROOT_PID";  ///< pid of the launched command
inline constexpr const char* kEnvOomCallbacks = "VRAMSCOPE_OOM_CALLBACKS";  ///< "0" = off
/// NCCL profiler plugin events: off | coll (default) | full (vramscope-run --nccl).
inline constexpr const char* kEnvNccl = "VRAMSCOPE_NCCL";
/// Live viewing: "0" turns the agent's socket off (default on); the ring of recent frames kept
/// for viewers that attach later, MiB (default 64, at most 4096).
inline constexpr const char* kEnvLive = "VRAMSCOPE_LIVE";
inline constexpr const char* kEnvRingMib = "VRAMSCOPE_RING_MIB";
/// "0": no trace file, the live socket and its ring only (vramscope-run --no-file).
inline constexpr const char* kEnvFile = "VRAMSCOPE_FILE";
/// "1": keep NVTX ranges of library domains (NCCL, cuBLAS, cuDNN, ...); by default only the
/// application's are recorded (vramscope-run --nvtx-libraries).
inline constexpr const char* kEnvNvtxLibraries = "VRAMSCOPE_NVTX_LIBRARIES";
/// Event handles of the plugin's pool (64 - 1048576, default 8192): operations waiting for
/// their kernel channels plus live sub-events; beyond it events are dropped and counted.
inline constexpr const char* kEnvNcclEvents = "VRAMSCOPE_NCCL_EVENTS";

/// Rank, local rank and world size as the job's launcher published them, plus host, pid and job.
struct ProcessIdentity {
    int32_t rank = -1;       ///< -1 = unknown
    int32_t localRank = -1;  ///< -1 = unknown
    int32_t worldSize = 0;   ///< 0 = unknown
    std::string host;
    int64_t pid = 0;
    std::string job;  ///< job name/id, may be empty
};

/// Reads rank from RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK (first one that holds a
/// non-negative decimal integer wins, in that order: torchrun's RANK is the global rank even
/// under Slurm); local rank from LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK,
/// MPI_LOCALRANKID; world size from WORLD_SIZE, SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE; the
/// job from VRAMSCOPE_JOB, SLURM_JOB_ID, then TORCHELASTIC_RUN_ID (unless it is "none").
ProcessIdentity identityFromEnvironment(const GetEnv& env, std::string host, int64_t pid);

/// Parses a non-negative decimal integer that fits in int32 ("12"); nullopt otherwise ("", "-1",
/// "3x", "99999999999").
std::optional<int32_t> parseNonNegativeInt(std::string_view text);

enum class OutputKind {
    Directory,   ///< one file per process inside it
    File,        ///< this file for a rank-less root process, <stem>-rank<R>.vscope for ranks
    UnixSocket,  ///< stream to a listening Unix socket ("unix:PATH")
};

struct OutputSpec {
    OutputKind kind = OutputKind::Directory;
    std::string path;
};

/// "unix:PATH" -> UnixSocket; a path ending in ".vscope" -> File; anything else -> Directory.
OutputSpec parseOutputSpec(std::string_view value);

/// Keeps [A-Za-z0-9._-] and replaces every other byte by '_', so a job or host name is safe in a
/// file name; an empty result becomes `fallback`.
std::string sanitizeFileNamePart(std::string_view text, std::string_view fallback);

/// The trace path of one process:
///   Directory: <dir>/<job>-rank<R>.vscope, or <dir>/<job>-<host>-<pid>.vscope without a rank;
///   File:      <stem>-rank<R>.vscope with a rank, else the file itself for the root process (the
///              command vramscope-run started), else <stem>-<host>-<pid>.vscope;
///   UnixSocket: the socket path.
/// An empty job is named "vramscope". `isRootProcess` is true when this pid is VRAMSCOPE_ROOT_PID.
std::string traceOutputPath(const OutputSpec& spec, const ProcessIdentity& who, bool isRootProcess);

/// The name to use when `path` is already held by another live process of the same job (two
/// processes claiming one rank): "<stem>-pid<pid>.vscope".
std::string collisionFallbackPath(const std::string& path, int64_t pid);

}  // namespace vramscope::capture
