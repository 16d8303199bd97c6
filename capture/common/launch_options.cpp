#include "launch_options.h"

#include <sys/wait.h>

#include <array>
#include <string_view>

namespace vramscope::capture {

namespace {

bool isInterpreterOrLauncher(std::string_view base) {
    static constexpr std::array<std::string_view, 14> kWords = {
        "torchrun", "srun",  "mpirun", "mpiexec", "env",     "uv",        "bash",
        "sh",       "nohup", "time",   "numactl", "taskset", "deepspeed", "accelerate"};
    if (base.starts_with("python") || base.starts_with("pypy")) {
        return true;
    }
    for (std::string_view w : kWords) {
        if (base == w) {
            return true;
        }
    }
    return false;
}

std::string baseName(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string runUsage() {
    return "usage: vramscope-run [-o DIR_OR_FILE] [--per-tensor] [--flush-ms N] [--job NAME] "
           "-- COMMAND [ARGS...]\n"
           "       vramscope-run --sweep NAME=V1,V2,... [-o DIR] [options] -- COMMAND [ARGS...]\n"
           "  -o, --output DIR|FILE.vscope|unix:PATH\n"
           "                  where traces go (default: ./vramscope-traces/); one file per\n"
           "                  process, named by rank\n"
           "  --per-tensor    PyTorch: add backend:cudaMallocAsync to PYTORCH_ALLOC_CONF and\n"
           "                  PYTORCH_CUDA_ALLOC_CONF (older PyTorch reads only that one) so\n"
           "                  every tensor allocation is recorded, not only segments\n"
           "  --flush-ms N    hand records to the writer every N ms (default 200)\n"
           "  --job NAME      job name in file names (default: from the command)\n"
           "  --nccl off|coll|full\n"
           "                  NCCL collectives through the agent as NCCL profiler plugin\n"
           "                  (NCCL_PROFILER_PLUGIN): coll (default) records collectives,\n"
           "                  send/recv and their kernel-channel GPU times; full adds proxy\n"
           "                  operations; off leaves NCCL alone. A NCCL_PROFILER_PLUGIN of\n"
           "                  your own is kept (with a warning: ours is then off)\n"
           "  --live on|off   serve each process's stream on an owner-only Unix socket for\n"
           "                  `vramscope-cli attach` / `watch` and the app (default on)\n"
           "  --ring-mib N    recent data kept for viewers that attach later, MiB per process\n"
           "                  (default 64, 1 to 4096)\n"
           "  --no-file       write no trace file: the live socket and its ring only\n"
           "  --nvtx-libraries\n"
           "                  keep the NVTX ranges of libraries (NCCL, cuBLAS, cuDNN, ...) too;\n"
           "                  by default only the application's own are recorded\n"
           "  --sweep NAME=V1,V2,...  run COMMAND once per value, in order, with the\n"
           "                  environment variable NAME=V and every {NAME} in its arguments\n"
           "                  replaced by V, each run recorded into DIR/NAME-V/; values are\n"
           "                  positive numbers (batch sizes). The sweep stops at the first run\n"
           "                  that fails with a CUDA out-of-memory (an OOM event in its trace,\n"
           "                  or PyTorch's 'CUDA out of memory.' on its stderr, which passes\n"
           "                  through unchanged) and at any other failure, then prints the\n"
           "                  largest stable value, the OOM run's request and\n"
           "                  `vramscope-cli batch-fit` over the finished runs (the largest\n"
           "                  value predicted under 80 % and 100 % of the GPU's capacity)\n"
           "  -h, --help      show this help and exit\n"
           "Environment: VRAMSCOPE_AGENT overrides where the agent library is looked for\n"
           "  (beside vramscope-run, then ../lib/vramscope); VRAMSCOPE_CLI names the\n"
           "  vramscope-cli that --sweep runs; VRAMSCOPE_CUPTI_PATH names a libcupti (or its\n"
           "  folder) for jobs that bring none.\n"
           "Exit code: the command's, or 128+signal when it was killed; 127 when the\n"
           "  command cannot be executed; 2 when vramscope-run fails before it (usage, no\n"
           "  agent library, no output directory, no process: said on stderr).\n"
           "With --sweep: 0 the sweep stopped at an out-of-memory or ran every value,\n"
           "  1 a run failed for another reason (its exit status is printed), 2 usage, no\n"
           "  agent library or no output directory, 3 no run finished (the first value already\n"
           "  failed with out-of-memory), 4 runs finished but vramscope-cli batch-fit could not\n"
           "  be run (missing beside vramscope-run; set VRAMSCOPE_CLI to its path).\n";
}

ParsedRunOptions parseRunArguments(const std::vector<std::string>& args) {
    RunOptions options;
    size_t i = 0;
    auto valueOf = [&](const std::string& flag) -> std::optional<std::string> {
        if (i + 1 >= args.size()) {
            return std::nullopt;
        }
        (void)flag;
        return args[++i];
    };
    for (; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "-h" || a == "--help") {
            options.help = true;
            return {options, {}};
        }
        if (a == "-o" || a == "--output") {
            auto v = valueOf(a);
            if (!v || v->empty()) {
                return {std::nullopt, a + " needs a directory, a .vscope file or unix:PATH"};
            }
            options.output = *v;
        } else if (a == "--no-file") {
            options.file = false;
        } else if (a == "--nvtx-libraries") {
            options.nvtxLibraries = true;
        } else if (a == "--per-tensor") {
            options.perTensor = true;
        } else if (a == "--flush-ms") {
            auto v = valueOf(a);
            auto ms = v ? parseNonNegativeInt(*v) : std::nullopt;
            if (!ms || *ms < kMinFlushMs || *ms > kMaxFlushMs) {
                return {std::nullopt, "--flush-ms needs a number of milliseconds between " +
                                          std::to_string(kMinFlushMs) + " and " +
                                          std::to_string(kMaxFlushMs)};
            }
            options.flushMs = *ms;
        } else if (a == "--job") {
            auto v = valueOf(a);
            if (!v || v->empty()) {
                return {std::nullopt, "--job needs a name"};
            }
            options.job = *v;
        } else if (a == "--nccl") {
            auto v = valueOf(a);
            if (v && *v == "off") {
                options.nccl = NcclCapture::Off;
            } else if (v && *v == "coll") {
                options.nccl = NcclCapture::Coll;
            } else if (v && *v == "full") {
                options.nccl = NcclCapture::Full;
            } else {
                return {std::nullopt, "--nccl needs off, coll or full"};
            }
        } else if (a == "--live") {
            auto v = valueOf(a);
            if (v && (*v == "on" || *v == "off")) {
                options.live = *v == "on";
            } else {
                return {std::nullopt, "--live needs on or off"};
            }
        } else if (a == "--ring-mib") {
            auto v = valueOf(a);
            auto n = v ? parseNonNegativeInt(*v) : std::nullopt;
            if (!n || *n < 1 || *n > 4096) {
                return {std::nullopt, "--ring-mib needs a number of MiB between 1 and 4096"};
            }
            options.ringMib = *n;
        } else if (a == "--sweep") {
            auto v = valueOf(a);
            if (!v) {
                return {std::nullopt, "--sweep needs NAME=V1,V2,... (e.g. --sweep BATCH=8,16,32)"};
            }
            ParsedSweepSpec sweep = parseSweepSpec(*v);
            if (!sweep.spec) {
                return {std::nullopt, sweep.error};
            }
            options.sweep = std::move(sweep.spec);
        } else if (!a.empty() && a[0] == '-') {
            return {std::nullopt, "unknown option " + a + " (put the command after --)"};
        } else {
            break;  // the command starts here
        }
    }
    options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())),
                           args.end());
    if (options.command.empty()) {
        return {std::nullopt, "no command given: vramscope-run [OPTIONS] -- COMMAND [ARGS...]"};
    }
    if (!options.file && !options.live) {
        return {std::nullopt, "--no-file with --live off would record nothing"};
    }
    if (!options.file && options.sweep) {
        return {std::nullopt, "--sweep reads each run's trace files: it cannot go with --no-file"};
    }
    if (options.sweep && parseOutputSpec(options.output).kind != OutputKind::Directory) {
        return {std::nullopt,
                "--sweep records each run into DIR/NAME-V/: -o must name a "
                "directory, not '" +
                    options.output + "'"};
    }
    return {options, {}};
}

std::string jobNameFromCommand(const std::vector<std::string>& command) {
    for (const std::string& word : command) {
        if (word.empty() || word[0] == '-' || word.find('=') != std::string::npos) {
            continue;  // options and VAR=value of env
        }
        const std::string base = baseName(word);
        if (isInterpreterOrLauncher(base)) {
            continue;
        }
        const size_t dot = base.find_last_of('.');
        const std::string stem =
            (dot == std::string::npos || dot == 0) ? base : base.substr(0, dot);
        return sanitizeFileNamePart(stem, "job");
    }
    return "job";
}

std::string withCudaMallocAsyncBackend(const std::string& existing) {
    constexpr std::string_view kWanted = "backend:cudaMallocAsync";
    std::string out;
    bool replaced = false;
    size_t start = 0;
    while (start <= existing.size()) {
        size_t comma = existing.find(',', start);
        if (comma == std::string::npos) {
            comma = existing.size();
        }
        std::string item = existing.substr(start, comma - start);
        const size_t first = item.find_first_not_of(' ');
        const std::string trimmed = first == std::string::npos ? "" : item.substr(first);
        if (trimmed.starts_with("backend:")) {
            item = std::string(kWanted);
            replaced = true;
        }
        if (!trimmed.empty()) {
            out += out.empty() ? item : "," + item;
        }
        start = comma + 1;
    }
    if (!replaced) {
        out += out.empty() ? std::string(kWanted) : "," + std::string(kWanted);
    }
    return out;
}

std::vector<EnvAssignment> launchEnvironment(const RunOptions& options,
                                             const std::string& agentPath,
                                             const std::string& outputAbsolute,
                                             const std::string& job, const GetEnv& env) {
    std::vector<EnvAssignment> out;
    out.push_back({"CUDA_INJECTION64_PATH", agentPath});
    // NOTE(cupti): NVTX reaches CUPTI only through the libcupti instance the process uses, so
    // the agent is the NVTX injection library itself and forwards to the libcupti it is bound to.
    out.push_back({"NVTX_INJECTION64_PATH", agentPath});
    out.push_back({kEnvOutput, outputAbsolute});
    out.push_back({kEnvJob, job});
    if (options.flushMs) {
        out.push_back({kEnvFlushMs, std::to_string(*options.flushMs)});
    }
    out.push_back({kEnvNccl, toString(options.nccl)});
    out.push_back({kEnvLive, options.live ? "1" : "0"});
    if (!options.file) {
        out.push_back({kEnvFile, "0"});
    }
    if (options.nvtxLibraries) {
        out.push_back({kEnvNvtxLibraries, "1"});
    }
    if (options.ringMib) {
        out.push_back({kEnvRingMib, std::to_string(*options.ringMib)});
    }
    // NCCL loads one profiler plugin (NCCL_PROFILER_PLUGIN, src/plugin/profiler.cc): a user's own
    // stays in place, and ours is then off (ncclPluginWarning says so).
    if (options.nccl != NcclCapture::Off && !env("NCCL_PROFILER_PLUGIN").has_value()) {
        out.push_back({"NCCL_PROFILER_PLUGIN", agentPath});
    }
    if (options.perTensor) {
        // PyTorch 2.9 and later read PYTORCH_ALLOC_CONF (falling back to the older name), earlier
        // releases PYTORCH_CUDA_ALLOC_CONF alone: both are set, always, to the same value (PyTorch
        // warns when they differ), from the job's settings under the name read first.
        const auto newer = env("PYTORCH_ALLOC_CONF");
        const auto older = env("PYTORCH_CUDA_ALLOC_CONF");
        const std::string conf = withCudaMallocAsyncBackend(newer ? *newer : older.value_or(""));
        out.push_back({"PYTORCH_ALLOC_CONF", conf});
        out.push_back({"PYTORCH_CUDA_ALLOC_CONF", conf});
    }
    return out;
}

const char* toString(NcclCapture nccl) {
    switch (nccl) {
        case NcclCapture::Off:
            return "off";
        case NcclCapture::Coll:
            return "coll";
        case NcclCapture::Full:
            return "full";
    }
    return "coll";
}

std::string ncclPluginWarning(const RunOptions& options, const std::string& agentPath,
                              const GetEnv& env) {
    const auto own = env("NCCL_PROFILER_PLUGIN");
    if (options.nccl == NcclCapture::Off || !own || *own == agentPath) {
        return {};
    }
    return "NCCL_PROFILER_PLUGIN is already set (" + *own +
           "); it is kept and NCCL collectives are not recorded (NCCL loads one profiler plugin)";
}

std::vector<std::string> agentLibraryCandidates(const std::string& launcherDir) {
    const std::string lib = "libvramscope_capture.so";
    return {launcherDir + "/" + lib, launcherDir + "/../lib/vramscope/" + lib,
            launcherDir + "/../lib/" + lib, launcherDir + "/../lib64/" + lib};
}

int exitCodeFromWaitStatus(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return 1;
}

std::string describeOutput(const OutputSpec& spec, const std::string& job) {
    switch (spec.kind) {
        case OutputKind::UnixSocket:
            return "traces stream to the Unix socket " + spec.path +
                   " (one connection per process)";
        case OutputKind::File: {
            std::string stem = spec.path.substr(0, spec.path.size() - 7);
            return "trace goes to " + spec.path + " (processes with a rank R write " + stem +
                   "-rankR.vscope)";
        }
        case OutputKind::Directory:
            break;
    }
    std::string dir = spec.path;
    if (!dir.empty() && dir.back() == '/') {
        dir.pop_back();
    }
    const std::string name = sanitizeFileNamePart(job, "vramscope");
    return "traces go to " + dir + "/" + name + "-rank<R>.vscope (one file per rank; " + name +
           "-<host>-<pid>.vscope for processes without a rank)";
}

}  // namespace vramscope::capture
