#pragma once
// What the communication lanes say about one collective under the pointer: its message, how NCCL
// ran it, its bandwidth (analysis::collectiveBandwidth) and the same collective on the other
// ranks (analysis::matchCollectives). Private to the widgets library.

#include <QString>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "vramscope/analysis/collectives/collective_bandwidth.h"
#include "vramscope/analysis/collectives/collectives.h"

namespace vramscope::widgets {

/// The occurrence of input `input` on `device` whose interval [start - slackNs, end + slackNs)
/// holds `tNs` (the input's own trace time, as CollectiveBandwidth::startNs), as an index into
/// report.occurrences; the latest-starting one when several hold it; nullopt when none. The
/// occurrences are in input order (CollectiveBandwidthReport), so only that input's are read.
std::optional<size_t> collectiveOccurrenceAt(const analysis::CollectiveBandwidthReport& report,
                                             size_t input, trace::DeviceIndex device, int64_t tNs,
                                             int64_t slackNs);

/// The matched collective (index into match.collectives) that `o` took part in: the one of the
/// same function with a participant of rank o.rank arriving at `arrivalJobNs`, which is o.startNs
/// on the job's clock (JobModel::toJob; matched collectives are on the job's clock); nullopt when
/// `o` was not matched across ranks.
std::optional<size_t> matchedCollectiveOf(const analysis::CollectiveMatch& match,
                                          const analysis::CollectiveBandwidth& o,
                                          int64_t arrivalJobNs);

/// Rich text for the tooltip of `o`: function and sequence number, message size (binary units
/// and bytes) and group size, algorithm / protocol, channels, duration, busBw and algBw (GB/s =
/// 1e9 B/s, as analysis computed them), the timing source; then, when `matched` is given, every
/// participant's arrival after the first and its wait for the last, the straggler marked (named
/// "last present" when `partialJob`: ranks of the job are not open). Unknown fields are left
/// out, never written as 0.
QString describeCollective(const analysis::CollectiveBandwidth& o,
                           const analysis::MatchedCollective* matched, bool partialJob);

/// How a collective's interval was measured, in words ("NCCL kernel-channel events (GPU
/// timer)"); empty for CollectiveTiming::Unknown.
QString timingSourceText(trace::CollectiveTiming timing);

}  // namespace vramscope::widgets
