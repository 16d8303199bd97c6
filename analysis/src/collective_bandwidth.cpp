#include "vramscope/analysis/collective_bandwidth.h"

#include <cctype>
#include <string>

namespace vramscope::analysis {
namespace {

/// Lower-case copy without '_' or ' ', so "AllReduce", "all_reduce" and "allreduce" compare equal.
std::string foldFunction(std::string_view function) {
    std::string f;
    f.reserve(function.size());
    for (char c : function) {
        if (c != '_' && c != ' ') {
            f += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return f;
}

}  // namespace

std::optional<double> busBandwidthFactor(std::string_view function, int32_t nranks) {
    if (nranks < 1) {
        return std::nullopt;
    }
    const std::string f = foldFunction(function);
    const double n = nranks;
    if (f == "allreduce") {
        return 2.0 * (n - 1) / n;
    }
    if (f == "allgather" || f == "allgatherv" || f == "reducescatter" || f == "alltoall") {
        return (n - 1) / n;
    }
    if (f == "broadcast" || f == "reduce" || f == "send" || f == "recv" || f == "sendrecv") {
        return 1.0;
    }
    return std::nullopt;
}

std::optional<double> algorithmTrafficBytes(std::string_view function, uint64_t messageBytes,
                                            int32_t nranks) {
    if (messageBytes == 0 || !busBandwidthFactor(function, nranks)) {
        return std::nullopt;
    }
    const std::string f = foldFunction(function);
    const bool perRankCount = f == "allgather" || f == "allgatherv" || f == "reducescatter";
    return static_cast<double>(messageBytes) * (perRankCount ? nranks : 1);
}

}  // namespace vramscope::analysis
