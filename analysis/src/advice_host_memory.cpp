// The host-memory rule of the training checklist.
#include "advice_rules.h"

namespace vramscope::analysis::detail {

void hostMemoryRule(const DeviceFacts& facts, const AdviceOptions& options,
                    std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments) {
    (void)options;
    (void)advice;
    if (facts.host == nullptr) {
        assess(assessments, facts, "host-memory", AssessmentOutcome::NotAssessed,
               "not computed yet");
    }
}

}  // namespace vramscope::analysis::detail
