// What NCCL / RCCL kernel names tell (trace/kernel_names.h), on names as NCCL 2.8-2.18, 2.19+
// and 2.27+ build them (src/collectives/device, src/device/generate.py) and RCCL's.

#include "vramscope/trace/kernel_names.h"

#include <gtest/gtest.h>

namespace vramscope::trace {
namespace {

TEST(KernelNames, CommunicationKernelsAreNcclAndRcclInAnyCase) {
    EXPECT_TRUE(isCommunicationKernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
    EXPECT_TRUE(isCommunicationKernel("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"));
    EXPECT_TRUE(isCommunicationKernel("ncclSymkDevKernel_AllReduce_AGxLL_R"));
    EXPECT_TRUE(isCommunicationKernel("_Z29ncclDevKernel_AllGather_RING_LLv"));
    EXPECT_TRUE(isCommunicationKernel("rcclAllToAllKernel"));
    EXPECT_TRUE(isCommunicationKernel("RCCL"));
    EXPECT_FALSE(isCommunicationKernel("ampere_sgemm_128x64_nn"));
    EXPECT_FALSE(isCommunicationKernel("ncc"));
    EXPECT_FALSE(isCommunicationKernel(""));
    static_assert(isCommunicationKernel("ncclKernel_x"), "usable at compile time");
}

TEST(KernelNames, CollectiveIsTheWordAfterTheNcclPrefix) {
    EXPECT_EQ(collectiveFromKernelName("ncclKernel_AllReduce_RING_LL_Sum_float"), "AllReduce");
    EXPECT_EQ(collectiveFromKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096>)"),
              "SendRecv");
    EXPECT_EQ(collectiveFromKernelName("ncclDevKernel_Generic"), "Generic");
    EXPECT_EQ(collectiveFromKernelName("ncclSymkDevKernel_AllGather_LL"), "AllGather");
    EXPECT_EQ(collectiveFromKernelName("_Z33ncclDevKernel_ReduceScatter_RING_LLv"),
              "ReduceScatter");
    EXPECT_EQ(collectiveFromKernelName("rcclAllToAllKernel"), "");
    EXPECT_EQ(collectiveFromKernelName("ncclKernel_"), "");
    EXPECT_EQ(collectiveFromKernelName("volta_gemm"), "");
}

TEST(KernelNames, AlgorithmOnlyWhereTheKernelNamesTheOneThatRan) {
    EXPECT_EQ(algorithmFromKernelName("ncclKernel_AllReduce_RING_LL_Sum_float"), "RING");
    EXPECT_EQ(algorithmFromKernelName("ncclKernel_AllReduce_TREE_LL_Sum_half"), "TREE");
    EXPECT_EQ(algorithmFromKernelName("ncclKernel_AllReduce_COLLNET_DIRECT_LL_Sum_f32"),
              "COLLNET_DIRECT");
    EXPECT_EQ(algorithmFromKernelName("ncclKernel_AllReduce_NVLS_TREE_LL_Sum_f32"), "NVLS_TREE");
    // SendRecv_RING_SIMPLE is also NCCL's generic kernel: it tells nothing.
    EXPECT_EQ(algorithmFromKernelName("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"), "");
    EXPECT_EQ(algorithmFromKernelName("ncclDevKernel_AllReduce_Sum_f32_TREE_LL(args)"), "TREE");
    // 2.19+: the RING kernel runs every other algorithm too.
    EXPECT_EQ(algorithmFromKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL(args)"), "");
    EXPECT_EQ(algorithmFromKernelName("ampere_sgemm_128x64_nn"), "");
}

}  // namespace
}  // namespace vramscope::trace
