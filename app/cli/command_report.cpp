// vramscope-cli report: per-device memory peaks of a job, as a table or JSON.
#include <ostream>

#include "analysis_report.h"
#include "cli_command.h"
#include "device_report.h"
#include "job_model_loader.h"
#include "vramscope/bundled_sample.h"

namespace vramscope::app {

int runReport(CommandContext& ctx) {
    std::vector<OptionSpec> options = {
        {"--json", false, "", "write JSON instead of a table"},
        {"--keep-going", false, "",
         "report the inputs that can be read; unreadable ones are named on stderr"},
    };
    for (const OptionSpec& o : analysisOptionSpecs()) {
        options.push_back(o);
    }
    const std::string help = commandHelp(
        ctx.command, "[FILE|DIR...] [--json]",
        "Reports, for every GPU of every rank, the capacity, the peak of allocated and of "
        "reserved\n"
        "memory and when it happened, and the data the producer or the reader lost. Inputs are\n"
        ".vscope files, PyTorch memory snapshots, Kineto/Chrome trace JSON (optionally .gz),\n"
        "Nsight Systems SQLite exports (one rank per process), directories of them and "
        ".tar/.tar.gz archives; all inputs form one job. With no input,\n"
        "reports the bundled sample job (and says so on stderr).\n\n"
        "JSON: {\"source\": [files], \"gpus\": GPUs that recorded memory or kernels, "
        "\"message\":\n"
        "\"no GPU in this trace\" when that is 0 (else null), \"devices\": [{\"rank\", "
        "\"device\", \"name\",\n"
        "\"capacity_bytes\", \"peak_allocated_bytes\", \"peak_reserved_bytes\", "
        "\"peak_time_ns\", \"memory_events\",\n"
        "\"allocated_source\" (memory events, producer counter, rebuilt from Bytes), "
        "\"live_set_known\",\n"
        "\"live_set_reason\" (why not: e.g. allocations without addresses), ...}], "
        "\"data_loss\": [...]};\nunknown values are null. peak_time_ns is the time of the "
        "allocated\n"
        "peak (of the reserved peak when allocated is unknown) on the rank's own clock.\n"
        "Clocks: times of one GPU (peak_time_ns, peak_reserved_time_ns, ooms' time_ns, idle\n"
        "gaps' start_ns, roles' time_ns, operators' peak_time_ns) are on the rank's own clock\n"
        "(the trace's timestamps); collectives' first_arrival_ns and last_arrival_ns are on\n"
        "the job's clock (ns from the job's earliest event, as the GUI's axis); other *_ns\n"
        "keys are durations.\n\n"
        "Analyses: each device adds \"iterations\" {count, source, confidence, reason, and\n"
        "period_* when a period was looked for}, \"leak\" {verdict, growth_bytes_per_iteration,\n"
        "iterations_to_oom, survivors [{description, size_bytes, iterations, ...}]},\n"
        "\"time_breakdown\" {span_ns, busy_ns, idle_ns, compute_ns, communication_ns, memory_ns,\n"
        "overlap_ns, exposed_communication_ns, overlap_pct}, \"idle_gaps\" (largest first) and\n"
        "\"model_state_bytes\" (alive across all iterations, less the leak's survivors of the\n"
        "first iteration: \"model_state_excluded_leak_bytes\"), \"roles_at_peak\" {parameters,\n"
        "gradients, optimizer_state, activations, temporaries, inputs, persistent (parameters or\n"
        "optimizer state not told apart), unknown: bytes of the live set at the peak by role},\n"
        "\"roles\" {phase_source, rules, rules_at_peak, kept_activation_bytes, unknown_reason} "
        "and\n"
        "\"iteration_roles\" (the same at each iteration's peak); without iteration structure\n"
        "(source none) nothing per iteration\n"
        "is given. The job adds \"collectives\", \"advice\" [{rule, severity, message,\n"
        "evidence}] and \"cost\" (null without --gpu-hour-price). The text form gives\n"
        "the same in words, with each formula.",
        options);
    int done = kExitSuccess;
    auto args = parseCommand(ctx, options, help, done);
    if (!args) {
        return done;
    }
    analysis::JobAnalysisOptions analysisOptions;
    if (!readAnalysisOptions(ctx, *args, help, analysisOptions)) {
        return kExitUsage;
    }
    std::shared_ptr<const analysis::JobModel> model;
    if (args->positional.empty()) {
        auto bundled = openBundledSample();
        if (!bundled.ok()) {
            ctx.err << "vramscope-cli report: cannot read " << bundled.error().describe() << "\n";
            return kExitUnreadable;
        }
        ctx.err << "vramscope-cli report: no input given; reporting the bundled sample job ("
                << bundled->ranks.size() << " ranks)\n";
        model = modelOfJob(ctx, std::move(bundled).value(), "bundled sample", analysisOptions);
    } else {
        model = loadJobModel(ctx, args->positional, analysisOptions, args->has("--keep-going"));
    }
    if (!model) {
        return kExitUnreadable;
    }
    const JobReport report = buildJobReport(model, analysisOptions);
    if (args->has("--json")) {
        ctx.out << report.toJson().dump(2) << "\n";
    } else {
        writeTextReport(report, ctx.out);
    }
    return kExitSuccess;
}

}  // namespace vramscope::app
