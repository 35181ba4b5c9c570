#include "cli/trace_hta_command.h"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "cli/trace_common.h"
#include "pipeline/hta_extras_pipeline.h"

namespace scaleprof::cli {

namespace {

// `trace potential-stragglers` and `trace kernel-sequences` (issue 31): HTA's analyses that have
// arguments of their own.
struct HtaExtraOptions {
  std::vector<std::string> paths;
  std::string format = "table";
  std::string output;
  std::string ranks;  // kernel-sequences
  std::string steps;  // potential-stragglers: --profiler-steps
  int64_t num_candidates = 2;
  std::string operator_name;
  int64_t min_pattern_len = 3;
  bool include_last_step = false;
  bool strict = false;
  bool quiet = false;
  bool full_names = false;
  bool wide = false;
  unsigned threads = 0;
};

// Prints what reading met and the tables; the exit code.
int finish_read(bool quiet, const std::string& output, const trace::StreamedSet& set,
                const std::vector<std::string>& notes, const report::TraceReport& tables,
                const report::RenderOptions& render) {
  for (const Diagnostic& e : set.errors) print_message(stderr, "error", e.text());
  if (!quiet) {
    for (const Diagnostic& w : set.warnings) print_message(stderr, "warning", w.text());
    for (const std::string& n : notes) print_message(stderr, "note", n);
  }
  if (const int code = emit(tables, render, output); code != kExitOk) return code;
  return partial_exit(set) ? kExitPartial : kExitOk;
}

int run_hta_extra(const HtaExtraOptions& opt, bool stragglers) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  trace::LoadOptions load;
  load.parse.lenient = !opt.strict;
  load.threads = opt.threads;
  text_width(opt.output, opt.wide, opt.full_names, &render);
  std::string error;
  if (stragglers) {
    analysis::PotentialStragglerOptions options;
    options.num_candidates = opt.num_candidates;
    if (!parse_rank_list(opt.steps, &options.profiler_steps, &error)) {
      print_message(stderr, "error", "--profiler-steps" + error.substr(error.find(':')));
      return kExitUsage;
    }
    auto result = pipeline::potential_stragglers_report(opt.paths, load, options, opt.include_last_step);
    if (!result) return fail_with(result.error());
    const pipeline::PotentialStragglersReport& r = result.value();
    if (!r.result.note.empty() && !opt.quiet) print_message(stderr, "note", r.result.note);
    return finish_read(opt.quiet, opt.output, r.set, r.repair_notes, r.report, render);
  }
  analysis::KernelSequenceOptions options;
  options.operator_name = opt.operator_name;
  options.min_pattern_len = opt.min_pattern_len;
  options.include_last_step = opt.include_last_step;
  std::vector<int64_t> ranks;
  if (!parse_rank_list(opt.ranks, &ranks, &error)) {
    print_message(stderr, "error", error);
    return kExitUsage;
  }
  auto result = pipeline::kernel_sequences_report(opt.paths, load, options, ranks);
  if (!result) return fail_with(result.error());
  const pipeline::KernelSequencesReport& r = result.value();
  if (r.ranks.empty() && !ranks.empty()) {
    print_message(stderr, "error", fmt::format("--ranks {} matches none of the ranks read", opt.ranks));
    return kExitUsage;
  }
  return finish_read(opt.quiet, opt.output, r.set, r.repair_notes, r.report, render);
}

void setup_stragglers_and_sequences(CLI::App& trace, int* exit_code) {
  for (const bool stragglers : {true, false}) {
    auto opt = std::make_shared<HtaExtraOptions>();
    CLI::App* cmd =
        stragglers
            ? trace.add_subcommand("potential-stragglers",
                                   "HTA's get_potential_stragglers: the ranks that start the dominant communication "
                                   "kernel of each step last")
            : trace.add_subcommand("kernel-sequences",
                                   "HTA's get_frequent_cuda_kernel_sequences: the most frequent sequences of device "
                                   "work launched under an operator, with their counts and times");
    cmd->add_option("paths", opt->paths, "Trace files (.json, .json.gz) of the ranks, or directories of them")
        ->required();
    if (stragglers) {
      cmd->add_option("--profiler-steps", opt->steps,
                      "ProfilerStep numbers to analyse, e.g. 3,5-7 (default: every step but each rank's last)");
      cmd->add_option("--num-candidates", opt->num_candidates, "How many ranks to name (HTA's num_candidates)")
          ->capture_default_str()
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
    } else {
      cmd->add_option("--operator", opt->operator_name,
                      "The operator the sequences are launched under: every host call whose name contains this text "
                      "(e.g. aten::linear, ProfilerStep)")
          ->required();
      cmd->add_option("--min-pattern-len", opt->min_pattern_len,
                      "Count an operator only if it launched at least this many kernels")
          ->capture_default_str()
          ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
      cmd->add_option("--ranks", opt->ranks, "Ranks to analyse, e.g. 0,2,4-7 (default: all; HTA: rank 0)");
    }
    cmd->add_flag("--include-last-step", opt->include_last_step,
                  "Keep the last ProfilerStep (HTA drops it as possibly incomplete)");
    add_output_flags(cmd, opt.get());
    add_reading_flags(cmd, opt.get());
    cmd->callback([opt, exit_code, stragglers] { *exit_code = run_hta_extra(*opt, stragglers); });
  }
}

// `trace annotations`: HTA's get_gpu_user_annotation_breakdown, or with --kernels its
// get_gpu_kernels_with_user_annotations.
struct AnnotationOptions {
  std::vector<std::string> paths;
  std::string format = "table";
  std::string output;
  std::string ranks;
  bool kernels = false;
  bool cpu = false;
  double duration_ratio = 0.8;
  int64_t num_kernels = 1000;
  std::vector<std::string> allowlist;
  bool include_last_step = false;
  bool strict = false;
  bool quiet = false;
  bool full_names = false;
  bool wide = false;
  unsigned threads = 0;
};

// What `trace annotations` and `trace cupti-counters` set up alike: the format, the width of text
// tables, the reading and the ranks; false (the error printed) on a usage error.
bool read_set_up(const AnnotationOptions& opt, report::RenderOptions* render, trace::LoadOptions* load,
                 std::vector<int64_t>* ranks) {
  if (!report::parse_format(opt.format, &render->format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return false;
  }
  load->parse.lenient = !opt.strict;
  load->threads = opt.threads;
  text_width(opt.output, opt.wide, opt.full_names, render);
  std::string error;
  if (!parse_rank_list(opt.ranks, ranks, &error)) {
    print_message(stderr, "error", error);
    return false;
  }
  return true;
}

int run_annotations(const AnnotationOptions& opt, CLI::App* cmd) {
  report::RenderOptions render;
  trace::LoadOptions load;
  std::vector<int64_t> ranks;
  if (!read_set_up(opt, &render, &load, &ranks)) return kExitUsage;
  auto no_rank = [&] {
    print_message(stderr, "error", fmt::format("--ranks {} matches none of the ranks read", opt.ranks));
    return kExitUsage;
  };
  if (opt.kernels) {
    for (const char* breakdown_only : {"--cpu", "--duration-ratio", "--num-kernels", "--allowlist"}) {
      if (cmd->count(breakdown_only) > 0) {
        print_message(stderr, "error", fmt::format("{} applies to the breakdown, not to --kernels", breakdown_only));
        return kExitUsage;
      }
    }
    auto result = pipeline::annotated_kernels_report(opt.paths, load, opt.include_last_step, ranks);
    if (!result) return fail_with(result.error());
    const pipeline::AnnotatedKernelsReport& r = result.value();
    if (r.ranks.empty() && !ranks.empty()) return no_rank();
    return finish_read(opt.quiet, opt.output, r.set, r.repair_notes, r.report, render);
  }
  analysis::AnnotationBreakdownOptions options;
  options.use_gpu_annotation = !opt.cpu;
  options.duration_ratio = opt.duration_ratio;
  options.num_kernels = opt.num_kernels;
  options.has_allowlist = cmd->count("--allowlist") > 0;
  options.allowlist = opt.allowlist;
  options.include_last_step = opt.include_last_step;
  auto result = pipeline::annotation_breakdown_report(opt.paths, load, options, ranks);
  if (!result) return fail_with(result.error());
  const pipeline::AnnotationBreakdownReport& r = result.value();
  if (r.ranks.empty() && !ranks.empty()) return no_rank();
  return finish_read(opt.quiet, opt.output, r.set, r.repair_notes, r.report, render);
}

void setup_annotations_command(CLI::App& trace, int* exit_code) {
  auto opt = std::make_shared<AnnotationOptions>();
  CLI::App* cmd = trace.add_subcommand(
      "annotations",
      "HTA's get_gpu_user_annotation_breakdown: time per user annotation (gpu_user_annotation spans, or with --cpu "
      "the host's user_annotation spans); with --kernels, get_gpu_kernels_with_user_annotations: each piece of "
      "device work with the annotation that holds it");
  cmd->add_option("paths", opt->paths, "Trace files (.json, .json.gz) of the ranks, or directories of them")
      ->required();
  cmd->add_flag("--kernels", opt->kernels,
                "List the device work with the innermost gpu_user_annotation span on its track that overlaps it");
  cmd->add_flag("--cpu", opt->cpu,
                "Time the host's user_annotation spans (record_function, ProfilerStep#N; HTA's "
                "use_gpu_annotation=False) instead of the gpu_user_annotation spans");
  cmd->add_option("--duration-ratio", opt->duration_ratio,
                  "With more than --num-kernels names: fold into 'others' the names past this quantile of the "
                  "running sums (HTA's duration_ratio)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--num-kernels", opt->num_kernels, "Names listed before the rest are folded into 'others'")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  cmd->add_option("--allowlist", opt->allowlist,
                  "Never fold names containing this text (repeatable; HTA's allowlist_patterns, matched literally)");
  cmd->add_option("--ranks", opt->ranks, "Ranks to analyse, e.g. 0,2,4-7 (default: all)");
  cmd->add_flag("--include-last-step", opt->include_last_step,
                "Keep the last ProfilerStep (HTA drops it as possibly incomplete)");
  add_output_flags(cmd, opt.get());
  add_reading_flags(cmd, opt.get());
  cmd->callback([opt, exit_code, cmd] { *exit_code = run_annotations(*opt, cmd); });
}

// `trace cupti-counters`: HTA's get_cupti_counter_data_with_operators.
int run_cupti_counters(const AnnotationOptions& opt) {
  report::RenderOptions render;
  trace::LoadOptions load;
  std::vector<int64_t> ranks;
  if (!read_set_up(opt, &render, &load, &ranks)) return kExitUsage;
  auto result = pipeline::cupti_counters_report(opt.paths, load, opt.include_last_step, ranks);
  if (!result) return fail_with(result.error());
  const pipeline::CuptiCountersReport& r = result.value();
  if (r.ranks.empty() && !ranks.empty()) {
    print_message(stderr, "error", fmt::format("--ranks {} matches none of the ranks read", opt.ranks));
    return kExitUsage;
  }
  if (!opt.quiet) {
    for (const analysis::RankCuptiCounters& rank : r.ranks) {
      if (!rank.error.empty()) print_message(stderr, "warning", fmt::format("rank {}: {}", rank.rank, rank.error));
    }
  }
  return finish_read(opt.quiet, opt.output, r.set, r.repair_notes, r.report, render);
}

void setup_cupti_counters_command(CLI::App& trace, int* exit_code) {
  auto opt = std::make_shared<AnnotationOptions>();
  CLI::App* cmd = trace.add_subcommand(
      "cupti-counters",
      "HTA's get_cupti_counter_data_with_operators: the CUPTI counters of each kernel measured in CUPTI profiler "
      "mode (cuda_profiler_range events), with the operator stack of its launch");
  cmd->add_option("paths", opt->paths, "Trace files (.json, .json.gz) of the ranks, or directories of them")
      ->required();
  cmd->add_option("--ranks", opt->ranks, "Ranks to analyse, e.g. 0,2,4-7 (default: all; HTA: rank 0)");
  cmd->add_flag("--include-last-step", opt->include_last_step,
                "Keep the last ProfilerStep (HTA drops it as possibly incomplete)");
  add_output_flags(cmd, opt.get());
  add_reading_flags(cmd, opt.get());
  cmd->callback([opt, exit_code] { *exit_code = run_cupti_counters(*opt); });
}

}  // namespace

void setup_hta_extra_commands(CLI::App& trace, int* exit_code) {
  setup_stragglers_and_sequences(trace, exit_code);
  setup_annotations_command(trace, exit_code);
  setup_cupti_counters_command(trace, exit_code);
}

}  // namespace scaleprof::cli
