#pragma once
// Test helper: a rank whose clock reads differently from another's, made by moving every
// timestamp of its trace (what a producer with another time base would have written).

#include <cstdint>

#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis::test {

/// Adds `byNs` to every event time of `d`: memory events, counters, kernels (start, end, and
/// launch when known), collectives, ranges, OOMs and annotations.
inline void shiftClock(trace::TraceData& d, int64_t byNs) {
    auto move = [byNs](auto& column) {
        for (auto& t : column) {
            t += byNs;
        }
    };
    move(d.memory.timestampNs);
    move(d.counters.timestampNs);
    move(d.kernels.startNs);
    move(d.kernels.endNs);
    for (auto& t : d.kernels.launchNs) {
        t = t < 0 ? t : t + byNs;
    }
    move(d.collectives.startNs);
    move(d.collectives.endNs);
    move(d.ranges.startNs);
    move(d.ranges.endNs);
    for (auto& o : d.ooms) {
        o.timestampNs += byNs;
    }
    for (auto& a : d.annotations) {
        a.startNs += byNs;
        a.endNs += byNs;
    }
}

}  // namespace vramscope::analysis::test
