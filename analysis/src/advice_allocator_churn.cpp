// The allocator-churn rule of the training checklist.
#include "advice_rules.h"

namespace vramscope::analysis::detail {

void allocatorChurnRule(const DeviceFacts& facts, const AdviceOptions& options,
                        std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments) {
    (void)options;
    (void)advice;
    if (facts.churn == nullptr) {
        assess(assessments, facts, "allocator-churn", AssessmentOutcome::NotAssessed,
               "not computed yet");
    }
}

}  // namespace vramscope::analysis::detail
