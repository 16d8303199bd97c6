#pragma once
// The agent's signal handling: SIGTERM (write what is staged, then the job's own disposition) and
// SIGUSR2 (write the live ring). Handlers only set a flag and post a semaphore, both
// async-signal-safe; the work happens on the agent's threads.

#include <sys/types.h>

namespace vramscope::capture {

/// Blocks every signal on the calling thread (the agent's own threads: a job's signal must reach
/// the job's threads).
void blockAllSignals();

/// Installs the SIGTERM handler unless the job ignores SIGTERM: a watcher thread then calls
/// Agent::instance().flushNow(2000) and, when the previous disposition was the default one,
/// restores it and sends SIGTERM again; a previous handler is called from ours. `agentPid` is
/// the process the agent runs in (a forked child gets its old disposition back).
void installSigtermHandler(pid_t agentPid);

/// Installs the SIGUSR2 handler where SIGUSR2 has its default action (the application's own
/// stays its own).
void installRingDumpHandler();

/// True once per SIGUSR2 received since the last call (writer thread).
bool takeRingDumpRequest();

}  // namespace vramscope::capture
