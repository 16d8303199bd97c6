// The slow-down rule of the training checklist.
#include "advice_rules.h"

namespace vramscope::analysis::detail {

void slowDownRule(const DeviceFacts& facts, const AdviceOptions& options,
                  std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments) {
    (void)options;
    (void)advice;
    if (facts.slowDown == nullptr) {
        assess(assessments, facts, "slow-down", AssessmentOutcome::NotAssessed, "not computed yet");
    }
}

}  // namespace vramscope::analysis::detail
