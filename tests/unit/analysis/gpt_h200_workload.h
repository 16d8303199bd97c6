#pragma once
// Sizes fixed by the workload of the two H200 snapshots (realdata::kGptLeakSnapshot and
// kGptOomSnapshot): ../shared/device/gpt_train.py, "V, D, L, H, T, B = 32000, 768, 8, 12, 1024,
// 8", two micro-batches per step, bf16 autocast. Expected values the analyses must find, derived
// from the script rather than from our own output.

#include <cstdint>

namespace vramscope::analysis::test::gpt_h200 {

inline constexpr uint64_t kVocab = 32000;    ///< V
inline constexpr uint64_t kSequence = 1024;  ///< T
inline constexpr uint64_t kBatch = 8;        ///< B
inline constexpr uint64_t kMicroBatchesPerStep = 2;
/// One micro-batch's logits, B x T x V in bf16 (the autocast nn.Linear head: 2 bytes each):
/// what "leak" keeps alive, once per micro-batch.
inline constexpr uint64_t kLogitsBytes = kBatch * kSequence * kVocab * 2;
/// The same in fp32 (cross_entropy's logits.float()): the "Tried to allocate 1000.00 MiB" of the
/// "oom" job's OutOfMemoryError (realdata README).
inline constexpr uint64_t kFloatLogitsBytes = kBatch * kSequence * kVocab * 4;

}  // namespace vramscope::analysis::test::gpt_h200
