#pragma once
// Memory capacities of common GPUs by name, for inputs that carry none (PyTorch memory snapshots
// name no device memory): `vramscope-cli check --capacity H200`, `batch-fit --capacity A100-80GB`.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace vramscope::analysis {

/// One GPU model's memory.
struct GpuCapacity {
    std::string_view name;  ///< as --capacity accepts it (case-insensitive), e.g. "H100-80GB"
    uint64_t bytes = 0;
    std::string_view source;  ///< where the figure comes from
};

/// The table, in a fixed order. Figures are the vendor datasheets' memory sizes, whose "GB" are
/// binary (the size of the HBM stacks): 80 GB = 80 GiB = 85,899,345,920 B, not 80 x 10^9. What
/// CUDA or ROCm reports as total memory is a little smaller (ECC and the driver keep some): the
/// traces in ../shared/realdata give 79.18 GiB for an "H100 80GB HBM3", 178.35 GiB for a B200,
/// 191.98 GiB for an MI300X, and the H200 used for our checks reports 143,771 MiB (140.4 GiB),
/// so a capacity from this table can be up to about 1 % above what a job could use.
std::span<const GpuCapacity> gpuCapacities();

/// The capacity of the GPU named `name` (case-insensitive, e.g. "h200"), nullopt when unknown.
std::optional<uint64_t> gpuCapacityByName(std::string_view name);

}  // namespace vramscope::analysis
