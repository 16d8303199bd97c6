#include "vramscope/analysis/export/csv_export.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <tuple>

#include "vramscope/analysis/model/text_format.h"

namespace vramscope::analysis {

namespace {

constexpr std::array<CsvTable, 4> kTables = {CsvTable::Memory, CsvTable::Gaps,
                                             CsvTable::Collectives, CsvTable::Iterations};

/// Writes one row: fields quoted as needed, comma-separated, CRLF (RFC 4180 section 2).
class RowWriter {
public:
    explicit RowWriter(std::ostream& out) : m_out(out) {}
    RowWriter& text(std::string_view field) {
        separate();
        m_out << csvField(field);
        return *this;
    }
    RowWriter& number(int64_t value) {
        separate();
        m_out << value;
        return *this;
    }
    RowWriter& unsignedNumber(uint64_t value) {
        separate();
        m_out << value;
        return *this;
    }
    RowWriter& optional(std::optional<int64_t> value) {
        separate();
        if (value) {
            m_out << *value;
        }
        return *this;
    }
    void end() {
        m_out << "\r\n";
        m_first = true;
    }
    void header(std::initializer_list<std::string_view> names) {
        for (std::string_view n : names) {
            text(n);
        }
        end();
    }

private:
    void separate() {
        if (!m_first) {
            m_out << ',';
        }
        m_first = false;
    }
    std::ostream& m_out;
    bool m_first = true;
};

/// A rank number, nullopt when unknown (an empty cell).
std::optional<int64_t> rankCell(trace::RankId rank) {
    return rank == trace::kUnknownRank ? std::nullopt : std::optional<int64_t>(toInt(rank));
}

/// Lowest and highest value of `series` over [t0, t1), counting the curve from its first step on
/// (as the leak analysis does); nullopt when no step is in force inside the interval.
std::optional<std::pair<int64_t, int64_t>> rangeExtremes(const LodSeries& lod, int64_t t0,
                                                         int64_t t1) {
    const StepSeries& s = lod.series();
    if (s.empty() || t1 <= t0 || t1 <= s.timeNs.front()) {
        return std::nullopt;
    }
    // The step in force at t0 (or the first step when the curve starts inside the interval) up to
    // the last step before t1.
    auto upper = std::upper_bound(s.timeNs.begin(), s.timeNs.end(), t0);
    const size_t first = upper == s.timeNs.begin() ? 0 : size_t(upper - s.timeNs.begin()) - 1;
    const size_t last =
        size_t(std::lower_bound(s.timeNs.begin(), s.timeNs.end(), t1) - s.timeNs.begin());
    if (first >= last) {
        return std::nullopt;
    }
    return lod.rangeMinMax(first, last);
}

size_t writeMemory(const JobModel& job, size_t points, std::ostream& out) {
    RowWriter w(out);
    // time_ns on the job's clock (the GUI's axis); trace_time_ns: the same time on the rank's own
    // clock, what `flame --at` / `export --format speedscope --at` take as an integer and
    // report --json's peak_time_ns is on.
    w.header({"rank", "device", "time_ns", "trace_time_ns", "allocated_bytes", "reserved_bytes"});
    size_t rows = 0;
    for (const GpuSeries& g : job.gpus) {
        std::vector<MemoryRow> all = memoryRows(g.allocated.series(), g.reserved.series());
        if (points > 0) {
            all = reduceMemoryRows(all, points);
        }
        for (const MemoryRow& r : all) {
            w.optional(rankCell(g.rank)).number(toInt(g.key.device)).number(r.timeNs);
            w.number(job.toRank(g.key.rankIndex, r.timeNs));
            w.optional(r.allocatedBytes).optional(r.reservedBytes).end();
        }
        rows += all.size();
    }
    return rows;
}

size_t writeGaps(const JobModel& job, std::ostream& out, std::vector<std::string>& notes) {
    struct Row {
        size_t device;  // index into job.analysis.devices
        size_t gap;
        int64_t startNs;
    };
    std::vector<Row> order;
    for (size_t i = 0; i < job.analysis.devices.size(); ++i) {
        const DeviceAnalysis& d = job.analysis.devices[i];
        if (!d.breakdown) {
            continue;
        }
        const TimeBreakdown& b = *d.breakdown;
        for (size_t k = 0; k < b.gaps.size(); ++k) {
            order.push_back({i, k, b.gaps[k].startNs});
        }
        const int64_t total = b.gapCountByCause[0] + b.gapCountByCause[1] + b.gapCountByCause[2];
        if (total > int64_t(b.gaps.size())) {
            notes.push_back(deviceLabel(job.ranks[d.input].rank, d.device) + ": the " +
                            std::to_string(b.gaps.size()) + " largest of " + std::to_string(total) +
                            " idle gaps (the analysis keeps the largest per GPU)");
        }
    }
    // By GPU (analysis order: rank, then device), then time.
    std::stable_sort(order.begin(), order.end(), [](const Row& a, const Row& b) {
        return std::tie(a.device, a.startNs) < std::tie(b.device, b.startNs);
    });
    RowWriter w(out);
    w.header({"rank", "device", "start_ns", "end_ns", "duration_ns", "cause", "kernel_before",
              "kernel_after"});
    for (const Row& r : order) {
        const DeviceAnalysis& d = job.analysis.devices[r.device];
        const IdleGap& gap = d.breakdown->gaps[r.gap];
        const int64_t start = job.toJob(int(d.input), gap.startNs);
        w.optional(rankCell(job.ranks[d.input].rank)).number(toInt(d.device));
        w.number(start).number(start + gap.durationNs).number(gap.durationNs);
        w.text(toString(gap.cause));
        if (r.gap < d.gapKernelNames.size()) {
            w.text(d.gapKernelNames[r.gap].first).text(d.gapKernelNames[r.gap].second);
        } else {
            w.text("").text("");
        }
        w.end();
    }
    return order.size();
}

std::string hexHash(uint64_t hash) {
    char buffer[24];
    std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(hash));
    return buffer;
}

size_t writeCollectives(const JobModel& job, std::ostream& out) {
    RowWriter w(out);
    w.header({"collective", "function", "communicator", "sequence", "bytes", "rank", "device",
              "start_ns", "end_ns", "wait_ns", "skew_ns", "straggler"});
    size_t rows = 0;
    const std::vector<MatchedCollective>& all = job.collectives().collectives;
    for (size_t c = 0; c < all.size(); ++c) {
        const MatchedCollective& m = all[c];
        for (const CollectiveParticipant& p : m.participants) {
            w.unsignedNumber(c).text(m.function);
            w.text(m.communicatorHash == 0 ? std::string() : hexHash(m.communicatorHash));
            w.number(m.seqNumber);
            w.optional(m.bytes == 0 ? std::nullopt : std::optional<int64_t>(int64_t(m.bytes)));
            w.number(toInt(p.rank)).number(toInt(p.device)).number(p.startNs).number(p.endNs);
            w.number(p.waitNs).number(m.skewNs).number(p.rank == m.stragglerRank ? 1 : 0).end();
            ++rows;
        }
    }
    return rows;
}

size_t writeIterations(const JobModel& job, std::ostream& out) {
    RowWriter w(out);
    w.header({"rank", "device", "index", "number", "name", "source", "start_ns", "end_ns",
              "duration_ns", "peak_allocated_bytes", "peak_reserved_bytes",
              "lowest_allocated_bytes", "lowest_reserved_bytes"});
    size_t rows = 0;
    for (const DeviceAnalysis& d : job.analysis.devices) {
        const GpuSeries* g = job.gpu({int(d.input), d.device});
        for (size_t i = 0; i < d.iterations.iterations.size(); ++i) {
            const Iteration& it = d.iterations.iterations[i];
            const int64_t start = job.toJob(int(d.input), it.startNs);
            const int64_t end = job.toJob(int(d.input), it.endNs);
            std::optional<std::pair<int64_t, int64_t>> a, r;
            if (g != nullptr) {
                a = rangeExtremes(g->allocated, start, end);
                r = rangeExtremes(g->reserved, start, end);
            }
            auto high = [](const auto& e) {
                return e ? std::optional<int64_t>(e->second) : std::nullopt;
            };
            auto low = [](const auto& e) {
                return e ? std::optional<int64_t>(e->first) : std::nullopt;
            };
            w.optional(rankCell(job.ranks[d.input].rank)).number(toInt(d.device));
            w.unsignedNumber(i).number(it.number).text(it.name);
            w.text(toString(d.iterations.source)).number(start).number(end).number(end - start);
            w.optional(high(a)).optional(high(r)).optional(low(a)).optional(low(r)).end();
            ++rows;
        }
    }
    return rows;
}

}  // namespace

const char* toString(CsvTable table) {
    switch (table) {
        case CsvTable::Memory:
            return "memory";
        case CsvTable::Gaps:
            return "gaps";
        case CsvTable::Collectives:
            return "collectives";
        case CsvTable::Iterations:
            return "iterations";
    }
    return "?";
}

std::span<const CsvTable> csvTables() {
    return kTables;
}

std::optional<CsvTable> csvTableNamed(std::string_view name) {
    for (CsvTable t : kTables) {
        if (name == toString(t)) {
            return t;
        }
    }
    return std::nullopt;
}

std::string csvTableUnavailable(const JobModel& job, CsvTable table) {
    if (table == CsvTable::Memory) {
        const bool any = std::any_of(job.gpus.begin(), job.gpus.end(), [](const GpuSeries& g) {
            return !g.allocated.series().empty() || !g.reserved.series().empty();
        });
        return any ? std::string()
                   : std::string(
                         "no GPU memory was recorded (no memory events or counters on "
                         "any GPU), so there is no memory table");
    }
    if (!job.analysisProblem.empty()) {
        return "the analyses failed (" + job.analysisProblem + "), so there is no " +
               toString(table) + " table";
    }
    const std::vector<DeviceAnalysis>& devices = job.analysis.devices;
    switch (table) {
        case CsvTable::Memory:
            break;
        case CsvTable::Gaps:
            if (std::none_of(devices.begin(), devices.end(),
                             [](const DeviceAnalysis& d) { return d.breakdown.has_value(); })) {
                return "no GPU ran kernels, copies or memsets, so there are no idle gaps";
            }
            break;
        case CsvTable::Collectives:
            if (job.collectives().collectives.empty()) {
                const CollectiveMatch& m = job.collectives();
                std::string why = m.method.empty() || m.method == "none"
                                      ? "no rank has collectives"
                                      : std::to_string(m.unmatched) +
                                            " collectives were seen on fewer than two ranks";
                if (m.impossibleByOrder > 0) {
                    why += "; " + std::to_string(m.impossibleByOrder) +
                           " paired by order could not be one collective";
                }
                if (job.ranks.size() < 2) {
                    why = "the job has one rank";
                }
                return "no collective was matched across ranks (" + why + ")";
            }
            break;
        case CsvTable::Iterations: {
            const auto found = std::find_if(devices.begin(), devices.end(), [](const auto& d) {
                return !d.iterations.iterations.empty();
            });
            if (found == devices.end()) {
                std::string why;
                for (const DeviceAnalysis& d : devices) {
                    if (!d.iterations.reason.empty()) {
                        why = ": " + d.iterations.reason;
                        break;
                    }
                }
                return "no iterations were found on any GPU" + why;
            }
            break;
        }
    }
    return {};
}

trace::Result<CsvSummary> writeCsv(const JobModel& job, const CsvOptions& options,
                                   std::ostream& out) {
    if (std::string why = csvTableUnavailable(job, options.table); !why.empty()) {
        return trace::Error::make(trace::ErrorCode::Invalid, job.title, std::move(why));
    }
    CsvSummary summary;
    switch (options.table) {
        case CsvTable::Memory:
            summary.rows = writeMemory(job, options.points, out);
            break;
        case CsvTable::Gaps:
            summary.rows = writeGaps(job, out, summary.notes);
            break;
        case CsvTable::Collectives:
            summary.rows = writeCollectives(job, out);
            if (const size_t left = job.collectives().impossibleByOrder; left > 0) {
                summary.notes.push_back(
                    std::to_string(left) +
                    " collectives paired by order were left out: in some pairs a rank's kernel "
                    "ended before the last rank's began, so the ranks' sequences differ");
            }
            break;
        case CsvTable::Iterations:
            summary.rows = writeIterations(job, out);
            break;
    }
    return summary;
}

std::string csvField(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
        return std::string(text);
    }
    std::string quoted = "\"";
    for (char c : text) {
        quoted += c;
        if (c == '"') {
            quoted += '"';
        }
    }
    quoted += '"';
    return quoted;
}

std::vector<MemoryRow> memoryRows(const StepSeries& allocated, const StepSeries& reserved) {
    std::vector<MemoryRow> rows;
    rows.reserve(std::max(allocated.size(), reserved.size()));
    size_t i = 0;
    size_t j = 0;
    std::optional<int64_t> a;
    std::optional<int64_t> r;
    // Merge the two step lists; several steps at one time keep the last (the value from then on).
    while (i < allocated.size() || j < reserved.size()) {
        const int64_t ta = i < allocated.size() ? allocated.timeNs[i] : INT64_MAX;
        const int64_t tr = j < reserved.size() ? reserved.timeNs[j] : INT64_MAX;
        const int64_t t = std::min(ta, tr);
        while (i < allocated.size() && allocated.timeNs[i] == t) {
            a = allocated.bytes[i++];
        }
        while (j < reserved.size() && reserved.timeNs[j] == t) {
            r = reserved.bytes[j++];
        }
        rows.push_back({t, a, r});
    }
    return rows;
}

std::vector<MemoryRow> reduceMemoryRows(const std::vector<MemoryRow>& rows, size_t buckets) {
    if (buckets == 0 || rows.size() <= buckets) {
        return rows;
    }
    // Unsigned: a span of the whole int64 range still fits.
    const int64_t first = rows.front().timeNs;
    const uint64_t span = uint64_t(rows.back().timeNs) - uint64_t(first) + 1;
    const uint64_t width = span / buckets + (span % buckets != 0 ? 1 : 0);
    auto bucketOf = [&](int64_t t) { return (uint64_t(t) - uint64_t(first)) / width; };
    std::vector<MemoryRow> out;
    size_t begin = 0;
    while (begin < rows.size()) {
        const size_t b = bucketOf(rows[begin].timeNs);
        size_t end = begin;
        size_t bestA = rows.size();
        size_t bestR = rows.size();
        for (; end < rows.size() && bucketOf(rows[end].timeNs) == b; ++end) {
            const MemoryRow& row = rows[end];
            if (row.allocatedBytes &&
                (bestA == rows.size() || *row.allocatedBytes > *rows[bestA].allocatedBytes)) {
                bestA = end;
            }
            if (row.reservedBytes &&
                (bestR == rows.size() || *row.reservedBytes > *rows[bestR].reservedBytes)) {
                bestR = end;
            }
        }
        if (bestA == rows.size() && bestR == rows.size()) {
            bestA = begin;  // neither level recorded yet: the bucket's first row stands for it
        }
        const size_t lo = std::min(bestA, bestR);
        const size_t hi =
            bestA == rows.size() || bestR == rows.size() ? lo : std::max(bestA, bestR);
        out.push_back(rows[lo]);
        if (hi != lo) {
            out.push_back(rows[hi]);
        }
        begin = end;
    }
    return out;
}

}  // namespace vramscope::analysis
