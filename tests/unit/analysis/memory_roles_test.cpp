#include "vramscope/analysis/memory/memory_roles.h"

#include <gtest/gtest.h>

#include <string>

#include "memory_events.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/synthetic_job.h"

namespace vramscope::analysis {
namespace {

using trace::MemoryAction;
using trace::MemoryLevel;
using trace::TimestampNs;
using trace::TraceData;

TEST(MemoryRoles, PhaseOfNameReadsTheUsualMarkers) {
    EXPECT_EQ(phaseOfName("forward"), TrainingPhase::Forward);
    EXPECT_EQ(phaseOfName("## forward ##"), TrainingPhase::Forward);
    EXPECT_EQ(phaseOfName("backward"), TrainingPhase::Backward);
    EXPECT_EQ(phaseOfName("autograd::engine::evaluate_function: AddmmBackward0"),
              TrainingPhase::Backward);
    EXPECT_EQ(phaseOfName("Optimizer.step#AdamW.step"), TrainingPhase::Optimizer);
    EXPECT_EQ(phaseOfName("Optimizer.zero_grad#AdamW.zero_grad"), TrainingPhase::Optimizer);
    EXPECT_EQ(phaseOfName("optimizer"), TrainingPhase::Optimizer);
    EXPECT_EQ(phaseOfName("CompiledFunction"), TrainingPhase::Forward);
    EXPECT_EQ(phaseOfName("autograd::engine::evaluate_function: CompiledFunctionBackward"),
              TrainingPhase::Backward);
    EXPECT_EQ(phaseOfName("iteration 3"), TrainingPhase::None);
    EXPECT_EQ(phaseOfName("ProfilerStep#4"), TrainingPhase::None);
    EXPECT_EQ(phaseOfName("aten::addmm"), TrainingPhase::None);
}

trace::StackId stackOfFrames(TraceData& d,
                             std::initializer_list<std::pair<const char*, const char*>> f) {
    std::vector<trace::FrameId> frames;
    for (const auto& [name, file] : f) {
        frames.push_back(d.internFrame({d.intern(name), d.intern(file), 1}));
    }
    return d.internStack(frames);
}

TEST(MemoryRoles, PhaseOfStackPrefersOptimizerThenBackwardThenForward) {
    TraceData d;
    const auto fwd = stackOfFrames(
        d, {{"forward", "/x/site-packages/torch/nn/modules/linear.py"}, {"step", "train.py"}});
    const auto bwd = stackOfFrames(d, {{"_make_grads", "/x/torch/autograd/__init__.py"},
                                       {"forward", "/x/torch/nn/modules/linear.py"}});
    const auto opt = stackOfFrames(d, {{"_init_group", "/x/torch/optim/adam.py"},
                                       {"forward", "/x/torch/nn/modules/linear.py"}});
    const auto built =
        stackOfFrames(d, {{"_apply", "/x/torch/nn/modules/module.py"}, {"<module>", "train.py"}});
    const auto windows = stackOfFrames(
        d, {{"forward", "C:\\venv\\Lib\\site-packages\\torch\\nn\\modules\\linear.py"}});
    const auto op = stackOfFrames(
        d, {{"aten::mm", ""}, {"autograd::engine::evaluate_function: MmBackward0", ""}});
    const auto user = stackOfFrames(d, {{"step", "train.py"}});
    EXPECT_EQ(phaseOfStack(d, fwd), TrainingPhase::Forward);
    EXPECT_EQ(phaseOfStack(d, bwd), TrainingPhase::Backward);
    EXPECT_EQ(phaseOfStack(d, opt), TrainingPhase::Optimizer);
    EXPECT_EQ(phaseOfStack(d, built), TrainingPhase::None);  // construction: no forward
    EXPECT_EQ(phaseOfStack(d, windows), TrainingPhase::Forward);
    EXPECT_EQ(phaseOfStack(d, op), TrainingPhase::Backward);
    EXPECT_EQ(phaseOfStack(d, user), TrainingPhase::None);
    EXPECT_EQ(phaseOfStack(d, trace::StackId{0}), TrainingPhase::None);
}

/// The role each allocation of the synthetic training job has by construction (synthetic_job.h,
/// trainingPhases), told by its stack's innermost frame.
MemoryRole expectedRole(const TraceData& d, trace::StackId stack) {
    if (toInt(stack) == 0) {
        return MemoryRole::Gradients;  // the only allocation made without a stack
    }
    const std::string leaf(d.string(d.frames[toInt(d.stacks[toInt(stack)].front())].name));
    if (leaf == "_apply") {
        return MemoryRole::Parameters;
    }
    if (leaf == "_init_group") {
        return MemoryRole::OptimizerState;
    }
    if (leaf == "_multi_tensor_adamw" || leaf == "gelu") {
        return MemoryRole::Temporaries;
    }
    if (leaf == "aten::to") {
        return MemoryRole::Inputs;
    }
    if (leaf == "log_metrics") {
        // The leak: made in backward and kept every step: unknown, said to be kept every step.
        return MemoryRole::Unknown;
    }
    if (leaf.size() > 8 && leaf.substr(leaf.size() - 8) == ".forward") {
        return MemoryRole::Activations;
    }
    return MemoryRole::Unknown;
}

SyntheticJobSpec trainingSpec() {
    SyntheticJobSpec spec;
    spec.ranks = 1;
    spec.iterations = 6;
    spec.trainingPhases = true;
    return spec;
}

TEST(MemoryRoles, EveryAllocationOfTheSyntheticTrainingJobGetsItsRole) {
    for (const auto& [ranks, leak] : std::vector<std::pair<int, uint64_t>>{
             {1, 0}, {1, uint64_t(32) << 20}, {2, 0}, {3, uint64_t(32) << 20}}) {
        SyntheticJobSpec spec = trainingSpec();
        spec.ranks = ranks;
        spec.leakBytesPerIteration = leak;
        ASSERT_EQ(validateSyntheticJobSpec(spec), "");
        const TraceData d = generateSyntheticRank(spec, 0);  // rank 0 (leakRank 0 leaks)
        const trace::DeviceIndex dev = d.header.devices.front().index;
        auto its = findIterations(d, dev);
        ASSERT_TRUE(its.ok());
        ASSERT_EQ(its->count(), size_t(spec.iterations));
        const AllocationIndex index(d, dev, MemoryLevel::Allocated);
        const MemoryRoles roles = MemoryRoles::classify(d, index, *its);
        EXPECT_TRUE(roles.hasPhases());
        size_t checked = 0;
        for (size_t i = 0; i < d.memory.size(); ++i) {
            if (d.memory.level[i] != MemoryLevel::Allocated ||
                d.memory.action[i] != MemoryAction::Alloc) {
                continue;
            }
            ++checked;
            EXPECT_EQ(roles.roleOfEvent(i), expectedRole(d, d.memory.stack[i]))
                << "event " << i << " at " << d.memory.timestampNs[i] << " ns, rule "
                << describe(roles.ruleOfEvent(i)) << ", ranks " << ranks << ", leak " << leak;
        }
        // W, O, per iteration: A activations, one forward temporary, input, gradient, optimizer
        // temporary, and the leak.
        const size_t perIteration = size_t(spec.activationsPerIteration) + 4 + (leak > 0 ? 1 : 0);
        EXPECT_EQ(checked, 2 + size_t(spec.iterations) * perIteration);
        EXPECT_EQ(roles.allocations(), checked);
        // The leak's allocations are said to be a tensor kept every step.
        EXPECT_EQ(roles.allocationsPerRule()[size_t(RoleRule::HeldEveryStep)],
                  leak > 0 ? uint64_t(spec.iterations) : 0u);
    }
}

TEST(MemoryRoles, RolesAtThePeakFollowTheSyntheticFormula) {
    const SyntheticJobSpec spec = trainingSpec();
    const TraceData d = generateSyntheticRank(spec, 0);
    auto job = analyzeJob({RankInput{&d, trace::RankId{0}, 0}});
    ASSERT_TRUE(job.ok());
    ASSERT_EQ(job->devices.size(), 1u);
    const DeviceAnalysis& dev = job->devices[0];
    ASSERT_TRUE(dev.rolesAtPeak.has_value());
    const int64_t W = int64_t(spec.weightBytes), O = int64_t(spec.optimizerBytes);
    const int64_t Aa = int64_t(spec.activationsPerIteration) * int64_t(spec.activationBytes);
    const int64_t I = int64_t(spec.inputBytes);
    // synthetic_job.h: peak = 2W + O + A a + I, with these roles.
    EXPECT_EQ(dev.memory.peakAllocatedBytes, 2 * W + O + Aa + I);
    const RolesAt& r = *dev.rolesAtPeak;
    EXPECT_EQ(r.bytes[MemoryRole::Parameters], W);
    EXPECT_EQ(r.bytes[MemoryRole::Gradients], W);
    EXPECT_EQ(r.bytes[MemoryRole::OptimizerState], O);
    EXPECT_EQ(r.bytes[MemoryRole::Activations], Aa);
    EXPECT_EQ(r.bytes[MemoryRole::Inputs], I);
    EXPECT_EQ(r.bytes[MemoryRole::Temporaries], 0);
    EXPECT_EQ(r.bytes[MemoryRole::Persistent], 0);
    EXPECT_EQ(r.bytes[MemoryRole::Unknown], 0);
    EXPECT_EQ(r.bytes.total(), dev.memory.peakAllocatedBytes);
    // Iteration 0 peaks before the optimizer state exists (2W + A a + I), the others at the peak.
    ASSERT_EQ(dev.iterationRoles.size(), size_t(spec.iterations));
    EXPECT_EQ(dev.iterationRoles[0].peakBytes, 2 * W + Aa + I);
    EXPECT_EQ(dev.iterationRoles[0].roles.bytes[MemoryRole::OptimizerState], 0);
    for (size_t i = 1; i < dev.iterationRoles.size(); ++i) {
        EXPECT_EQ(dev.iterationRoles[i].peakBytes, 2 * W + O + Aa + I) << i;
        EXPECT_EQ(dev.iterationRoles[i].roles.bytes.total(), dev.iterationRoles[i].peakBytes);
    }
}

TEST(MemoryRoles, RoleSeriesSumsToTheLiveSetAtEveryTime) {
    const SyntheticJobSpec spec = trainingSpec();
    const TraceData d = generateSyntheticRank(spec, 0);
    auto its = findIterations(d, trace::DeviceIndex{0});
    ASSERT_TRUE(its.ok());
    const AllocationIndex index(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    const MemoryRoles roles = MemoryRoles::classify(d, index, *its);
    const RoleSeries s = buildRoleSeries(d, index, roles);
    ASSERT_FALSE(s.timeNs.empty());
    std::vector<TimestampNs> times;
    for (size_t k = 0; k < s.timeNs.size(); k += 7) {
        times.push_back(s.timeNs[k]);
    }
    const std::vector<RolesAt> swept = roles.rolesAtTimes(d, index, times);
    ASSERT_EQ(swept.size(), times.size());
    for (size_t k = 0; k < s.timeNs.size(); k += 7) {
        const RolesAt at = roles.rolesAt(d, index, s.timeNs[k]);
        const RolesAt& one = swept[k / 7];
        EXPECT_EQ(one.allocations, at.allocations);
        EXPECT_EQ(one.ruleBytes, at.ruleBytes);
        EXPECT_EQ(one.keptActivationBytes, at.keptActivationBytes);
        for (size_t r = 0; r < kMemoryRoleCount; ++r) {
            EXPECT_EQ(s.bytes[r][k], at.bytes.bytes[r]) << "time " << s.timeNs[k] << " role " << r;
        }
    }
}

/// A small job by hand: two iterations of forward (an activation), backward (a gradient), an
/// optimizer range; the state either made in the first optimizer step or alive from before.
TraceData handTrainingTrace(bool stateInTrace, bool withPhases) {
    TraceData d;
    using test::addMemory;
    const auto A = MemoryAction::Alloc;
    const auto F = MemoryAction::Free;
    const auto pre = trace::MemoryKind::PreExisting;
    addMemory(d, 0, 0x1000, 400, A, MemoryLevel::Allocated, trace::DeviceIndex{0},
              trace::StackId{0}, pre);  // weights, alive before recording
    if (!stateInTrace) {
        addMemory(d, 0, 0x2000, 400, A, MemoryLevel::Allocated, trace::DeviceIndex{0},
                  trace::StackId{0}, pre);  // optimizer state, alive before recording
    }
    for (int i = 0; i < 4; ++i) {
        const int64_t s = 1000 + i * 1000;
        if (withPhases) {
            d.ranges.append({s, s + 1000, d.intern("iteration " + std::to_string(i)), 0, 1,
                             trace::kHostDevice, trace::RangeKind::Iteration});
            d.ranges.append({s, s + 300, d.intern("forward"), 1, 1, trace::kHostDevice,
                             trace::RangeKind::Nvtx});
            d.ranges.append({s + 300, s + 600, d.intern("backward"), 1, 1, trace::kHostDevice,
                             trace::RangeKind::Nvtx});
            d.ranges.append({s + 600, s + 900, d.intern("optimizer"), 1, 1, trace::kHostDevice,
                             trace::RangeKind::Nvtx});
        } else {
            d.ranges.append({s, s + 1000, d.intern("iteration " + std::to_string(i)), 0, 1,
                             trace::kHostDevice, trace::RangeKind::Iteration});
        }
        addMemory(d, s + 10, 0x3000, 50, A);    // activation
        addMemory(d, s + 310, 0x4000, 400, A);  // gradient
        addMemory(d, s + 320, 0x3000, 50, F);
        if (stateInTrace && i == 0) {
            addMemory(d, s + 610, 0x2000, 400, A);  // optimizer state, made in the first step
        }
        addMemory(d, s + 620, 0x4000, 400, F);
    }
    return d;
}

MemoryRoles classifyHand(const TraceData& d) {
    auto its = findIterations(d, trace::DeviceIndex{0});
    EXPECT_TRUE(its.ok());
    const AllocationIndex index(d, trace::DeviceIndex{0}, MemoryLevel::Allocated);
    return MemoryRoles::classify(d, index, *its);
}

TEST(MemoryRoles, WeightsAreParametersOnlyWhenTheStateIsSeenCreated) {
    {
        const TraceData d = handTrainingTrace(true, true);
        const MemoryRoles roles = classifyHand(d);
        EXPECT_EQ(roles.ruleOfEvent(0), RoleRule::Parameter);
        EXPECT_EQ(roles.roleOfEvent(1), MemoryRole::Activations);
        EXPECT_EQ(roles.roleOfEvent(2), MemoryRole::Gradients);
        EXPECT_EQ(roles.roleOfEvent(4), MemoryRole::OptimizerState);
    }
    {
        // Both alive before recording, both of a gradient's size: not told apart.
        const TraceData d = handTrainingTrace(false, true);
        const MemoryRoles roles = classifyHand(d);
        EXPECT_EQ(roles.ruleOfEvent(0), RoleRule::PersistentBySize);
        EXPECT_EQ(roles.ruleOfEvent(1), RoleRule::PersistentBySize);
        EXPECT_EQ(roles.roleOfEvent(3), MemoryRole::Gradients);
    }
    {
        // Without phases only lifetimes: held for good is said, but not what it is.
        const TraceData d = handTrainingTrace(false, false);
        const MemoryRoles roles = classifyHand(d);
        EXPECT_FALSE(roles.hasPhases());
        EXPECT_EQ(roles.ruleOfEvent(0), RoleRule::HeldNoGradients);
        EXPECT_EQ(roles.roleOfEvent(0), MemoryRole::Unknown);
        EXPECT_EQ(roles.roleOfEvent(2), MemoryRole::Unknown);
        EXPECT_EQ(roles.roleOfEvent(3), MemoryRole::Unknown);
    }
}

TEST(MemoryRoles, StacklessAllocationsAfterBackwardEvidenceAreBackward) {
    // A PyTorch snapshot: Python frames on the forward's allocations and on the first of the
    // backward's, none on the autograd engine's own.
    TraceData d;
    using test::addMemory;
    const auto A = MemoryAction::Alloc;
    const auto F = MemoryAction::Free;
    const auto fwd = stackOfFrames(d, {{"forward", "/x/torch/nn/modules/linear.py"}});
    const auto bwd = stackOfFrames(d, {{"_make_grads", "/x/torch/autograd/__init__.py"}});
    const auto dev = trace::DeviceIndex{0};
    const auto lvl = MemoryLevel::Allocated;
    addMemory(d, 10, 0x100, 8, A, lvl, dev, fwd);
    addMemory(d, 20, 0x200, 8, A, lvl, dev, trace::StackId{0});  // between forward evidence
    addMemory(d, 30, 0x300, 8, A, lvl, dev, fwd);
    addMemory(d, 40, 0x400, 4, A, lvl, dev, bwd);
    addMemory(d, 50, 0x500, 16, A, lvl, dev, trace::StackId{0});  // autograd engine
    addMemory(d, 60, 0x500, 16, F, lvl, dev, trace::StackId{0});
    addMemory(d, 70, 0x100, 8, F, lvl, dev, trace::StackId{0});
    const AllocationIndex index(d, dev, lvl);
    const MemoryRoles roles = MemoryRoles::classify(d, index, IterationSet{});
    EXPECT_EQ(roles.phasesOfEvent(1).first, TrainingPhase::Forward);
    EXPECT_EQ(roles.phasesOfEvent(4).first, TrainingPhase::Backward);
    EXPECT_EQ(roles.ruleOfEvent(4), RoleRule::Temporary);
    EXPECT_EQ(roles.ruleOfEvent(0), RoleRule::ActivationFreedInBackward);
    // Never freed, no backward after it would be unfinished; here backward follows: held for
    // good from a step.
    EXPECT_EQ(roles.ruleOfEvent(2), RoleRule::HeldFromStep);
}

TEST(MemoryRoles, WithoutBackwardNothingIsAnActivationAndModuleMovesAreNoForward) {
    // Forward passes only (inference, zeroth-order training), with a model moved by .to() between
    // them: nothing was awaiting a backward, and the move is no forward.
    TraceData d;
    using test::addMemory;
    const auto A = MemoryAction::Alloc;
    const auto fwd = stackOfFrames(d, {{"forward", "/x/torch/nn/modules/linear.py"}});
    const auto moved = stackOfFrames(d, {{"convert", "/x/torch/nn/modules/module.py"},
                                         {"_apply", "/x/torch/nn/modules/module.py"},
                                         {"to", "/x/torch/nn/modules/module.py"},
                                         {"reset_model", "client.py"}});
    const auto dev = trace::DeviceIndex{0};
    const auto lvl = MemoryLevel::Allocated;
    addMemory(d, 10, 0x100, 8, A, lvl, dev, fwd);                 // kept output of a forward
    addMemory(d, 20, 0x200, 64, A, lvl, dev, moved);              // the moved model
    addMemory(d, 30, 0x300, 16, A, lvl, dev, trace::StackId{0});  // after the move
    addMemory(d, 40, 0x400, 8, A, lvl, dev, fwd);
    const AllocationIndex index(d, dev, lvl);
    const MemoryRoles roles = MemoryRoles::classify(d, index, IterationSet{});
    EXPECT_NE(roles.roleOfEvent(0), MemoryRole::Activations) << describe(roles.ruleOfEvent(0));
    EXPECT_EQ(roles.phasesOfEvent(1).first, TrainingPhase::None);
    EXPECT_EQ(roles.phasesOfEvent(2).first, TrainingPhase::None);  // not carried past the move
    EXPECT_EQ(roles.roleOfEvent(3), MemoryRole::Unknown);
}

}  // namespace
}  // namespace vramscope::analysis
