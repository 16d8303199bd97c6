#pragma once
// What the NCCL plugin harness (nccl_plugin_harness.cpp) plays on each simulated rank, shared with
// the test that checks the traces (nccl_plugin_test.cpp). Plain data only: the test derives every
// expected value (bytes, durations, bus bandwidth) from these inputs by its own arithmetic.

#include <cstdint>

namespace vramscope::test {

struct PlannedCollective {
    const char* function;  ///< as NCCL's ncclFuncToString names it
    const char* datatype;  ///< as NCCL's ncclDatatypeToString names it
    uint64_t count;        ///< elements, per rank (NCCL's coll.count)
    int root;
    uint8_t channels;
    const char* algorithm;
    const char* protocol;
};

inline constexpr uint64_t kPlanCommHash = 0x5eedc0ffee123456ull;
inline constexpr int kPlanRanks = 4;
inline constexpr const char* kPlanCommName = "harness-world";

/// Played in order, one after the other; seq numbers count per function from 0 (NCCL's
/// comm->seqNumber[func]).
inline constexpr PlannedCollective kPlan[] = {
    {"AllReduce", "ncclFloat32", 1u << 20, 0, 4, "RING", "SIMPLE"},
    {"AllGather", "ncclBfloat16", 1u << 18, 0, 2, "RING", "LL128"},
    {"ReduceScatter", "ncclFloat16", 1u << 16, 0, 2, "RING", "SIMPLE"},
    {"Broadcast", "ncclInt64", 4096, 0, 1, "RING", "LL"},
    {"AllReduce", "ncclFloat64", 1000, 0, 2, "TREE", "LL"},
    {"AllReduce", "ncclInt8", 333, 0, 1, "RING", "LL"},
};
inline constexpr int kPlanSize = sizeof(kPlan) / sizeof(kPlan[0]);

/// GPU globaltimer of collective `k`, channel `c` on `rank` (ns): every rank starts a little
/// later than the one before (rank 3 is the straggler), channels start 100 ns apart and the
/// collective's channels stop at different times; the last stop is start0 + busyNs(k).
inline constexpr uint64_t kPlanGpuBase = 1'700'000'000'000'000'000ull;
inline constexpr uint64_t planStartNs(int k, int rank, int c) {
    return kPlanGpuBase + static_cast<uint64_t>(k) * 50'000'000ull +
           static_cast<uint64_t>(rank) * 3'000ull + static_cast<uint64_t>(c) * 100ull;
}
inline constexpr uint64_t planBusyNs(int k) {
    return 200'000ull + static_cast<uint64_t>(k) * 77'777ull;
}
inline constexpr uint64_t planStopNs(int k, int rank, int c, int channels) {
    // channel 0 stops last: at start(k, rank, 0) + busy; the others 500 ns earlier each
    return planStartNs(k, rank, 0) + planBusyNs(k) -
           static_cast<uint64_t>(c == 0 ? 0 : (channels - c)) * 500ull;
}

/// Point-to-point: each rank sends kPlanP2pCount ncclFloat32 to rank+1 and receives from rank-1.
inline constexpr uint64_t kPlanP2pCount = 12345;

}  // namespace vramscope::test
