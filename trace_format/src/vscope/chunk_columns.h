#pragma once
// The column rules of trace.proto that both chunk encoders apply (chunk_encoder.h): which
// optional columns are left empty, and how deltas, memory flags and launch leads are computed.
// Private to trace_format; no libprotobuf.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vramscope/trace/trace_data.h"

namespace vramscope::trace::detail {

/// Difference modulo 2^64 as a signed value: round-trips every pair of values exactly.
inline int64_t wrappingDelta(uint64_t current, uint64_t previous) {
    return static_cast<int64_t>(current - previous);
}

/// Whether col[b, e) holds only `def`: such an optional column is left empty and the reader
/// fills the default.
template <class T>
bool allEqual(const std::vector<T>& col, size_t b, size_t e, const T& def) {
    for (size_t i = b; i < e; ++i) {
        if (!(col[i] == def)) {
            return false;
        }
    }
    return true;
}

/// Whether every duration end - start of rows [b, e) is 0 (the duration column is then empty).
inline bool allDurationsZero(const std::vector<TimestampNs>& start,
                             const std::vector<TimestampNs>& end, size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
        if (start[i] != end[i]) {
            return false;
        }
    }
    return true;
}

/// end - start modulo 2^64.
inline uint64_t duration(TimestampNs start, TimestampNs end) {
    return static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
}

/// MemoryBatch.flags of row i: bit 0 action, bit 1 level, bits 2-5 kind (trace.proto).
inline uint32_t memoryFlags(const MemoryEvents& m, size_t i) {
    return static_cast<uint32_t>(m.action[i]) | (static_cast<uint32_t>(m.level[i]) << 1) |
           ((static_cast<uint32_t>(m.kind[i]) & 0xFu) << 2);
}

/// Whether any row of [b, e) has flags other than 0 (alloc, reserved, unknown kind).
inline bool anyMemoryFlags(const MemoryEvents& m, size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
        if (m.action[i] != MemoryAction::Alloc || m.level[i] != MemoryLevel::Reserved ||
            m.kind[i] != MemoryKind::Unknown) {
            return true;
        }
    }
    return false;
}

/// Rows of [b, e) whose host launch time is known (launchNs != -1).
inline size_t knownLaunches(const KernelEvents& k, size_t b, size_t e) {
    size_t known = 0;
    for (size_t i = b; i < e; ++i) {
        known += k.launchNs[i] != -1 ? 1 : 0;
    }
    return known;
}

/// KernelBatch.launch_lead_ns of row i: start - launch modulo 2^64, 0 when the launch is unknown.
inline int64_t launchLead(const KernelEvents& k, size_t i) {
    return k.launchNs[i] == -1 ? 0
                               : wrappingDelta(static_cast<uint64_t>(k.startNs[i]),
                                               static_cast<uint64_t>(k.launchNs[i]));
}

/// Whether every counter value of [b, e) has the bit pattern 0 (-0.0 and NaN payloads do not,
/// so that they survive the round trip).
inline bool allValuesZero(const CounterSamples& c, size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
        if (std::bit_cast<uint64_t>(c.value[i]) != 0) {
            return false;
        }
    }
    return true;
}

/// Whether any value of col[b, e) is not 0 (address and correlation deltas are written only then).
inline bool anyNonZero(const std::vector<uint64_t>& col, size_t b, size_t e) {
    return !allEqual(col, b, e, uint64_t{0});
}

/// Number of leading log2 buckets up to the last non-empty one: trailing empty buckets are left
/// out and the reader fills them with 0.
template <class Array>
size_t usedBuckets(const Array& counts) {
    size_t used = counts.size();
    while (used > 0 && counts[used - 1] == 0) {
        --used;
    }
    return used;
}

}  // namespace vramscope::trace::detail
