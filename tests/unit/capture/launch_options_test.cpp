// vramscope-run's command line, the environment it gives the command, and its exit codes.

#include "launch_options.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

using namespace vramscope::capture;

namespace {

std::string valueOf(const std::vector<EnvAssignment>& env, const std::string& name) {
    for (const EnvAssignment& a : env) {
        if (a.name == name) {
            return a.value;
        }
    }
    return "<unset>";
}

}  // namespace

TEST(RunArguments, ParsesOptionsBeforeTheDoubleDash) {
    const ParsedRunOptions p = parseRunArguments(
        {"-o", "/tmp/t", "--per-tensor", "--flush-ms", "250", "--", "python3", "train.py", "-x"});
    ASSERT_TRUE(p.options) << p.error;
    EXPECT_EQ(p.options->output, "/tmp/t");
    EXPECT_TRUE(p.options->perTensor);
    EXPECT_EQ(p.options->flushMs, 250);
    EXPECT_EQ(p.options->command, (std::vector<std::string>{"python3", "train.py", "-x"}));
}

TEST(RunArguments, AcceptsACommandWithoutDoubleDash) {
    const ParsedRunOptions p = parseRunArguments({"torchrun", "--nproc-per-node", "8", "t.py"});
    ASSERT_TRUE(p.options) << p.error;
    EXPECT_EQ(p.options->output, "vramscope-traces");
    EXPECT_FALSE(p.options->perTensor);
    EXPECT_FALSE(p.options->flushMs);
    EXPECT_EQ(p.options->command.size(), 4u);
}

TEST(RunArguments, RejectsMissingValuesUnknownOptionsAndNoCommand) {
    EXPECT_FALSE(parseRunArguments({"-o"}).options);
    EXPECT_FALSE(parseRunArguments({"--flush-ms", "5", "--", "x"}).options);  // below 10 ms
    EXPECT_FALSE(parseRunArguments({"--flush-ms", "abc", "--", "x"}).options);
    EXPECT_FALSE(parseRunArguments({"--bogus", "--", "x"}).options);
    const ParsedRunOptions none = parseRunArguments({"-o", "d", "--"});
    EXPECT_FALSE(none.options);
    EXPECT_NE(none.error.find("no command"), std::string::npos);
    EXPECT_TRUE(parseRunArguments({"--help"}).options->help);
}

TEST(JobName, SkipsInterpretersLaunchersAndOptions) {
    EXPECT_EQ(jobNameFromCommand({"python3", "/work/gpt_train.py", "plain"}), "gpt_train");
    EXPECT_EQ(jobNameFromCommand({"torchrun", "--nproc-per-node=4", "train.py"}), "train");
    EXPECT_EQ(jobNameFromCommand({"env", "A=1", "python", "-u", "x/y/bench.py"}), "bench");
    EXPECT_EQ(jobNameFromCommand({"./my_app", "--steps", "3"}), "my_app");
    EXPECT_EQ(jobNameFromCommand({"python3"}), "job");
}

TEST(PerTensor, AddsTheAsyncBackendAndKeepsOtherSettings) {
    EXPECT_EQ(withCudaMallocAsyncBackend(""), "backend:cudaMallocAsync");
    EXPECT_EQ(withCudaMallocAsyncBackend("expandable_segments:True"),
              "expandable_segments:True,backend:cudaMallocAsync");
    EXPECT_EQ(withCudaMallocAsyncBackend("backend:native,max_split_size_mb:128"),
              "backend:cudaMallocAsync,max_split_size_mb:128");
    EXPECT_EQ(withCudaMallocAsyncBackend("backend:cudaMallocAsync"), "backend:cudaMallocAsync");
}

TEST(LaunchEnvironment, InjectsTheAgentForCudaAndNvtx) {
    RunOptions options;
    options.command = {"python3", "t.py"};
    const auto env = launchEnvironment(options, "/opt/v/libvramscope_capture.so", "/out", "t",
                                       mapEnvironment({}));
    EXPECT_EQ(valueOf(env, "CUDA_INJECTION64_PATH"), "/opt/v/libvramscope_capture.so");
    EXPECT_EQ(valueOf(env, "NVTX_INJECTION64_PATH"), "/opt/v/libvramscope_capture.so");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_OUTPUT"), "/out");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_JOB"), "t");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_FLUSH_MS"), "<unset>");
    EXPECT_EQ(valueOf(env, "PYTORCH_CUDA_ALLOC_CONF"), "<unset>");
}

TEST(LaunchEnvironment, LiveViewingIsOnByDefaultAndTheRingSizeTravels) {
    auto parsed = parseRunArguments({"--ring-mib", "8", "--", "python3", "t.py"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    auto env = launchEnvironment(*parsed.options, "/a.so", "/out", "t", mapEnvironment({}));
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_LIVE"), "1");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_RING_MIB"), "8");
    parsed = parseRunArguments({"--live", "off", "--", "python3", "t.py"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    env = launchEnvironment(*parsed.options, "/a.so", "/out", "t", mapEnvironment({}));
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_LIVE"), "0");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_RING_MIB"), "<unset>");
    EXPECT_FALSE(parseRunArguments({"--ring-mib", "0", "--", "x"}).options);
    EXPECT_FALSE(parseRunArguments({"--ring-mib", "5000", "--", "x"}).options);
    EXPECT_FALSE(parseRunArguments({"--live", "maybe", "--", "x"}).options);
    // --no-file: the socket and its ring only; with the socket off there is nothing left.
    parsed = parseRunArguments({"--no-file", "--", "python3", "t.py"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    env = launchEnvironment(*parsed.options, "/a.so", "/out", "t", mapEnvironment({}));
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_FILE"), "0");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_LIVE"), "1");
    parsed = parseRunArguments({"--no-file", "--live", "off", "--", "x"});
    EXPECT_FALSE(parsed.options);
    EXPECT_NE(parsed.error.find("record nothing"), std::string::npos) << parsed.error;
}

TEST(LaunchEnvironment, NvtxLibrariesKeepsLibraryDomainsOnlyWhenAsked) {
    // By default the agent records the application's NVTX only: the variable is not set.
    auto parsed = parseRunArguments({"--", "python3", "t.py"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    EXPECT_FALSE(parsed.options->nvtxLibraries);
    auto env = launchEnvironment(*parsed.options, "/a.so", "/out", "t", mapEnvironment({}));
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_NVTX_LIBRARIES"), "<unset>");
    parsed = parseRunArguments({"--nvtx-libraries", "--", "python3", "t.py"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    EXPECT_TRUE(parsed.options->nvtxLibraries);
    EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"python3", "t.py"}));
    env = launchEnvironment(*parsed.options, "/a.so", "/out", "t", mapEnvironment({}));
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_NVTX_LIBRARIES"), "1");
    EXPECT_NE(runUsage().find("--nvtx-libraries"), std::string::npos);
}

TEST(LaunchEnvironment, MakesTheAgentNcclsProfilerPluginUnlessOffOrTheUserHasOne) {
    RunOptions options;
    options.command = {"python3", "t.py"};
    auto env = launchEnvironment(options, "/opt/v/a.so", "/out", "t", mapEnvironment({}));
    EXPECT_EQ(valueOf(env, "NCCL_PROFILER_PLUGIN"), "/opt/v/a.so");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_NCCL"), "coll");
    EXPECT_EQ(ncclPluginWarning(options, "/opt/v/a.so", mapEnvironment({})), "");

    // A plugin of the user's own is kept, with a warning naming it.
    const GetEnv own = mapEnvironment({{"NCCL_PROFILER_PLUGIN", "/x/libinspector.so"}});
    env = launchEnvironment(options, "/opt/v/a.so", "/out", "t", own);
    EXPECT_EQ(valueOf(env, "NCCL_PROFILER_PLUGIN"), "<unset>") << "the job's own value stays";
    const std::string warning = ncclPluginWarning(options, "/opt/v/a.so", own);
    EXPECT_NE(warning.find("/x/libinspector.so"), std::string::npos) << warning;
    EXPECT_NE(warning.find("not recorded"), std::string::npos) << warning;
    // The user's variable already naming our agent is no conflict.
    EXPECT_EQ(ncclPluginWarning(options, "/opt/v/a.so",
                                mapEnvironment({{"NCCL_PROFILER_PLUGIN", "/opt/v/a.so"}})),
              "");

    options.nccl = NcclCapture::Off;
    env = launchEnvironment(options, "/opt/v/a.so", "/out", "t", mapEnvironment({}));
    EXPECT_EQ(valueOf(env, "NCCL_PROFILER_PLUGIN"), "<unset>");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_NCCL"), "off");
    EXPECT_EQ(ncclPluginWarning(options, "/opt/v/a.so", own), "") << "off: nothing to warn";
}

TEST(RunArguments, NcclTakesOffCollOrFull) {
    auto parsed = parseRunArguments({"--nccl", "full", "--", "python3", "t.py"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    EXPECT_EQ(parsed.options->nccl, NcclCapture::Full);
    parsed = parseRunArguments({"--nccl", "off", "python3"});
    ASSERT_TRUE(parsed.options) << parsed.error;
    EXPECT_EQ(parsed.options->nccl, NcclCapture::Off);
    parsed = parseRunArguments({"python3"});
    ASSERT_TRUE(parsed.options);
    EXPECT_EQ(parsed.options->nccl, NcclCapture::Coll) << "the default";
    parsed = parseRunArguments({"--nccl", "all", "--", "python3"});
    EXPECT_FALSE(parsed.options);
    EXPECT_NE(parsed.error.find("off, coll or full"), std::string::npos) << parsed.error;
    EXPECT_FALSE(parseRunArguments({"--nccl"}).options);
    EXPECT_NE(runUsage().find("--nccl off|coll|full"), std::string::npos);
}

TEST(LaunchEnvironment, PerTensorExtendsTheJobsAllocatorSettings) {
    RunOptions options;
    options.perTensor = true;
    options.flushMs = 100;
    const auto env = launchEnvironment(
        options, "/a.so", "/out", "t",
        mapEnvironment({{"PYTORCH_CUDA_ALLOC_CONF", "garbage_collection_threshold:0.6"},
                        {"PYTORCH_ALLOC_CONF", "expandable_segments:False"}}));
    // Both names set, differently: the current name is the one PyTorch reads, and both leave
    // with the same value.
    EXPECT_EQ(valueOf(env, "PYTORCH_ALLOC_CONF"),
              "expandable_segments:False,backend:cudaMallocAsync");
    EXPECT_EQ(valueOf(env, "PYTORCH_CUDA_ALLOC_CONF"),
              "expandable_segments:False,backend:cudaMallocAsync");
    EXPECT_EQ(valueOf(env, "VRAMSCOPE_FLUSH_MS"), "100");
}

TEST(LaunchEnvironment, PerTensorSetsBothNamesWhenNothingIsSet) {
    RunOptions options;
    options.perTensor = true;
    const auto env = launchEnvironment(options, "/a.so", "/out", "t", mapEnvironment({}));
    // PyTorch 2.9 and later read PYTORCH_ALLOC_CONF, earlier releases PYTORCH_CUDA_ALLOC_CONF
    // alone (docs/DESIGN.md "Capture: PyTorch allocator facts"): a job of either kind gets it.
    EXPECT_EQ(valueOf(env, "PYTORCH_ALLOC_CONF"), "backend:cudaMallocAsync");
    EXPECT_EQ(valueOf(env, "PYTORCH_CUDA_ALLOC_CONF"), "backend:cudaMallocAsync");
}

TEST(LaunchEnvironment, PerTensorCarriesTheOlderNamesSettingsToBothNames) {
    RunOptions options;
    options.perTensor = true;
    const auto env = launchEnvironment(
        options, "/a.so", "/out", "t",
        mapEnvironment(
            {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:128"}}));
    EXPECT_EQ(valueOf(env, "PYTORCH_ALLOC_CONF"),
              "expandable_segments:True,max_split_size_mb:128,backend:cudaMallocAsync");
    EXPECT_EQ(valueOf(env, "PYTORCH_CUDA_ALLOC_CONF"),
              "expandable_segments:True,max_split_size_mb:128,backend:cudaMallocAsync");
}

TEST(LaunchEnvironment, PerTensorReplacesTheJobsOwnBackend) {
    RunOptions options;
    options.perTensor = true;
    const auto env = launchEnvironment(
        options, "/a.so", "/out", "t",
        mapEnvironment({{"PYTORCH_ALLOC_CONF", "backend:native,expandable_segments:True"}}));
    EXPECT_EQ(valueOf(env, "PYTORCH_ALLOC_CONF"),
              "backend:cudaMallocAsync,expandable_segments:True");
    EXPECT_EQ(valueOf(env, "PYTORCH_CUDA_ALLOC_CONF"),
              "backend:cudaMallocAsync,expandable_segments:True");
}

TEST(LaunchEnvironment, WithoutPerTensorTheAllocatorSettingsAreLeftAlone) {
    RunOptions options;
    const auto env =
        launchEnvironment(options, "/a.so", "/out", "t",
                          mapEnvironment({{"PYTORCH_ALLOC_CONF", "backend:native"},
                                          {"PYTORCH_CUDA_ALLOC_CONF", "backend:native"}}));
    // Not assigned by the launcher: the command inherits the user's values unchanged.
    EXPECT_EQ(valueOf(env, "PYTORCH_ALLOC_CONF"), "<unset>");
    EXPECT_EQ(valueOf(env, "PYTORCH_CUDA_ALLOC_CONF"), "<unset>");
}

TEST(AgentLibraryCandidates, LooksBesideTheLauncherThenInLib) {
    const auto c = agentLibraryCandidates("/usr/bin");
    ASSERT_GE(c.size(), 3u);
    EXPECT_EQ(c[0], "/usr/bin/libvramscope_capture.so");
    EXPECT_EQ(c[1], "/usr/bin/../lib/vramscope/libvramscope_capture.so");
    EXPECT_EQ(c[2], "/usr/bin/../lib/libvramscope_capture.so");
}

TEST(ExitCode, IsTheCommandsCodeOr128PlusSignal) {
    for (int code : {0, 3, 255}) {
        const pid_t pid = fork();
        if (pid == 0) {
            _exit(code);
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_EQ(exitCodeFromWaitStatus(status), code);
    }
    const pid_t pid = fork();
    if (pid == 0) {
        raise(SIGKILL);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_EQ(exitCodeFromWaitStatus(status), 128 + 9);
}

TEST(DescribeOutput, NamesThePatternOfTheFiles) {
    EXPECT_EQ(describeOutput({OutputKind::Directory, "/out/"}, "train"),
              "traces go to /out/train-rank<R>.vscope (one file per rank; "
              "train-<host>-<pid>.vscope for processes without a rank)");
}
