#include "vramscope/analysis/memory/leak_fit.h"

#include <algorithm>
#include <vector>

namespace vramscope::analysis {

LeakFitLine leakFitLine(const LeakReport& report) {
    LeakFitLine line;
    line.slopeBytesPerIteration = report.slopeBytesPerIteration;
    const size_t n = report.iterations.size();
    if (n == 0) {
        return line;
    }
    std::vector<double> offsets(n);
    for (size_t i = 0; i < n; ++i) {
        offsets[i] =
            double(report.iterations[i].baselineBytes) - line.slopeBytesPerIteration * double(i);
    }
    std::sort(offsets.begin(), offsets.end());
    line.interceptBytes = n % 2 == 1 ? offsets[n / 2] : (offsets[n / 2 - 1] + offsets[n / 2]) / 2.0;
    return line;
}

StackAllocations allocationsOfStack(const trace::TraceData& data, const AllocationIndex& index,
                                    trace::StackId stack, trace::TimestampNs aliveAtNs) {
    StackAllocations out;
    const size_t cut = index.positionAfter(aliveAtNs);
    for (size_t p = 0; p < index.size() && p < cut; ++p) {
        if (!index.isAlloc(p)) {
            continue;
        }
        const uint32_t e = index.eventAt(p);
        if (data.memory.stack[e] != stack) {
            continue;
        }
        const uint32_t freed = index.freePosition(p);
        if (freed != AllocationIndex::kNever && freed < cut) {
            continue;
        }
        if (out.count == 0) {
            out.firstNs = index.timeAt(p);
        }
        out.lastNs = index.timeAt(p);
        out.count += 1;
        out.bytes += data.memory.sizeBytes[e];
    }
    return out;
}

}  // namespace vramscope::analysis
