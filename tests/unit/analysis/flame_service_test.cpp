#include "vramscope/analysis/memory/flame_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <latch>
#include <map>
#include <random>
#include <thread>
#include <tuple>

#include "unit/analysis/replay_alive.h"
#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {

using trace::DeviceIndex;
using trace::MemoryLevel;
using trace::TraceData;

constexpr FlameGrouping kGroupings[] = {FlameGrouping::Stack, FlameGrouping::Nvtx,
                                        FlameGrouping::Category};

/// Two ranks of a small synthetic job, one GPU each (device index = rank), with their indexes.
struct TwoRankFlames {
    std::vector<TraceData> traces;
    std::vector<std::shared_ptr<const AllocationIndex>> indexes;
    FlameService service;

    TwoRankFlames() {
        SyntheticJobSpec s;
        s.ranks = 2;
        s.iterations = 4;
        s.activationsPerIteration = 6;
        s.computeKernelsPerIteration = 12;
        s.computeKernelNs = 50'000;
        s.leakBytesPerIteration = 32ull << 20;
        s.leakRank = 1;
        traces = generateSyntheticJob(s);
        for (int r = 0; r < 2; ++r) {
            indexes.push_back(std::make_shared<const AllocationIndex>(
                traces[size_t(r)], DeviceIndex{r}, MemoryLevel::Allocated));
            service.add(r, DeviceIndex{r}, traces[size_t(r)], indexes.back());
        }
    }
};

TEST(Unit, FlameServiceReturnsNullWhenTheGpuIsUnknown) {
    TwoRankFlames f;
    EXPECT_TRUE(f.service.has(0, DeviceIndex{0}));
    EXPECT_TRUE(f.service.has(1, DeviceIndex{1}));
    EXPECT_FALSE(f.service.has(0, DeviceIndex{1}));
    EXPECT_EQ(f.service.at(0, DeviceIndex{1}, 2'000'000, FlameGrouping::Stack), nullptr);
    EXPECT_EQ(f.service.at(7, DeviceIndex{0}, 2'000'000, FlameGrouping::Stack), nullptr);
    EXPECT_EQ(f.service.diff(2, DeviceIndex{2}, 0, 2'000'000, FlameGrouping::Stack), nullptr);
    EXPECT_EQ(f.service.treesBuilt(), 0u);
}

TEST(Unit, FlameServiceReturnsTheCachedTreeWhenAskedTheSameAgain) {
    TwoRankFlames f;
    const auto first = f.service.at(0, DeviceIndex{0}, 2'500'000, FlameGrouping::Stack);
    ASSERT_TRUE(first);
    EXPECT_EQ(f.service.treesBuilt(), 1u);
    const auto again = f.service.at(0, DeviceIndex{0}, 2'500'000, FlameGrouping::Stack);
    EXPECT_EQ(again.get(), first.get());
    EXPECT_EQ(f.service.treesBuilt(), 1u);
    // Another grouping, GPU, or a diff over the same time is another tree.
    EXPECT_NE(f.service.at(0, DeviceIndex{0}, 2'500'000, FlameGrouping::Category).get(),
              first.get());
    EXPECT_NE(f.service.at(1, DeviceIndex{1}, 2'500'000, FlameGrouping::Stack).get(), first.get());
    const auto same = f.service.diff(0, DeviceIndex{0}, 2'500'000, 2'500'000, FlameGrouping::Stack);
    ASSERT_TRUE(same);
    EXPECT_TRUE(same->isDiff);
    EXPECT_EQ(same->root().bytes, 0);
    EXPECT_EQ(f.service.treesBuilt(), 4u);
}

TEST(Unit, FlameServiceEvictsTheLeastRecentlyUsedTreeWhenTheCacheIsFull) {
    TwoRankFlames f;
    const size_t n = FlameService::kCacheSize;
    auto ask = [&](size_t i) {
        return f.service.at(0, DeviceIndex{0}, int64_t(3'000'000 + i), FlameGrouping::Stack);
    };
    for (size_t i = 0; i < n; ++i) {
        ask(i);
    }
    EXPECT_EQ(f.service.treesBuilt(), n);
    ask(0);  // a hit that makes time 0 the most recently used
    EXPECT_EQ(f.service.treesBuilt(), n);
    ask(n);  // one more than the cache holds: evicts time 1, the oldest now
    EXPECT_EQ(f.service.treesBuilt(), n + 1);
    ask(0);
    EXPECT_EQ(f.service.treesBuilt(), n + 1);  // kept: it was used recently
    ask(1);
    EXPECT_EQ(f.service.treesBuilt(), n + 2);  // evicted, built again (and evicts time 2)
    ask(2);
    EXPECT_EQ(f.service.treesBuilt(), n + 3);  // built again (and evicts time 3)
    for (size_t i = 4; i <= n; ++i) {
        ask(i);  // still cached
    }
    EXPECT_EQ(f.service.treesBuilt(), n + 3);
    ask(3);
    EXPECT_EQ(f.service.treesBuilt(), n + 4);
}

TEST(Unit, FlameServiceGivesTheSingleThreadedTreesWhenFourThreadsAskAtOnce) {
    TwoRankFlames f;
    std::vector<int64_t> times;
    for (int64_t t = 900'000; t < 12'000'000; t += 370'000) {
        times.push_back(t);
    }
    // Reference: one FlameTreeBuilder per GPU on the same index, on this thread only.
    using Key = std::tuple<int, size_t, int>;  // GPU, time position, grouping
    std::map<Key, std::pair<int64_t, int64_t>> expected;
    for (int gpu = 0; gpu < 2; ++gpu) {
        FlameTreeBuilder b(f.traces[size_t(gpu)], f.indexes[size_t(gpu)]);
        for (size_t ti = 0; ti < times.size(); ++ti) {
            for (int g = 0; g < 3; ++g) {
                const FlameTree t = b.at(times[ti], kGroupings[g]);
                expected[{gpu, ti, g}] = {t.root().bytes, t.root().count};
            }
        }
    }
    struct Answer {
        Key key;
        int64_t bytes = 0, count = 0;
        bool missing = false;
    };
    std::vector<std::vector<Answer>> answers(4);
    std::vector<std::thread> threads;
    for (size_t th = 0; th < 4; ++th) {
        threads.emplace_back([&, th] {
            std::mt19937 rng(uint32_t(1234 + th));
            for (int i = 0; i < 200; ++i) {
                const int gpu = int(rng() % 2);
                const size_t ti = rng() % times.size();
                const int g = int(rng() % 3);
                const auto tree = f.service.at(gpu, DeviceIndex{gpu}, times[ti], kGroupings[g]);
                Answer a;
                a.key = {gpu, ti, g};
                a.missing = !tree;
                if (tree) {
                    a.bytes = tree->root().bytes;
                    a.count = tree->root().count;
                }
                answers[th].push_back(a);
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    size_t checked = 0;
    for (const auto& list : answers) {
        for (const Answer& a : list) {
            ASSERT_FALSE(a.missing);
            const auto& [bytes, count] = expected.at(a.key);
            EXPECT_EQ(a.bytes, bytes);
            EXPECT_EQ(a.count, count);
            ++checked;
        }
    }
    EXPECT_EQ(checked, 800u);
    // Spot-check the reference itself against an independent replay.
    for (int gpu = 0; gpu < 2; ++gpu) {
        for (size_t ti = 0; ti < times.size(); ti += 5) {
            EXPECT_EQ(expected.at({gpu, ti, 0}).first,
                      test::replayAlive(f.traces[size_t(gpu)], DeviceIndex{gpu}, times[ti]));
        }
    }
}

TEST(Unit, FlameServiceBuildsOneTreeWhenThreadsAskTheSameAtOnce) {
    TwoRankFlames f;
    constexpr int kThreads = 4;
    constexpr int kRounds = 40;
    for (int round = 0; round < kRounds; ++round) {
        const int64_t t = 2'000'000 + 250'000 * round;
        std::latch start(kThreads);
        std::vector<std::shared_ptr<const FlameTree>> trees(kThreads);
        std::vector<std::thread> threads;
        for (int th = 0; th < kThreads; ++th) {
            threads.emplace_back([&, th] {
                start.arrive_and_wait();  // all ask together, before any tree is cached
                trees[size_t(th)] =
                    f.service.at(round % 2, DeviceIndex{round % 2}, t, FlameGrouping::Stack);
            });
        }
        for (std::thread& th : threads) {
            th.join();
        }
        for (int th = 1; th < kThreads; ++th) {
            EXPECT_EQ(trees[size_t(th)].get(), trees[0].get()) << "round " << round;
        }
        EXPECT_EQ(f.service.treesBuilt(), size_t(round + 1)) << "round " << round;
    }
}

TEST(Unit, FlameServiceDiffRootIsAliveAtSecondMinusFirstWhenTwoTimesAreGiven) {
    TwoRankFlames f;
    const std::pair<int64_t, int64_t> spans[] = {
        {1'500'000, 2'500'000}, {2'500'000, 4'500'000}, {4'500'000, 3'100'000}, {0, 11'000'000}};
    for (int gpu = 0; gpu < 2; ++gpu) {
        const TraceData& d = f.traces[size_t(gpu)];
        for (const auto& [t1, t2] : spans) {
            const auto tree = f.service.diff(gpu, DeviceIndex{gpu}, t1, t2, FlameGrouping::Stack);
            ASSERT_TRUE(tree);
            EXPECT_TRUE(tree->isDiff);
            const int64_t before = test::replayAlive(d, DeviceIndex{gpu}, t1);
            const int64_t after = test::replayAlive(d, DeviceIndex{gpu}, t2);
            EXPECT_EQ(tree->root().bytes, after - before) << gpu << " " << t1 << " " << t2;
            EXPECT_EQ(tree->root().beforeBytes, before);
            EXPECT_EQ(tree->root().afterBytes, after);
        }
    }
}

}  // namespace
}  // namespace vramscope::analysis
