// Naming of trace files and the identity a process reads from its launcher's environment.

#include "output_naming.h"

#include <gtest/gtest.h>

using namespace vramscope::capture;

namespace {

ProcessIdentity identity(std::map<std::string, std::string> env) {
    return identityFromEnvironment(mapEnvironment(std::move(env)), "node7", 4242);
}

}  // namespace

TEST(ProcessIdentity, ReadsTorchrunVariables) {
    const ProcessIdentity who = identity({{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}});
    EXPECT_EQ(who.rank, 5);
    EXPECT_EQ(who.localRank, 1);
    EXPECT_EQ(who.worldSize, 8);
    EXPECT_EQ(who.host, "node7");
    EXPECT_EQ(who.pid, 4242);
}

TEST(ProcessIdentity, FallsBackToSlurmOpenMpiAndPmiInThatOrder) {
    EXPECT_EQ(identity({{"SLURM_PROCID", "3"}, {"OMPI_COMM_WORLD_RANK", "9"}}).rank, 3);
    EXPECT_EQ(identity({{"OMPI_COMM_WORLD_RANK", "9"}, {"PMI_RANK", "11"}}).rank, 9);
    EXPECT_EQ(identity({{"PMI_RANK", "11"}}).rank, 11);
    // torchrun under Slurm: RANK (the global rank torchrun computed) wins over SLURM_PROCID.
    EXPECT_EQ(identity({{"RANK", "12"}, {"SLURM_PROCID", "1"}}).rank, 12);
    const ProcessIdentity slurm =
        identity({{"SLURM_PROCID", "2"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "16"}});
    EXPECT_EQ(slurm.localRank, 0);
    EXPECT_EQ(slurm.worldSize, 16);
}

TEST(ProcessIdentity, IgnoresValuesThatAreNotRanks) {
    EXPECT_EQ(identity({}).rank, -1);
    EXPECT_EQ(identity({{"RANK", ""}}).rank, -1);
    EXPECT_EQ(identity({{"RANK", "-1"}}).rank, -1);
    EXPECT_EQ(identity({{"RANK", "3x"}}).rank, -1);
    EXPECT_EQ(identity({{"RANK", "99999999999"}}).rank, -1);
    // A malformed RANK does not hide a valid SLURM_PROCID.
    EXPECT_EQ(identity({{"RANK", "abc"}, {"SLURM_PROCID", "4"}}).rank, 4);
    EXPECT_EQ(identity({}).worldSize, 0);
}

TEST(ProcessIdentity, TakesTheJobFromVramscopeSlurmOrTorchelastic) {
    EXPECT_EQ(identity({{"VRAMSCOPE_JOB", "train"}, {"SLURM_JOB_ID", "77"}}).job, "train");
    EXPECT_EQ(identity({{"SLURM_JOB_ID", "77"}}).job, "77");
    EXPECT_EQ(identity({{"TORCHELASTIC_RUN_ID", "abc"}}).job, "abc");
    EXPECT_EQ(identity({{"TORCHELASTIC_RUN_ID", "none"}}).job, "");
}

TEST(ParseNonNegativeInt, AcceptsOnlyDecimalInt32) {
    EXPECT_EQ(parseNonNegativeInt("0"), 0);
    EXPECT_EQ(parseNonNegativeInt("2147483647"), 2147483647);
    EXPECT_FALSE(parseNonNegativeInt("2147483648"));
    EXPECT_FALSE(parseNonNegativeInt(" 1"));
    EXPECT_FALSE(parseNonNegativeInt("+1"));
}

TEST(OutputSpec, DistinguishesSocketFileAndDirectory) {
    EXPECT_EQ(parseOutputSpec("unix:/tmp/v.sock").kind, OutputKind::UnixSocket);
    EXPECT_EQ(parseOutputSpec("unix:/tmp/v.sock").path, "/tmp/v.sock");
    EXPECT_EQ(parseOutputSpec("/out/run.vscope").kind, OutputKind::File);
    EXPECT_EQ(parseOutputSpec("/out/traces").kind, OutputKind::Directory);
    EXPECT_EQ(parseOutputSpec("/out/traces/").kind, OutputKind::Directory);
}

TEST(TraceOutputPath, NamesOneFilePerRankInADirectory) {
    ProcessIdentity who;
    who.host = "node7";
    who.pid = 4242;
    who.job = "gpt_train";
    who.rank = 3;
    const OutputSpec dir{OutputKind::Directory, "/out/traces"};
    EXPECT_EQ(traceOutputPath(dir, who, false), "/out/traces/gpt_train-rank3.vscope");
    EXPECT_EQ(traceOutputPath({OutputKind::Directory, "/out/traces/"}, who, false),
              "/out/traces/gpt_train-rank3.vscope");
    who.rank = -1;
    EXPECT_EQ(traceOutputPath(dir, who, true), "/out/traces/gpt_train-node7-4242.vscope");
    who.job = "";
    EXPECT_EQ(traceOutputPath(dir, who, false), "/out/traces/vramscope-node7-4242.vscope");
}

TEST(TraceOutputPath, UsesTheFileForTheRootProcessAndDerivesNamesForOthers) {
    ProcessIdentity who;
    who.host = "node7";
    who.pid = 4242;
    const OutputSpec file{OutputKind::File, "/out/run.vscope"};
    EXPECT_EQ(traceOutputPath(file, who, true), "/out/run.vscope");
    EXPECT_EQ(traceOutputPath(file, who, false), "/out/run-node7-4242.vscope");
    who.rank = 0;
    EXPECT_EQ(traceOutputPath(file, who, true), "/out/run-rank0.vscope");
}

TEST(TraceOutputPath, KeepsHostAndJobSafeInFileNames) {
    ProcessIdentity who;
    who.host = "node/../7";
    who.pid = 1;
    who.job = "../../etc";
    who.rank = -1;
    const std::string path = traceOutputPath({OutputKind::Directory, "/out"}, who, false);
    EXPECT_EQ(path, "/out/.._.._etc-node_.._7-1.vscope");
    EXPECT_EQ(path.find('/', 5), std::string::npos);
    EXPECT_EQ(sanitizeFileNamePart("..", "x"), "x");
    EXPECT_EQ(sanitizeFileNamePart("", "x"), "x");
}

TEST(TraceOutputPath, ReturnsTheSocketPathForUnixSockets) {
    ProcessIdentity who;
    who.rank = 2;
    EXPECT_EQ(traceOutputPath({OutputKind::UnixSocket, "/run/v.sock"}, who, false), "/run/v.sock");
}

TEST(CollisionFallbackPath, AddsThePid) {
    EXPECT_EQ(collisionFallbackPath("/out/job-rank0.vscope", 99), "/out/job-rank0-pid99.vscope");
}
