// vramscope-run --sweep's pure rules: the spec, {NAME} substitution, run directories, PyTorch's
// OOM messages, when the sweep stops, its summary and exit codes.

#include "sweep.h"

#include <gtest/gtest.h>

#include "launch_options.h"

using namespace vramscope::capture;

TEST(SweepSpec, ParsesNameAndValuesInOrder) {
    const ParsedSweepSpec p = parseSweepSpec("BATCH=64,8,0.5,16");
    ASSERT_TRUE(p.spec) << p.error;
    EXPECT_EQ(p.spec->name, "BATCH");
    ASSERT_EQ(p.spec->values.size(), 4u);
    EXPECT_EQ(p.spec->values[0].text, "64");
    EXPECT_EQ(p.spec->values[1].number, 8.0);
    EXPECT_EQ(p.spec->values[2].text, "0.5");
    EXPECT_EQ(p.spec->values[2].number, 0.5);
    EXPECT_EQ(p.spec->values[3].text, "16");
    EXPECT_TRUE(parseSweepSpec("_micro_batch2=1").spec);
}

TEST(SweepSpec, RefusesBadNamesEmptyListsNonNumbersAndDuplicates) {
    for (const char* bad : {"BATCH", "=8,16", "2B=8", "BA-TCH=8", "BATCH=", "BATCH=8,,16",
                            "BATCH=8,", "BATCH=0", "BATCH=0.0", "BATCH=-8", "BATCH=+8", "BATCH=1e3",
                            "BATCH=8x", "BATCH=.5", "BATCH=2.", "BATCH=1.2.3", "BATCH=8,16,8"}) {
        const ParsedSweepSpec p = parseSweepSpec(bad);
        EXPECT_FALSE(p.spec) << bad;
        EXPECT_FALSE(p.error.empty()) << bad;
    }
    // "8" and "8.0" are one batch size: batch-fit would fit the same point twice.
    const ParsedSweepSpec dup = parseSweepSpec("BATCH=8,16,8.0");
    ASSERT_FALSE(dup.spec);
    EXPECT_NE(dup.error.find("twice"), std::string::npos) << dup.error;
}

TEST(SweepArguments, AreParsedByTheLauncherAndNeedADirectory) {
    const ParsedRunOptions p =
        parseRunArguments({"--sweep", "BATCH=8,16", "-o", "/tmp/s", "--", "python3", "t.py"});
    ASSERT_TRUE(p.options) << p.error;
    ASSERT_TRUE(p.options->sweep);
    EXPECT_EQ(p.options->sweep->values.size(), 2u);
    EXPECT_EQ(p.options->command, (std::vector<std::string>{"python3", "t.py"}));
    EXPECT_FALSE(parseRunArguments({"--sweep", "BATCH=8", "-o", "x.vscope", "--", "t"}).options);
    EXPECT_FALSE(parseRunArguments({"--sweep", "BATCH=8", "-o", "unix:/s", "--", "t"}).options);
    EXPECT_FALSE(parseRunArguments({"--sweep", "BATCH=8,8", "--", "t"}).options);
    EXPECT_FALSE(parseRunArguments({"--sweep"}).options);
    EXPECT_NE(runUsage().find("--sweep NAME=V1,V2"), std::string::npos);
}

TEST(SweepSubstitution, ReplacesEveryTokenOfTheNameOnly) {
    const std::vector<std::string> out = substituteSweepValue(
        {"train.py", "--batch={BATCH}", "{BATCH}x{BATCH}", "{OTHER}", "{}", "{BATCH"}, "BATCH",
        "32");
    EXPECT_EQ(out, (std::vector<std::string>{"train.py", "--batch=32", "32x32", "{OTHER}", "{}",
                                             "{BATCH"}));
}

TEST(SweepDirectory, IsNameDashValueInsideTheOutput) {
    EXPECT_EQ(sweepRunDirectory("/tmp/sw", "BATCH", "16"), "/tmp/sw/BATCH-16");
    EXPECT_EQ(sweepRunDirectory("/tmp/sw/", "BATCH", "0.5"), "/tmp/sw/BATCH-0.5");
}

TEST(OomMessage, FindsPyTorchsMessagesAndTheRequest) {
    // PyTorch >= 2.1, as printed by a job run out of memory.
    const auto m = findOomMessage(
        "Traceback (most recent call last):\n  File \"t.py\", line 3\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1000.00 MiB. GPU 0 has a "
        "total capacity of 79.19 GiB of which 512.00 MiB is free.\n");
    ASSERT_TRUE(m);
    ASSERT_TRUE(m->requestedBytes);
    EXPECT_EQ(*m->requestedBytes, 1000ull * 1024 * 1024);  // 1000.00 x 2^20
    EXPECT_EQ(m->requestedText, "1000.00 MiB");
    EXPECT_EQ(m->line.rfind("torch.OutOfMemoryError:", 0), 0u);
    EXPECT_EQ(m->line.back(), '.');
    // Older PyTorch: RuntimeError, sizes in the same units; 2.50 GiB = 2.5 x 2^30.
    const auto old = findOomMessage(
        "RuntimeError: CUDA out of memory. Tried to allocate 2.50 GiB (GPU 0; 15.78 GiB total "
        "capacity; 13.1 GiB already allocated)\r\n");
    ASSERT_TRUE(old && old->requestedBytes);
    EXPECT_EQ(*old->requestedBytes, 5ull << 29);
    EXPECT_EQ(old->line.back(), ')');
    const auto mid = findOomMessage(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to "
        "allocate 20 bytes");
    ASSERT_TRUE(mid && mid->requestedBytes);
    EXPECT_EQ(*mid->requestedBytes, 20u);
    const auto kib = findOomMessage(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to "
        "allocate 1.50 KiB. GPU 0");
    ASSERT_TRUE(kib && kib->requestedBytes);
    EXPECT_EQ(*kib->requestedBytes, 1536u);
}

TEST(OomMessage, IsAbsentForOtherErrorsAndHasNoRequestWhenNoneIsNamed) {
    EXPECT_FALSE(findOomMessage(""));
    EXPECT_FALSE(findOomMessage("ValueError: CUDA out of memory is what we feared\n"));
    EXPECT_FALSE(findOomMessage("RuntimeError: CUDA error: an illegal memory access\n"));
    const auto none =
        findOomMessage("torch.OutOfMemoryError: CUDA out of memory.\nTried to allocate 5.00 GiB\n");
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->requestedBytes);  // the size is on another line, not this message's
    EXPECT_TRUE(none->requestedText.empty());
    // The last message wins: the one that ended the run.
    const auto last = findOomMessage(
        "RuntimeError: CUDA out of memory. Tried to allocate 1.00 MiB\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 MiB\n");
    ASSERT_TRUE(last && last->requestedBytes);
    EXPECT_EQ(*last->requestedBytes, 3u << 20);
}

TEST(SweepVerdict, StopsAtOomFromTraceOrMessageAndAtOtherFailures) {
    SweepRunResult ok;
    EXPECT_EQ(judgeSweepRun(ok), SweepVerdict::Finished);
    SweepRunResult recovered;  // the allocator freed its cache and retried: the run went on
    recovered.traceOomEvents = 2;
    EXPECT_EQ(judgeSweepRun(recovered), SweepVerdict::Finished);
    SweepRunResult byTrace;
    byTrace.exitCode = 1;
    byTrace.traceOomEvents = 1;
    EXPECT_EQ(judgeSweepRun(byTrace), SweepVerdict::OutOfMemory);
    SweepRunResult byMessage;
    byMessage.exitCode = 1;
    byMessage.stderrOom = OomMessage{"torch.OutOfMemoryError: CUDA out of memory.", {}, {}};
    EXPECT_EQ(judgeSweepRun(byMessage), SweepVerdict::OutOfMemory);
    SweepRunResult other;
    other.exitCode = 3;
    EXPECT_EQ(judgeSweepRun(other), SweepVerdict::Failed);
    SweepRunResult killed = byMessage;  // SIGKILL: the host's OOM killer, not the GPU
    killed.exitCode = 137;
    killed.killedBySignal = true;
    EXPECT_EQ(judgeSweepRun(killed), SweepVerdict::Failed);
}

TEST(SweepRequest, SaysWhereTheBytesCameFrom) {
    SweepRunResult r;
    r.exitCode = 1;
    EXPECT_NE(describeOomRequest(r).find("unknown"), std::string::npos);
    r.stderrOom = findOomMessage("RuntimeError: CUDA out of memory. Tried to allocate 4.00 GiB");
    EXPECT_EQ(describeOomRequest(r),
              "4.00 GiB (about 4294967296 bytes, from PyTorch's message, which rounds to two "
              "decimals)");
    r.traceOomEvents = 1;
    r.traceOomRequestedBytes = (4ull << 30) + 12345;  // the trace's exact bytes win
    EXPECT_EQ(describeOomRequest(r), "4.00 GiB (4294979641 bytes, from the trace's OOM event)");
}

TEST(SweepRequest, FormatsSizesAsPyTorchDoes) {
    EXPECT_EQ(formatSizeLikePyTorch(1024), "1024 bytes");
    EXPECT_EQ(formatSizeLikePyTorch(1536), "1.50 KiB");
    EXPECT_EQ(formatSizeLikePyTorch(1ull << 30), "1024.00 MiB");
    EXPECT_EQ(formatSizeLikePyTorch(5ull << 29), "2.50 GiB");
    EXPECT_EQ(formatSizeLikePyTorch(2ull << 40), "2048.00 GiB");
}

TEST(BoundedTail, KeepsOnlyTheLastBytes) {
    BoundedTail tail(8);
    tail.append("abc");
    tail.append("defgh");
    EXPECT_EQ(tail.text(), "abcdefgh");
    tail.append("ij");
    EXPECT_EQ(tail.text(), "cdefghij");
    tail.append("0123456789");
    EXPECT_EQ(tail.text(), "23456789");
}

TEST(SweepSummary, NamesEachRunTheLargestStableValueAndTheOomRequest) {
    const SweepSpec spec = *parseSweepSpec("BATCH=8,16,32,64").spec;
    std::vector<SweepRecord> records(3);
    for (size_t i = 0; i < 3; ++i) {
        records[i].value = spec.values[i];
        records[i].directory = "/d/BATCH-" + spec.values[i].text;
        records[i].traceFiles = 1;
    }
    records[2].result.exitCode = 1;
    records[2].result.stderrOom =
        findOomMessage("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.");
    records[2].verdict = judgeSweepRun(records[2].result);
    records[2].traceFiles = 0;
    const std::string text = sweepSummaryText(spec, records);
    EXPECT_NE(text.find("BATCH=8: finished, 1 trace file in /d/BATCH-8\n"), std::string::npos);
    EXPECT_NE(text.find("BATCH=32: out of memory (exit status 1), 0 trace files"),
              std::string::npos);
    EXPECT_NE(text.find("BATCH=64: not run\n"), std::string::npos);
    EXPECT_NE(text.find("largest stable BATCH measured: 16\n"), std::string::npos);
    EXPECT_NE(text.find("out of memory at BATCH=32: requested 8.00 GiB (about 8589934592 bytes"),
              std::string::npos)
        << text;
    EXPECT_EQ(largestStableValue(records)->text, "16");
    EXPECT_EQ(sweepExitCode(records, true), kSweepExitDone);
    EXPECT_EQ(sweepExitCode(records, false), kSweepExitNoFit);

    records[2].result.stderrOom.reset();
    records[2].result.exitCode = 3;
    records[2].verdict = judgeSweepRun(records[2].result);
    EXPECT_NE(sweepSummaryText(spec, records).find("failed with exit status 3"), std::string::npos);
    EXPECT_EQ(sweepExitCode(records, true), kSweepExitFailed);

    const std::vector<SweepRecord> first(records.begin() + 2, records.end());
    std::vector<SweepRecord> oomFirst = first;
    oomFirst[0].result.exitCode = 1;
    oomFirst[0].result.traceOomEvents = 1;
    oomFirst[0].verdict = judgeSweepRun(oomFirst[0].result);
    EXPECT_EQ(sweepExitCode(oomFirst, true), kSweepExitNoneFinished);
    EXPECT_NE(sweepSummaryText(spec, oomFirst).find("measured: none"), std::string::npos);

    // Runs that finished without writing a trace measured nothing (no CUDA, or the agent
    // stepped aside): no result, as when none finished.
    std::vector<SweepRecord> untraced(records.begin(), records.begin() + 2);
    for (SweepRecord& r : untraced) {
        r.traceFiles = 0;
    }
    EXPECT_EQ(sweepExitCode(untraced, true), kSweepExitNoneFinished);
    EXPECT_NE(sweepSummaryText(spec, untraced).find("measured: none"), std::string::npos);
    // Mixed: the largest value is the largest run with a trace (8), not the traceless 16.
    untraced[0].traceFiles = 1;
    EXPECT_EQ(largestStableValue(untraced)->text, "8");
}

TEST(SweepSpec, RefusesTheLaunchersOwnVariables) {
    for (const char* owned : {"VRAMSCOPE_OUTPUT=1,2", "VRAMSCOPE_JOB=1", "CUDA_INJECTION64_PATH=1",
                              "NVTX_INJECTION64_PATH=1", "LD_PRELOAD=1", "PATH=1"}) {
        const ParsedSweepSpec p = parseSweepSpec(owned);
        EXPECT_FALSE(p.spec) << owned;
        EXPECT_NE(p.error.find("set by vramscope-run"), std::string::npos) << p.error;
    }
    EXPECT_TRUE(parseSweepSpec("VRAMSCOPEX=1").spec);  // not the launcher's prefix
}

TEST(SweepBatchFit, NamesEachRunDirectoryWithItsValue) {
    EXPECT_EQ(batchFitArguments({{"/d/B-8", "8"}, {"/d/B-16", "16"}}),
              (std::vector<std::string>{"batch-fit", "/d/B-8:8", "/d/B-16:16"}));
    EXPECT_EQ(cliCandidates("/opt/vs/bin"),
              (std::vector<std::string>{"/opt/vs/bin/vramscope-cli",
                                        "/opt/vs/bin/../app/cli/vramscope-cli"}));
}
