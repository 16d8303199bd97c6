#include "job_model_loader.h"

#include <ostream>
#include <utility>

#include "vramscope/analysis/model/job_title.h"

namespace vramscope::app {

std::shared_ptr<const analysis::JobModel> modelOfJob(CommandContext& ctx, trace::Job job,
                                                     std::string title,
                                                     const analysis::JobAnalysisOptions& options) {
    auto model = analysis::buildJobModel(std::move(job), std::move(title), {}, options);
    if (!model.ok()) {
        ctx.err << "vramscope-cli " << ctx.command << ": " << model.error().describe() << "\n";
        return nullptr;
    }
    return std::move(model).value();
}

std::shared_ptr<const analysis::JobModel> loadJobModel(CommandContext& ctx,
                                                       const std::vector<std::string>& paths,
                                                       const analysis::JobAnalysisOptions& options,
                                                       bool keepGoing) {
    std::optional<trace::Job> job = openInputs(ctx, paths, keepGoing);
    if (!job) {
        return nullptr;
    }
    return modelOfJob(ctx, std::move(*job), analysis::jobTitle(paths), options);
}

std::shared_ptr<const analysis::JobModel> loadJobModel(
    CommandContext& ctx, const InputOptions& inputs, const analysis::JobAnalysisOptions& options) {
    std::optional<trace::Job> job = openInputs(ctx, inputs);
    if (!job) {
        return nullptr;
    }
    return modelOfJob(
        ctx, std::move(*job),
        inputs.bundled ? std::string("bundled sample") : analysis::jobTitle(inputs.paths), options);
}

}  // namespace vramscope::app
