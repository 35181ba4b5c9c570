#include "cli/slurm_command.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "config/config.h"
#include "core/file_io.h"
#include "launch/analysis_jobs.h"
#include "launch/job_state_memory.h"
#include "launch/job_status.h"
#include "launch/jobs_not_run.h"
#include "launch/launch_config.h"
#include "launch/script_set.h"
#include "launch/slurm_script.h"
#include "launch/submission.h"
#include "launch/write_refusal.h"
#include "pipeline/shard_inputs.h"
#include "report/table.h"

namespace scaleprof::cli {

namespace {

struct SlurmOptions {
  std::vector<std::string> config_files;
  bool force = false, append = false, print_config = false;
  launch::ScriptFlags script;  // --no-submit-job, --no-save-script, -j, -s, --preview
};

// A message of several lines (launch::resolve_itwinai lists every problem): the first after
// "error: ", the others each on a line of their own, each through the terminal sanitiser.
void print_lines(const char* prefix, const std::string& message) {
  size_t from = 0;
  bool first = true;
  while (from <= message.size()) {
    size_t end = message.find('\n', from);
    if (end == std::string::npos) end = message.size();
    print_message(stderr, first ? prefix : "", message.substr(from, end - from));
    first = false;
    from = end + 1;
  }
}

struct StatusOptions {
  std::string script_dir = "slurm-scripts";
  int64_t timeout_s = kDefaultClientTimeoutS;
  std::string format = "table";
  std::string output;
};

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scaleprof") : path.string();
}

// The -c files merged left to right, then the --FIELD VALUE overrides; the error is printed.
bool read_config(const std::vector<std::string>& files, const std::vector<std::string>& overrides,
                 config::Config* config, std::string* doing) {
  for (const std::string& file : files) {
    *doing = fmt::format("reading the configuration {}", file);
    if (auto ok = config->merge_file(file); !ok) {
      print_message(stderr, "error", ok.error().message);
      return false;
    }
  }
  *doing = "reading the command line's --FIELD VALUE overrides";
  if (auto ok = launch::apply_overrides(overrides, config); !ok) {
    print_message(stderr, "error", ok.error().message);
    return false;
  }
  return true;
}

// `doing` always says what the command is doing, for the one-line error when memory runs out.
int run_slurm(const SlurmOptions& opt, const std::vector<std::string>& overrides, std::string* doing) {
  config::Config config(launch::launch_fields());
  if (!read_config(opt.config_files, overrides, &config, doing)) return kExitUsage;
  if (opt.print_config) {
    *doing = "printing the configuration";
    fmt::print("{}", launch::effective_config_text(config));
    return kExitOk;
  }
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  auto launch = launch::make_launch_config(config, cwd, self_executable());
  if (!launch) {
    print_lines("error", launch.error().message);
    return kExitUsage;
  }
  launch::LaunchConfig& c = launch.value();
  for (const std::string& note : c.notes) print_message(stderr, "note", note);
  for (const std::string& warning : c.warnings) print_message(stderr, "warning", warning);
  auto action = launch::decide_action(opt.script, c);
  if (!action) {
    print_message(stderr, "error", action.error().message);
    return kExitUsage;
  }
  if (opt.force && opt.append) {
    print_message(stderr, "error",
                  "--force replaces the earlier submission and --append adds repetitions to it: give one of them");
    return kExitUsage;
  }
  // What was submitted from this script folder before: --force supersedes it, --append numbers its
  // repetitions after it.
  std::vector<launch::SubmittedJob> recorded;
  const std::string record_path = c.script_dir + "/" + std::string(launch::kSubmittedFile);
  std::error_code exists_error;
  if ((opt.force || opt.append) && std::filesystem::exists(record_path, exists_error)) {
    *doing = fmt::format("reading {}", record_path);
    std::vector<std::string> warnings;
    auto read = launch::read_submitted(record_path, &warnings);
    if (!read) return fail_with(read.error());
    for (const std::string& w : warnings) print_message(stderr, "warning", w);
    recorded = std::move(read).value();
  }
  if (opt.append) c.first_repetition = launch::last_repetition(recorded, c) + 1;
  *doing = "generating the scripts";
  launch::SubmitPlan plan;
  plan.jobs = launch::plan_jobs(c);
  auto scripts = launch::render_job_scripts(c, plan.jobs);
  if (!scripts) {
    print_message(stderr, "error", scripts.error().message);
    return kExitUsage;
  }
  plan.scripts = std::move(scripts).value();
  plan.report_script = launch::render_report_script(c);
  const bool save = action.value().save, submit = action.value().submit;

  if (!save && !submit) {  // preview: print and do nothing else
    // Through the sanitiser (line breaks kept): a preview shows exactly what the script holds.
    for (size_t i = 0; i < plan.jobs.size(); ++i) {
      fmt::print("#################### {} ####################\n{}\n", terminal_safe(plan.jobs[i].script_name),
                 terminal_safe_lines(plan.scripts[i]));
    }
    if (c.report) {
      fmt::print("#################### {} ####################\n{}", launch::kReportScriptName,
                 terminal_safe_lines(plan.report_script));
    }
    return kExitOk;
  }
  plan.script_paths.assign(plan.jobs.size(), std::string());
  if (save) {
    for (size_t i = 0; i < plan.jobs.size(); ++i) plan.script_paths[i] = c.script_dir + "/" + plan.jobs[i].script_name;
    if (c.report) plan.report_path = c.script_dir + "/" + std::string(launch::kReportScriptName);
    // Every path is checked before anything is written, and the set is written whole or not at
    // all, so a refused or failed call leaves no half-written set.
    std::vector<std::pair<std::string, std::string>> files;
    for (size_t i = 0; i < plan.jobs.size(); ++i) files.emplace_back(plan.script_paths[i], plan.scripts[i]);
    if (!plan.report_path.empty()) files.emplace_back(plan.report_path, plan.report_script);
    for (const auto& file : files) {
      // --append writes new scripts beside the earlier ones; report.sh, made anew, replaces its own.
      const bool replace = opt.force || (opt.append && file.first == plan.report_path);
      if (std::string refusal = launch::write_refusal(
              file.first, replace, "; --force replaces the earlier submission, --append adds repetitions to it");
          !refusal.empty()) {
        print_message(stderr, "error", refusal);
        return kExitError;
      }
    }
    *doing = fmt::format("writing the scripts into {}", c.script_dir);
    if (auto ok = make_directories(c.script_dir); !ok) {
      return fail_with(ok.error());
    }
    if (auto ok = launch::write_script_set(c.script_dir, files); !ok) {
      return fail_with(ok.error());
    }
    if (!submit) {
      fmt::print("saved {} script(s) in {}/ (not submitted):\n", plan.jobs.size() + (c.report ? 1 : 0), c.script_dir);
      for (const std::string& p : plan.script_paths) fmt::print("  {}\n", p);
      if (!plan.report_path.empty()) fmt::print("  {}\n", plan.report_path);
      return kExitOk;
    }
  }
  if (opt.force) {
    *doing = fmt::format("superseding the earlier submission recorded in {}", record_path);
    std::vector<std::string> kept = plan.script_paths;
    if (!plan.report_path.empty()) kept.push_back(plan.report_path);
    std::vector<std::string> notes;
    if (auto ok = launch::supersede(c, launch::earlier_submission(recorded, c), kept, &notes); !ok) {
      return fail_with(ok.error());
    }
    for (const std::string& n : notes) print_message(stderr, "note", n);
  }
  *doing = "submitting the jobs with sbatch";
  std::vector<launch::SubmittedJob> submitted;
  auto status = launch::submit_all(c, plan, &submitted, [](const launch::SubmittedJob& j) {
    if (j.kind == "report") {
      fmt::print("submitted job {}: report (runs when every job above has ended)\n", j.job_id);
    } else {
      fmt::print("submitted job {}: {} on {} node(s), repetition {}\n", j.job_id, j.strategy, j.nodes, j.repetition);
    }
    std::fflush(stdout);
  });
  if (!status) {
    print_message(stderr, "error", status.error().message);
    if (!submitted.empty()) {
      print_message(stderr, "note",
                    fmt::format("the {} job(s) submitted before are recorded in {}/{}", submitted.size(), c.script_dir,
                                launch::kSubmittedFile));
    }
    return kExitError;
  }
  fmt::print("recorded in {}/{}; follow with: scaleprof slurm status --script-dir {}\n", c.script_dir,
             launch::kSubmittedFile, c.script_dir);
  return kExitOk;
}

struct AnalyzeOptions {
  std::string input;
  int64_t ranks_per_task = 0;
  std::string analysis = "collectives";
  std::string output;  // folder; default <input>/slurm-analysis
  std::string format = "table";
  int64_t gpus_per_node = 0;
  SlurmOptions flags;  // -c, -j, -s, --preview, --no-submit-job, --no-save-script, --force
};

// `scaleprof slurm analyze`: the plan from the input's ranks, then the scripts previewed, saved or
// submitted as `scaleprof slurm` does (decide_action).
int run_analyze(const AnalyzeOptions& opt, const std::vector<std::string>& overrides, std::string* doing) {
  config::Config config(launch::launch_fields());
  if (!read_config(opt.flags.config_files, overrides, &config, doing)) return kExitUsage;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  auto launch = launch::make_launch_config(config, cwd.string(), self_executable(), launch::LaunchPurpose::kAnalysis);
  if (!launch) {
    print_lines("error", launch.error().message);
    return kExitUsage;
  }
  const launch::LaunchConfig& c = launch.value();
  for (const std::string& note : c.notes) print_message(stderr, "note", note);
  for (const std::string& warning : c.warnings) print_message(stderr, "warning", warning);
  auto action = launch::decide_action(opt.flags.script, c);
  if (!action) return fail_with(action.error());
  // Absolute paths: the jobs run wherever SLURM starts them.
  const std::string input = (cwd / opt.input).lexically_normal().string();
  *doing = fmt::format("listing the ranks of {}", input);
  auto inputs = pipeline::shard_inputs(input);
  if (!inputs) return fail_with(inputs.error());
  const pipeline::ShardInputs& in = inputs.value();
  if (in.unnamed_files > 0) {
    print_message(stderr, "note",
                  fmt::format("{} trace file(s) in {} say no rank in their name: every task reads them to learn "
                              "their rank, and the ranks are taken as 0-{} (name files rank-N for large jobs)",
                              in.unnamed_files, input, in.ranks.size() - 1));
  }
  launch::AnalysisPlan plan;
  plan.input = input;
  std::string out = opt.output;
  if (out.empty()) {
    if (!std::filesystem::is_directory(input, ec)) {
      return fail_with(Error{std::string("--output DIR is needed when the input is a file"), ErrorKind::kUsage});
    }
    // Inside the run or trace directory: trace directories are listed without their subfolders.
    out = input + "/slurm-analysis";
  }
  plan.output_dir = (cwd / out).lexically_normal().string();
  while (plan.output_dir.size() > 1 && plan.output_dir.back() == '/') plan.output_dir.pop_back();
  for (size_t pos = 0; pos <= opt.analysis.size();) {
    const size_t comma = std::min(opt.analysis.find(',', pos), opt.analysis.size());
    if (comma > pos) plan.analyses.push_back(opt.analysis.substr(pos, comma - pos));
    pos = comma + 1;
  }
  plan.format = opt.format;
  plan.gpus_per_node = opt.gpus_per_node;
  plan.common_paths = in.common_paths;
  std::vector<launch::ShardInput> ranks;
  for (const pipeline::ShardRank& r : in.ranks) ranks.push_back({r.rank, r.files});
  plan.shards = launch::plan_shards(ranks, opt.ranks_per_task);
  plan.rank_count = static_cast<int64_t>(ranks.size());
  plan.ranks_per_task = opt.ranks_per_task;
  if (auto ok = launch::check_analysis_plan(plan); !ok) return fail_with(ok.error());
  *doing = "generating the scripts";
  const std::string shard_script = launch::render_shard_script(c, plan);
  const std::string merge_script = launch::render_merge_script(c, plan);
  const bool save = action.value().save, submit = action.value().submit;
  if (!save && !submit) {  // preview, through the sanitiser with line breaks kept
    fmt::print("#################### {} ####################\n{}\n", launch::kShardScriptName,
               terminal_safe_lines(shard_script));
    fmt::print("#################### {} ####################\n{}", launch::kMergeScriptName,
               terminal_safe_lines(merge_script));
    return kExitOk;
  }
  *doing = fmt::format("preparing {}", plan.output_dir);
  std::vector<std::string> notes;
  if (auto ok = launch::prepare_output_dir(plan, opt.flags.force, &notes); !ok) return fail_with(ok.error());
  for (const std::string& n : notes) print_message(stderr, "note", n);
  if (auto ok = make_directories(plan.output_dir); !ok) return fail_with(ok.error());
  std::string shard_path, merge_path;
  if (save) {
    shard_path = plan.output_dir + "/" + std::string(launch::kShardScriptName);
    merge_path = plan.output_dir + "/" + std::string(launch::kMergeScriptName);
    *doing = fmt::format("writing the scripts into {}", plan.output_dir);
    if (auto ok = launch::write_script_set(plan.output_dir, {{shard_path, shard_script}, {merge_path, merge_script}});
        !ok) {
      return fail_with(ok.error());
    }
    if (auto ok = launch::make_analysis_folders(plan); !ok) return fail_with(ok.error());
    if (!submit) {
      fmt::print("saved 2 script(s) in {}/ (not submitted): {} ({} array tasks), {}\n", plan.output_dir,
                 launch::kShardScriptName, plan.shards.size(), launch::kMergeScriptName);
      return kExitOk;
    }
  }
  *doing = "submitting the analysis jobs with sbatch";
  std::vector<launch::SubmittedJob> submitted;
  auto status = launch::submit_analysis(
      c, plan, shard_path, shard_script, merge_path, merge_script, &submitted, [&plan](const launch::SubmittedJob& j) {
        if (j.array_tasks > 0) {
          fmt::print("submitted job array {}: {} task(s), {} rank(s) each at most\n", j.job_id, j.array_tasks,
                     plan.ranks_per_task);
        } else {
          fmt::print("submitted job {}: merge (runs when every task succeeded)\n", j.job_id);
        }
        std::fflush(stdout);
      });
  if (!status) {
    print_message(stderr, "error", status.error().message);
    if (!submitted.empty()) {
      print_message(
          stderr, "note",
          fmt::format("the job array submitted before is recorded in {}/{}", plan.output_dir, launch::kSubmittedFile));
    }
    return kExitError;
  }
  for (const std::string& a : plan.analyses) fmt::print("result: {}\n", launch::result_file(plan, a));
  fmt::print("recorded in {}/{}; follow with: scaleprof slurm status --script-dir {}\n", plan.output_dir,
             launch::kSubmittedFile, plan.output_dir);
  return kExitOk;
}

std::string elapsed_text(const std::optional<int64_t>& s) {
  if (!s) return {};
  return fmt::format("{}:{:02}:{:02}", *s / 3600, (*s / 60) % 60, *s % 60);
}

int run_status(const StatusOptions& opt, std::string* doing) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  std::vector<std::string> warnings;
  const std::string path = opt.script_dir + "/" + std::string(launch::kSubmittedFile);
  *doing = fmt::format("reading {}", path);
  auto jobs = launch::read_submitted(path, &warnings);
  if (!jobs) {
    print_message(stderr, "error",
                  fmt::format("{} (nothing was submitted from this script folder?)", jobs.error().message));
    return kExitError;
  }
  for (const std::string& w : warnings) print_message(stderr, "warning", w);
  std::vector<std::string> notes;
  *doing = fmt::format("asking SLURM about the {} job(s) of {}", jobs.value().size(), path);
  launch::StatusQuery query;
  query.limits.deadline = std::chrono::seconds(opt.timeout_s);
  query.state_file = opt.script_dir + "/" + std::string(launch::kJobStatesFile);  // a cancelled job stays cancelled
  const std::vector<launch::JobStatus> statuses = launch::job_statuses(jobs.value(), &notes, query);
  *doing = "recording the jobs that did not run";
  launch::record_jobs_not_run(statuses, &notes);  // for the report (its job runs this command first)
  *doing = "printing the job table";
  report::Table table;
  table.title = fmt::format("Jobs submitted from {}", opt.script_dir);
  table.columns = {{"job_id", "Job"},
                   {"kind", "Kind"},
                   {"strategy", "Strategy"},
                   {"nodes", "Nodes"},
                   {"repetition", "Rep"},
                   {"state", "State"},
                   {"slurm_state", "SLURM"},
                   {"elapsed", "Elapsed"},
                   {"elapsed_s", "Elapsed (s)"},
                   {"run", "Run"},
                   {"run_status", "Run status"},
                   {"source", "From"},
                   {"exit_code", "Exit"},
                   {"outcome", "Outcome"}};
  auto cell = [](const std::string& s) { return s.empty() ? report::Cell::null() : report::Cell(s); };
  for (const launch::JobStatus& s : statuses) {
    const bool job = s.job.kind == "job";
    table.add_row({s.job.job_id, s.job.superseded ? s.job.kind + " (superseded)" : s.job.kind, cell(s.job.strategy),
                   job ? report::Cell(s.job.nodes) : report::Cell::null(),
                   job ? report::Cell(s.job.repetition) : report::Cell::null(), s.state, cell(s.slurm_state),
                   cell(elapsed_text(s.elapsed_s)), s.elapsed_s ? report::Cell(*s.elapsed_s) : report::Cell::null(),
                   cell(s.run), cell(s.run_status), cell(s.source),
                   s.exit_code ? report::Cell(*s.exit_code) : report::Cell::null(), cell(s.outcome)});
  }
  for (const std::string& n : notes) print_message(stderr, "note", n);
  return write_table(table, render, opt.output);
}

// Runs a command; when memory runs out, one line says what it was doing (which file it was reading)
// instead of a bare "std::bad_alloc".
int with_memory_guard(const std::function<int(std::string*)>& command) {
  std::string doing = "starting";
  try {
    return command(&doing);
  } catch (const std::bad_alloc&) {
    print_message(stderr, "error", fmt::format("out of memory while {}", doing));
    return kExitError;
  }
}

}  // namespace

void setup_slurm_command(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<SlurmOptions>();
  CLI::App* cmd = app.add_subcommand(
      "slurm", "Scaling tests on SLURM: sbatch scripts from YAML configs for every strategy x node count, submitted");
  cmd->add_option("-c,--config", opt->config_files, "YAML file; repeat to merge several, left to right");
  cmd->add_flag("--no-submit-job", opt->script.no_submit, "Save the scripts, submit nothing");
  cmd->add_flag("--no-save-script", opt->script.no_save,
                "Submit without keeping the scripts (with --no-submit-job: print them)");
  cmd->add_flag("-j,--submit-job", opt->script.submit,
                "itwinai's flag: submit; with -j or -s only what is asked for happens (itwinai's rule)");
  cmd->add_flag("-s,--save-script", opt->script.save, "itwinai's flag: save the scripts (see -j)");
  cmd->add_flag("--preview", opt->script.preview, "Print the scripts, save and submit nothing");
  cmd->add_flag("--force", opt->force,
                "Replace the earlier submission of this experiment: its scripts overwritten or removed, its jobs "
                "recorded as superseded (the report leaves their runs out)");
  cmd->add_flag("--append", opt->append,
                "Add repetitions to the earlier submission of this experiment (numbered after the recorded ones)");
  cmd->add_flag("--print-config", opt->print_config,
                "Print the effective configuration and where each value came from");
  cmd->allow_extras();
  cmd->footer(
      "Any field may be set as --FIELD VALUE after the files (e.g. --mode scaling-test --num_nodes 2 "
      "--scalability_nodes 1,2,4 --env NAME=VALUE). Fields and defaults: --print-config, docs/launch.md.\n"
      "Defaults differ from itwinai's: without flags scaleprof saves AND submits, where itwinai generate-slurm only "
      "prints. With -j or -s (or itwinai's submit_job / save_script keys) itwinai's rule applies: only what is "
      "asked for happens, and neither means a preview. itwinai's configuration keys are mapped or refused with what "
      "to write instead (docs/launch.md, \"From itwinai\").");
  cmd->require_subcommand(0, 1);

  auto status_opt = std::make_shared<StatusOptions>();
  CLI::App* status = cmd->add_subcommand("status", "State of the submitted jobs: pending, running, completed, failed");
  status->footer(
      "Reads DIR/submitted.jsonl and asks squeue, scontrol show job, sacct (where accounting exists) and the run "
      "directories the jobs wrote.");
  status->add_option("--script-dir", status_opt->script_dir, "Folder with submitted.jsonl")->capture_default_str();
  status->add_option("--format", status_opt->format, "Output format: table, csv or json")->capture_default_str();
  status->add_option("-o,--output", status_opt->output, "Write to FILE instead of standard output");
  status
      ->add_option("--timeout", status_opt->timeout_s,
                   "Seconds each squeue, scontrol or sacct call may take before it is stopped")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMaxClientTimeoutS));
  status->callback([status_opt, exit_code] {
    *exit_code = with_memory_guard([&](std::string* doing) { return run_status(*status_opt, doing); });
  });

  auto analyze_opt = std::make_shared<AnalyzeOptions>();
  CLI::App* analyze = cmd->add_subcommand(
      "analyze", "Analyse a big job's traces as SLURM jobs: an array of shards, then one merge job");
  analyze->add_option("input", analyze_opt->input, "A scaleprof run directory or a directory of trace files")
      ->required();
  analyze
      ->add_option("--ranks-per-task", analyze_opt->ranks_per_task,
                   "Ranks each array task analyses (the array has ranks / N tasks, rounded up)")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  analyze
      ->add_option("--analysis", analyze_opt->analysis,
                   "collectives, stragglers or both (comma-separated): the reports a shard can write")
      ->capture_default_str();
  analyze->add_option("--output", analyze_opt->output,
                      "Folder of the scripts, submitted.jsonl, logs/, shards/ and the results (default: "
                      "INPUT/slurm-analysis)");
  analyze->add_option("--format", analyze_opt->format, "Format of the merged results: table, csv or json")
      ->capture_default_str();
  analyze
      ->add_option("--gpus-per-node", analyze_opt->gpus_per_node,
                   "Ranks per node when the traces have no host name (as trace collectives takes it)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  analyze->add_option("-c,--config", analyze_opt->flags.config_files,
                      "YAML file of scaleprof slurm (account, partition, time, cpus_per_task, mem, env, ...); repeat "
                      "to merge several");
  analyze->add_flag("--no-submit-job", analyze_opt->flags.script.no_submit, "Save the scripts, submit nothing");
  analyze->add_flag("--no-save-script", analyze_opt->flags.script.no_save, "Submit without keeping the scripts");
  analyze->add_flag("-j,--submit-job", analyze_opt->flags.script.submit, "itwinai's flag, as in scaleprof slurm");
  analyze->add_flag("-s,--save-script", analyze_opt->flags.script.save, "itwinai's flag, as in scaleprof slurm");
  analyze->add_flag("--preview", analyze_opt->flags.script.preview, "Print the two scripts, save and submit nothing");
  analyze->add_flag("--force", analyze_opt->flags.force,
                    "Replace an earlier analysis in the output folder: its shards and results removed, its jobs "
                    "recorded as superseded");
  analyze->allow_extras();
  analyze->footer(
      "Every array task runs `scaleprof trace ANALYSIS --ranks R --partial FILE` on its ranks; the merge job, "
      "submitted with --dependency=afterok on the array, runs `scaleprof trace merge` into "
      "OUTPUT/<analysis>.txt|csv|json: the output of one `scaleprof trace ANALYSIS` over all ranks. Follow with "
      "`scaleprof slurm status --script-dir OUTPUT` (one row per task, and the merge).\n"
      "Scheduling fields come from -c files and --FIELD VALUE after the input (--partition debug --time 00:10:00 "
      "--cpus_per_task 4 ...); cpus_per_task is each task's --threads. Without flags the scripts are saved and "
      "submitted; -j/-s follow itwinai's rule as in scaleprof slurm. Exit codes: 0 done, 1 a write or sbatch "
      "failed or an earlier analysis is in the folder (see --force), 2 a bad command line or configuration. "
      "docs/scale.md.");
  analyze->callback([analyze_opt, analyze, exit_code] {
    *exit_code =
        with_memory_guard([&](std::string* doing) { return run_analyze(*analyze_opt, analyze->remaining(), doing); });
  });

  cmd->callback([opt, exit_code, cmd, status, analyze] {
    if (status->parsed() || analyze->parsed()) return;
    *exit_code = with_memory_guard([&](std::string* doing) { return run_slurm(*opt, cmd->remaining(), doing); });
  });
}

}  // namespace scaleprof::cli
