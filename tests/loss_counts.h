#pragma once
// Data-loss counts of a loaded trace, for tests that check what the producer said it lost.

#include <cstdint>

#include "vramscope/trace/data_loss.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::testdata {

/// The sum of `count` over the data-loss rows of `d` with `counter` (0 when there is none).
inline uint64_t lossCount(const trace::TraceData& d, trace::LossCounter counter) {
    uint64_t n = 0;
    for (const trace::DataLoss& l : d.dataLoss) {
        n += l.counter == counter ? l.count : 0;
    }
    return n;
}

}  // namespace vramscope::testdata
