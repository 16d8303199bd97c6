// The mixed-precision rule of the training checklist.
#include "advice_rules.h"

namespace vramscope::analysis::detail {

void mixedPrecisionRule(const DeviceFacts& facts, const AdviceOptions& options,
                        std::vector<Advice>& advice, std::vector<AdviceAssessment>& assessments) {
    (void)options;
    (void)advice;
    if (facts.precision == nullptr) {
        assess(assessments, facts, "mixed-precision", AssessmentOutcome::NotAssessed,
               "not computed yet");
    }
}

}  // namespace vramscope::analysis::detail
