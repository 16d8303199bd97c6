#pragma once
// Internal to the advice engine: what the rule files share (advice.cpp and one advice_*.cpp per
// checklist rule).

#include <string>
#include <vector>

#include "vramscope/analysis/advice/advice.h"

namespace vramscope::analysis::detail {

/// Advice of `rule` about the device of `facts`.
Advice makeAdvice(const DeviceFacts& facts, const char* rule, Severity severity,
                  std::string message);

/// Records a checklist rule's conclusion on the device of `facts` (device = kHostDevice for a
/// rank's host when `onHost`).
void assess(std::vector<AdviceAssessment>& out, const DeviceFacts& facts, const char* rule,
            AssessmentOutcome outcome, std::string detail, Severity severity = Severity::Info,
            bool onHost = false);

// The checklist rules, one file each (advice_<rule>.cpp). Each appends its advice to `advice`
// and one assessment per device it is about to `assessments`.
void mixedPrecisionRule(const DeviceFacts& facts, const AdviceOptions& options,
                        std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments);
void allocatorChurnRule(const DeviceFacts& facts, const AdviceOptions& options,
                        std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments);
void hostMemoryRule(const DeviceFacts& facts, const AdviceOptions& options,
                    std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments);
void slowDownRule(const DeviceFacts& facts, const AdviceOptions& options,
                  std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments);

}  // namespace vramscope::analysis::detail
