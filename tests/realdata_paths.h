#pragma once
// The real inputs the tests read, each named once: paths under ../shared/realdata
// (VRAMSCOPE_REALDATA_DIR, set by tests/CMakeLists.txt), where README.md says what each file is
// and which facts about it tests may rely on. A test that reads one starts with
// VRAMSCOPE_REQUIRE_INPUT (realdata.h), so that it skips where the folder is missing.

#include <string>

namespace vramscope::realdata {

/// The folder itself.
inline const std::string kDir = VRAMSCOPE_REALDATA_DIR;

// --- PyTorch CUDA memory snapshots (pickle) ---

/// A GPT-style model on one H200 that keeps every micro-batch's logits alive (a staircase).
inline const std::string kGptLeakSnapshot =
    kDir + "/vramscope_h200/gpt_h200_leak.snapshot.pickle.gz";
/// The same job capped at its healthy peak + 3 GiB, dumped after its OutOfMemoryError.
inline const std::string kGptOomSnapshot = kDir + "/vramscope_h200/gpt_h200_oom.snapshot.pickle.gz";
/// The training script both GPT snapshots were captured with (beside the realdata folder).
inline const std::string kGptTrainScript = kDir + "/../device/gpt_train.py";
/// The smallest snapshot: 9 segments, 97 trace entries, mostly C++ frames.
inline const std::string kSilmontSnapshot =
    kDir + "/silmont2000_assignment2-systems/mem_snapshot.pickle";
/// 216 segments, 5,163 entries, Windows paths, the newest keys.
inline const std::string kMagmaSnapshot =
    kDir + "/MAGMA27_assignment2-systems/memory_snapshot.pickle";
/// 23,105 entries over 1.85 s, 8 external annotations.
inline const std::string kDecomflSnapshot = kDir + "/ZidongLiu_DeComFL/memory.pickle";

// --- Kineto / Chrome trace JSON ---

/// All 8 ranks of one DLRM step (NCCL, world size 8) in one tar.gz.
inline const std::string kDlrmJob =
    kDir + "/facebookresearch_param/et_replay/tests/inputs/dlrm_kineto.tar.gz";
/// The 2021 schema (capitalised categories, string tids, [memory] without Total Allocated).
inline const std::string kResnetTrace = kDir +
                                        "/pytorch_kineto/tb_plugin/samples/resnet50_num_workers_0/"
                                        "worker0.1623143089861.pt.trace.json.gz";

/// AMD-AGI/TraceLens's test traces (folder, with a trailing '/').
inline const std::string kTraceLensDir = kDir + "/AMD-AGI_TraceLens/tests/traces/";
/// A small H100 trace: 236 [memory] events, peak Total Allocated 96.6 MiB.
inline const std::string kBertTrace =
    kTraceLensDir + "h100/gaunernst_bert-small-uncased__1016001.json.gz";
/// B200, rank 0 of 8, relative timestamps, ncclDevKernel_* names with collective arguments.
inline const std::string kB200Trace = kTraceLensDir + "b200/eager_trace.json.gz";
/// AMD MI300 (RCCL): every collective is ncclDevKernel_Generic.
inline const std::string kMi300Trace = kTraceLensDir + "mi300/resnet_act_checkpoint.json.gz";
/// A GPU-only ROCm trace (no CPU ops).
inline const std::string kMi210Trace =
    kTraceLensDir + "mi210/gpu_only_trace/gpu_only_trace.json.gz";

/// facebookresearch/HolisticTraceAnalysis's test data (folder, with a trailing '/').
inline const std::string kHtaDir = kDir + "/facebookresearch_HolisticTraceAnalysis/tests/data/";
/// Rank 1 of 2, 216k events, memory on CUDA device 1, 2,020 NCCL all-reduce kernels.
inline const std::string kDfIndexTrace = kHtaDir + "df_index_resolver/df_index_resolver.json.gz";
/// Rank 0 of 2, NCCL kernels with collective names, message sizes and group sizes.
inline const std::string kNcclTrace = kHtaDir + "nccl_parser_config/nccl_data.json.gz";
/// 2 of 128 ranks, sampled (folder of sampled_rank-0 and -1, no trailing '/').
inline const std::string kSampledRanksDir = kHtaDir + "trace_filter";
inline const std::string kSampledRank0Trace = kSampledRanksDir + "/sampled_rank-0.json.gz";
/// A tiny ROCm trace.
inline const std::string kMi250Trace =
    kHtaDir + "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz";
/// 2 events, one with an integer above INT64_MAX in its args.
inline const std::string kLargeIntegerTrace =
    kHtaDir + "large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz";
/// gloo backend, rank 34 of 300, no GPU events.
inline const std::string kCpuOnlyTrace =
    kHtaDir + "cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz";
/// No distributedInfo, CPU ops only.
inline const std::string kNoDistributedInfoTrace =
    kHtaDir + "distributed_info_unavailable/distributed_info_not_found.json.gz";

// --- Nsight Systems SQLite exports ---

/// hpcgroup/pipit's test data (folder, with a trailing '/').
inline const std::string kPipitDir = kDir + "/hpcgroup_pipit/pipit/tests/data/";

}  // namespace vramscope::realdata
