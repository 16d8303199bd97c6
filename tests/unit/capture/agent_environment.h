#pragma once
// The environment variables that change what the capture agent does (its own VRAMSCOPE_*
// settings, the rank and job variables it names files by, the injection and plugin variables, and
// the CUPTI search folders), for tests that start the agent in a child process: the child clears
// them all, then sets only what its test means, so the developer's shell cannot change a result.

namespace vramscope::test {

/// Names of the variables to clear before starting the agent in a test process.
inline constexpr const char* kAgentEnvironment[] = {"RANK",
                                                    "SLURM_PROCID",
                                                    "OMPI_COMM_WORLD_RANK",
                                                    "PMI_RANK",
                                                    "LOCAL_RANK",
                                                    "SLURM_LOCALID",
                                                    "OMPI_COMM_WORLD_LOCAL_RANK",
                                                    "MPI_LOCALRANKID",
                                                    "WORLD_SIZE",
                                                    "SLURM_NTASKS",
                                                    "OMPI_COMM_WORLD_SIZE",
                                                    "PMI_SIZE",
                                                    "SLURM_JOB_ID",
                                                    "TORCHELASTIC_RUN_ID",
                                                    "VRAMSCOPE_NCCL",
                                                    "VRAMSCOPE_NCCL_EVENTS",
                                                    "VRAMSCOPE_OUTPUT",
                                                    "VRAMSCOPE_JOB",
                                                    "VRAMSCOPE_ROOT_PID",
                                                    "VRAMSCOPE_FLUSH_MS",
                                                    "VRAMSCOPE_OOM_CALLBACKS",
                                                    "VRAMSCOPE_VERBOSE",
                                                    "VRAMSCOPE_FILE",
                                                    "VRAMSCOPE_RING_MIB",
                                                    "VRAMSCOPE_LIVE_DIR",
                                                    "VRAMSCOPE_CUPTI_PATH",
                                                    "VRAMSCOPE_CUPTI_UNVERIFIED",
                                                    "CUDA_INJECTION64_PATH",
                                                    "NVTX_INJECTION64_PATH",
                                                    "NCCL_PROFILER_PLUGIN",
                                                    "CUDA_HOME",
                                                    "CUDA_PATH",
                                                    "LD_LIBRARY_PATH"};

}  // namespace vramscope::test
