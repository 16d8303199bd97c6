#pragma once
// Training iterations (steps) of one device: from the trace's ranges, a user's regex, or detected
// from the periodic structure of the allocation sequence when the trace names none.

#include <cstdint>
#include <string>
#include <vector>

#include "vramscope/trace/error.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// Where a set of iterations came from.
enum class IterationSource {
    None,      ///< no ranges and no periodic structure found
    Ranges,    ///< RangeKind::Iteration ranges, or ranges named "iteration N" / "ProfilerStep#N"
    Regex,     ///< ranges whose name matches the user's --iteration-regex
    Detected,  ///< period of the allocation sequence (see findIterations)
};
const char* toString(IterationSource source);

/// One iteration: [startNs, endNs) in the trace's clock.
struct Iteration {
    int64_t number = 0;  ///< from the range name when it carries one ("iteration 7" -> 7), else 0..
    trace::TimestampNs startNs = 0;
    trace::TimestampNs endNs = 0;
    std::string name;  ///< range name, or "detected N"
};

/// Iterations of one device in time order, non-overlapping.
struct IterationSet {
    IterationSource source = IterationSource::None;
    std::vector<Iteration> iterations;
    /// For Detected: allocations per iteration (the period) and the fraction of allocations whose
    /// (size, stack) equals the one a period later (the match score, 0..1). 0 otherwise.
    int64_t periodAllocations = 0;
    double periodScore = 0.0;

    size_t count() const { return iterations.size(); }
    /// Median iteration duration in ns, 0 when there are none.
    int64_t medianDurationNs() const;
};

struct IterationOptions {
    /// ECMAScript regex over range names (std::regex_search); empty = the default names.
    std::string regex;
    /// Lowest match score for a detected period (fraction of allocations repeating a period later).
    double minPeriodScore = 0.6;
    /// Fewest allocations per detected iteration (shorter periods are per-layer repetition).
    int64_t minPeriodAllocations = 4;
};

/// Finds the iterations of `device`.
///
/// 1. Ranges: RangeKind::Iteration ranges on the device or the host, else any range named
///    "iteration N" or "ProfilerStep#N" (or matching options.regex, which replaces the default
///    names and gives source Regex). When both a host and a GPU projection exist, the host ranges
///    (kinds Iteration, Nvtx, UserAnnotation) win; ranges starting inside an earlier one are
///    dropped.
/// 2. Detected: on the device's allocation sequence at the detail level (Allocated, else Reserved),
///    the key of each allocation is (size, stack); the period P maximises
///    score(P) = #{i : key[i] == key[i+P]} / (n - P), and the smallest P whose score is within 2 %
///    of the best is taken (multiples of the period score as well). The phase is the offset within
///    a period where the allocated bytes are lowest on average (the start of a forward pass);
///    iteration m spans allocation k0 + mP to k0 + (m+1)P (only whole periods). At most 200,000
///    allocations (the last ones) and periods up to n/3 are examined.
/// 3. None.
/// Errors: an invalid regex.
trace::Result<IterationSet> findIterations(const trace::TraceData& data, trace::DeviceIndex device,
                                           const IterationOptions& options = {});

}  // namespace vramscope::analysis
