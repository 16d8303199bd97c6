#pragma once
// The process side of vramscope-run: paths, directories, and running one command with the
// agent's environment while forwarding termination signals. Used by run_main.cpp (one run) and
// sweep_driver.cpp (one run per value); single-threaded, like the launcher.

#include <string>
#include <vector>

#include "launch_options.h"
#include "sweep.h"

namespace vramscope::capture {

/// The directory of the running vramscope-run binary (from /proc/self/exe), "." when unknown.
std::string selfDirectory();
/// `path` made absolute against the working directory (not resolved).
std::string absolutePath(const std::string& path);
/// Like mkdir -p; false with errno set when a part cannot be made.
bool makeDirectories(const std::string& dir);
/// The agent library: VRAMSCOPE_AGENT when set (empty when that is not readable), else the first
/// readable agentLibraryCandidates(selfDirectory()); empty when none.
std::string findAgent();
/// Test-loads the agent library at `agent` as the job will: dlopen(RTLD_NOW | RTLD_LOCAL) in a
/// forked child that exits right after, so nothing of the library (its constructors, libcupti)
/// stays in the launcher. Returns "" when it loaded, else dlerror()'s text (a missing NEEDED
/// library, a glibc too old for it, not an ELF file ...), or how the child ended when it gave
/// none (killed by a signal), or why the test could not be made (pipe or fork failed).
std::string agentLoadError(const std::string& agent);
/// Warnings for the CUDA majors this machine has a runtime of (a libcudart.so.N the loader finds,
/// a /usr/local/cuda-N.* toolkit, CUDA_HOME's libcudart) but no libcupti.so.N for
/// (missingCuptiWarnings in cupti_library.h). The loader is asked in a forked child, so nothing
/// stays loaded in the launcher. A job can still bring its own (PyTorch's wheels do).
std::vector<std::string> cuptiWarnings();
/// vramscope-cli: VRAMSCOPE_CLI when set (empty when that is not executable), else the first
/// executable cliCandidates(selfDirectory()); empty when none.
std::string findCli();

/// .vscope files in the output `spec` names whose name starts with the job's prefix and that were
/// modified at or after `since` (Unix seconds); none for a Unix socket.
std::vector<std::string> writtenTraces(const OutputSpec& spec, const std::string& job, long since);

/// Runs `command` (argv[0] looked up in PATH) with `env` (the agent's, or none) set on top of the
/// launcher's environment and VRAMSCOPE_ROOT_PID = its pid, and waits for it. SIGTERM, SIGHUP,
/// SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to it; SIGINT is ignored by the launcher meanwhile
/// (the terminal sends it to the command's process group too). When `stderrTail` is given the
/// command's stderr goes through a pipe: every byte is written on to the launcher's stderr
/// unchanged and the last bytes are kept in `stderrTail`. Returns the waitpid() status, or -1 after
/// printing why the command could not be started (fork or pipe failed). An exec failure is exit
/// code 127.
int runCommand(const std::vector<std::string>& command, const std::vector<EnvAssignment>& env,
               BoundedTail* stderrTail);

}  // namespace vramscope::capture
