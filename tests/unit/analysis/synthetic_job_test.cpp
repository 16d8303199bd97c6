#include "vramscope/analysis/synthetic_job.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "vramscope/analysis/memory/memory_timeline.h"

namespace vramscope::analysis {
namespace {

using trace::KernelCategory;
using trace::MemoryLevel;
using trace::RangeKind;
using trace::TraceData;

/// Expected figures of one rank, from the formulas documented at SyntheticJobSpec (written out
/// here again on purpose: the test must not share code with the generator).
struct ExpectedRank {
    int64_t F, B, C, D, v, s, P;
    int64_t start(int i, int r, const SyntheticJobSpec& spec) const {
        return 3'000'000 + spec.hostGapNs + i * P + (r == spec.stragglerRank ? s : 0);
    }
    int64_t end(int i, const SyntheticJobSpec& spec) const {
        return 3'000'000 + spec.hostGapNs + i * P + s + C - v + D;
    }
};

ExpectedRank expectedOf(const SyntheticJobSpec& spec) {
    ExpectedRank e{};
    const int64_t k = spec.computeKernelsPerIteration;
    const int n = spec.ranks;
    e.F = (k / 2) * spec.computeKernelNs;
    e.B = (k - k / 2) * spec.computeKernelNs;
    e.C = k * spec.computeKernelNs;
    e.D = n > 1 ? static_cast<int64_t>(std::ceil(static_cast<double>(spec.allReduceBytes) * 2 *
                                                 (n - 1) / n / spec.busBandwidthBytesPerS * 1e9))
                : 0;
    e.v = n > 1 ? std::min({spec.allReduceOverlapNs, e.B, e.D}) : 0;
    e.s = spec.stragglerRank >= 0 && spec.stragglerRank < n ? spec.stragglerDelayNs : 0;
    e.P = e.s + e.C - e.v + e.D + spec.hostGapNs;
    return e;
}

SyntheticJobSpec fourRankSpec() {
    SyntheticJobSpec spec;
    spec.ranks = 4;
    spec.iterations = 6;
    spec.activationsPerIteration = 5;
    spec.activationBytes = 300ull << 20;
    spec.weightBytes = 1ull << 30;
    spec.optimizerBytes = 2ull << 30;
    spec.leakBytesPerIteration = 100ull << 20;
    spec.leakRank = 2;
    spec.segmentBytes = 1ull << 30;
    spec.computeKernelsPerIteration = 7;
    spec.computeKernelNs = 100'000;
    spec.stragglerRank = 1;
    spec.stragglerDelayNs = 500'000;
    spec.allReduceOverlapNs = 50'000;
    spec.hostGapNs = 250'000;
    return spec;
}

TEST(SyntheticJob, SameSpecGivesIdenticalTraces) {
    const auto a = generateSyntheticJob(fourRankSpec());
    const auto b = generateSyntheticJob(fourRankSpec());
    ASSERT_EQ(a.size(), 4u);
    ASSERT_EQ(a.size(), b.size());
    for (size_t r = 0; r < a.size(); ++r) {
        EXPECT_EQ(a[r].strings, b[r].strings);
        EXPECT_EQ(a[r].memory.timestampNs, b[r].memory.timestampNs);
        EXPECT_EQ(a[r].memory.address, b[r].memory.address);
        EXPECT_EQ(a[r].memory.sizeBytes, b[r].memory.sizeBytes);
        EXPECT_EQ(a[r].kernels.startNs, b[r].kernels.startNs);
        EXPECT_EQ(a[r].kernels.name, b[r].kernels.name);
        EXPECT_EQ(a[r].collectives.communicatorHash, b[r].collectives.communicatorHash);
        EXPECT_EQ(a[r].header.devices[0].uuid, b[r].header.devices[0].uuid);
        EXPECT_EQ(a[r].stacks, b[r].stacks);
    }
    const auto one = generateSyntheticRank(fourRankSpec(), 2);
    EXPECT_EQ(one.memory.address, a[2].memory.address);
    EXPECT_EQ(one.kernels.endNs, a[2].kernels.endNs);
}

TEST(SyntheticJob, SeedChangesAddressesAndNamesButNoTimeOrSize) {
    auto spec = fourRankSpec();
    const auto a = generateSyntheticJob(spec);
    spec.seed = 99;
    const auto b = generateSyntheticJob(spec);
    EXPECT_EQ(a[0].memory.timestampNs, b[0].memory.timestampNs);
    EXPECT_EQ(a[0].memory.sizeBytes, b[0].memory.sizeBytes);
    EXPECT_EQ(a[0].kernels.startNs, b[0].kernels.startNs);
    EXPECT_NE(a[0].memory.address, b[0].memory.address);
    EXPECT_NE(a[0].collectives.communicatorHash[0], b[0].collectives.communicatorHash[0]);
    EXPECT_NE(a[0].header.devices[0].uuid, b[0].header.devices[0].uuid);
}

TEST(SyntheticJob, HeaderNamesRankWorldSizeAndOneDevice) {
    auto spec = fourRankSpec();
    spec.ranks = 10;
    spec.gpusPerNode = 4;
    const auto job = generateSyntheticJob(spec);
    ASSERT_EQ(job.size(), 10u);
    const auto& h = job[9].header;
    EXPECT_EQ(h.rank, trace::RankId{9});
    EXPECT_EQ(h.localRank, trace::RankId{1});
    EXPECT_EQ(h.worldSize, 10);
    ASSERT_EQ(h.devices.size(), 1u);
    EXPECT_EQ(h.devices[0].index, trace::DeviceIndex{1});
    EXPECT_EQ(h.devices[0].totalMemoryBytes, spec.capacityBytes);
    EXPECT_EQ(h.host, "node2");
    EXPECT_EQ(job[0].header.jobId, h.jobId);
}

TEST(SyntheticJob, PeaksAndPeakTimesFollowTheDocumentedFormulas) {
    const auto spec = fourRankSpec();
    const ExpectedRank e = expectedOf(spec);
    const auto job = generateSyntheticJob(spec);
    const int64_t A = spec.activationsPerIteration;
    const int N = spec.iterations;
    const auto a = static_cast<int64_t>(spec.activationBytes);
    const auto g = static_cast<int64_t>(spec.segmentBytes);
    const auto base = static_cast<int64_t>(spec.weightBytes + spec.optimizerBytes);
    for (int r = 0; r < spec.ranks; ++r) {
        const int64_t L = r == spec.leakRank ? static_cast<int64_t>(spec.leakBytesPerIteration) : 0;
        const int64_t peak = base + A * a + N * L;
        const int64_t peakTime =
            L > 0 ? e.start(N - 1, r, spec) + e.F : e.start(0, r, spec) + (A - 1) * (e.F / A);
        const int64_t reserved = (peak + g - 1) / g * g;
        // First time allocated exceeds reserved - g, walking the documented allocation times.
        int64_t reservedTime = -1;
        auto check = [&](int64_t t, int64_t allocated) {
            if (reservedTime < 0 && allocated > reserved - g) {
                reservedTime = t;
            }
        };
        check(1'000'000, static_cast<int64_t>(spec.weightBytes));
        check(2'000'000, base);
        for (int i = 0; i < N; ++i) {
            for (int64_t j = 0; j < A; ++j) {
                check(e.start(i, r, spec) + j * (e.F / A), base + i * L + (j + 1) * a);
            }
            check(e.start(i, r, spec) + e.F, base + (i + 1) * L + A * a);
        }
        const auto tls = buildMemoryTimelines(job[static_cast<size_t>(r)]);
        ASSERT_EQ(tls.size(), 1u);
        EXPECT_EQ(tls[0].peakAllocatedBytes, peak) << "rank " << r;
        EXPECT_EQ(tls[0].peakAllocatedTimeNs, peakTime) << "rank " << r;
        EXPECT_EQ(tls[0].peakReservedBytes, reserved) << "rank " << r;
        EXPECT_EQ(tls[0].peakReservedTimeNs, reservedTime) << "rank " << r;
        // Reserved: multiples of g, never shrinking, always covering allocated.
        const auto& rs = tls[0].reserved;
        for (size_t i = 0; i < rs.size(); ++i) {
            EXPECT_EQ(rs.bytes[i] % g, 0);
            if (i > 0) {
                EXPECT_GE(rs.bytes[i], rs.bytes[i - 1]);
            }
        }
        for (size_t i = 0; i < tls[0].allocated.size(); ++i) {
            EXPECT_LE(tls[0].allocated.bytes[i], rs.valueAt(tls[0].allocated.timeNs[i]));
        }
        // Sawtooth: the last value is the base plus the leak, activations all freed.
        EXPECT_EQ(tls[0].allocated.bytes.back(), base + N * L);
    }
}

TEST(SyntheticJob, AllocatedEventsAreExactlyTheDocumentedSawtooth) {
    const auto spec = fourRankSpec();
    const ExpectedRank e = expectedOf(spec);
    const auto job = generateSyntheticJob(spec);
    const int64_t A = spec.activationsPerIteration;
    for (int r = 0; r < spec.ranks; ++r) {
        // (time, +size for alloc / -size for free), in the documented order.
        std::vector<std::pair<int64_t, int64_t>> expected = {
            {1'000'000, static_cast<int64_t>(spec.weightBytes)},
            {2'000'000, static_cast<int64_t>(spec.optimizerBytes)}};
        for (int i = 0; i < spec.iterations; ++i) {
            const int64_t s = e.start(i, r, spec);
            for (int64_t j = 0; j < A; ++j) {
                expected.emplace_back(s + j * (e.F / A),
                                      static_cast<int64_t>(spec.activationBytes));
            }
            if (r == spec.leakRank) {
                expected.emplace_back(s + e.F, static_cast<int64_t>(spec.leakBytesPerIteration));
            }
            for (int64_t j = A - 1; j >= 0; --j) {
                expected.emplace_back(s + e.F + (A - j) * (e.B / A),
                                      -static_cast<int64_t>(spec.activationBytes));
            }
        }
        std::vector<std::pair<int64_t, int64_t>> actual;
        const auto& m = job[static_cast<size_t>(r)].memory;
        for (size_t i = 0; i < m.size(); ++i) {
            if (m.level[i] == MemoryLevel::Allocated) {
                const auto size = static_cast<int64_t>(m.sizeBytes[i]);
                actual.emplace_back(m.timestampNs[i],
                                    m.action[i] == trace::MemoryAction::Alloc ? size : -size);
            }
        }
        EXPECT_EQ(actual, expected) << "rank " << r;
    }
}

TEST(SyntheticJob, IterationRangesAndKernelsFollowTheDocumentedTimes) {
    const auto spec = fourRankSpec();
    const ExpectedRank e = expectedOf(spec);
    const auto job = generateSyntheticJob(spec);
    for (int r = 0; r < spec.ranks; ++r) {
        const auto& d = job[static_cast<size_t>(r)];
        std::vector<size_t> iterations;
        for (size_t i = 0; i < d.ranges.size(); ++i) {
            if (d.ranges.kind[i] == RangeKind::Iteration) {
                iterations.push_back(i);
            }
        }
        ASSERT_EQ(iterations.size(), static_cast<size_t>(spec.iterations));
        for (int i = 0; i < spec.iterations; ++i) {
            const auto range = d.ranges.at(iterations[static_cast<size_t>(i)]);
            EXPECT_EQ(d.string(range.name), "iteration " + std::to_string(i));
            EXPECT_EQ(range.startNs, e.start(i, r, spec));
            EXPECT_EQ(range.endNs, e.end(i, spec));
        }
        size_t compute = 0;
        size_t comm = 0;
        for (size_t k = 0; k < d.kernels.size(); ++k) {
            const auto kernel = d.kernels.at(k);
            if (kernel.category == KernelCategory::Compute) {
                ++compute;
                EXPECT_EQ(kernel.endNs - kernel.startNs, spec.computeKernelNs);
            } else {
                ++comm;
                EXPECT_EQ(kernel.category, KernelCategory::Communication);
                EXPECT_TRUE(d.string(kernel.name).starts_with("ncclDevKernel_AllReduce"));
            }
            if (k > 0) {
                EXPECT_LE(d.kernels.startNs[k - 1], kernel.startNs);  // in start-time order
            }
        }
        EXPECT_EQ(compute, static_cast<size_t>(spec.iterations * spec.computeKernelsPerIteration));
        EXPECT_EQ(comm, static_cast<size_t>(spec.iterations));
    }
}

TEST(SyntheticJob, CollectivesMatchAcrossRanksAndTakeTheBusBandwidthTime) {
    const auto spec = fourRankSpec();
    const ExpectedRank e = expectedOf(spec);
    // allReduceBytes is the default 512 MiB; 4 ranks, factor 2 * 3 / 4 = 1.5:
    // 536870912 * 1.5 / 100e9 s = 8053063.68 ns, rounded up.
    EXPECT_EQ(e.D, 8'053'064);
    const auto job = generateSyntheticJob(spec);
    const uint64_t hash = job[0].collectives.communicatorHash[0];
    EXPECT_NE(hash, 0u);
    for (int r = 0; r < spec.ranks; ++r) {
        const auto& c = job[static_cast<size_t>(r)].collectives;
        ASSERT_EQ(c.size(), static_cast<size_t>(spec.iterations));
        for (int i = 0; i < spec.iterations; ++i) {
            const auto ev = c.at(static_cast<size_t>(i));
            EXPECT_EQ(ev.communicatorHash, hash);
            EXPECT_EQ(ev.seqNumber, i);
            EXPECT_EQ(ev.rank, trace::RankId{r});
            EXPECT_EQ(ev.nranks, spec.ranks);
            EXPECT_EQ(ev.bytes, spec.allReduceBytes);
            EXPECT_EQ(job[static_cast<size_t>(r)].string(ev.function), "AllReduce");
            EXPECT_EQ(ev.startNs, e.start(i, r, spec) + e.C - e.v);
            EXPECT_EQ(ev.endNs, e.end(i, spec));
        }
    }
    // The straggler arrives last; the others wait for it: their all-reduce lasts s longer.
    const auto& onTime = job[0].collectives;
    const auto& late = job[1].collectives;
    EXPECT_EQ((onTime.endNs[0] - onTime.startNs[0]) - (late.endNs[0] - late.startNs[0]), e.s);
    EXPECT_EQ(late.endNs[0] - late.startNs[0], e.D);
}

/// Union length of intervals (brute force over sorted intervals).
int64_t unionLength(std::vector<std::pair<int64_t, int64_t>> v) {
    std::sort(v.begin(), v.end());
    int64_t total = 0;
    int64_t curStart = 0;
    int64_t curEnd = INT64_MIN;
    for (const auto& [s, t] : v) {
        if (s > curEnd) {
            if (curEnd != INT64_MIN) {
                total += curEnd - curStart;
            }
            curStart = s;
            curEnd = t;
        } else {
            curEnd = std::max(curEnd, t);
        }
    }
    if (curEnd != INT64_MIN) {
        total += curEnd - curStart;
    }
    return total;
}

TEST(SyntheticJob, IdleAndOverlapFollowTheDocumentedFormulas) {
    const auto spec = fourRankSpec();
    const ExpectedRank e = expectedOf(spec);
    const auto job = generateSyntheticJob(spec);
    for (int r = 0; r < spec.ranks; ++r) {
        const auto& k = job[static_cast<size_t>(r)].kernels;
        std::vector<std::pair<int64_t, int64_t>> all, computeOnly, commOnly;
        for (size_t i = 0; i < k.size(); ++i) {
            all.emplace_back(k.startNs[i], k.endNs[i]);
            (k.category[i] == KernelCategory::Compute ? computeOnly : commOnly)
                .emplace_back(k.startNs[i], k.endNs[i]);
        }
        const int64_t first = *std::min_element(k.startNs.begin(), k.startNs.end());
        const int64_t last = *std::max_element(k.endNs.begin(), k.endNs.end());
        const int64_t sr = r == spec.stragglerRank ? e.s : 0;
        const int64_t N = spec.iterations;
        EXPECT_EQ(last - first - unionLength(all), (N - 1) * (spec.hostGapNs + sr)) << r;
        const int64_t compute = unionLength(computeOnly);
        const int64_t comm = unionLength(commOnly);
        EXPECT_EQ(compute, N * e.C);
        EXPECT_EQ(comm, N * (e.s - sr + e.D));
        EXPECT_EQ(compute + comm - unionLength(all), N * e.v);  // overlapped
    }
}

TEST(SyntheticJob, MemoryEventsCarryStacksAndIterationRanges) {
    const auto job = generateSyntheticJob(fourRankSpec());
    const auto& d = job[2];
    size_t withStack = 0;
    for (size_t i = 0; i < d.memory.size(); ++i) {
        const auto stack = d.memory.stack[i];
        ASSERT_LT(toInt(stack), d.stacks.size());
        if (stack == trace::StackId{0}) {
            continue;
        }
        ++withStack;
        const auto& frames = d.stacks[toInt(stack)];
        ASSERT_FALSE(frames.empty());
        EXPECT_EQ(d.string(d.frames[toInt(frames.back())].name), "main");  // root frame last
        EXPECT_EQ(d.string(d.frames[toInt(frames.back())].file), "train.py");
        ASSERT_LE(d.memory.nvtxRange[i], d.ranges.size());
    }
    EXPECT_EQ(withStack, d.memory.size());
    const auto perIteration = syntheticEventsPerIteration(fourRankSpec(), 2);
    EXPECT_EQ(perIteration, 2u * 5 + 7 + 3 + 2 + 1);
}

TEST(SyntheticJob, OneRankHasNoCollectives) {
    auto spec = fourRankSpec();
    spec.ranks = 1;
    spec.stragglerRank = -1;
    spec.leakRank = -1;
    const auto job = generateSyntheticJob(spec);
    ASSERT_EQ(job.size(), 1u);
    EXPECT_EQ(job[0].collectives.size(), 0u);
    EXPECT_EQ(job[0].kernels.size(),
              static_cast<size_t>(spec.iterations * spec.computeKernelsPerIteration));
    const ExpectedRank e = expectedOf(spec);
    EXPECT_EQ(e.P, e.C + spec.hostGapNs);
}

TEST(SyntheticJob, BenchmarkNoiseKeepsSizesCountsAndPeakBytes) {
    auto spec = fourRankSpec();
    const auto plain = generateSyntheticJob(spec);
    spec.benchmarkNoise = true;
    const auto noisy = generateSyntheticJob(spec);
    const auto again = generateSyntheticJob(spec);
    for (size_t r = 0; r < plain.size(); ++r) {
        const auto& p = plain[r];
        const auto& n = noisy[r];
        EXPECT_EQ(n.memory.timestampNs, again[r].memory.timestampNs);  // still deterministic
        EXPECT_EQ(n.memory.sizeBytes, p.memory.sizeBytes);
        EXPECT_EQ(n.memory.action, p.memory.action);
        EXPECT_EQ(n.kernels.size(), p.kernels.size());
        EXPECT_NE(n.memory.timestampNs, p.memory.timestampNs);
        EXPECT_NE(n.memory.address, p.memory.address);
        EXPECT_TRUE(std::is_sorted(n.memory.timestampNs.begin(), n.memory.timestampNs.end()));
        for (size_t k = 0; k < n.kernels.size(); ++k) {
            EXPECT_LE(n.kernels.endNs[k], p.kernels.endNs[k]);
            EXPECT_GT(n.kernels.endNs[k], n.kernels.startNs[k]);
        }
        const auto tp = buildMemoryTimelines(p);
        const auto tn = buildMemoryTimelines(n);
        EXPECT_EQ(tn[0].peakAllocatedBytes, tp[0].peakAllocatedBytes);
        EXPECT_EQ(tn[0].peakReservedBytes, tp[0].peakReservedBytes);
        EXPECT_EQ(tn[0].allocatedUnmatchedFrees, 0u);  // every free finds its alloc's address
        EXPECT_EQ(tn[0].allocated.bytes.back(), tp[0].allocated.bytes.back());
    }
}

TEST(SyntheticJob, InvalidSpecsAreRefusedWithASentence) {
    auto bad = fourRankSpec();
    bad.ranks = 0;
    EXPECT_NE(validateSyntheticJobSpec(bad), "");
    EXPECT_TRUE(generateSyntheticJob(bad).empty());
    bad = fourRankSpec();
    bad.segmentBytes = 0;
    EXPECT_NE(validateSyntheticJobSpec(bad), "");
    bad = fourRankSpec();
    bad.computeKernelNs = 1;  // forward of 3 ns cannot hold 5 activations
    EXPECT_NE(validateSyntheticJobSpec(bad), "");
    bad = fourRankSpec();
    bad.busBandwidthBytesPerS = 0;
    EXPECT_NE(validateSyntheticJobSpec(bad), "");
    bad = fourRankSpec();
    bad.iterations = 2'000'000'000;
    bad.computeKernelNs = 1'000'000'000;
    EXPECT_NE(validateSyntheticJobSpec(bad), "");
    EXPECT_EQ(validateSyntheticJobSpec(fourRankSpec()), "");
    EXPECT_TRUE(generateSyntheticRank(fourRankSpec(), 4).eventCount() == 0);
}

TEST(SyntheticJob, IterationsForEventCountReachesTheRequestedSize) {
    SyntheticJobSpec spec;
    spec.ranks = 2;
    const int iterations = iterationsForEventCount(spec, 100'000);
    spec.iterations = iterations;
    uint64_t events = 0;
    for (const auto& d : generateSyntheticJob(spec)) {
        events += d.eventCount();
    }
    EXPECT_GE(events, 100'000u);
    EXPECT_LT(events, 100'000u + 2 * syntheticEventsPerIteration(spec, 0) + 20);
}

}  // namespace
}  // namespace vramscope::analysis
