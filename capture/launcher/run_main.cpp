// vramscope-run: runs a command with the capture agent injected into it and all its children.
// The naming and environment logic is in common/launch_options.h, the process handling in
// launch_process.h and the batch sweep (--sweep) in sweep_driver.h; this file ties them together.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "launch_options.h"
#include "launch_process.h"
#include "output_naming.h"
#include "sweep_driver.h"

using namespace vramscope::capture;

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const ParsedRunOptions parsed = parseRunArguments(args);
    if (!parsed.options) {
        std::fprintf(stderr, "vramscope-run: %s\n%s", parsed.error.c_str(), runUsage().c_str());
        return 2;
    }
    const RunOptions& options = *parsed.options;
    if (options.help) {
        std::fputs(runUsage().c_str(), stdout);
        return 0;
    }
    const std::string agent = findAgent();
    if (agent.empty()) {
        std::fprintf(stderr,
                     "vramscope-run: libvramscope_capture.so not found beside %s or in ../lib "
                     "(set VRAMSCOPE_AGENT to its path)\n",
                     selfDirectory().c_str());
        return 2;
    }
    if (options.sweep) {
        return runSweep(options, agent);
    }
    if (const std::string error = agentLoadError(agent); !error.empty()) {
        std::fprintf(stderr, "vramscope-run: cannot load the capture agent %s: %s\n", agent.c_str(),
                     error.c_str());
        return 2;
    }
    // The agent binds the job's own libcupti; say now when a CUDA major here has none to find.
    for (const std::string& w : cuptiWarnings()) {
        std::fprintf(stderr, "vramscope-run: warning: %s\n", w.c_str());
    }

    OutputSpec spec = parseOutputSpec(options.output);
    if (spec.kind != OutputKind::UnixSocket && options.file) {
        spec.path = absolutePath(spec.path);
        const std::string dir = spec.kind == OutputKind::Directory
                                    ? spec.path
                                    : spec.path.substr(0, spec.path.find_last_of('/'));
        if (!dir.empty() && !makeDirectories(dir)) {
            std::fprintf(stderr, "vramscope-run: cannot create %s: %s\n", dir.c_str(),
                         std::strerror(errno));
            return 2;
        }
    }
    const std::string job = options.job.empty() ? jobNameFromCommand(options.command) : options.job;
    const std::string outputValue =
        spec.kind == OutputKind::UnixSocket ? "unix:" + spec.path : spec.path;
    const std::vector<EnvAssignment> env =
        launchEnvironment(options, agent, outputValue, job, processEnvironment());
    if (options.file) {
        std::fprintf(stderr, "vramscope-run: %s\n", describeOutput(spec, job).c_str());
    } else {
        std::fprintf(stderr,
                     "vramscope-run: no trace file (--no-file): each process serves its live "
                     "socket and ring only (vramscope-cli attach --list)\n");
    }
    if (const std::string w = ncclPluginWarning(options, agent, processEnvironment()); !w.empty()) {
        std::fprintf(stderr, "vramscope-run: warning: %s\n", w.c_str());
    }
    const time_t started = time(nullptr);

    const int status = runCommand(options.command, env, nullptr);
    if (status == -1) {
        return 2;
    }
    const std::vector<std::string> traces = writtenTraces(spec, job, started);
    if (!traces.empty()) {
        std::string list;
        for (size_t i = 0; i < traces.size() && i < 8; ++i) {
            list += (i ? ", " : "") + traces[i];
        }
        if (traces.size() > 8) {
            list += ", ... (" + std::to_string(traces.size()) + " in all)";
        }
        std::fprintf(stderr, "vramscope-run: wrote %zu trace file(s): %s\n", traces.size(),
                     list.c_str());
    } else if (spec.kind != OutputKind::UnixSocket && options.file) {
        std::fprintf(stderr,
                     "vramscope-run: no trace was written (the command did not use "
                     "CUDA, or the agent stepped aside: see its 'vramscope:' line)\n");
    }
    return exitCodeFromWaitStatus(status);
}
