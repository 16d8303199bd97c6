#include "agent_signals.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "agent.h"

namespace vramscope::capture {

namespace {

// --- SIGTERM: the handler only sets a flag and posts a semaphore (both async-signal-safe). ---
struct sigaction g_previousTerm {};
sem_t g_termSemaphore;
volatile sig_atomic_t g_termSeen = 0;
pid_t g_agentPid = 0;

bool previousIsDefault() {
    return (g_previousTerm.sa_flags & SA_SIGINFO) == 0 && g_previousTerm.sa_handler == SIG_DFL;
}

void onSigterm(int sig, siginfo_t* info, void* context) {
    const int savedErrno = errno;
    if (getpid() != g_agentPid) {
        // A forked child without our threads: behave exactly as before the agent came.
        sigaction(SIGTERM, &g_previousTerm, nullptr);
        raise(sig);
        errno = savedErrno;
        return;
    }
    g_termSeen = 1;
    sem_post(&g_termSemaphore);
    if ((g_previousTerm.sa_flags & SA_SIGINFO) != 0) {
        if (g_previousTerm.sa_sigaction != nullptr) {
            g_previousTerm.sa_sigaction(sig, info, context);
        }
    } else if (g_previousTerm.sa_handler != SIG_DFL && g_previousTerm.sa_handler != SIG_IGN) {
        g_previousTerm.sa_handler(sig);
    }
    // SIG_DFL: the watcher thread writes what it has, then restores SIG_DFL and re-sends SIGTERM.
    errno = savedErrno;
}

// --- SIGUSR2: write the live ring to a file (the handler only sets a flag; the writer thread
// writes it after its next round). Installed only where SIGUSR2 had its default action. ---
volatile sig_atomic_t g_ringDumpRequested = 0;

void onSigusr2(int) {
    g_ringDumpRequested = 1;
}

void installRingDumpHandlerImpl() {
    struct sigaction current {};
    if (sigaction(SIGUSR2, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) != 0 ||
        current.sa_handler != SIG_DFL) {
        return;  // the application's own SIGUSR2 stays its own
    }
    struct sigaction ours {};
    ours.sa_handler = onSigusr2;
    ours.sa_flags = SA_RESTART;
    sigemptyset(&ours.sa_mask);
    sigaction(SIGUSR2, &ours, nullptr);
    pthread_atfork(nullptr, nullptr, [] { signal(SIGUSR2, SIG_DFL); });
}

void termWatcher() {
    blockAllSignals();
    for (;;) {
        while (sem_wait(&g_termSemaphore) != 0 && errno == EINTR) {
        }
        if (g_termSeen == 0) {
            continue;
        }
        g_termSeen = 0;
        Agent::instance().flushNow(2000);
        if (previousIsDefault()) {
            sigaction(SIGTERM, &g_previousTerm, nullptr);
            kill(getpid(), SIGTERM);
            return;
        }
    }
}

void installSigtermHandlerImpl() {
    if (sem_init(&g_termSemaphore, 0, 0) != 0) {
        return;
    }
    struct sigaction current {};
    if (sigaction(SIGTERM, nullptr, &current) != 0 ||
        ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN)) {
        return;  // an ignored SIGTERM stays ignored
    }
    struct sigaction ours {};
    ours.sa_sigaction = onSigterm;
    ours.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    if (sigaction(SIGTERM, &ours, &g_previousTerm) != 0) {
        return;
    }
    // A forked child (e.g. a data-loader worker) gets the disposition it would have had.
    pthread_atfork(nullptr, nullptr, [] { sigaction(SIGTERM, &g_previousTerm, nullptr); });
    std::thread(termWatcher).detach();
}

}  // namespace

void blockAllSignals() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

void installSigtermHandler(pid_t agentPid) {
    g_agentPid = agentPid;
    installSigtermHandlerImpl();
}

void installRingDumpHandler() {
    installRingDumpHandlerImpl();
}

bool takeRingDumpRequest() {
    if (g_ringDumpRequested == 0) {
        return false;
    }
    g_ringDumpRequested = 0;
    return true;
}

}  // namespace vramscope::capture
