#include "cli/slurm_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "collect/file_io.h"
#include "config/config.h"
#include "launch/job_status.h"
#include "launch/launch_config.h"
#include "launch/slurm_script.h"
#include "launch/submission.h"
#include "report/table.h"

namespace scaleprof::cli {

namespace {

struct SlurmOptions {
  std::vector<std::string> config_files;
  bool no_submit = false, no_save = false, force = false, print_config = false;
};

struct StatusOptions {
  std::string script_dir = "slurm-scripts";
  std::string format = "table";
  std::string output;
};

// `--field value` and `--field=value` pairs, in the order given.
Status apply_overrides(const std::vector<std::string>& args, config::Config* config) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      return Error{fmt::format("unexpected argument '{}' (fields are given as --FIELD VALUE)", a)};
    }
    if (const size_t eq = a.find('='); eq != std::string::npos) {
      if (auto ok = config->set_override(a.substr(0, eq), a.substr(eq + 1)); !ok) return ok;
      continue;
    }
    if (i + 1 >= args.size()) return Error{fmt::format("{} needs a value", a)};
    if (auto ok = config->set_override(a, args[i + 1]); !ok) return ok;
    ++i;
  }
  return Ok{};
}

std::string print_config(const config::Config& config) {
  std::string out = "# effective configuration of scaleprof slurm; after '#' where each value came from\n";
  size_t width = 0;
  std::vector<std::string> lines;
  for (const config::FieldSpec& f : config.schema()) {
    lines.push_back(fmt::format("{}: {}", f.name, config::format_value(config.entry(f.name).value)));
    width = std::max(width, lines.back().size());
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const config::FieldSpec& f = config.schema()[i];
    out += fmt::format("{:<{}}  # {}\n", lines[i], width, config.entry(f.name).source);
  }
  return out;
}

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scaleprof") : path.string();
}

int run_slurm(const SlurmOptions& opt, const std::vector<std::string>& overrides) {
  config::Config config(launch::launch_fields());
  for (const std::string& file : opt.config_files) {
    if (auto ok = config.merge_file(file); !ok) {
      print_message(stderr, "error", ok.error().message);
      return kExitUsage;
    }
  }
  if (auto ok = apply_overrides(overrides, &config); !ok) {
    print_message(stderr, "error", ok.error().message);
    return kExitUsage;
  }
  if (opt.print_config) {
    fmt::print("{}", print_config(config));
    return kExitOk;
  }
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  auto launch = launch::make_launch_config(config, cwd, self_executable());
  if (!launch) {
    print_message(stderr, "error", launch.error().message);
    return kExitUsage;
  }
  const launch::LaunchConfig& c = launch.value();
  launch::SubmitPlan plan;
  plan.jobs = launch::plan_jobs(c);
  for (const launch::JobPlan& j : plan.jobs) plan.scripts.push_back(launch::render_job_script(c, j));
  plan.report_script = launch::render_report_script(c);
  const bool save = !opt.no_save, submit = !opt.no_submit;

  if (!save && !submit) {  // preview: print and do nothing else
    for (size_t i = 0; i < plan.jobs.size(); ++i) {
      fmt::print("#################### {} ####################\n{}\n", plan.jobs[i].script_name, plan.scripts[i]);
    }
    if (c.report)
      fmt::print("#################### {} ####################\n{}", launch::kReportScriptName, plan.report_script);
    return kExitOk;
  }
  plan.script_paths.assign(plan.jobs.size(), std::string());
  if (save) {
    for (size_t i = 0; i < plan.jobs.size(); ++i) plan.script_paths[i] = c.script_dir + "/" + plan.jobs[i].script_name;
    if (c.report) plan.report_path = c.script_dir + "/" + std::string(launch::kReportScriptName);
    // Refuse before writing anything, so a refused call leaves no half-written set.
    if (!opt.force) {
      std::vector<std::string> all = plan.script_paths;
      if (!plan.report_path.empty()) all.push_back(plan.report_path);
      for (const std::string& p : all) {
        if (std::filesystem::exists(p, ec)) {
          print_message(stderr, "error", fmt::format("{} exists already; --force overwrites it", p));
          return kExitError;
        }
      }
    }
    if (auto ok = collect::make_directories(c.script_dir); !ok) {
      print_message(stderr, "error", ok.error().message);
      return kExitError;
    }
    for (size_t i = 0; i < plan.jobs.size(); ++i) {
      if (auto ok = write_output_file(plan.script_paths[i], plan.scripts[i]); !ok) {
        print_message(stderr, "error", ok.error().message);
        return kExitError;
      }
    }
    if (!plan.report_path.empty()) {
      if (auto ok = write_output_file(plan.report_path, plan.report_script); !ok) {
        print_message(stderr, "error", ok.error().message);
        return kExitError;
      }
    }
    if (!submit) {
      fmt::print("saved {} script(s) in {}/ (not submitted):\n", plan.jobs.size() + (c.report ? 1 : 0), c.script_dir);
      for (const std::string& p : plan.script_paths) fmt::print("  {}\n", p);
      if (!plan.report_path.empty()) fmt::print("  {}\n", plan.report_path);
      return kExitOk;
    }
  }
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

std::string elapsed_text(const std::optional<int64_t>& s) {
  if (!s) return {};
  return fmt::format("{}:{:02}:{:02}", *s / 3600, (*s / 60) % 60, *s % 60);
}

int run_status(const StatusOptions& opt) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  std::vector<std::string> warnings;
  const std::string path = opt.script_dir + "/" + std::string(launch::kSubmittedFile);
  auto jobs = launch::read_submitted(path, &warnings);
  if (!jobs) {
    print_message(stderr, "error",
                  fmt::format("{} (nothing was submitted from this script folder?)", jobs.error().message));
    return kExitError;
  }
  for (const std::string& w : warnings) print_message(stderr, "warning", w);
  std::vector<std::string> notes;
  const std::vector<launch::JobStatus> statuses = launch::job_statuses(jobs.value(), &notes);
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
                   {"source", "From"}};
  auto cell = [](const std::string& s) { return s.empty() ? report::Cell::null() : report::Cell(s); };
  for (const launch::JobStatus& s : statuses) {
    const bool job = s.job.kind == "job";
    table.add_row({s.job.job_id, s.job.kind, cell(s.job.strategy),
                   job ? report::Cell(s.job.nodes) : report::Cell::null(),
                   job ? report::Cell(s.job.repetition) : report::Cell::null(), s.state, cell(s.slurm_state),
                   cell(elapsed_text(s.elapsed_s)), s.elapsed_s ? report::Cell(*s.elapsed_s) : report::Cell::null(),
                   cell(s.run), cell(s.run_status), cell(s.source)});
  }
  for (const std::string& n : notes) print_message(stderr, "note", n);
  render.color = opt.output.empty() && color_allowed(STDOUT_FILENO) && render.format == report::Format::kTable;
  if (Status written = write_output_file(opt.output, report::render(table, render)); !written) {
    print_message(stderr, "error", written.error().message);
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void setup_slurm_command(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<SlurmOptions>();
  CLI::App* cmd = app.add_subcommand(
      "slurm", "Scaling tests on SLURM: sbatch scripts from YAML configs for every strategy x node count, submitted");
  cmd->add_option("-c,--config", opt->config_files, "YAML file; repeat to merge several, left to right");
  cmd->add_flag("--no-submit-job", opt->no_submit, "Save the scripts, submit nothing");
  cmd->add_flag("--no-save-script", opt->no_save,
                "Submit without keeping the scripts (with --no-submit-job: print them)");
  cmd->add_flag("--force", opt->force, "Overwrite scripts that exist already");
  cmd->add_flag("--print-config", opt->print_config,
                "Print the effective configuration and where each value came from");
  cmd->allow_extras();
  cmd->footer(
      "Any field may be set as --FIELD VALUE after the files (e.g. --mode scaling-test --num_nodes 2 "
      "--scalability_nodes 1,2,4 --env NAME=VALUE). Fields and defaults: --print-config, docs/launch.md.");
  cmd->require_subcommand(0, 1);

  auto status_opt = std::make_shared<StatusOptions>();
  CLI::App* status = cmd->add_subcommand("status", "State of the submitted jobs: pending, running, completed, failed");
  status->footer(
      "Reads DIR/submitted.jsonl and asks squeue, scontrol show job, sacct (where accounting exists) and the run "
      "directories the jobs wrote.");
  status->add_option("--script-dir", status_opt->script_dir, "Folder with submitted.jsonl")->capture_default_str();
  status->add_option("--format", status_opt->format, "Output format: table, csv or json")->capture_default_str();
  status->add_option("-o,--output", status_opt->output, "Write to FILE instead of standard output");
  status->callback([status_opt, exit_code] { *exit_code = run_status(*status_opt); });

  cmd->callback([opt, exit_code, cmd, status] {
    if (status->parsed()) return;
    *exit_code = run_slurm(*opt, cmd->remaining());
  });
}

}  // namespace scaleprof::cli
