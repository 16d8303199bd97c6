#pragma once
// Roles of memory: what each allocation of a device is (parameters, gradients, optimizer state,
// activations, temporaries, inputs), inferred from its lifetime and from the training phase
// (forward, backward, optimizer) it was allocated and freed in; and the bytes of each role alive
// at a time, at the peak and at each iteration's peak.
//
// Phases (per memory event, alloc or free), in this order of evidence:
// 1. Ranges: the event lies inside a host range (NVTX, record_function annotation; GPU
//    projections are left out) whose name names a phase (phaseOfName): "forward", "backward",
//    "Optimizer.step#AdamW.step", "optimizer", "zero_grad", "autograd::engine::evaluate_function:
//    MmBackward0"... The innermost such range wins; an event at the very end of a range, with no
//    other phase range open, is taken as inside it (the two share a timestamp: order unknown).
// 2. Stack frames: the event's own stack (phaseOfStack): a frame of torch/optim/ or an
//    optimizer's step / zero_grad -> optimizer; a frame of torch/autograd/, torch/_tensor.py's
//    backward or an operator named like "...Backward0" -> backward; a frame of torch/nn/ (module
//    forward, functional) or "nn.Module: X" -> forward. Optimizer beats backward beats forward
//    (an optimizer step may run modules; backward calls into nn/ code).
// 3. Between evidence: an event with neither takes the phase of the last event before it that
//    had stack evidence when the next event with evidence has the same phase (it lies inside
//    that phase); or when it has no stack at all, the last evidence is backward and the device
//    records stacks (a PyTorch snapshot records Python frames for every allocation made from a
//    Python thread; one without frames was made by a C++ thread, and in training that is the
//    autograd engine running backward); or when it has a stack (the Python thread), the last
//    evidence is forward and the next is backward: the loss and what else the step computes
//    between the model's forward and its call into backward. An event after a range's end never
//    inherits the range, and an event that builds or moves modules (`_apply`, `to` in torch/nn)
//    ends what the ones after it inherit.
// 4. Otherwise the event has no phase. With no evidence on the whole device (no phase ranges, no
//    stacks that name a phase), only lifetimes are used (see below).
// A phase "run" is a maximal stretch of events of one phase; events without a phase do not end a
// run. "Held for good": not freed before the end of the last iteration (never freed, with no
// iterations).
//
// Decision table (RoleRule, first matching row; the evidence each row needs is in its name):
// | rule                    | role            | evidence                                         |
// |-------------------------|-----------------|--------------------------------------------------|
// | OptimizerStateHeld      | optimizer state | allocated in an optimizer run, held for good     |
// | GradientFreedByOptimizer| gradients       | allocated in backward, freed in an optimizer run |
// |                         |                 | or after one began                               |
// | GradientHeld            | gradients       | allocated in backward, held for good, of the size|
// |                         |                 | of a ParameterCandidate and of a gradient freed  |
// |                         |                 | by an optimizer step (without one, a backward    |
// |                         |                 | allocation held for good may be a workspace)     |
// | ActivationFreedInBackward| activations    | allocated in forward, freed in a later backward  |
// |                         |                 | run, before any optimizer run                    |
// | ActivationUnfinished    | activations     | allocated in forward, not freed in backward and  |
// |                         |                 | no optimizer run before its free, and its step   |
// |                         |                 | cut short: an OOM of the device between its      |
// |                         |                 | allocation and its free, or never freed with no  |
// |                         |                 | backward after it (the trace ends in its forward)|
// |                         |                 | on a device that runs backward somewhere         |
// | ActivationKept          | activations     | allocated in forward, held for good past the next|
// |                         |                 | optimizer run, its (stack, size) kept so in two  |
// |                         |                 | or more forward runs (a tensor kept every step)  |
// | Temporary               | temporaries     | allocated and freed in the same phase run        |
// | Input                   | inputs          | allocated outside any phase, by a host-to-device |
// |                         |                 | copy (aten::to / _to_copy / copy_ / torch/utils/ |
// |                         |                 | data frames), freed after the next forward began |
// | Parameter               | parameters      | ParameterCandidate, of a gradient's size, and the|
// |                         |                 | trace shows the optimizer creating its state     |
// |                         |                 | (an OptimizerStateHeld allocation exists)        |
// | PersistentBySize        | persistent      | ParameterCandidate of a gradient's size, no state|
// |                         |                 | created in the trace: parameters or optimizer    |
// |                         |                 | state (Adam's moments have the parameters' size) |
// | HeldNoGradients         | unknown         | ParameterCandidate on a device without gradients |
// |                         |                 | (no backward, or no phases): parameters, state,  |
// |                         |                 | buffers or workspaces cannot be told apart       |
// | HeldNoGradientSize      | unknown         | ParameterCandidate with no gradient of its size  |
// |                         |                 | (buffers, inputs, library workspaces)            |
// | HeldFromStep            | unknown         | allocated in forward or backward and held for    |
// |                         |                 | good, in one run only (a cache, a library        |
// |                         |                 | workspace, a tensor kept once)                   |
// | HeldEveryStep           | unknown         | allocated in backward (or forward with no        |
// |                         |                 | optimizer run after it) and held for good, its   |
// |                         |                 | (stack, size) so in two or more runs: the leak   |
// | NoPhase                 | unknown         | allocated outside any known phase, no row above  |
// | NoRule                  | unknown         | none of the above (the phases it was allocated   |
// |                         |                 | and freed in fit no row: see phasesOfEvent)      |
// ParameterCandidate: held for good, allocated outside any optimizer run before the device's
// first forward event and before the end of the first iteration (or before recording began:
// MemoryKind::PreExisting), and its (stack, size) not held again by an allocation made after the
// first iteration before the last one began and held to the end (a tensor kept every step:
// the leak). "A gradient's
// size" = the size of some GradientFreedByOptimizer allocation (a parameter's gradient has its
// shape and, under autocast, its dtype); buffers, inputs and library workspaces held for good
// have no gradient of their size and stay unknown.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vramscope/analysis/memory/allocation_index.h"
#include "vramscope/analysis/time/iterations.h"
#include "vramscope/trace/trace_data.h"

namespace vramscope::analysis {

/// What an allocation is. toString() gives the report's JSON keys.
enum class MemoryRole : uint8_t {
    Parameters,
    Gradients,
    OptimizerState,
    Activations,
    Temporaries,
    Inputs,
    Persistent,  ///< parameters or optimizer state that cannot be told apart
    Unknown,
};
inline constexpr size_t kMemoryRoleCount = 8;
/// "parameters", "gradients", "optimizer_state", "activations", "temporaries", "inputs",
/// "persistent", "unknown" (the JSON keys of roles_at_peak).
const char* toString(MemoryRole role);
/// For people: "parameters", "gradients", "optimizer state", ..., "persistent (parameters or
/// optimizer state)", "unknown".
const char* roleLabel(MemoryRole role);

/// Training phase of an event.
enum class TrainingPhase : uint8_t { None, Forward, Backward, Optimizer };
/// "none", "forward", "backward", "optimizer".
const char* toString(TrainingPhase phase);

/// The row of the decision table (header comment) that gave a role.
enum class RoleRule : uint8_t {
    NotClassified,  ///< not an allocation of the index (a free, another device or level)
    OptimizerStateHeld,
    GradientFreedByOptimizer,
    GradientHeld,
    ActivationFreedInBackward,
    ActivationUnfinished,
    ActivationKept,
    Temporary,
    Input,
    Parameter,
    PersistentBySize,
    HeldNoGradients,
    HeldNoGradientSize,
    HeldFromStep,
    HeldEveryStep,
    NoPhase,
    NoRule,
};
inline constexpr size_t kRoleRuleCount = 17;
/// One sentence for a rule ("allocated in forward, freed in backward"), for the Details dock and
/// the report's rules table.
const char* describe(RoleRule rule);
/// The role a rule gives.
MemoryRole roleOf(RoleRule rule);

/// The phase a range name names (rule 1 of the header), TrainingPhase::None when none:
/// case-insensitive; "backward" anywhere -> Backward; isOptimizerStepName / zero_grad names,
/// "optimizer" anywhere -> Optimizer; "forward" or "CompiledFunction" (torch.compile's graph)
/// anywhere -> Forward.
TrainingPhase phaseOfName(std::string_view name);

/// The phase a stack names (rule 2 of the header), TrainingPhase::None when none.
TrainingPhase phaseOfStack(const trace::TraceData& data, trace::StackId stack);

/// Bytes per role, indexed by MemoryRole.
struct RoleBytes {
    std::array<int64_t, kMemoryRoleCount> bytes{};
    int64_t& operator[](MemoryRole r) { return bytes[size_t(r)]; }
    int64_t operator[](MemoryRole r) const { return bytes[size_t(r)]; }
    int64_t total() const;
};

/// The roles at one moment: the live set then, by role.
struct RolesAt {
    trace::TimestampNs timeNs = 0;
    RoleBytes bytes;
    /// Bytes of activations among `bytes` that were kept past their iteration (ActivationKept):
    /// checkpointing frees activations between forward and backward, not these.
    int64_t keptActivationBytes = 0;
    uint64_t allocations = 0;
    /// The same bytes by the rule that gave them (indexed by RoleRule): which rows of the table
    /// the figures rest on.
    std::array<int64_t, kRoleRuleCount> ruleBytes{};
};

/// Roles of one iteration at its allocated peak.
struct IterationRoles {
    int64_t number = 0;
    int64_t peakBytes = 0;  ///< the allocated curve's highest value in the iteration
    RolesAt roles;
};

/// Roles of every allocation of one device at its detail level. Immutable after classify();
/// thread-safe for const use. Holds no reference to the trace.
class MemoryRoles {
public:
    trace::DeviceIndex device() const { return m_device; }
    trace::MemoryLevel level() const { return m_level; }
    /// Whether any phase evidence (ranges or stacks) was found on the device; without it only
    /// lifetimes were used.
    bool hasPhases() const { return m_hasPhases; }
    /// Where the phases came from: "ranges", "ranges and stack frames", "stack frames", "none".
    const std::string& phaseSource() const { return m_phaseSource; }
    /// Allocation events classified.
    size_t allocations() const { return m_events.size(); }

    /// Rule (hence role) of the alloc event `eventIndex` of TraceData::memory;
    /// RoleRule::NotClassified when it is not an allocation of this device and level.
    RoleRule ruleOfEvent(size_t eventIndex) const;
    MemoryRole roleOfEvent(size_t eventIndex) const { return roleOf(ruleOfEvent(eventIndex)); }
    /// Phases the alloc event was allocated and freed in (None, None when not classified; the
    /// free's phase is None for an allocation never freed).
    std::pair<TrainingPhase, TrainingPhase> phasesOfEvent(size_t eventIndex) const;

    /// Allocations per rule (indexed by RoleRule): how often each row of the table fired.
    const std::array<uint64_t, kRoleRuleCount>& allocationsPerRule() const { return m_perRule; }

    /// The live set at time t by role, from `index` (the one classify() was given).
    RolesAt rolesAt(const trace::TraceData& data, const AllocationIndex& index,
                    trace::TimestampNs t) const;

    /// rolesAt at each of `times` (ascending), in one pass over the index: O(events + times),
    /// where calling rolesAt for each would replay a checkpoint interval per time.
    std::vector<RolesAt> rolesAtTimes(const trace::TraceData& data, const AllocationIndex& index,
                                      const std::vector<trace::TimestampNs>& times) const;

    /// Classifies every allocation of `index` (device, level), by the header's rules.
    /// `iterations` gives "held for good" (see header); the device's OOM events (data.ooms) cut a
    /// step short (ActivationUnfinished). O(n log n) in the device's events.
    static MemoryRoles classify(const trace::TraceData& data, const AllocationIndex& index,
                                const IterationSet& iterations);

private:
    struct Entry {
        uint32_t event;
        RoleRule rule;
        TrainingPhase allocPhase;
        TrainingPhase freePhase;
    };
    trace::DeviceIndex m_device{0};
    trace::MemoryLevel m_level = trace::MemoryLevel::Allocated;
    bool m_hasPhases = false;
    std::string m_phaseSource = "none";
    std::vector<Entry> m_events;  ///< sorted by event index
    std::array<uint64_t, kRoleRuleCount> m_perRule{};
};

/// Running bytes of each role over time, for a stacked plot: series[r] holds the bytes of role r
/// alive at each event time of the index (one point per distinct time; all series share the
/// times). Built in O(n) after the index.
struct RoleSeries {
    std::vector<trace::TimestampNs> timeNs;
    std::array<std::vector<int64_t>, kMemoryRoleCount> bytes;
};
RoleSeries buildRoleSeries(const trace::TraceData& data, const AllocationIndex& index,
                           const MemoryRoles& roles);

}  // namespace vramscope::analysis
