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
#include "launch/job_state_memory.h"
#include "launch/job_status.h"
#include "launch/launch_config.h"
#include "launch/slurm_script.h"
#include "launch/submission.h"
#include "report/table.h"

namespace scaleprof::cli {

namespace {

struct SlurmOptions {
  std::vector<std::string> config_files;
  bool no_submit = false, no_save = false, force = false, append = false, print_config = false;
  // itwinai's flags (itwinai generate-slurm -j/--submit-job, -s/--save-script) and --preview.
  bool submit = false, save = false, preview = false;
};

// What the call does: save the scripts, submit them, both, or neither (print them).
struct Action {
  bool save = true, submit = true;
};

// scaleprof's own rule: both unless --no-save-script / --no-submit-job. itwinai's rule, as soon as
// -j, -s or a submit_job / save_script key is given: only what is asked for (a flag over a key), and
// a preview when neither is. --preview: print only.
Result<Action> decide_action(const SlurmOptions& opt, const launch::LaunchConfig& c) {
  if ((opt.submit && opt.no_submit) || (opt.save && opt.no_save)) {
    return Error{
        std::string("--submit-job/-j and --no-submit-job, or --save-script/-s and --no-save-script, contradict "
                    "each other"),
        ErrorKind::kUsage};
  }
  if (opt.preview) {
    if (opt.submit || opt.save) {
      return Error{std::string("--preview prints the scripts only; it does not go with -j/--submit-job or "
                               "-s/--save-script"),
                   ErrorKind::kUsage};
    }
    return Action{false, false};
  }
  const bool itwinai_rule = opt.submit || opt.save || c.submit_job.has_value() || c.save_script.has_value();
  if (!itwinai_rule) return Action{!opt.no_save, !opt.no_submit};
  Action a;
  a.submit = opt.submit || (!opt.no_submit && c.submit_job.value_or(false));
  a.save = opt.save || (!opt.no_save && c.save_script.value_or(false));
  return a;
}

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
  int64_t timeout_s = launch::kDefaultClientTimeoutS;
  std::string format = "table";
  std::string output;
};

// `--field value` and `--field=value` pairs, in the order given.
Status apply_overrides(const std::vector<std::string>& args, config::Config* config) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      return Error{fmt::format("unexpected argument '{}' (fields are given as --FIELD VALUE)", a), ErrorKind::kUsage};
    }
    if (const size_t eq = a.find('='); eq != std::string::npos) {
      if (auto ok = config->set_override(a.substr(0, eq), a.substr(eq + 1)); !ok) return ok;
      continue;
    }
    if (i + 1 >= args.size()) return Error{fmt::format("{} needs a value", a), ErrorKind::kUsage};
    if (auto ok = config->set_override(a, args[i + 1]); !ok) return ok;
    ++i;
  }
  return Ok{};
}

// Values are aligned in a column up to this width; a longer line gets its comment two spaces after
// it, so one long value never pads every other line.
constexpr size_t kPrintConfigColumn = 48;

std::string print_config(const config::Config& config) {
  std::string out = "# effective configuration of scaleprof slurm; after '#' where each value came from\n";
  size_t width = 0;
  std::vector<std::string> lines;
  std::vector<const config::FieldSpec*> shown;
  for (const config::FieldSpec& f : config.schema()) {
    if (f.foreign) continue;  // itwinai's keys: mapped or refused when the scripts are made
    shown.push_back(&f);
    // Values hold no control characters (the configuration refuses them); the sanitiser is the
    // guarantee for the terminal all the same.
    lines.push_back(terminal_safe(fmt::format("{}: {}", f.name, config::format_value(config.entry(f.name).value))));
    if (lines.back().size() <= kPrintConfigColumn) width = std::max(width, lines.back().size());
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    out += fmt::format("{:<{}}  # {}\n", lines[i], width, terminal_safe(config.entry(shown[i]->name).source));
  }
  return out;
}

// Why `path` may not be written, or "" when it may: a missing path may; an existing regular file
// only with --force; a symbolic link (dangling or not), a folder or anything else never.
std::string write_refusal(const std::string& path, bool force) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? std::string() : fmt::format("{}: cannot check: {}", path, std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) return fmt::format("{} is a symbolic link; not replaced (remove it first)", path);
  if (!S_ISREG(st.st_mode)) return fmt::format("{} exists and is not a regular file", path);
  if (!force) {
    return fmt::format("{} exists already; --force replaces the earlier submission, --append adds repetitions to it",
                       path);
  }
  return {};
}

// Writes every script or none: each goes into a hidden staging folder inside script_dir first, and
// only when all are written are they renamed into place (a rename replaces a file, never follows a
// link). Every path was checked before.
Status write_script_set(const std::string& script_dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::string staging = script_dir + "/.scaleprof-staging-XXXXXX";
  if (::mkdtemp(staging.data()) == nullptr) {
    return Error{fmt::format("{}: cannot create a staging folder: {}", script_dir, std::strerror(errno)),
                 ErrorKind::kIo};
  }
  std::vector<std::string> staged;
  auto clean = [&] {
    for (const std::string& f : staged) ::unlink(f.c_str());
    ::rmdir(staging.c_str());
  };
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = fmt::format("{}/{}", staging, i);
    if (auto ok = write_output_file(path, files[i].second); !ok) {
      clean();
      return Error{fmt::format("{} (writing {}); nothing was written", ok.error().message, files[i].first),
                   ok.error().kind};
    }
    staged.push_back(path);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(staged[i].c_str(), files[i].first.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      clean();
      return Error{fmt::format("{}: cannot write: {} ({} of {} scripts were written before)", files[i].first, why, i,
                               files.size()),
                   ErrorKind::kIo};
    }
  }
  staged.clear();
  clean();
  return Ok{};
}

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scaleprof") : path.string();
}

// `doing` always says what the command is doing, for the one-line error when memory runs out.
int run_slurm(const SlurmOptions& opt, const std::vector<std::string>& overrides, std::string* doing) {
  config::Config config(launch::launch_fields());
  for (const std::string& file : opt.config_files) {
    *doing = fmt::format("reading the configuration {}", file);
    if (auto ok = config.merge_file(file); !ok) {
      print_message(stderr, "error", ok.error().message);
      return kExitUsage;
    }
  }
  *doing = "reading the command line's --FIELD VALUE overrides";
  if (auto ok = apply_overrides(overrides, &config); !ok) {
    print_message(stderr, "error", ok.error().message);
    return kExitUsage;
  }
  if (opt.print_config) {
    *doing = "printing the configuration";
    fmt::print("{}", print_config(config));
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
  auto action = decide_action(opt, c);
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
      if (std::string refusal = write_refusal(file.first, replace); !refusal.empty()) {
        print_message(stderr, "error", refusal);
        return kExitError;
      }
    }
    *doing = fmt::format("writing the scripts into {}", c.script_dir);
    if (auto ok = make_directories(c.script_dir); !ok) {
      return fail_with(ok.error());
    }
    if (auto ok = write_script_set(c.script_dir, files); !ok) {
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
  cmd->add_flag("--no-submit-job", opt->no_submit, "Save the scripts, submit nothing");
  cmd->add_flag("--no-save-script", opt->no_save,
                "Submit without keeping the scripts (with --no-submit-job: print them)");
  cmd->add_flag("-j,--submit-job", opt->submit,
                "itwinai's flag: submit; with -j or -s only what is asked for happens (itwinai's rule)");
  cmd->add_flag("-s,--save-script", opt->save, "itwinai's flag: save the scripts (see -j)");
  cmd->add_flag("--preview", opt->preview, "Print the scripts, save and submit nothing");
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
      ->check(CLI::Range(int64_t{1}, launch::kMaxClientTimeoutS));
  status->callback([status_opt, exit_code] {
    *exit_code = with_memory_guard([&](std::string* doing) { return run_status(*status_opt, doing); });
  });

  cmd->callback([opt, exit_code, cmd, status] {
    if (status->parsed()) return;
    *exit_code = with_memory_guard([&](std::string* doing) { return run_slurm(*opt, cmd->remaining(), doing); });
  });
}

}  // namespace scaleprof::cli
