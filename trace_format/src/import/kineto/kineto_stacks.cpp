#include "import/kineto/kineto_stacks.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace vramscope::trace::kineto {
namespace {

/// Open spans one memory event looks at, at most: a damaged file with partly overlapping spans
/// can leave closed ones under an open one, and skipping them must not make the import quadratic.
constexpr size_t kMaxInspectedSpans = 4096;

int64_t spanEnd(const RawSpan& s) {
    int64_t end = 0;
    return __builtin_add_overflow(s.startNs, s.durNs, &end) ? std::numeric_limits<int64_t>::max()
                                                            : end;
}

/// Interns each span's frame once per (name, kind), and remembers it per span.
class FrameCache {
public:
    FrameCache(const std::vector<RawSpan>& spans, TraceData& data)
        : m_spans(spans), m_data(data), m_bySpan(spans.size(), kUnset) {}

    FrameId frameOf(uint32_t span) {
        if (m_bySpan[span] == kUnset) {
            m_bySpan[span] = byName(m_spans[span]);
        }
        return m_bySpan[span];
    }

private:
    static constexpr FrameId kUnset{UINT32_MAX};

    FrameId byName(const RawSpan& s) {
        auto& cache = s.python ? m_python : m_operators;
        auto it = cache.find(s.name);
        if (it != cache.end()) {
            return it->second;
        }
        const Frame f = s.python ? pythonFrame(s.name, m_data) : Frame{m_data.intern(s.name), 0, 0};
        const FrameId id = m_data.internFrame(f);
        cache.emplace(s.name, id);
        return id;
    }

    const std::vector<RawSpan>& m_spans;
    TraceData& m_data;
    std::vector<FrameId> m_bySpan;
    std::unordered_map<std::string_view, FrameId> m_operators;
    std::unordered_map<std::string_view, FrameId> m_python;
};

}  // namespace

Frame pythonFrame(std::string_view name, TraceData& data) {
    // "<file>(<line>): <function>"; a file name may itself hold "): ", so try each occurrence.
    for (size_t p = name.find("): "); p != std::string_view::npos; p = name.find("): ", p + 1)) {
        size_t q = p;
        while (q > 0 && name[q - 1] >= '0' && name[q - 1] <= '9') {
            --q;
        }
        const size_t digits = p - q;
        if (digits == 0 || digits > 9 || q < 2 || name[q - 1] != '(') {
            continue;
        }
        int32_t line = 0;
        for (size_t i = q; i < p; ++i) {
            line = line * 10 + (name[i] - '0');
        }
        return Frame{data.intern(name.substr(p + 3)), data.intern(name.substr(0, q - 1)), line};
    }
    return Frame{data.intern(name), 0, 0};
}

void forEachEnclosing(const std::vector<RawSpan>& spans, const std::vector<LanePoint>& points,
                      size_t maxSpans, const EnclosingVisitor& visit) {
    if (spans.empty() || points.empty()) {
        return;
    }
    auto spanLane = [&](size_t i) { return std::make_tuple(spans[i].pid, spans[i].threadId); };
    auto pointLane = [&](size_t i) { return std::make_tuple(points[i].pid, points[i].threadId); };

    // Kineto writes events per producer (ops, then Python calls, then memory), not in time order.
    // Sort keys: lane, start, then the longer one first (it encloses the other), then a Python
    // call first (Python calls into ops), then file order (a parent op is written before its
    // children).
    struct SpanKey {
        int64_t pid;
        uint64_t tid;
        int64_t start;
        int64_t negEnd;
        bool op;
        uint32_t index;
        auto tie() const { return std::tie(pid, tid, start, negEnd, op, index); }
    };
    std::vector<SpanKey> keys(spans.size());
    for (uint32_t i = 0; i < spans.size(); ++i) {
        const RawSpan& x = spans[i];
        // dur > 0, so the end is above INT64_MIN and negates.
        keys[i] = {x.pid, x.threadId, x.startNs, -spanEnd(x), !x.python, i};
    }
    std::sort(keys.begin(), keys.end(),
              [](const SpanKey& a, const SpanKey& b) { return a.tie() < b.tie(); });
    std::vector<uint32_t> spanOrder(spans.size());
    for (size_t k = 0; k < keys.size(); ++k) {
        spanOrder[k] = keys[k].index;
    }
    std::vector<uint32_t> pointOrder(points.size());
    std::iota(pointOrder.begin(), pointOrder.end(), 0u);
    std::sort(pointOrder.begin(), pointOrder.end(), [&](uint32_t a, uint32_t b) {
        if (pointLane(a) != pointLane(b)) {
            return pointLane(a) < pointLane(b);
        }
        return points[a].tsNs != points[b].tsNs ? points[a].tsNs < points[b].tsNs : a < b;
    });

    std::vector<uint32_t> open;  // spans started and not known to be closed, outermost first
    std::vector<uint32_t> enclosing;
    size_t next = 0;  // position in spanOrder
    for (size_t k = 0; k < pointOrder.size(); ++k) {
        const uint32_t m = pointOrder[k];
        const int64_t t = points[m].tsNs;
        if (k > 0 && pointLane(pointOrder[k - 1]) != pointLane(m)) {
            open.clear();  // another thread
        }
        while (next < spanOrder.size() && spanLane(spanOrder[next]) < pointLane(m)) {
            ++next;
        }
        while (next < spanOrder.size() && spanLane(spanOrder[next]) == pointLane(m) &&
               spans[spanOrder[next]].startNs <= t) {
            const uint32_t s = spanOrder[next++];
            while (!open.empty() && spanEnd(spans[open.back()]) <= spans[s].startNs) {
                open.pop_back();
            }
            open.push_back(s);
        }
        while (!open.empty() && spanEnd(spans[open.back()]) <= t) {
            open.pop_back();
        }
        enclosing.clear();
        size_t inspected = 0;
        for (size_t k = open.size();
             k-- > 0 && inspected < kMaxInspectedSpans && enclosing.size() < maxSpans;
             ++inspected) {
            if (spanEnd(spans[open[k]]) > t) {  // else closed under a span that outlives it
                enclosing.push_back(open[k]);
            }
        }
        visit(m, enclosing);
    }
}

std::vector<StackId> memoryStacks(const RawKineto& raw, TraceData& data) {
    std::vector<StackId> out(raw.memory.size(), StackId{0});
    std::vector<LanePoint> points(raw.memory.size());
    for (size_t i = 0; i < raw.memory.size(); ++i) {
        points[i] = {raw.memory[i].pid, raw.memory[i].threadId, raw.memory[i].tsNs};
    }
    FrameCache frames(raw.spans, data);
    std::vector<FrameId> stack;
    forEachEnclosing(raw.spans, points, kMaxStackFrames,
                     [&](size_t m, const std::vector<uint32_t>& enclosing) {
                         stack.clear();
                         for (uint32_t s : enclosing) {
                             stack.push_back(frames.frameOf(s));
                         }
                         out[m] = data.internStack(stack);
                     });
    return out;
}

std::vector<std::string_view> launchOperandTypes(const RawKineto& raw) {
    std::vector<std::string_view> out(raw.launches.size());
    const bool any = std::any_of(raw.spans.begin(), raw.spans.end(),
                                 [](const RawSpan& s) { return !s.inputType.empty(); });
    if (!any) {
        return out;
    }
    std::vector<LanePoint> points(raw.launches.size());
    for (size_t i = 0; i < raw.launches.size(); ++i) {
        points[i] = {raw.launches[i].pid, raw.launches[i].threadId, raw.launches[i].tsNs};
    }
    forEachEnclosing(raw.spans, points, kMaxStackFrames,
                     [&](size_t l, const std::vector<uint32_t>& enclosing) {
                         for (uint32_t s : enclosing) {  // innermost first
                             if (!raw.spans[s].inputType.empty()) {
                                 out[l] = raw.spans[s].inputType;
                                 return;
                             }
                         }
                     });
    return out;
}

}  // namespace vramscope::trace::kineto
