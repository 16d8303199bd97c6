// The command table of vramscope-cli: every command's name, summary, synopsis, description and
// options, the single source of the top-level help, each command's --help and the list that
// tests/unit/cli/man_page_test.cpp compares the man page (docs/man/vramscope-cli.1) with.
#include <algorithm>
#include <cstdio>

#include "analysis_report.h"
#include "cli_command.h"
#include "flame_selection.h"
#include "vramscope/analysis/advice/advice.h"
#include "vramscope/analysis/advice/check_rules.h"
#include "vramscope/analysis/export/export_formats.h"
#include "vramscope/analysis/memory/batch_fit.h"
#include "vramscope/analysis/model/view_formulas.h"

namespace vramscope::app {

namespace {

/// "0.9", "2": a threshold or limit as the help prints it.
std::string helpNumber(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

CommandSpec infoSpec() {
    const std::vector<OptionSpec> options = {
        {"--json", false, "", "write JSON instead of text"},
    };
    return CommandSpec{
        "info", "header, devices, event counts by kind, time span and data loss",
        "FILE... [--json]",
        "Describes each trace: header (producer, host, rank, world size, clock), devices, event\n"
        "counts by kind, time span, what the reader loaded and what was lost. FILE may be any\n"
        "supported input, a directory or an archive (every trace in it is described).",
        options};
}

CommandSpec reportSpec() {
    std::vector<OptionSpec> options = {
        {"--json", false, "", "write JSON instead of a table"},
        keepGoingOption("report the inputs that can be read; unreadable ones are named on stderr"),
    };
    for (const OptionSpec& o : analysisOptionSpecs()) {
        options.push_back(o);
    }
    return CommandSpec{
        "report", "per-device peaks of allocated and reserved memory (text or JSON)",
        "[FILE|DIR...] [--json]",
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
        options};
}

CommandSpec synthSpec() {
    const std::vector<OptionSpec> options = {
        {"--ranks", true, "N", "ranks (processes, one GPU each); required"},
        {"--iterations", true, "K", "training iterations; required unless --events is given"},
        {"--events", true, "N",
         "instead of --iterations: enough iterations for about N events in all (benchmarks)"},
        {"--leak-bytes-per-iteration", true, "B",
         "bytes kept alive every iteration on the leaking rank (e.g. 64MiB); default 0"},
        {"--leak-rank", true, "R", "the rank that leaks, -1 for all; default 0"},
        {"--activation-bytes", true, "B",
         "bytes of each of the 24 activation tensors per iteration (e.g. 512MiB); default 256MiB"},
        {"--straggler-rank", true, "R", "a rank that starts every iteration 2 ms late"},
        {"--training-phases", false, "",
         "add an optimizer step, gradients, inputs and temporaries with known roles of memory"},
        {"--host-growth-bytes-per-iteration", true, "B",
         "record the host's resident memory, growing B bytes every iteration (0: flat)"},
        {"--slow-down", true, "PART",
         "iteration i lasts i x --slow-down-step-ns longer in PART: all-reduce (every rank's "
         "all-reduce), host-gap (the gap after it) or straggler (its delay; needs "
         "--straggler-rank)"},
        {"--slow-down-step-ns", true, "NS",
         "with --slow-down: the growth per iteration; default "
         "1000000 (1 ms)"},
        {"--seed", true, "S", "changes addresses and names only, never times or sizes; default 1"},
        {"--noise", false, "",
         "benchmarks: irregular times and addresses that compress like a real trace (peak bytes "
         "unchanged, times no longer exact)"},
        {"--no-compress", false, "", "write frames without zstd compression"},
        {"--output", true, "OUT", "OUT.vscope or a directory; required", "-o"},
    };
    return CommandSpec{
        "synth", "write a deterministic synthetic training job, one .vscope per rank",
        "--ranks N --iterations K [options] -o OUT",
        "Writes a deterministic synthetic data-parallel training job: per rank one GPU with\n"
        "weights and optimizer state, an activation sawtooth per iteration, an optional leak,\n"
        "reserved memory growing in 2 GiB segments, compute kernels, one NCCL all-reduce per\n"
        "iteration timed from a 100 GB/s bus bandwidth, NVTX iteration ranges and an optional\n"
        "straggler. Each iteration runs a forward half of the compute kernels that allocates the\n"
        "activations one by one, a backward half that frees them, then the all-reduce of the\n"
        "gradients; a leaking rank keeps one extra allocation alive per iteration, and a\n"
        "straggler starts each iteration late, so the other ranks wait in the all-reduce.\n"
        "Same options, same bytes.\n\n"
        "Limit: at most 50000000 events per rank (a rank is built in memory, about 64 bytes an\n"
        "event, before it is written); more is a usage error.\n\n"
        "Output: when OUT ends in .vscope, one file per rank named OUT-rank<R>.vscope (OUT "
        "without\n"
        "its extension); otherwise OUT is a directory (created when missing) holding\n"
        "rank<R>.vscope. The files written are listed on stdout.",
        options};
}

CommandSpec convertSpec() {
    const std::vector<OptionSpec> options = {
        {"--output", true, "OUT", "OUT.vscope or a directory; required", "-o"},
        {"--no-compress", false, "", "write frames without zstd compression"},
        keepGoingOption("convert the inputs that can be read; unreadable ones are named on stderr"),
        {"--notes", true, "FILE",
         "carry the notes of FILE (a .vscope-notes.json sidecar) into the output; by default "
         "the inputs' own sidecar is carried when there is one"},
    };
    return CommandSpec{
        "convert", "import any supported input and write .vscope, one file per rank",
        "IN... -o OUT",
        "Imports every input (.vscope, PyTorch memory snapshot, Kineto/Chrome trace JSON,\n"
        "Nsight Systems SQLite export, optionally .gz, directories of them, .tar/.tar.gz archives) "
        "as one job and writes one\n"
        ".vscope per rank, with what the importers skipped recorded as data loss.\n\n"
        "Output: when OUT ends in .vscope, OUT-rank<R>.vscope (OUT without its extension);\n"
        "otherwise OUT is a directory (created when missing) holding rank<R>.vscope. A trace "
        "whose\n"
        "rank is unknown is named file<I> after its position I in the job (ranks first, then\n"
        "unknown ones by path); a second trace with the same rank gets -<I> appended. The files\n"
        "written are listed on stdout.\n\n"
        "Notes: a notes sidecar (docs/notes-format.md) is carried into the files when it was\n"
        "written for exactly these inputs (SHA-256); a note of one GPU goes into its rank's\n"
        "file, a note of every GPU into the first file.",
        options};
}

CommandSpec summarizeSpec() {
    const std::vector<OptionSpec> options = {
        {"--output", true, "INDEX", "the job index to write (job.vscope-index); required", "-o"},
        {"--merge", false, "",
         "the inputs are job indexes (of per-file runs): merge them into INDEX, the newest entry "
         "of each rank file winning"},
        {"--quiet", false, "", "no progress on stderr (problems are still written)"},
    };
    return CommandSpec{
        "summarize", "a job index of rank files' summaries; --merge joins indexes",
        "DIR|FILES... -o INDEX  |  --merge INDEX... -o INDEX",
        "Writes a job index: every rank file's header and summaries (memory envelopes, peaks,\n"
        "kernel time, per-iteration figures) and where the file is, so that the viewer opens a\n"
        "job of thousands of ranks without reading their events. A .vscope with stored summaries\n"
        "is read without decoding its events; any other input (an older .vscope, Kineto JSON, a\n"
        "memory snapshot, an Nsight export) is read in full, one file at a time, and summarised\n"
        "with the whole-file analyses (iterations, leak verdict). A directory contributes its\n"
        "trace files (not recursing). Paths in the index are relative to its folder.\n\n"
        "A file that cannot be read is listed in the index with its problem; the others are\n"
        "summarised, and the exit code is 3. Runs on different files are independent: summarise\n"
        "a large job in parallel (one index per file or per batch) and join the indexes with\n"
        "--merge, e.g.\n"
        "  ls run/*.vscope | xargs -P 8 -I{} vramscope-cli summarize {} -o {}.vscope-index\n"
        "  vramscope-cli summarize --merge run/*.vscope-index -o run/job.vscope-index",
        options};
}

CommandSpec flameSpec() {
    // The selection's options, with --diff and --format before --level as help has listed them.
    std::vector<OptionSpec> options = flameSelectionOptions();
    options.insert(options.end() - 1,
                   {{"--diff", true, "TIME2", "show what changed from --at to TIME2"},
                    {"--format", true, "FORMAT", "folded (default), json or speedscope"}});
    return CommandSpec{
        "flame", "the live set at the peak, an OOM or a time as a flame tree",
        "FILE [--rank R] [--device D] [--level allocated|reserved] [--at peak|oom|TIME]\n"
        "       [--by stack|nvtx|category] [--diff TIME2] [--format folded|json|speedscope]",
        "The allocations alive on a GPU at a time, grouped into a tree by stack frames (root\n"
        "first), by NVTX range path, or by category (memory kind, then size class), with bytes\n"
        "and allocation counts per node. 'folded' writes one line per allocation site,\n"
        "\"root;...;leaf BYTES\", which flamegraph.pl and speedscope read; with --diff it writes\n"
        "\"root;...;leaf BYTES_AT_TIME BYTES_AT_TIME2\" (flamegraph.pl's differential input).\n"
        "'speedscope' writes speedscope's JSON file format (unit bytes; not with --diff).\n"
        "TIME with a unit (1.5s, 200ms) counts from the GPU's first memory event; an integer\n"
        "without a unit is a timestamp in ns on the rank's own clock (as report --json's\n"
        "peak_time_ns). A time before the GPU's first memory event or after the trace's last\n"
        "event is a usage error that names the span.\n\n"
        "exit codes: 0 success, 2 usage (bad option, no such rank or GPU, a time outside the\n"
        "trace, a level the GPU did not record), 3 unreadable input, or a live set the input\n"
        "cannot give (no GPU memory events, or allocations without an address so that frees\n"
        "cannot be paired with them: said on stderr)",
        options};
}

CommandSpec segmentsSpec() {
    const std::vector<OptionSpec> options = {
        {"--device", true, "D", "GPU index (default: the lowest with memory events)"},
        {"--at", true, "TIME",
         "time from the trace start: seconds (2.5) or a number with s, ms, us, ns"},
        {"--at-oom", true, "N", "the Nth out-of-memory event of the GPU (1 = the first)"},
        {"--json", false, "", "write JSON instead of the table"},
    };
    return CommandSpec{
        "segments", "reserved segments, free blocks and fragmentation at a time/OOM",
        "FILE [--at TIME | --at-oom N] [--device D] [--json]",
        "The reserved segments of a GPU at one moment, as PyTorch's caching allocator holds\n"
        "them: each segment (largest first) with its allocated bytes, free bytes, largest free\n"
        "block and number of blocks, then the totals and the fragmentation, 1 - largest free\n"
        "block / free bytes (0: all free memory is one block; near 1: it is scattered). At an OOM\n"
        "it compares the request with the largest free block: smaller than the free bytes but\n"
        "larger than every block is fragmentation. Without --at or --at-oom it shows the first\n"
        "OOM, else the allocated peak, and says which. Needs a trace with segment addresses and\n"
        "blocks (a PyTorch memory snapshot); a PyTorch profiler trace has neither. --json gives\n"
        "every segment with its blocks and gaps (addresses as integers).\n\n"
        "exit codes: 0 success, 2 usage (bad option, no such GPU, no Nth OOM, a time outside\n"
        "the trace), 3 unreadable input, or segments the input cannot give (said on stderr)",
        options};
}

CommandSpec checkSpec() {
    // OptionSpec holds views: the text lives as long as the program.
    std::vector<OptionSpec> options = checkRuleOptionSpecs();
    options.push_back({"--allow-unchecked", false, "",
                       "do not fail when a rule named on the command line could not be checked "
                       "(it still prints NOT CHECKED)"});
    for (const OptionSpec& o : analysisOptionSpecs()) {
        if (o.name == "--iteration-regex" || o.name == "--capacity") {
            options.push_back(o);
        }
    }
    const analysis::CheckRules defaults = analysis::CheckRules::defaults();
    const analysis::AdviceOptions evidence;
    return CommandSpec{
        "check", "pass/fail rules for CI: peak, leak, exposed communication",
        "FILE|DIR... [--max-peak-fraction F] [--fail-on-leak] [--max-exposed-communication F]\n"
        "       [--advice RULE,...|all] [--allow-oom] [--capacity BYTES|GPU] [--allow-unchecked]",
        "Checks rules over every GPU of a job and prints one PASS/FAIL line per rule with the\n"
        "numbers behind it. With no rule given, checks all three with --max-peak-fraction " +
            helpNumber(*defaults.maxPeakShare) +
            ",\n--fail-on-leak and --max-exposed-communication " +
            helpNumber(*defaults.maxExposedCommunication) +
            ". The rule \"oom\" always runs (unless\n"
            "--allow-oom): it fails when a GPU ran out of memory, and names the cause. Exposed\n"
            "communication = communication kernels' time not overlapped by compute kernels, as a\n"
            "fraction of the span from the first kernel start to the last kernel end, less the\n"
            "part spent waiting for the last rank of a collective matched across ranks (that\n"
            "is the straggler's; `report` names it).\n"
            "--advice checks rules of the training checklist, as `report` gives them: each FAILs\n"
            "where it gives a warning or worse, PASSes where it finds nothing (or info only),\n"
            "and is NOT CHECKED where the trace lacks what it needs (it says what).\n\n"
            "A rule that cannot be checked on a GPU prints NOT CHECKED with the reason: no memory\n"
            "data (peak, leak, oom), capacity unknown (peak; give --capacity), too few iterations\n"
            "(leak), no kernels or a span under " +
            formatDuration(double(evidence.minTimeSpanNs)) + " / fewer than " +
            std::to_string(evidence.minTimeKernels) +
            " kernels (exposed communication).\n"
            "A rule named on the command line that is NOT CHECKED fails the check (exit 1)\n"
            "unless --allow-unchecked is given. With no rule named, a default rule that is NOT\n"
            "CHECKED is listed and does not fail the check, unless nothing at all could be\n"
            "checked (\"nothing could be checked\", exit 1).\n"
            "Data the reader or the producer lost is listed (DATA LOSS). On such partial input a\n"
            "rule that would pass is NOT CHECKED (the lost part may hold the OOM, a higher peak\n"
            "or the climb), while a rule that fails still fails and says the input was partial.\n\n"
            "exit codes: 0 every rule that had to be checked passed, 1 a rule failed or could\n"
            "not be checked (named on stdout), 2 usage, 3 unreadable input",
        options};
}

CommandSpec batchFitSpec() {
    // OptionSpec holds views: the text lives as long as the program.
    static const std::string capacityHelp =
        "GPU capacity, instead of the smallest one the traces name: " + capacityValueHelp();
    const std::vector<OptionSpec> options = {
        {"--capacity", true, "BYTES|GPU", capacityHelp},
        {"--json", false, "", "write JSON instead of text"},
    };
    return CommandSpec{
        "batch-fit", "largest batch that fits, from runs at several batch sizes",
        "FILE:BATCH FILE:BATCH... [--capacity BYTES|GPU] [--json]",
        "Fits peak memory against batch size over runs of one job at different batch sizes\n"
        "(ordinary least squares: peak = intercept + slope x batch) and reports the largest\n"
        "batch whose predicted peak stays under 80 % and under 100 % of the GPU's capacity.\n"
        "A run's peak is the highest max(peak reserved, peak allocated) over its GPUs; the\n"
        "capacity is the smallest one the traces name, or --capacity (needed for PyTorch\n"
        "snapshots, which name none).\n\n"
        "Refuses runs whose memory climbs every iteration (a staircase: the peak then depends on\n"
        "how long the run lasted). Gives no answer when the peak does not grow with the batch\n"
        "(slope <= 0), nor below the smallest measured batch when the intercept is negative (such\n"
        "a line does not start from a fixed base: the runs are probably not one job). Warns with\n"
        "fewer than " +
            std::to_string(analysis::kBatchFitMinBatchSizes) +
            " batch sizes (a line through two points always has R^2 = 1), when the fit is\n"
            "poor (R^2 = 1 - SS_res / SS_tot below " +
            helpNumber(analysis::kBatchFitMinRSquared) + "),\nwhen a largest batch is more than " +
            helpNumber(analysis::kBatchFitMaxExtrapolation) +
            " x the largest measured batch (extrapolated), and\nwhen two inputs are one "
            "run (the same file or the same bytes).\n\n"
            "exit codes: 0 a batch fits under 100 % of the capacity, 1 no batch fits (batch 1 is\n"
            "predicted above the capacity), no answer can be derived, or a run was refused,\n"
            "2 usage or capacity unknown, 3 unreadable input",
        options};
}

CommandSpec exportSpec() {
    std::vector<OptionSpec> options = {
        {"--format", true, "FORMAT", "perfetto, chrome-json, csv or speedscope (required)"},
        {"--output", true, "OUT", "file to write; - or absent: standard output (text formats)",
         "-o"},
        {"--table", true, "TABLE", "csv: memory, gaps, collectives or iterations (required)"},
        {"--points", true, "N", "csv memory: at most N time buckets per GPU (default: all)"},
    };
    const std::vector<OptionSpec> flame = flameSelectionOptions();  // speedscope's
    options.insert(options.end(), flame.begin(), flame.end());
    std::string formats;
    for (const analysis::ExportFormatInfo& f : analysis::exportFormats()) {
        std::string name(f.name);
        name.resize(std::max<size_t>(name.size() + 1, 13), ' ');
        formats += "  " + name + std::string(f.description) + "\n";
    }
    return CommandSpec{
        "export", "write a job for other tools: Perfetto, Chrome JSON, CSV, speedscope",
        "FILE|DIR... --format FORMAT [-o OUT] [--table T [--points N]]\n"
        "       [--rank R] [--device D] [--at TIME] [--by G] [--level L]",
        "Writes the job in a format other tools read. Formats:\n" + formats +
            "\ncsv writes one --table; times are ns from the job start (the GUI's axis), bytes "
            "are\n"
            "bytes, an empty cell is not recorded. With --points N a GPU's time is cut into N\n"
            "equal buckets; each gives the step with its largest allocated bytes and, when\n"
            "another, the one with its largest reserved bytes, so no peak is lost (at most 2N\n"
            "rows). speedscope writes the flame tree that `flame` shows for --rank, --device,\n"
            "--at, --by and --level (the same rules), in bytes.\n"
            "\nexit codes: 0 success, 2 usage, 3 unreadable input, unwritable output, or a table\n"
            "the input cannot give (no kernels: no gaps; said on stderr)",
        options};
}

CommandSpec renderSpec() {
    std::vector<OptionSpec> options = {
        {"--view", true, "NAME", ""},  // help below: it lists the views
        {"--range", true, "A:B", "job time shown, e.g. 1.2s:3.4s (either side may be empty)"},
        {"--gpu", true, "R:G",
         "one GPU: rank R (as report prints it), device G; not for lanes, gaps, advice"},
        {"--notes", true, "FILE",
         "notes sidecar (.vscope-notes.json); default: the one beside "
         "the inputs, when there is one"},
        {"--size", true, "WxH", "picture size in logical pixels (default 1600x1000)"},
        {"--scale", true, "N", "PNG only: 1 or 2 device pixels per logical pixel"},
        {"--width", true, "PX", "PNG only: exactly PX pixels wide, height in proportion"},
        {"--output", true, "OUT", "where to write: .png, .svg or .pdf", "-o"},
    };
    static const std::string viewHelp = "the view to draw: " + renderViewNames();
    options[0].help = viewHelp;
    for (const OptionSpec& o : analysisOptionSpecs())
        options.push_back(o);
    return CommandSpec{
        "render", "one view as a framed PNG, or vector SVG / PDF, headless",
        "FILE|DIR... --view NAME -o OUT.png|svg|pdf",
        "Draws one view of a job, headless, as a picture that stands on its own: a title, the\n"
        "trace name, the time range, the legend, the notes (numbered), and a footer with the\n"
        "vramscope version and the formulas behind the figures. SVG and PDF are vector: text\n"
        "stays text. No display is needed (Qt's offscreen platform unless QT_QPA_PLATFORM is\n"
        "set).\n\n"
        "roles is the memory timeline stacked by role; flame-role the flame view grouped by\n"
        "role; oom the flame view at the first out-of-memory event. With --range, the flame\n"
        "view shows what grew over the range.\n\n"
        "Exit codes: 2 for a bad command line, an unknown view, a range outside the job or a\n"
        "GPU it lacks; 3 for an input that cannot be read, a notes file that cannot be read or\n"
        "was written for other traces, or an output that cannot be written.",
        options};
}

CommandSpec reviewSpec() {
    std::vector<OptionSpec> options = {
        {"--output", true, "OUT.pdf", "where to write the PDF", "-o"},
        {"--notes", true, "FILE",
         "notes sidecar (.vscope-notes.json) added to the generated "
         "notes; default: the one beside the inputs, when there is one"},
        {"--size", true, "WxH", "page size in logical pixels, 96 per inch (default 1600x1000)"},
    };
    for (const OptionSpec& o : analysisOptionSpecs())
        options.push_back(o);
    std::string views;
    for (std::string_view v : analysis::exportableViews())
        views += (views.empty() ? "" : ", ") + std::string(v);
    return CommandSpec{
        "review", "a multi-page review PDF: summary, then one page per view",
        "FILE|DIR... -o OUT.pdf",
        "Writes a review of a job as a multi-page PDF (vector: text stays text). Page 1 is a\n"
        "summary: the lines of `vramscope-cli report` on the job, its GPUs, the peaks and their\n"
        "share of capacity, the leak verdicts, compute, communication and idle time, the advice\n"
        "and the cost (with --gpu-hour-price). Then one titled page per view that has\n"
        "something to show (" +
            views +
            "), each with its notes and formulas; the\n"
            "summary names the views left out and why. Notes: those vramscope places for what it\n"
            "found (peak, OOM, staircase, straggler, largest idle gap), then the user's.\n\n"
            "Exit codes: 2 for a bad command line; 3 for an input that cannot be read, a notes "
            "file\n"
            "that cannot be read or was written for other traces, or an output that cannot be\n"
            "written.",
        options};
}

CommandSpec attachSpec() {
    const std::vector<OptionSpec> options = {
        {"--list", false, "", "list this user's live jobs (pid, host, rank, start, GPUs)"},
        {"--duration", true, "DURATION",
         "stop after this long (e.g. 30s); default: until the "
         "job ends or ^C"},
        {"-o", true, "OUT",
         "the recording: a .vscope file (several targets: OUT-HOST-PID.vscope"
         ", or files in directory OUT); default HOST-PID.vscope here"},
    };
    return CommandSpec{
        "attach", "list running jobs, or record from them into .vscope files",
        "--list | PID|SOCKET|all... [--duration 30s] [-o OUT.vscope]",
        "Attaches to running jobs (started with vramscope-run, or `vramscope-cli replay`) and\n"
        "records what they stream: first the producer's backlog of recent events, then\n"
        "everything new, until the duration ends, the job ends, or ^C. The job is not slowed or\n"
        "stopped; a viewer too slow for it loses frames, which the recording lists as data loss\n"
        "(live_frames_dropped). A target is a pid of this host, a socket path (for a job on\n"
        "another machine, its socket forwarded over SSH into a directory of mode 0700), or all.\n\n"
        "exit codes: 0 recorded, 2 usage, 3 no job reachable or the output cannot be written",
        options};
}

CommandSpec watchSpec() {
    std::vector<OptionSpec> options = {
        {"--interval", true, "DURATION", "time between refreshes (default 1s)"},
        {"--duration", true, "DURATION", "stop after this long; default: until the jobs end or ^C"},
        {"--alert", false, "",
         "exit 1 as soon as a rule of `check` fails while the job runs (peak share, staircase "
         "leak, exposed communication, OOM), printing why"},
        {"--plain", false, "", "print a block per refresh instead of redrawing in place"},
    };
    for (const OptionSpec& o : checkRuleOptionSpecs()) {
        options.push_back(o);  // the rules --alert checks, as `check` takes them
    }
    for (const OptionSpec& o : analysisOptionSpecs()) {
        if (o.name == "--iteration-regex" || o.name == "--capacity") {
            options.push_back(o);
        }
    }
    return CommandSpec{
        "watch", "a live line per GPU of running jobs; --alert fails on a broken rule",
        "PID|SOCKET|all... [--interval 1s] [--alert [RULES]] [--duration D] [--plain]",
        "Attaches to running jobs and prints one line per GPU that redraws in place: allocated\n"
        "and reserved memory now, the peak and its share of capacity, the iteration, the growth\n"
        "per iteration when memory climbs every iteration, and the exposed communication. With\n"
        "--alert the rules of `vramscope-cli check` are evaluated at each refresh (those named,\n"
        "as `check` takes them, else check's defaults: peak over the fraction, a staircase leak,\n"
        "exposed communication, an OOM), and the first that FAILs ends the watch with exit 1\n"
        "and its reason. A rule that cannot be checked yet (too few iterations) does not alert.\n"
        "The analyses run on everything received so far, so each refresh takes longer as the\n"
        "job runs.\n\n"
        "exit codes: 0 the jobs ended or the time ran out, 1 an alert fired, 2 usage,\n"
        "3 no job reachable",
        options};
}

CommandSpec replaySpec() {
    const std::vector<OptionSpec> options = {
        {"--speed", true, "X|max", "trace time per wall time: 1x (default), 10x, 0.5x, max"},
        {"--socket", true, "PATH",
         "serve on PATH (its directory must be this user's, mode 0700); default: "
         "SOCKET_DIR/HOST-PID.sock"},
        {"--wait-viewers", true, "N", "wait (up to 60 s) for N viewers before starting"},
        {"--linger", true, "DURATION",
         "after the last event, wait this long for viewers to take what is queued (default 5s)"},
        {"--step", true, "DURATION", "wall time between batches (default 50ms)"},
    };
    return CommandSpec{
        "replay", "serve a recorded trace on a live socket, as a running job would",
        "FILE [--speed X|max] [--socket PATH] [--wait-viewers N] [--linger 5s]",
        "Serves a recorded trace (any format `convert` reads; one rank) on a live socket, paced\n"
        "by its own timestamps, exactly as a running job's agent serves it: viewers attach with\n"
        "`vramscope-cli attach`, `vramscope-cli watch` or the app's File > Attach to Running Job.\n"
        "A viewer that attaches late still receives everything from the start (the replay keeps\n"
        "all frames). The first line on stdout is \"serving SOCKET\". Sockets live in\n"
        "$XDG_RUNTIME_DIR/vramscope (else /tmp/vramscope-UID; VRAMSCOPE_LIVE_DIR overrides).\n\n"
        "exit codes: 0 served to the end, 2 usage, 3 unreadable input or socket",
        options};
}

}  // namespace

const std::vector<CommandSpec>& commandTable() {
    // Built once: OptionSpec and the top-level help hold views into these strings.
    static const std::vector<CommandSpec> table = {
        infoSpec(),   reportSpec(),   synthSpec(),  convertSpec(),  summarizeSpec(),
        flameSpec(),  segmentsSpec(), checkSpec(),  batchFitSpec(), exportSpec(),
        renderSpec(), reviewSpec(),   attachSpec(), watchSpec(),    replaySpec(),
    };
    return table;
}

}  // namespace vramscope::app
