#include "vramscope/analysis/memory/gpu_capacity.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace vramscope::analysis {

namespace {

constexpr uint64_t kGiB = uint64_t(1) << 30;

// Datasheet figures, read as GiB (see gpu_capacity.h).
constexpr std::array kTable = {
    GpuCapacity{"H100-80GB", 80 * kGiB, "NVIDIA H100 Tensor Core GPU datasheet: 80GB (SXM, PCIe)"},
    GpuCapacity{"H200", 141 * kGiB, "NVIDIA H200 Tensor Core GPU datasheet: 141GB HBM3e"},
    GpuCapacity{"A100-40GB", 40 * kGiB, "NVIDIA A100 Tensor Core GPU datasheet: 40GB HBM2"},
    GpuCapacity{"A100-80GB", 80 * kGiB, "NVIDIA A100 Tensor Core GPU datasheet: 80GB HBM2e"},
    GpuCapacity{"B200", 180 * kGiB,
                "NVIDIA DGX B200 datasheet: 1,440GB GPU memory over 8 GPUs = 180GB per GPU"},
    GpuCapacity{"MI300X", 192 * kGiB, "AMD Instinct MI300X data sheet: 192GB HBM3"},
};

bool sameName(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

std::span<const GpuCapacity> gpuCapacities() {
    return kTable;
}

std::optional<uint64_t> gpuCapacityByName(std::string_view name) {
    for (const GpuCapacity& g : kTable) {
        if (sameName(g.name, name)) {
            return g.bytes;
        }
    }
    return std::nullopt;
}

}  // namespace vramscope::analysis
