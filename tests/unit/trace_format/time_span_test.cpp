// The one "time span of a trace" rule (trace/time_span.h) on hand-built traces whose first and
// last event are picked by hand: which tables count, ends included or not, damaged intervals.

#include "vramscope/trace/time_span.h"

#include <gtest/gtest.h>

#include "vramscope/trace/summary.h"

namespace vramscope::trace {
namespace {

void addSpanKernel(TraceData& d, TimestampNs start, TimestampNs end) {
    KernelEvent k;
    k.startNs = start;
    k.endNs = end;
    d.kernels.append(k);
}

void addSpanMemory(TraceData& d, TimestampNs t) {
    MemoryEvent m;
    m.timestampNs = t;
    m.sizeBytes = 512;
    d.memory.append(m);
}

TEST(TimeSpan, IsNulloptWithoutEvents) {
    TraceData d;
    // Not events: an annotation, a communicator and the header's anchor.
    d.annotations.push_back(Annotation{100, 200});
    d.communicators.push_back(Communicator{.hash = 7, .initNs = 50});
    d.header.anchorTraceNs = 10;
    EXPECT_FALSE(traceTimeSpan(d).has_value());
    EXPECT_FALSE(traceTimeSpan(d, SpanEnds::StartsOnly).has_value());
}

TEST(TimeSpan, OneInstantHasZeroDuration) {
    TraceData d;
    addSpanMemory(d, 42);
    const auto span = traceTimeSpan(d);
    ASSERT_TRUE(span);
    EXPECT_EQ(*span, (TimeSpan{42, 42}));
    EXPECT_EQ(span->durationNs(), 0);
}

TEST(TimeSpan, CountsEveryEventTable) {
    // Each table in turn holds the only first or last event; the others sit at 500..600.
    enum Table { Memory, Counter, Kernel, Collective, Range, Oom };
    for (int table = Memory; table <= Oom; ++table) {
        for (const TimestampNs outlier : {TimestampNs{-30}, TimestampNs{9000}}) {
            TraceData d;
            addSpanMemory(d, 500);
            addSpanKernel(d, 550, 600);
            switch (table) {
                case Memory:
                    addSpanMemory(d, outlier);
                    break;
                case Counter:
                    d.counters.append(CounterSample{outlier});
                    break;
                case Kernel:
                    addSpanKernel(d, outlier, outlier);
                    break;
                case Collective:
                    d.collectives.append(CollectiveEvent{outlier, outlier});
                    break;
                case Range:
                    d.ranges.append(RangeEvent{outlier, outlier});
                    break;
                case Oom:
                    d.ooms.push_back(OomEvent{outlier});
                    break;
            }
            const TimeSpan want = outlier < 0 ? TimeSpan{-30, 600} : TimeSpan{500, 9000};
            EXPECT_EQ(traceTimeSpan(d), want) << "table " << table << " at " << outlier;
        }
    }
}

TEST(TimeSpan, IntervalEndsCountUnlessStartsOnly) {
    TraceData d;
    addSpanMemory(d, 100);
    addSpanKernel(d, 200, 5000);                       // the latest end
    d.collectives.append(CollectiveEvent{300, 4000});  // ends before the kernel
    d.ranges.append(RangeEvent{50, 4500});             // the earliest start
    EXPECT_EQ(traceTimeSpan(d), (TimeSpan{50, 5000}));
    // Starts only: the latest start is the collective's, 300.
    EXPECT_EQ(traceTimeSpan(d, SpanEnds::StartsOnly), (TimeSpan{50, 300}));
}

TEST(TimeSpan, EndBeforeStartCountsAsTheStart) {
    TraceData d;
    addSpanKernel(d, 1000, 10);  // damaged: its end is not a time the trace reached
    EXPECT_EQ(traceTimeSpan(d), (TimeSpan{1000, 1000}));
    d.ranges.append(RangeEvent{2000, -5});
    EXPECT_EQ(traceTimeSpan(d), (TimeSpan{1000, 2000}));
}

TEST(TimeSpan, UnorderedRowsGiveTheSameSpan) {
    TraceData d;
    for (TimestampNs t : {700, 20, 9000, 300}) {
        addSpanMemory(d, t);
        addSpanKernel(d, t, t + 5);
    }
    EXPECT_EQ(traceTimeSpan(d), (TimeSpan{20, 9005}));
}

TEST(TimeSpan, WidenJoinsSpans) {
    std::optional<TimeSpan> span;
    widen(span, std::nullopt);
    EXPECT_FALSE(span);
    widen(span, 10, 20);
    widen(span, std::optional<TimeSpan>(TimeSpan{-5, 15}));
    EXPECT_EQ(span, (TimeSpan{-5, 20}));
}

TEST(TimeSpan, SummaryFramesCarryTheSameSpan) {
    // The summary's cumulative span over batches equals the span of all rows at once: the
    // earliest is the OOM (-8), the latest the range's end (777).
    TraceData a;
    addSpanMemory(a, 10);
    addSpanKernel(a, 20, 30);
    TraceData b;
    b.ooms.push_back(OomEvent{-8});
    b.ranges.append(RangeEvent{40, 777});
    SummaryBuilder builder;
    builder.addBatch(a);
    builder.addBatch(b);
    const TraceSummary s = builder.takeDelta(true);
    EXPECT_EQ(s.firstNs, -8);
    EXPECT_EQ(s.lastNs, 777);
}

}  // namespace
}  // namespace vramscope::trace
