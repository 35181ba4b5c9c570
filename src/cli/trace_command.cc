#include "cli/trace_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "cli/trace_common.h"
#include "cli/trace_hta_command.h"
#include "core/number_text.h"
#include "pipeline/trace_diff_pipeline.h"
#include "pipeline/trace_pipeline.h"
#include "pipeline/whatif_pipeline.h"

namespace scaleprof::cli {

namespace {

struct TraceOptions {
  std::vector<std::string> paths;
  std::string ranks;  // "0,2-3"
  std::string format = "table";
  std::string output;
  std::vector<std::string> rank_overrides;  // FILE=N
  std::string only;                         // summary: comma-separated analyses
  std::string partial;                      // collectives/stragglers: write this shard's reduced rows here instead
  std::string html;                         // summary: also write the page of report/trace_html.h here
  bool strict = false;
  bool quiet = false;
  bool full_names = false;
  bool wide = false;
  bool no_align = false;  // collectives, stragglers, summary, decompose, critical-path: --no-align
  unsigned threads = 0;
  report::TraceReportOptions report;
  double consecutive_kernel_delay_us = 30.0;
  std::optional<double> peak_tflops;  // --peak-tflops when given (report.peak_tflops 0 means the table's)
  std::optional<int64_t> path_step;   // critical-path --step N
  std::string path_instance;          // critical-path --instance N or A-B
};

// Every subcommand streams its ranks (engine/trace_stream.h): each is read, reduced, freed.
struct Subcommand {
  const char* name;
  const char* help;
  // Made from the collective rows alone: a shard can write them (--partial) and reads only the files
  // of its own ranks.
  bool rows_only = false;
};

constexpr Subcommand kSubcommands[] = {
    {"summary", "Every analysis below, for every rank"},
    {"breakdown", "Temporal breakdown: idle / compute / non-compute GPU time"},
    {"kernels", "Kernel-type breakdown and the top kernels per type"},
    {"idle", "Idle time per stream: host wait / kernel wait / other"},
    {"overlap", "Communication/computation overlap per rank"},
    {"launch", "Kernel launch statistics: CPU duration, GPU duration, launch delay"},
    {"ops", "Operator table, like torch.profiler key_averages().table()"},
    {"steps", "ProfilerStep windows and GPU time per step"},
    {"phases", "Time per phase (data loading, forward, backward, optimizer) and record_function region per step"},
    {"decompose", "Each step split into compute, exposed communication, collective wait, data, optimizer, host, idle"},
    {"critical-path",
     "Critical path per rank and step, its time by category adding up to the step, and across ranks at collectives"},
    {"flops", "FLOPs from recorded shapes, achieved TFLOP/s and MFU per rank, step, operator and kernel"},
    {"collectives", "Collectives matched across ranks: latency, skew, wait, algorithm and bus bandwidth", true},
    {"stragglers", "Stragglers: who the other ranks wait for at collectives, per rank and per step", true},
    {"memory", "Memory from [memory] events: allocated/reserved over time, peaks per step, holders at the peak"},
    // Issue 23: counters.
    {"counters", "Launch queue length per stream (time-weighted and HTA's), time with it full, memcpy bandwidth"},
    // Issue 33: FSDP/ZeRO.
    {"fsdp", "Exposed all-gather, reduce-scatter and all-reduce per process group, phase and FSDP layer"},
    // Issue 33: pipeline parallelism.
    {"pipeline", "Pipeline stages from send/recv, micro-batches, each stage's bubble per step against (p-1)/(m+p-1)"},
};

int run_subcommand(const TraceOptions& opt, const Subcommand& sub) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  report::TraceReportOptions report_options = opt.report;
  std::string error;
  if (!parse_rank_list(opt.ranks, &report_options.ranks, &error)) {
    print_message(stderr, "error", error);
    return kExitUsage;
  }
  for (size_t pos = 0; pos < opt.only.size();) {
    size_t comma = std::min(opt.only.find(',', pos), opt.only.size());
    if (comma > pos) report_options.only.push_back(opt.only.substr(pos, comma - pos));
    pos = comma + 1;
  }
  for (const std::string& name : report_options.only) {
    const auto& known = report::summary_analysis_names();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      print_message(stderr, "error",
                    fmt::format("--only: unknown analysis '{}' (choose from breakdown, kernels, idle, overlap, "
                                "launch, ops, steps, collectives, stragglers, memory, critical-path, counters, flops)",
                                name));
      return kExitUsage;
    }
  }
  if (!pipeline::known_operator_sort_key(opt.report.sort_by)) {
    print_message(stderr, "error",
                  fmt::format("--sort must be self_cpu, cpu_total, self_device, device_total or calls (got '{}')",
                              opt.report.sort_by));
    return kExitUsage;
  }
  if (!(opt.consecutive_kernel_delay_us >= 0) || opt.consecutive_kernel_delay_us > 1e9) {
    print_message(stderr, "error", "--consecutive-kernel-delay must be between 0 and 1e9 us");
    return kExitUsage;
  }
  report_options.consecutive_kernel_delay_ns = std::llround(opt.consecutive_kernel_delay_us * 1000.0);
  report_options.align_clocks = !opt.no_align;
  // trace flops: the peaks MFU is taken against.
  if (!opt.report.flops_device.empty() && !pipeline::known_flops_device(opt.report.flops_device)) {
    print_message(stderr, "error",
                  fmt::format("--device: no peak table for '{}' (known: {})", opt.report.flops_device,
                              pipeline::flops_device_names()));
    return kExitUsage;
  }
  if (opt.peak_tflops) {
    // Given means used: 0 or less would be taken as "not given" and silently ignored.
    if (!(*opt.peak_tflops > 0) || *opt.peak_tflops > 1e9) {
      print_message(
          stderr, "error",
          fmt::format("--peak-tflops must be a number of TFLOP/s above 0 and at most 1e9 (got {})", *opt.peak_tflops));
      return kExitUsage;
    }
    report_options.peak_tflops = *opt.peak_tflops;
  }

  if (!pipeline::set_path_window(opt.path_step, opt.path_instance, &report_options.path_window, &error)) {
    print_message(stderr, "error", error);
    return kExitUsage;
  }

  pipeline::TraceReportRequest request;
  request.report = sub.name;
  request.paths = opt.paths;
  auto& load = request.load;
  load.parse.lenient = !opt.strict;
  load.threads = opt.threads;
  for (const std::string& spec : opt.rank_overrides) {
    const size_t eq = spec.rfind('=');
    const std::optional<int64_t> rank =
        eq == std::string::npos ? std::nullopt : parse_int64(std::string_view(spec).substr(eq + 1));
    if (!rank || *rank < 0) {
      print_message(stderr, "error", fmt::format("--rank expects FILE=N with N >= 0 (got '{}')", spec));
      return kExitUsage;
    }
    load.rank_overrides.emplace_back(spec.substr(0, eq), *rank);
  }
  // A progress line on stderr, only on a terminal and only once reading takes over a second.
  const bool show_progress = !opt.quiet && isatty(STDERR_FILENO) != 0;
  const auto start = std::chrono::steady_clock::now();
  std::mutex progress_mutex;
  bool progress_shown = false;
  if (show_progress) {
    load.progress = [&](size_t done, size_t total, uint64_t bytes, uint64_t total_bytes) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;
      const double pct = total_bytes > 0 ? 100.0 * static_cast<double>(bytes) / static_cast<double>(total_bytes) : 0;
      fmt::print(stderr, "\rreading traces: {:3.0f}% ({} of {} files done)", std::min(pct, 100.0), done, total);
      progress_shown = true;
    };
  }
  text_width(opt.output, opt.wide, opt.full_names, &render);
  if (!sub.rows_only && !opt.partial.empty()) {
    print_message(stderr, "error", "--partial is for the collectives and stragglers subcommands");
    return kExitUsage;
  }
  // A shard of a huge job touches only its own files: collectives and stragglers do not read a file
  // whose name (or --rank) gives a rank --ranks leaves out.
  request.read_selected_files_only = sub.rows_only;
  request.shard = !opt.partial.empty();
  request.html = !opt.html.empty();
  request.options = std::move(report_options);
  auto streamed = pipeline::run_trace_report(request);
  if (progress_shown) fmt::print(stderr, "\r\x1b[K");
  if (!streamed) {
    return fail_with(streamed.error());
  }
  pipeline::StreamedReport& result = streamed.value();
  for (const Diagnostic& e : result.set.errors) print_message(stderr, "error", e.text());
  if (!opt.quiet) {
    for (const Diagnostic& w : result.set.warnings) print_message(stderr, "warning", w.text());
    for (const std::string& n : result.repair_notes) print_message(stderr, "note", n);
  }
  if (!result.any_read) {
    print_message(stderr, "error", "no trace could be read");
    return kExitError;
  }
  if (!result.any_selected) {
    print_message(stderr, "error", fmt::format("--ranks {} matches none of the ranks read", opt.ranks));
    return kExitUsage;
  }
  if (request.shard) {
    if (Status written = write_output_file(opt.partial, result.shard); !written) return fail_with(written.error());
    return partial_exit(result.set) ? kExitPartial : kExitOk;
  }
  if (const int code = emit(result.report, render, opt.output); code != kExitOk) return code;
  if (!opt.quiet) {
    for (const std::string& file : result.overlays) print_message(stderr, "note", "wrote " + file);
  }
  if (request.html) {
    if (Status written = write_output_file(opt.html, result.page); !written) return fail_with(written.error());
  }
  return partial_exit(result.set) ? kExitPartial : kExitOk;
}

struct MergeOptions {
  std::vector<std::string> paths;
  std::string format = "table";
  std::string output;
  bool wide = false;
  bool no_align = false;
  int64_t gpus_per_node = 0;
};

int run_merge(const MergeOptions& opt) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  auto merged = pipeline::merge_shards({opt.paths, opt.gpus_per_node, !opt.no_align});
  if (!merged) {
    return fail_with(merged.error());
  }
  text_width(opt.output, opt.wide, false, &render);
  return emit(merged.value(), render, opt.output);
}

void setup_merge_command(CLI::App& trace, int* exit_code) {
  auto opt = std::make_shared<MergeOptions>();
  CLI::App* cmd =
      trace.add_subcommand("merge", "Merge shards written with --partial: the output of one run over all their ranks");
  cmd->add_option("files", opt->paths, "Partial-results files")->required();
  add_output_flags(cmd, opt.get());
  cmd->add_option("--gpus-per-node", opt->gpus_per_node, "Ranks per node when the traces have no host name")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  cmd->add_flag("--no-align", opt->no_align,
                "Leave every host on its own clock (the offsets are still estimated and shown in the clocks table)");
  add_width_flags(cmd, &opt->wide, nullptr);
  cmd->callback([opt, exit_code] { *exit_code = run_merge(*opt); });
}

struct DiffCommandOptions {
  std::string a, b;
  std::string format = "table";
  std::string output;
  std::string samples;  // "A,B"
  int64_t warmup = 1;
  bool include_last_step = false;
  bool strict = false;
  bool quiet = false;
  bool full_names = false;
  bool wide = false;
  unsigned threads = 0;
};

// "32,64" -> 32 and 64 samples per step; an empty side ("32," or ",64") leaves that side's own.
bool parse_samples(const std::string& text, pipeline::DiffOptions* options, std::string* error) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos) {
    *error = fmt::format("--samples expects A,B: the samples per step of each side (got '{}')", text);
    return false;
  }
  auto one = [&](const std::string& item, std::optional<double>* out) {
    if (item.empty()) return true;
    const std::optional<double> v = parse_double(item, NumberSyntax{.non_finite = false});
    if (!v || !(*v > 0)) {
      *error = fmt::format("--samples: '{}' is not a positive number of samples", item);
      return false;
    }
    *out = v;
    return true;
  };
  return one(text.substr(0, comma), &options->samples_a) && one(text.substr(comma + 1), &options->samples_b);
}

int run_diff(const DiffCommandOptions& opt) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  pipeline::DiffOptions options;
  options.summary.warmup_steps = opt.warmup;
  options.summary.include_last_step = opt.include_last_step;
  std::string error;
  if (!opt.samples.empty() && !parse_samples(opt.samples, &options, &error)) {
    print_message(stderr, "error", error);
    return kExitUsage;
  }
  trace::LoadOptions load;
  load.parse.lenient = !opt.strict;
  load.threads = opt.threads;
  text_width(opt.output, opt.wide, opt.full_names, &render);
  auto diffed = pipeline::diff_report(opt.a, opt.b, load, options);
  if (!diffed) return fail_with(diffed.error());
  const pipeline::DiffReport& d = diffed.value();
  bool partial = false;
  for (const pipeline::DiffSideRead* side : {&d.a, &d.b}) {
    for (const Diagnostic& e : side->set.errors) print_message(stderr, "error", side->info.label + ": " + e.text());
    partial |= side->set.partial();
    if (opt.quiet) continue;
    for (const std::string& w : side->run_warnings) print_message(stderr, "warning", side->info.label + ": " + w);
    for (const Diagnostic& w : side->set.warnings) print_message(stderr, "warning", side->info.label + ": " + w.text());
    for (const std::string& n : side->repair_notes) print_message(stderr, "note", side->info.label + ": " + n);
  }
  // What the sides do not share is said even with --quiet: it changes what the figures mean.
  for (const Diagnostic& p : d.problems) {
    print_message(stderr, p.severity == Severity::kError ? "error" : "warning", p.text());
    partial |= p.severity == Severity::kError;
  }
  if (!d.complete) {
    print_message(stderr, "error", "nothing to compare: a side has no readable trace");
    return kExitError;
  }
  if (const int code = emit(d.report, render, opt.output); code != kExitOk) return code;
  return partial ? kExitPartial : kExitOk;
}

void setup_diff_command(CLI::App& trace, int* exit_code) {
  auto opt = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd = trace.add_subcommand(
      "diff", "Compare two traces, trace directories or run directories: per-step medians, significant changes");
  cmd->add_option("a", opt->a, "Side A (the baseline): a trace file, a directory of traces or a run directory")
      ->required();
  cmd->add_option("b", opt->b, "Side B, compared with A")->required();
  add_output_flags(cmd, opt.get());
  cmd->add_option("--warmup", opt->warmup, "Leading ProfilerSteps of each rank left out as warm-up")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  cmd->add_option("--samples", opt->samples,
                  "Samples per step of each side, A,B (default: from a run directory's steps.csv); times are "
                  "compared per sample when they differ");
  cmd->add_flag("--include-last-step", opt->include_last_step,
                "Keep the last ProfilerStep (HTA drops it as possibly incomplete)");
  add_reading_flags(cmd, opt.get(), "Print no reading warnings (what the sides do not share is still said)");
  cmd->callback([opt, exit_code] { *exit_code = run_diff(*opt); });
}

struct WhatIfCommandOptions {
  std::vector<std::string> paths;
  std::vector<std::string> what_ifs;
  std::string format = "table";
  std::string output;
  bool strict = false;
  bool quiet = false;
  bool full_names = false;
  bool wide = false;
  unsigned threads = 0;
};

int run_what_if(const WhatIfCommandOptions& opt) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  trace::LoadOptions load;
  load.parse.lenient = !opt.strict;
  load.threads = opt.threads;
  text_width(opt.output, opt.wide, opt.full_names, &render);
  auto result = pipeline::trace_what_if(opt.paths, opt.what_ifs, load);
  if (!result) return fail_with(result.error());
  const pipeline::TraceWhatIf& w = result.value();
  for (const Diagnostic& e : w.read.set.errors) print_message(stderr, "error", e.text());
  if (!opt.quiet) {
    for (const Diagnostic& x : w.read.set.warnings) print_message(stderr, "warning", x.text());
    for (const std::string& n : w.read.repair_notes) print_message(stderr, "note", n);
  }
  if (w.read.ranks_without_steps > 0) {
    print_message(stderr, "warning",
                  fmt::format("{} rank(s) have no ProfilerStep: not replayed", w.read.ranks_without_steps));
  }
  if (const int code = emit(w.report, render, opt.output); code != kExitOk) return code;
  return w.read.set.partial() ? kExitPartial : kExitOk;
}

void setup_what_if_command(CLI::App& trace, int* exit_code) {
  auto opt = std::make_shared<WhatIfCommandOptions>();
  CLI::App* cmd = trace.add_subcommand(
      "what-if", "Re-time every rank's profiled steps under a change: the step time predicted (the what-if model)");
  cmd->add_option("paths", opt->paths, "Trace files (.json, .json.gz) of the ranks, or directories of them")
      ->required();
  cmd->add_option("--what-if", opt->what_ifs,
                  "The change (repeatable): 'rank N at median', 'stragglers at median', 'communication free', "
                  "'communication 2x faster', 'all-to-all balanced' (each all-to-all's bytes spread evenly over its "
                  "pairs of ranks), computation, data loading, optimizer, host overhead, idle followed by "
                  "'2x faster' or 'free', or the name of an operator, annotation or kernel (any containing it) "
                  "followed by '2x faster' or 'free'")
      ->required()
      ->allow_extra_args(false);
  add_output_flags(cmd, opt.get());
  add_reading_flags(cmd, opt.get());
  cmd->callback([opt, exit_code] { *exit_code = run_what_if(*opt); });
}

}  // namespace

void setup_trace_command(CLI::App& app, int* exit_code) {
  CLI::App* trace = app.add_subcommand("trace", "Analyse PyTorch profiler (Kineto) trace files");
  trace->require_subcommand(1);
  for (const Subcommand& sub : kSubcommands) {
    auto opt = std::make_shared<TraceOptions>();
    CLI::App* cmd = trace->add_subcommand(sub.name, sub.help);
    cmd->add_option("paths", opt->paths, "Trace files (.json, .json.gz) or directories of them")->required();
    cmd->add_option("--ranks", opt->ranks, "Ranks to analyse, e.g. 0,2,4-7 (default: all)");
    add_output_flags(cmd, opt.get());
    // One FILE=N per --rank: without allow_extra_args(false) a vector option swallows the trace
    // paths that follow it (`--rank a.json=0 b.json`).
    cmd->add_option("--rank", opt->rank_overrides, "Set the rank of a file: FILE=N (repeatable)")
        ->allow_extra_args(false);
    add_reading_flags(cmd, opt.get(), "Print no warnings or progress");
    cmd->add_option("--top", opt->report.top, "Rows per group in kernel and operator tables (ops: 0 shows all)")
        ->capture_default_str();
    cmd->add_option("--consecutive-kernel-delay", opt->consecutive_kernel_delay_us,
                    "Idle gaps shorter than this (us) count as kernel wait")
        ->capture_default_str();
    cmd->add_flag("--include-last-step", opt->report.include_last_step,
                  "Keep the last ProfilerStep (HTA drops it as possibly incomplete)");
    cmd->add_option("--sort", opt->report.sort_by,
                    "Operator table order: self_cpu, cpu_total, self_device, device_total, calls")
        ->capture_default_str();
    cmd->add_option("--gpus-per-node", opt->report.gpus_per_node,
                    "Collectives: ranks per node, for intra/inter-node and clocks when traces have no host name")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
    if (std::string_view(sub.name) == "collectives" || std::string_view(sub.name) == "stragglers" ||
        std::string_view(sub.name) == "summary" || std::string_view(sub.name) == "decompose" ||
        std::string_view(sub.name) == "critical-path") {
      cmd->add_flag("--no-align", opt->no_align,
                    "Cross-rank figures (waits, skews, the cross-rank path): leave every host on its own clock (the "
                    "offsets are still estimated "
                    "and shown in the clocks table), to compare with the aligned figures");
    }
    // Issue 23: counters.
    if (std::string_view(sub.name) == "counters" || std::string_view(sub.name) == "summary") {
      cmd->add_option("--max-queue-length", opt->report.max_queue_length,
                      "Counters: the queue length at which a stream's launch queue counts as full (default: "
                      "the level at which the trace's launches start to block; HTA: 1024, which launches "
                      "never reach; see docs/cli.md)")
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
    }
    if (sub.rows_only) {
      cmd->add_option("--partial", opt->partial,
                      "Write this shard's reduced results to FILE for `scaleprof trace merge` (see docs/scale.md)");
    }
    if (std::string_view(sub.name) == "flops" || std::string_view(sub.name) == "summary") {
      cmd->add_option("--device", opt->report.flops_device,
                      "FLOPs: take MFU against this device's peaks instead of the trace's device (A100, H100 SXM, "
                      "H100 PCIe, H200, L40S, V100 SXM2, MI250X, MI250, MI300X, MI325X; docs/flops.md)");
      cmd->add_option("--peak-tflops", opt->peak_tflops,
                      "FLOPs: take MFU against this peak (TFLOP/s) for every dtype (e.g. TF32, or a device not in the "
                      "table)");
    }
    if (std::string_view(sub.name) == "flops") {
      cmd->add_option("--deepspeed-profile", opt->report.deepspeed_profile,
                      "Show this DeepSpeed flops profiler output (print_model_profile's output_file, e.g. "
                      "profiler_ds.txt) beside the trace's forward FLOPs, in total and per module (docs/flops.md)");
      cmd->add_option("--deepspeed-forwards", opt->report.deepspeed_forwards,
                      "Forward passes the DeepSpeed profile covers (the DeepSpeed engine profiles one)")
          ->capture_default_str()
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    }
    if (std::string_view(sub.name) == "summary") {
      cmd->add_option("--only", opt->only,
                      "Run only these analyses: breakdown,kernels,idle,overlap,launch,ops,steps,collectives,stragglers,"
                      "memory,critical-path,counters,flops");
      cmd->add_option("--html", opt->html,
                      "Also write the analyses as one offline HTML page to FILE: charts per rank (binned past 64 "
                      "ranks), collective bandwidth, a straggler heatmap, the operator table sortable");
    }
    if (std::string_view(sub.name) == "memory") {
      cmd->add_option("--points", opt->report.memory_points,
                      "Timeline buckets per device: at most 3 points each (lowest and highest allocated, highest "
                      "reserved), the exact peak always kept; 0: no timeline rows")
          ->capture_default_str()
          ->check(CLI::Range(0, 1'000'000));
    }
    if (std::string_view(sub.name) == "critical-path") {
      cmd->add_option("--step", opt->path_step, "Only this ProfilerStep number (default: every step)")
          ->check(CLI::NonNegativeNumber);
      cmd->add_option("--annotation", opt->report.path_window.annotation,
                      "Windows: ProfilerStep, any host annotation or operator whose name contains TEXT (each "
                      "instance a window; HTA's annotation), or \"\" for the whole trace")
          ->capture_default_str();
      cmd->add_option("--instance", opt->path_instance,
                      "Only instance N, or instances A-B as one window (ProfilerStep numbers for steps, else "
                      "positions from 0 in order of start; HTA's instance_id)");
      cmd->add_flag("--events", opt->report.path_events,
                    "Also list every edge of each path in order (table critical_path_events; HTA's "
                    "get_critical_path_breakdown)");
      cmd->add_option("--overlay", opt->report.path_overlay_dir,
                      "Also write each rank's trace with its critical path drawn on it (events marked critical, "
                      "flows, a track of its own) to DIR/overlaid_critical_path_<file>, for Perfetto");
    }
    const Subcommand* which = &sub;
    cmd->callback([opt, which, exit_code] { *exit_code = run_subcommand(*opt, *which); });
  }
  setup_merge_command(*trace, exit_code);
  setup_diff_command(*trace, exit_code);
  setup_what_if_command(*trace, exit_code);
  setup_hta_extra_commands(*trace, exit_code);
}

}  // namespace scaleprof::cli
