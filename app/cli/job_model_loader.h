#pragma once
// How the presenting commands (report, check, review, render, export) get their job: open the
// inputs, then analyse them once into the job model (analysis::buildJobModel), the one result
// every surface presents. No Qt.

#include <memory>
#include <string>
#include <vector>

#include "cli_command.h"
#include "vramscope/analysis/model/job_analysis.h"
#include "vramscope/analysis/model/job_model.h"

namespace vramscope::app {

/// The model of an opened `job` (analysis::buildJobModel with `options`, titled `title`). An
/// analysis failure (an invalid iteration regex) is no error here: the model says why in
/// JobModel::analysisProblem and keeps the timelines. Null after writing why to ctx.err
/// ("vramscope-cli COMMAND: ..."; the command then exits kExitUnreadable).
std::shared_ptr<const analysis::JobModel> modelOfJob(CommandContext& ctx, trace::Job job,
                                                     std::string title,
                                                     const analysis::JobAnalysisOptions& options);

/// Opens `paths` (files, directories, archives: openInputs, with `keepGoing` as there) and builds
/// their model once (modelOfJob, title analysis::jobTitle(paths)). Null after writing why to
/// ctx.err (the command then exits kExitUnreadable).
std::shared_ptr<const analysis::JobModel> loadJobModel(
    CommandContext& ctx, const std::vector<std::string>& paths,
    const analysis::JobAnalysisOptions& options = {}, bool keepGoing = false);
/// The same for parsed inputs (parseInputs): `inputs.bundled` opens the bundled sample job (and
/// says so on ctx.err, openInputs), titled "bundled sample".
std::shared_ptr<const analysis::JobModel> loadJobModel(CommandContext& ctx,
                                                       const InputOptions& inputs,
                                                       const analysis::JobAnalysisOptions& options);

}  // namespace vramscope::app
