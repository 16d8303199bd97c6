#include "vramscope/analysis/memory/memory_roles.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ascii_text.h"

namespace vramscope::analysis {

using trace::MemoryAction;
using trace::TimestampNs;

const char* toString(MemoryRole role) {
    switch (role) {
        case MemoryRole::Parameters:
            return "parameters";
        case MemoryRole::Gradients:
            return "gradients";
        case MemoryRole::OptimizerState:
            return "optimizer_state";
        case MemoryRole::Activations:
            return "activations";
        case MemoryRole::Temporaries:
            return "temporaries";
        case MemoryRole::Inputs:
            return "inputs";
        case MemoryRole::Persistent:
            return "persistent";
        case MemoryRole::Unknown:
            break;
    }
    return "unknown";
}

const char* roleLabel(MemoryRole role) {
    switch (role) {
        case MemoryRole::OptimizerState:
            return "optimizer state";
        case MemoryRole::Persistent:
            return "persistent (parameters or optimizer state)";
        default:
            return toString(role);
    }
}

const char* toString(TrainingPhase phase) {
    switch (phase) {
        case TrainingPhase::Forward:
            return "forward";
        case TrainingPhase::Backward:
            return "backward";
        case TrainingPhase::Optimizer:
            return "optimizer";
        case TrainingPhase::None:
            break;
    }
    return "none";
}

MemoryRole roleOf(RoleRule rule) {
    switch (rule) {
        case RoleRule::OptimizerStateHeld:
            return MemoryRole::OptimizerState;
        case RoleRule::GradientFreedByOptimizer:
        case RoleRule::GradientHeld:
            return MemoryRole::Gradients;
        case RoleRule::ActivationFreedInBackward:
        case RoleRule::ActivationUnfinished:
        case RoleRule::ActivationKept:
            return MemoryRole::Activations;
        case RoleRule::Temporary:
            return MemoryRole::Temporaries;
        case RoleRule::Input:
            return MemoryRole::Inputs;
        case RoleRule::Parameter:
            return MemoryRole::Parameters;
        case RoleRule::PersistentBySize:
            return MemoryRole::Persistent;
        case RoleRule::HeldNoGradients:
        case RoleRule::HeldNoGradientSize:
        case RoleRule::HeldFromStep:
        case RoleRule::HeldEveryStep:
        case RoleRule::NoPhase:
        case RoleRule::NotClassified:
        case RoleRule::NoRule:
            break;
    }
    return MemoryRole::Unknown;
}

const char* describe(RoleRule rule) {
    switch (rule) {
        case RoleRule::NotClassified:
            return "not an allocation of this device and level";
        case RoleRule::OptimizerStateHeld:
            return "allocated in an optimizer step and held for good";
        case RoleRule::GradientFreedByOptimizer:
            return "allocated in backward, freed at or after the optimizer step";
        case RoleRule::GradientHeld:
            return "allocated in backward and held for good, with the size of a parameter and "
                   "of a gradient freed by an optimizer step";
        case RoleRule::ActivationFreedInBackward:
            return "allocated in forward, freed in backward";
        case RoleRule::ActivationUnfinished:
            return "allocated in forward; the step was cut short (an OOM, or the trace's end) "
                   "before its backward freed it";
        case RoleRule::ActivationKept:
            return "allocated in forward and kept past the optimizer step, as in other "
                   "iterations (a tensor kept every step)";
        case RoleRule::Temporary:
            return "allocated and freed within one phase";
        case RoleRule::Input:
            return "copied to the device outside any phase, freed after the forward";
        case RoleRule::Parameter:
            return "held for good from before the first forward, with a gradient's size; the "
                   "optimizer's state is created in the trace";
        case RoleRule::PersistentBySize:
            return "held for good from before the first forward, with a gradient's size: "
                   "parameters or optimizer state (the trace does not show the state created)";
        case RoleRule::HeldNoGradients:
            return "held for good from before the first forward; with no gradients in the trace, "
                   "parameters, optimizer state, buffers and workspaces cannot be told apart";
        case RoleRule::HeldNoGradientSize:
            return "held for good from before the first forward, but no gradient has its size: "
                   "a buffer, an input or a library workspace, not a parameter";
        case RoleRule::HeldFromStep:
            return "allocated in forward or backward and held for good, in one step only: a "
                   "cache, a library workspace or a tensor kept once";
        case RoleRule::HeldEveryStep:
            return "allocated in a step and held for good, again in other steps: a tensor kept "
                   "every step (see the leak)";
        case RoleRule::NoPhase:
            return "allocated outside any known phase (no range or stack frame names one)";
        case RoleRule::NoRule:
            break;
    }
    return "the phases it was allocated and freed in fit no row of the role table";
}

namespace {

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

/// Module construction and device moves (frames of torch/nn/modules/module.py and the like):
/// they precede training and are evidence of parameters, not of a forward.
bool isConstructionFrame(std::string_view name) {
    static const std::set<std::string_view> names = {"_apply",
                                                     "to",
                                                     "cuda",
                                                     "__init__",
                                                     "reset_parameters",
                                                     "load_state_dict",
                                                     "_load_from_state_dict",
                                                     "to_empty",
                                                     "half",
                                                     "bfloat16",
                                                     "float",
                                                     "type"};
    return names.count(name) > 0;
}

bool isInputFrame(const trace::TraceData& data, trace::StackId stack) {
    if (toInt(stack) >= data.stacks.size()) {
        return false;
    }
    for (const trace::FrameId f : data.stacks[toInt(stack)]) {
        const trace::Frame& frame = data.frames[toInt(f)];
        const std::string_view name = data.string(frame.name);
        const std::string_view file = data.string(frame.file);
        if (name == "aten::to" || name == "aten::_to_copy" || name == "aten::copy_" ||
            contains(file, "torch/utils/data")) {
            return true;
        }
    }
    return false;
}

}  // namespace

TrainingPhase phaseOfName(std::string_view name) {
    const std::string n = asciiLower(name);
    if (contains(n, "backward")) {
        return TrainingPhase::Backward;
    }
    if (isOptimizerStepName(name) || isOptimizerZeroGradName(name) || contains(n, "optimizer") ||
        contains(n, "zero_grad")) {
        return TrainingPhase::Optimizer;
    }
    // torch.compile runs a compiled graph's forward as the autograd Function "CompiledFunction"
    // (its backward is "CompiledFunctionBackward", caught above).
    if (contains(n, "forward") || contains(n, "compiledfunction")) {
        return TrainingPhase::Forward;
    }
    return TrainingPhase::None;
}

namespace {

/// A stack that builds or moves modules (a frame of torch/nn with a construction name, e.g.
/// `_apply` under `Module.to`): evidence of no training phase.
bool isConstructionStack(const trace::TraceData& data, trace::StackId stack) {
    if (toInt(stack) == 0 || toInt(stack) >= data.stacks.size()) {
        return false;
    }
    for (const trace::FrameId f : data.stacks[toInt(stack)]) {
        if (toInt(f) >= data.frames.size()) {
            continue;
        }
        std::string file(data.string(data.frames[toInt(f)].file));
        std::replace(file.begin(), file.end(), '\\', '/');
        if (contains(file, "torch/nn/") &&
            isConstructionFrame(data.string(data.frames[toInt(f)].name))) {
            return true;
        }
    }
    return false;
}

}  // namespace

TrainingPhase phaseOfStack(const trace::TraceData& data, trace::StackId stack) {
    if (toInt(stack) == 0 || toInt(stack) >= data.stacks.size()) {
        return TrainingPhase::None;
    }
    bool optimizer = false;
    bool backward = false;
    bool forward = false;
    bool construction = false;
    for (const trace::FrameId f : data.stacks[toInt(stack)]) {
        if (toInt(f) >= data.frames.size()) {
            continue;
        }
        const trace::Frame& frame = data.frames[toInt(f)];
        const std::string_view name = data.string(frame.name);
        std::string slashed(data.string(frame.file));  // Windows paths (MAGMA27's snapshot)
        std::replace(slashed.begin(), slashed.end(), '\\', '/');
        const std::string_view file = slashed;
        if (contains(file, "torch/optim/") || contains(file, "/optim/") ||
            contains(file, "optimizer.py")) {
            optimizer = true;
        } else if (contains(file, "torch/autograd/") ||
                   (contains(file, "torch/_tensor.py") && name == "backward")) {
            backward = true;
        } else if (contains(file, "torch/nn/")) {
            if (isConstructionFrame(name)) {
                construction = true;
            } else {
                forward = true;
            }
        } else if (file.empty()) {
            // Operators and record_function names (Kineto attribution): named by what they are.
            switch (phaseOfName(name)) {
                case TrainingPhase::Optimizer:
                    optimizer = true;
                    break;
                case TrainingPhase::Backward:
                    backward = true;
                    break;
                case TrainingPhase::Forward:
                    forward = true;
                    break;
                case TrainingPhase::None:
                    if (name.starts_with("nn.Module:")) {
                        forward = true;
                    }
                    break;
            }
        }
    }
    if (optimizer) {
        return TrainingPhase::Optimizer;
    }
    if (backward) {
        return TrainingPhase::Backward;
    }
    if (construction) {
        return TrainingPhase::None;
    }
    return forward ? TrainingPhase::Forward : TrainingPhase::None;
}

int64_t RoleBytes::total() const {
    int64_t n = 0;
    for (const int64_t b : bytes) {
        n += b;
    }
    return n;
}

namespace {

/// Per memory event of the device (any level), in time order: its phase and the runs begun by
/// then.
struct PhaseTimeline {
    std::vector<uint32_t> order;          // position -> memory event index, time order
    std::vector<uint32_t> positionOf;     // memory event index -> position (UINT32_MAX: other)
    std::vector<TrainingPhase> phase;     // position -> phase
    std::vector<uint32_t> run;            // position -> id of its phase run (0 = none)
    std::vector<uint32_t> optimizerRuns;  // position -> optimizer runs begun at or before it
    std::vector<uint32_t> forwardRuns;
    std::vector<uint32_t> backwardRuns;
    bool fromRanges = false;
    bool fromStacks = false;
    TimestampNs firstForwardNs = std::numeric_limits<TimestampNs>::max();
    uint32_t totalOptimizerRuns = 0;
    uint32_t totalBackwardRuns = 0;
};

/// Phase of each event from ranges (rule 1), in time order of `order`.
std::vector<TrainingPhase> phasesFromRanges(const trace::TraceData& data, trace::DeviceIndex device,
                                            const std::vector<uint32_t>& order) {
    std::vector<TrainingPhase> out(order.size(), TrainingPhase::None);
    struct PhaseRange {
        TimestampNs start, end;
        TrainingPhase phase;
    };
    std::vector<PhaseRange> ranges;
    const trace::RangeEvents& r = data.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
        if (r.kind[i] != trace::RangeKind::Nvtx && r.kind[i] != trace::RangeKind::UserAnnotation) {
            continue;
        }
        if (r.device[i] != device && r.device[i] != trace::kHostDevice) {
            continue;
        }
        const TrainingPhase p = phaseOfName(data.string(r.name[i]));
        if (p != TrainingPhase::None && r.endNs[i] > r.startNs[i]) {
            ranges.push_back({r.startNs[i], r.endNs[i], p});
        }
    }
    if (ranges.empty()) {
        return out;
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const PhaseRange& a, const PhaseRange& b) { return a.start < b.start; });
    // Sweep: active ranges keyed by start (the innermost of nested ranges starts last).
    std::multimap<TimestampNs, std::pair<TimestampNs, TrainingPhase>> active;
    size_t next = 0;
    for (size_t p = 0; p < order.size(); ++p) {
        const TimestampNs t = data.memory.timestampNs[order[p]];
        while (next < ranges.size() && ranges[next].start <= t) {
            active.emplace(ranges[next].start,
                           std::make_pair(ranges[next].end, ranges[next].phase));
            ++next;
        }
        TrainingPhase endingNow = TrainingPhase::None;
        for (auto it = active.begin(); it != active.end();) {
            if (it->second.first <= t) {
                if (it->second.first == t) {
                    endingNow = it->second.second;
                }
                it = active.erase(it);
            } else {
                ++it;
            }
        }
        if (!active.empty()) {
            out[p] = active.rbegin()->second.second;
        } else {
            // At the very time a range ends (its pop and the event share a timestamp, so their
            // order is unknown) and no other phase is open, the event is taken as the range's.
            out[p] = endingNow;
        }
    }
    return out;
}

PhaseTimeline buildPhaseTimeline(const trace::TraceData& data, trace::DeviceIndex device) {
    PhaseTimeline tl;
    const trace::MemoryEvents& m = data.memory;
    tl.positionOf.assign(m.size(), UINT32_MAX);
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.device[i] == device) {
            tl.order.push_back(uint32_t(i));
        }
    }
    std::stable_sort(tl.order.begin(), tl.order.end(),
                     [&](uint32_t a, uint32_t b) { return m.timestampNs[a] < m.timestampNs[b]; });
    for (size_t p = 0; p < tl.order.size(); ++p) {
        tl.positionOf[tl.order[p]] = uint32_t(p);
    }
    const size_t n = tl.order.size();
    const std::vector<TrainingPhase> byRange = phasesFromRanges(data, device, tl.order);
    std::vector<TrainingPhase> byStack(n, TrainingPhase::None);
    std::vector<bool> construction(n, false);  // builds or moves modules: ends a carry
    std::unordered_map<uint32_t, std::pair<TrainingPhase, bool>> stackCache;
    bool anyStack = false;
    for (size_t p = 0; p < n; ++p) {
        const trace::StackId s = m.stack[tl.order[p]];
        if (m.kind[tl.order[p]] == trace::MemoryKind::PreExisting) {
            continue;  // placed at the trace's start, but allocated before it: no evidence
        }
        if (toInt(s) == 0) {
            continue;
        }
        anyStack = true;
        auto [it, fresh] = stackCache.try_emplace(toInt(s), TrainingPhase::None, false);
        if (fresh) {
            it->second.first = phaseOfStack(data, s);
            it->second.second =
                it->second.first == TrainingPhase::None && isConstructionStack(data, s);
        }
        byStack[p] = it->second.first;
        construction[p] = it->second.second;
    }
    tl.phase.assign(n, TrainingPhase::None);
    // Own evidence first; remember whether it came from a stack (carry rule 3).
    std::vector<bool> stackEvidence(n, false);
    for (size_t p = 0; p < n; ++p) {
        if (byRange[p] != TrainingPhase::None) {
            tl.phase[p] = byRange[p];
            tl.fromRanges = true;
        } else if (byStack[p] != TrainingPhase::None) {
            tl.phase[p] = byStack[p];
            stackEvidence[p] = true;
            tl.fromStacks = true;
        }
    }
    // Rule 3: fill events without evidence between stack evidence.
    std::vector<TrainingPhase> nextEvidence(n + 1, TrainingPhase::None);
    for (size_t p = n; p-- > 0;) {
        nextEvidence[p] = tl.phase[p] != TrainingPhase::None ? tl.phase[p] : nextEvidence[p + 1];
    }
    TrainingPhase lastStackPhase = TrainingPhase::None;
    for (size_t p = 0; p < n; ++p) {
        if (tl.phase[p] != TrainingPhase::None) {
            lastStackPhase = stackEvidence[p] ? tl.phase[p] : TrainingPhase::None;
            continue;
        }
        if (construction[p]) {
            lastStackPhase = TrainingPhase::None;  // building modules is no training phase
            continue;
        }
        if (lastStackPhase == TrainingPhase::None ||
            m.kind[tl.order[p]] == trace::MemoryKind::PreExisting) {
            continue;
        }
        const bool noStack = toInt(m.stack[tl.order[p]]) == 0;
        // The loss: Python code after the forward's modules and before backward is entered.
        const bool loss = !noStack && lastStackPhase == TrainingPhase::Forward &&
                          nextEvidence[p + 1] == TrainingPhase::Backward;
        if (nextEvidence[p + 1] == lastStackPhase || loss ||
            (noStack && anyStack && lastStackPhase == TrainingPhase::Backward)) {
            tl.phase[p] = lastStackPhase;
        }
    }
    // Runs.
    tl.run.assign(n, 0);
    tl.optimizerRuns.assign(n, 0);
    tl.forwardRuns.assign(n, 0);
    tl.backwardRuns.assign(n, 0);
    TrainingPhase current = TrainingPhase::None;
    uint32_t runId = 0;
    uint32_t opt = 0, fwd = 0, bwd = 0;
    for (size_t p = 0; p < n; ++p) {
        const TrainingPhase ph = tl.phase[p];
        if (ph != TrainingPhase::None && ph != current) {
            current = ph;
            ++runId;
            opt += ph == TrainingPhase::Optimizer;
            fwd += ph == TrainingPhase::Forward;
            bwd += ph == TrainingPhase::Backward;
        }
        if (ph == TrainingPhase::Forward) {
            tl.firstForwardNs = std::min(tl.firstForwardNs, m.timestampNs[tl.order[p]]);
        }
        tl.run[p] = ph == TrainingPhase::None ? 0 : runId;
        tl.optimizerRuns[p] = opt;
        tl.forwardRuns[p] = fwd;
        tl.backwardRuns[p] = bwd;
    }
    tl.totalOptimizerRuns = opt;
    tl.totalBackwardRuns = bwd;
    return tl;
}

/// What classify() knows of one allocation before the rules run.
struct Lifetime {
    uint32_t event = 0;
    uint32_t allocPos = 0;          // position in PhaseTimeline
    uint32_t freePos = UINT32_MAX;  // position of its free, UINT32_MAX = never freed
    bool held = false;              // not freed before the end of the last iteration
    bool candidate = false;         // ParameterCandidate of the header
};

uint64_t stackSizeKey(uint32_t stack, uint64_t size) {
    return (uint64_t(stack) << 40) ^ size;
}

}  // namespace

namespace {

/// Applies the header's decision table to one device: first collects, over every allocation,
/// the evidence the rows compare against (gradient sizes, parameter candidates, keys kept in
/// several runs), then gives each allocation its row. Holds references to its inputs.
class RoleClassifier {
public:
    RoleClassifier(const trace::TraceData& data, const AllocationIndex& index,
                   const IterationSet& iterations)
        : m_data(data), m_index(index), m_tl(buildPhaseTimeline(data, index.device())) {
        m_haveIterations = iterations.count() > 0;
        if (m_haveIterations) {
            m_lastEnd = iterations.iterations.back().endNs;
            m_lastStart = iterations.iterations.back().startNs;
            m_firstEnd = iterations.iterations.front().endNs;
        }
        for (const trace::OomEvent& o : data.ooms) {
            if (o.device == index.device()) {
                m_oomTimes.push_back(o.timestampNs);
            }
        }
        std::sort(m_oomTimes.begin(), m_oomTimes.end());
    }

    const PhaseTimeline& timeline() const { return m_tl; }

    /// Every allocation of the index with its free and whether it is held for good.
    std::vector<Lifetime> lifetimes() const {
        std::vector<Lifetime> lives;
        for (size_t p = 0; p < m_index.size(); ++p) {
            if (!m_index.isAlloc(p)) {
                continue;
            }
            Lifetime l;
            l.event = m_index.eventAt(p);
            l.allocPos = m_tl.positionOf[l.event];
            const uint32_t f = m_index.freePosition(p);
            if (f != AllocationIndex::kNever) {
                l.freePos = m_tl.positionOf[m_index.eventAt(f)];
            }
            l.held = f == AllocationIndex::kNever ||
                     (m_haveIterations && m_index.timeAt(f) >= m_lastEnd);
            lives.push_back(l);
        }
        return lives;
    }

    /// Marks the parameter candidates and collects the evidence the rows compare against.
    void gather(std::vector<Lifetime>& lives) {
        // Keys held again after the first iteration (a tensor kept every step is no parameter):
        // made after the first iteration and alive from before the last one to its end (the last
        // iteration's own gradients, freed after it, are not).
        std::unordered_set<uint64_t> heldLater;
        for (const Lifetime& l : lives) {
            const TimestampNs t = time(l.event);
            if (l.held && t >= m_firstEnd && t < m_lastStart) {
                heldLater.insert(key(l.event));
            }
        }
        for (Lifetime& l : lives) {
            const TrainingPhase a = phaseAt(l.allocPos);
            const bool preExisting = m_data.memory.kind[l.event] == trace::MemoryKind::PreExisting;
            const TimestampNs t = time(l.event);
            l.candidate = l.held && a != TrainingPhase::Optimizer &&
                          (preExisting || (t < m_tl.firstForwardNs && t < m_firstEnd)) &&
                          !heldLater.count(key(l.event));
            if (l.candidate) {
                m_candidateSizes.insert(size(l.event));
            }
            if (a == TrainingPhase::Optimizer && l.held && !sameRun(l)) {
                m_stateCreated = true;
            }
            if (a == TrainingPhase::Backward && freed(l) && !sameRun(l) &&
                (phaseAt(l.freePos) == TrainingPhase::Optimizer || optimizerBetween(l))) {
                m_gradientSizes.insert(size(l.event));
            }
            if (l.held && (a == TrainingPhase::Forward || a == TrainingPhase::Backward)) {
                countRun(m_heldRuns[key(l.event)], m_tl.run[l.allocPos]);
            }
            if (a == TrainingPhase::Forward && l.held && optimizerBetween(l)) {
                countRun(m_keptRuns[key(l.event)], m_tl.forwardRuns[l.allocPos]);
            }
        }
    }

    /// The first row of the decision table that `l` meets (gather() must have run).
    RoleRule ruleOf(const Lifetime& l) const {
        const TrainingPhase a = phaseAt(l.allocPos);
        const TrainingPhase f = phaseAt(l.freePos);
        const uint64_t bytes = size(l.event);
        if (freed(l) && a != TrainingPhase::None && sameRun(l)) {
            return RoleRule::Temporary;
        }
        if (a == TrainingPhase::Optimizer && l.held) {
            return RoleRule::OptimizerStateHeld;
        }
        if (a == TrainingPhase::Backward && freed(l) &&
            (f == TrainingPhase::Optimizer || optimizerBetween(l))) {
            return RoleRule::GradientFreedByOptimizer;
        }
        if (a == TrainingPhase::Backward && l.held && m_candidateSizes.count(bytes) &&
            m_gradientSizes.count(bytes)) {
            return RoleRule::GradientHeld;
        }
        if (a == TrainingPhase::Forward) {
            if (freed(l) && f == TrainingPhase::Backward && !optimizerBetween(l)) {
                return RoleRule::ActivationFreedInBackward;
            }
            if (f != TrainingPhase::Backward && !optimizerBetween(l) && cutShort(l)) {
                return RoleRule::ActivationUnfinished;
            }
            if (l.held && optimizerBetween(l) && runsOf(m_keptRuns, l.event) >= 2) {
                return RoleRule::ActivationKept;
            }
        }
        if (a == TrainingPhase::None && isInputFrame(m_data, m_data.memory.stack[l.event]) &&
            (!freed(l) || m_tl.forwardRuns[l.freePos] > m_tl.forwardRuns[l.allocPos])) {
            return RoleRule::Input;
        }
        if (l.candidate) {
            return m_gradientSizes.empty()         ? RoleRule::HeldNoGradients
                   : !m_gradientSizes.count(bytes) ? RoleRule::HeldNoGradientSize
                   : m_stateCreated                ? RoleRule::Parameter
                                                   : RoleRule::PersistentBySize;
        }
        if (l.held && (a == TrainingPhase::Forward || a == TrainingPhase::Backward)) {
            return runsOf(m_heldRuns, l.event) >= 2 ? RoleRule::HeldEveryStep
                                                    : RoleRule::HeldFromStep;
        }
        return a == TrainingPhase::None ? RoleRule::NoPhase : RoleRule::NoRule;
    }

    TrainingPhase phaseAt(uint32_t pos) const {
        return pos == UINT32_MAX ? TrainingPhase::None : m_tl.phase[pos];
    }

private:
    using RunCount = std::pair<uint32_t, uint32_t>;  // (last run seen, distinct runs)
    static void countRun(RunCount& c, uint32_t run) {
        if (c.second == 0 || c.first != run) {
            ++c.second;
            c.first = run;
        }
    }
    uint32_t runsOf(const std::unordered_map<uint64_t, RunCount>& runs, uint32_t event) const {
        const auto it = runs.find(key(event));
        return it == runs.end() ? 0 : it->second.second;
    }
    TimestampNs time(uint32_t event) const { return m_data.memory.timestampNs[event]; }
    uint64_t size(uint32_t event) const { return m_data.memory.sizeBytes[event]; }
    uint64_t key(uint32_t event) const {
        return stackSizeKey(toInt(m_data.memory.stack[event]), size(event));
    }
    static bool freed(const Lifetime& l) { return l.freePos != UINT32_MAX; }
    bool sameRun(const Lifetime& l) const {
        return freed(l) && m_tl.run[l.freePos] == m_tl.run[l.allocPos];
    }
    /// An optimizer run began after the allocation and at or before its free (or the end).
    bool optimizerBetween(const Lifetime& l) const {
        const uint32_t after = freed(l) ? m_tl.optimizerRuns[l.freePos] : m_tl.totalOptimizerRuns;
        return after > m_tl.optimizerRuns[l.allocPos];
    }
    /// Its step was cut short: an OOM between its allocation and its free, or never freed with
    /// no backward after it.
    bool cutShort(const Lifetime& l) const {
        if (m_tl.totalBackwardRuns == 0) {
            return false;  // no backward anywhere (inference, zeroth-order): none was awaited
        }
        if (!freed(l) && m_tl.backwardRuns[l.allocPos] == m_tl.totalBackwardRuns) {
            return true;
        }
        const TimestampNs to =
            freed(l) ? time(m_tl.order[l.freePos]) : std::numeric_limits<TimestampNs>::max();
        auto it = std::lower_bound(m_oomTimes.begin(), m_oomTimes.end(), time(l.event));
        return it != m_oomTimes.end() && *it < to;
    }

    const trace::TraceData& m_data;
    const AllocationIndex& m_index;
    PhaseTimeline m_tl;
    bool m_haveIterations = false;
    TimestampNs m_lastEnd = 0;
    TimestampNs m_lastStart = 0;
    TimestampNs m_firstEnd = std::numeric_limits<TimestampNs>::max();
    std::vector<TimestampNs> m_oomTimes;
    std::set<uint64_t> m_gradientSizes;
    std::set<uint64_t> m_candidateSizes;
    bool m_stateCreated = false;
    std::unordered_map<uint64_t, RunCount> m_keptRuns;  // forward, held past an optimizer run
    std::unordered_map<uint64_t, RunCount> m_heldRuns;  // forward or backward, held for good
};

}  // namespace

MemoryRoles MemoryRoles::classify(const trace::TraceData& data, const AllocationIndex& index,
                                  const IterationSet& iterations) {
    MemoryRoles out;
    out.m_device = index.device();
    out.m_level = index.level();
    RoleClassifier classifier(data, index, iterations);
    const PhaseTimeline& tl = classifier.timeline();
    out.m_hasPhases = tl.fromRanges || tl.fromStacks;
    out.m_phaseSource = tl.fromRanges && tl.fromStacks ? "ranges and stack frames"
                        : tl.fromRanges                ? "ranges"
                        : tl.fromStacks                ? "stack frames"
                                                       : "none";
    std::vector<Lifetime> lives = classifier.lifetimes();
    classifier.gather(lives);
    out.m_events.reserve(lives.size());
    for (const Lifetime& l : lives) {
        const RoleRule rule = classifier.ruleOf(l);
        out.m_events.push_back(
            {l.event, rule, classifier.phaseAt(l.allocPos), classifier.phaseAt(l.freePos)});
        ++out.m_perRule[size_t(rule)];
    }
    std::sort(out.m_events.begin(), out.m_events.end(),
              [](const Entry& x, const Entry& y) { return x.event < y.event; });
    return out;
}

RoleRule MemoryRoles::ruleOfEvent(size_t eventIndex) const {
    auto it = std::lower_bound(m_events.begin(), m_events.end(), eventIndex,
                               [](const Entry& e, size_t i) { return e.event < i; });
    return it != m_events.end() && it->event == eventIndex ? it->rule : RoleRule::NotClassified;
}

std::pair<TrainingPhase, TrainingPhase> MemoryRoles::phasesOfEvent(size_t eventIndex) const {
    auto it = std::lower_bound(m_events.begin(), m_events.end(), eventIndex,
                               [](const Entry& e, size_t i) { return e.event < i; });
    if (it == m_events.end() || it->event != eventIndex) {
        return {TrainingPhase::None, TrainingPhase::None};
    }
    return {it->allocPhase, it->freePhase};
}

}  // namespace vramscope::analysis
