#include "pipeline/slurm_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <utility>

#include "config/config.h"
#include "core/file_io.h"
#include "core/terminal_text.h"
#include "launch/analysis_jobs.h"
#include "launch/job_state_memory.h"
#include "launch/job_status.h"
#include "launch/jobs_not_run.h"
#include "launch/launch_config.h"
#include "launch/slurm_script.h"
#include "launch/submission.h"
#include "launch/write_refusal.h"
#include "pipeline/shard_inputs.h"

namespace scaleprof::pipeline {

namespace {

// A message of several lines (launch::resolve_itwinai lists every problem): the first after the
// label, the others each on a line of their own.
void message_lines(const SlurmIo& io, std::string_view label, const std::string& message) {
  size_t from = 0;
  bool first = true;
  while (from <= message.size()) {
    size_t end = message.find('\n', from);
    if (end == std::string::npos) end = message.size();
    io.message(first ? label : "", std::string_view(message).substr(from, end - from));
    first = false;
    from = end + 1;
  }
}

// The error told, its kind kept for the exit code.
SlurmStop reported(const SlurmIo& io, const Error& error) {
  io.message("error", error.message);
  return error.kind;
}

// The -c files merged left to right, then the --FIELD VALUE overrides; the error is told.
bool read_config(const std::vector<std::string>& files, const std::vector<std::string>& overrides,
                 config::Config* config, const SlurmIo& io) {
  for (const std::string& file : files) {
    *io.doing = fmt::format("reading the configuration {}", file);
    if (auto ok = config->merge_file(file); !ok) {
      io.message("error", ok.error().message);
      return false;
    }
  }
  *io.doing = "reading the command line's --FIELD VALUE overrides";
  if (auto ok = launch::apply_overrides(overrides, config); !ok) {
    io.message("error", ok.error().message);
    return false;
  }
  return true;
}

std::string elapsed_text(const std::optional<int64_t>& s) {
  if (!s) return {};
  return fmt::format("{}:{:02}:{:02}", *s / 3600, (*s / 60) % 60, *s % 60);
}

}  // namespace

SlurmStop run_slurm(const SlurmOptions& opt, const SlurmIo& io) {
  config::Config config(launch::launch_fields());
  if (!read_config(opt.config_files, opt.overrides, &config, io)) return ErrorKind::kUsage;
  if (opt.print_config) {
    *io.doing = "printing the configuration";
    io.print(fmt::format("{}", launch::effective_config_text(config)));
    return std::nullopt;
  }
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  auto launch = launch::make_launch_config(config, cwd, opt.executable);
  if (!launch) {
    message_lines(io, "error", launch.error().message);
    return ErrorKind::kUsage;
  }
  launch::LaunchConfig& c = launch.value();
  for (const std::string& note : c.notes) io.message("note", note);
  for (const std::string& warning : c.warnings) io.message("warning", warning);
  auto action = launch::decide_action(opt.script, c);
  if (!action) {
    io.message("error", action.error().message);
    return ErrorKind::kUsage;
  }
  if (opt.force && opt.append) {
    io.message("error",
               "--force replaces the earlier submission and --append adds repetitions to it: give one of them");
    return ErrorKind::kUsage;
  }
  // What was submitted from this script folder before: --force supersedes it, --append numbers its
  // repetitions after it.
  std::vector<launch::SubmittedJob> recorded;
  const std::string record_path = c.script_dir + "/" + std::string(launch::kSubmittedFile);
  std::error_code exists_error;
  if ((opt.force || opt.append) && std::filesystem::exists(record_path, exists_error)) {
    *io.doing = fmt::format("reading {}", record_path);
    std::vector<std::string> warnings;
    auto read = launch::read_submitted(record_path, &warnings);
    if (!read) return reported(io, read.error());
    for (const std::string& w : warnings) io.message("warning", w);
    recorded = std::move(read).value();
  }
  if (opt.append) c.first_repetition = launch::last_repetition(recorded, c) + 1;
  *io.doing = "generating the scripts";
  launch::SubmitPlan plan;
  plan.jobs = launch::plan_jobs(c);
  auto scripts = launch::render_job_scripts(c, plan.jobs);
  if (!scripts) {
    io.message("error", scripts.error().message);
    return ErrorKind::kUsage;
  }
  plan.scripts = std::move(scripts).value();
  plan.report_script = launch::render_report_script(c);
  const bool save = action.value().save, submit = action.value().submit;

  if (!save && !submit) {  // preview: print and do nothing else
    // Through the sanitiser (line breaks kept): a preview shows exactly what the script holds.
    for (size_t i = 0; i < plan.jobs.size(); ++i) {
      io.print(fmt::format("#################### {} ####################\n{}\n",
                           terminal_safe(plan.jobs[i].script_name), terminal_safe_lines(plan.scripts[i])));
    }
    if (c.report) {
      io.print(fmt::format("#################### {} ####################\n{}", launch::kReportScriptName,
                           terminal_safe_lines(plan.report_script)));
    }
    return std::nullopt;
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
        io.message("error", refusal);
        return ErrorKind::kRefused;
      }
    }
    *io.doing = fmt::format("writing the scripts into {}", c.script_dir);
    if (auto ok = make_directories(c.script_dir); !ok) {
      return reported(io, ok.error());
    }
    if (auto ok = launch::write_script_set(c.script_dir, files); !ok) {
      return reported(io, ok.error());
    }
    if (!submit) {
      io.print(fmt::format("saved {} script(s) in {}/ (not submitted):\n", plan.jobs.size() + (c.report ? 1 : 0),
                           c.script_dir));
      for (const std::string& p : plan.script_paths) io.print(fmt::format("  {}\n", p));
      if (!plan.report_path.empty()) io.print(fmt::format("  {}\n", plan.report_path));
      return std::nullopt;
    }
  }
  if (opt.force) {
    *io.doing = fmt::format("superseding the earlier submission recorded in {}", record_path);
    std::vector<std::string> kept = plan.script_paths;
    if (!plan.report_path.empty()) kept.push_back(plan.report_path);
    std::vector<std::string> notes;
    if (auto ok = launch::supersede(c, launch::earlier_submission(recorded, c), kept, &notes); !ok) {
      return reported(io, ok.error());
    }
    for (const std::string& n : notes) io.message("note", n);
  }
  *io.doing = "submitting the jobs with sbatch";
  std::vector<launch::SubmittedJob> submitted;
  auto status = launch::submit_all(c, plan, &submitted, [&io](const launch::SubmittedJob& j) {
    if (j.kind == "report") {
      io.print(fmt::format("submitted job {}: report (runs when every job above has ended)\n", j.job_id));
    } else {
      io.print(fmt::format("submitted job {}: {} on {} node(s), repetition {}\n", j.job_id, j.strategy, j.nodes,
                           j.repetition));
    }
  });
  if (!status) {
    io.message("error", status.error().message);
    if (!submitted.empty()) {
      io.message("note", fmt::format("the {} job(s) submitted before are recorded in {}/{}", submitted.size(),
                                     c.script_dir, launch::kSubmittedFile));
    }
    return ErrorKind::kIo;
  }
  io.print(fmt::format("recorded in {}/{}; follow with: scaleprof slurm status --script-dir {}\n", c.script_dir,
                       launch::kSubmittedFile, c.script_dir));
  return std::nullopt;
}

SlurmStop run_slurm_analyze(const SlurmAnalyzeOptions& opt, const SlurmIo& io) {
  config::Config config(launch::launch_fields());
  if (!read_config(opt.flags.config_files, opt.flags.overrides, &config, io)) return ErrorKind::kUsage;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  auto launch =
      launch::make_launch_config(config, cwd.string(), opt.flags.executable, launch::LaunchPurpose::kAnalysis);
  if (!launch) {
    message_lines(io, "error", launch.error().message);
    return ErrorKind::kUsage;
  }
  const launch::LaunchConfig& c = launch.value();
  for (const std::string& note : c.notes) io.message("note", note);
  for (const std::string& warning : c.warnings) io.message("warning", warning);
  auto action = launch::decide_action(opt.flags.script, c);
  if (!action) return reported(io, action.error());
  // Absolute paths: the jobs run wherever SLURM starts them.
  const std::string input = (cwd / opt.input).lexically_normal().string();
  *io.doing = fmt::format("listing the ranks of {}", input);
  auto inputs = shard_inputs(input);
  if (!inputs) return reported(io, inputs.error());
  const ShardInputs& in = inputs.value();
  if (in.unnamed_files > 0) {
    io.message("note", fmt::format("{} trace file(s) in {} say no rank in their name: every task reads them to learn "
                                   "their rank, and the ranks are taken as 0-{} (name files rank-N for large jobs)",
                                   in.unnamed_files, input, in.ranks.size() - 1));
  }
  launch::AnalysisPlan plan;
  plan.input = input;
  std::string out = opt.output;
  if (out.empty()) {
    if (!std::filesystem::is_directory(input, ec)) {
      return reported(io, Error{std::string("--output DIR is needed when the input is a file"), ErrorKind::kUsage});
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
  for (const ShardRank& r : in.ranks) ranks.push_back({r.rank, r.files});
  plan.shards = launch::plan_shards(ranks, opt.ranks_per_task);
  plan.rank_count = static_cast<int64_t>(ranks.size());
  plan.ranks_per_task = opt.ranks_per_task;
  if (auto ok = launch::check_analysis_plan(plan); !ok) return reported(io, ok.error());
  *io.doing = "generating the scripts";
  const std::string shard_script = launch::render_shard_script(c, plan);
  const std::string merge_script = launch::render_merge_script(c, plan);
  const bool save = action.value().save, submit = action.value().submit;
  if (!save && !submit) {  // preview, through the sanitiser with line breaks kept
    io.print(fmt::format("#################### {} ####################\n{}\n", launch::kShardScriptName,
                         terminal_safe_lines(shard_script)));
    io.print(fmt::format("#################### {} ####################\n{}", launch::kMergeScriptName,
                         terminal_safe_lines(merge_script)));
    return std::nullopt;
  }
  *io.doing = fmt::format("preparing {}", plan.output_dir);
  std::vector<std::string> notes;
  if (auto ok = launch::prepare_output_dir(plan, opt.flags.force, &notes); !ok) return reported(io, ok.error());
  for (const std::string& n : notes) io.message("note", n);
  if (auto ok = make_directories(plan.output_dir); !ok) return reported(io, ok.error());
  std::string shard_path, merge_path;
  if (save) {
    shard_path = plan.output_dir + "/" + std::string(launch::kShardScriptName);
    merge_path = plan.output_dir + "/" + std::string(launch::kMergeScriptName);
    *io.doing = fmt::format("writing the scripts into {}", plan.output_dir);
    if (auto ok = launch::write_script_set(plan.output_dir, {{shard_path, shard_script}, {merge_path, merge_script}});
        !ok) {
      return reported(io, ok.error());
    }
    if (auto ok = launch::make_analysis_folders(plan); !ok) return reported(io, ok.error());
    if (!submit) {
      io.print(fmt::format("saved 2 script(s) in {}/ (not submitted): {} ({} array tasks), {}\n", plan.output_dir,
                           launch::kShardScriptName, plan.shards.size(), launch::kMergeScriptName));
      return std::nullopt;
    }
  }
  *io.doing = "submitting the analysis jobs with sbatch";
  std::vector<launch::SubmittedJob> submitted;
  auto status = launch::submit_analysis(
      c, plan, shard_path, shard_script, merge_path, merge_script, &submitted,
      [&plan, &io](const launch::SubmittedJob& j) {
        if (j.array_tasks > 0) {
          io.print(fmt::format("submitted job array {}: {} task(s), {} rank(s) each at most\n", j.job_id, j.array_tasks,
                               plan.ranks_per_task));
        } else {
          io.print(fmt::format("submitted job {}: merge (runs when every task succeeded)\n", j.job_id));
        }
      });
  if (!status) {
    io.message("error", status.error().message);
    if (!submitted.empty()) {
      io.message("note", fmt::format("the job array submitted before is recorded in {}/{}", plan.output_dir,
                                     launch::kSubmittedFile));
    }
    return ErrorKind::kIo;
  }
  for (const std::string& a : plan.analyses) io.print(fmt::format("result: {}\n", launch::result_file(plan, a)));
  io.print(fmt::format("recorded in {}/{}; follow with: scaleprof slurm status --script-dir {}\n", plan.output_dir,
                       launch::kSubmittedFile, plan.output_dir));
  return std::nullopt;
}

Result<SlurmStatusTable> slurm_status(const SlurmStatusOptions& opt, const SlurmIo& io) {
  SlurmStatusTable out;
  if (!report::parse_format(opt.format, &out.format)) {
    return Error{fmt::format("--format must be table, csv or json (got '{}')", opt.format), ErrorKind::kUsage};
  }
  std::vector<std::string> warnings;
  const std::string path = opt.script_dir + "/" + std::string(launch::kSubmittedFile);
  *io.doing = fmt::format("reading {}", path);
  auto jobs = launch::read_submitted(path, &warnings);
  if (!jobs) {
    return Error{fmt::format("{} (nothing was submitted from this script folder?)", jobs.error().message),
                 ErrorKind::kIo};
  }
  for (const std::string& w : warnings) io.message("warning", w);
  std::vector<std::string> notes;
  *io.doing = fmt::format("asking SLURM about the {} job(s) of {}", jobs.value().size(), path);
  launch::StatusQuery query;
  query.limits.deadline = std::chrono::seconds(opt.timeout_s);
  query.state_file = opt.script_dir + "/" + std::string(launch::kJobStatesFile);  // a cancelled job stays cancelled
  const std::vector<launch::JobStatus> statuses = launch::job_statuses(jobs.value(), &notes, query);
  *io.doing = "recording the jobs that did not run";
  launch::record_jobs_not_run(statuses, &notes);  // for the report (its job runs this command first)
  *io.doing = "printing the job table";
  report::Table& table = out.table;
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
  for (const std::string& n : notes) io.message("note", n);
  return out;
}

}  // namespace scaleprof::pipeline
