#include "launch/launch_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "collect/run_names.h"
#include "launch/itwinai_keys.h"
#include "launch/shell_text.h"

namespace scaleprof::launch {

using config::FieldSpec;
using config::Kind;
using config::StringMap;
using config::Value;

std::vector<FieldSpec> launch_fields() {
  using Strings = std::vector<std::string>;
  using Ints = std::vector<int64_t>;
  const Strings kStrategies = {"ddp", "fsdp", "deepspeed", "horovod"};
  std::vector<FieldSpec> f;
  auto add = [&f](std::string name, Kind kind, Value def, std::string help) -> FieldSpec& {
    FieldSpec spec;
    spec.name = std::move(name);
    spec.kind = kind;
    spec.default_value = std::move(def);
    spec.help = std::move(help);
    f.push_back(std::move(spec));
    return f.back();
  };
  add("mode", Kind::kString, std::string("single"),
      "single: one script; runall: one per strategy; scaling-test: one per strategy x node count x repetition")
      .choices = {"single", "runall", "scaling-test"};
  add("job_name", Kind::kString, std::string("scaleprof"),
      "SLURM job name; each job appends -<strategy>-n<nodes>-r<repetition>");
  add("account", Kind::kString, std::string(), "--account (omitted when empty)");
  add("partition", Kind::kString, std::string(), "--partition (omitted when empty)");
  add("qos", Kind::kString, std::string(), "--qos (omitted when empty)");
  add("reservation", Kind::kString, std::string(), "--reservation (omitted when empty)");
  add("time", Kind::kString, std::string("00:30:00"), "--time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
  FieldSpec& nodes = add("num_nodes", Kind::kInt, int64_t{1}, "nodes of the job in single and runall modes");
  nodes.min = 1;
  nodes.max = 100000;
  FieldSpec& gpus = add("gpus_per_node", Kind::kInt, int64_t{4},
                        "GPUs per node (--gpus-per-node) and processes per node; 0: no GPU request, one process per "
                        "node (CPU training)");
  gpus.min = 0;
  gpus.max = 1024;
  FieldSpec& cpus = add("cpus_per_task", Kind::kInt, int64_t{0}, "--cpus-per-task (0: not set, SLURM's default)");
  cpus.min = 0;
  cpus.max = 100000;
  // SLURM >= 22.05 no longer passes SLURM_CPUS_PER_TASK on to srun: the scripts give srun the count
  // themselves, and bind each task to its CPUs so that torchrun's workers cannot all land on one.
  add("cpu_bind", Kind::kString, std::string("cores"),
      "srun --cpu-bind when cpus_per_task is set: cores, threads, sockets or none (SLURM's own default)")
      .choices = {"cores", "threads", "sockets", "none"};
  add("mem", Kind::kString, std::string(), "--mem per node, e.g. 64G (omitted when empty)").aliases = {"memory"};
  add("exclusive", Kind::kBool, false, "--exclusive: nodes not shared with other jobs");
  add("constraint", Kind::kString, std::string(), "--constraint (omitted when empty)");
  add("std_out", Kind::kString, std::string("slurm-job-logs/%x-%j.out"),
      "--output (SLURM patterns: %x job name, %j job id); its folder is created on submission");
  add("std_err", Kind::kString, std::string("slurm-job-logs/%x-%j.err"), "--error").aliases = {"err_out"};
  add("dist_strategy", Kind::kString, std::string("ddp"), "strategy of single mode: ddp, fsdp, deepspeed or horovod")
      .choices = kStrategies;
  f.back().aliases = {"dist_strat", "distributed_strategy"};
  FieldSpec& strategies = add("strategies", Kind::kStringList, Strings{"ddp", "fsdp", "deepspeed", "horovod"},
                              "strategies of runall and scaling-test");
  strategies.choices = kStrategies;
  strategies.non_empty = true;
  FieldSpec& scal = add("scalability_nodes", Kind::kIntList, Ints{1, 2, 4, 8}, "node counts of scaling-test");
  scal.min = 1;
  scal.max = 100000;
  scal.non_empty = true;
  FieldSpec& reps = add("repetitions", Kind::kInt, int64_t{1}, "runs of each strategy x node count in scaling-test");
  reps.min = 1;
  reps.max = 1000;
  add("training_cmd", Kind::kString, std::string(),
      "what each rank runs, e.g. 'python train.py --data $SCRATCH/data' (required): shell code, expanded by the "
      "job's shell on each node; {strategy} {num_nodes} {gpus_per_node} {repetition} {experiment} {run_name} "
      "and the configuration's {key}s are filled in, quoted")
      .line_breaks = config::LineBreaks::kJoinContinued;
  add("python_venv", Kind::kString, std::string(),
      "virtual environment activated before training (omitted when empty)");
  add("pre_exec", Kind::kStringList, Strings{},
      "commands run before training, e.g. 'source $HOME/venv/bin/activate': shell code, one line each, run by "
      "the job's shell as written")
      .aliases = {"pre_exec_command", "pre_exec_cmd"};
  f.back().line_breaks = config::LineBreaks::kOnePerLine;  // itwinai's pre_exec_command is one shell text
  add("env", Kind::kStringMap, StringMap{},
      "environment variables exported in the job (NAME: value); the value is expanded by the job's shell as in "
      "NAME=value ($VAR, $(...), ~), blanks kept");
  add("container", Kind::kString, std::string(),
      "apptainer/singularity image the launcher runs in (omitted when empty)")
      .aliases = {"container_path"};
  add("container_runtime", Kind::kString, std::string("apptainer"), "apptainer or singularity").choices = {
      "apptainer", "singularity"};
  add("experiment", Kind::kString, std::string("default"), "scaleprof experiment the runs are recorded under");
  add("root", Kind::kString, std::string("scalability-metrics"),
      "where runs are recorded (scaleprof run --root); made absolute from the current folder");
  add("gpu_interval", Kind::kString, std::string("1s"), "GPU sampling interval of scaleprof run");
  add("profiler", Kind::kBool, false, "exports SCALEPROF_PROFILER=on|off for the training (torch.profiler traces)");
  add("nsys", Kind::kBool, false, "wrap each rank in nsys profile -t cuda,nvtx,osrt; reports in <run dir>/nsys/");
  FieldSpec& port = add("rdzv_port", Kind::kInt, int64_t{0},
                        fmt::format("torchrun c10d rendezvous port on the first node; 0: {} + job id % {} ({} to {}), "
                                    "so jobs sharing a node never collide",
                                    kRdzvPortBase, kRdzvPortCount, kRdzvPortBase, kRdzvPortBase + kRdzvPortCount - 1));
  port.min = 0;
  port.max = 65535;
  FieldSpec& timeout = add("slurm_timeout", Kind::kInt, int64_t{kDefaultClientTimeoutS},
                           "seconds each sbatch call may take before it is stopped (a hung controller)");
  timeout.min = 1;
  timeout.max = kMaxClientTimeoutS;
  add("script_dir", Kind::kString, std::string("slurm-scripts"), "where scripts and submitted.jsonl are written")
      .aliases = {"save_dir"};
  add("report", Kind::kBool, true, "after submitting, submit a report job that runs when every job has ended");
  add("report_html", Kind::kString, std::string(),
      "HTML file of the report job (default <script_dir>/<experiment>-report.html)");
  add("scaleprof_bin", Kind::kString, std::string(), "scaleprof executable the jobs call (default: this one)");
  for (FieldSpec& foreign : itwinai_fields()) f.push_back(std::move(foreign));
  return f;
}

namespace {

std::string origin(const config::Config& c, const std::string& name) {
  return fmt::format("{} ({})", name, c.entry(name).source);
}

// SLURM's --time formats.
bool valid_time(const std::string& t) {
  static const std::regex kTime(
      R"(^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}|\d+-\d+:\d{1,2}:\d{1,2}|UNLIMITED|INFINITE)$)");
  return std::regex_match(t, kTime);
}

// A value that goes on an #SBATCH line (read by sbatch's own parser, not bash): sbatch cannot
// represent double quotes or backslashes reliably there, so they are refused.
Status sbatch_safe(const config::Config& c, const std::string& name) {
  const std::string& v = c.str(name);
  if (v.find_first_of("\"\\") != std::string::npos) {
    return Error{fmt::format("{}: '\"' and '\\' cannot be passed on an #SBATCH line", origin(c, name))};
  }
  return Ok{};
}

Status plain_name(const config::Config& c, const std::string& name, bool allow_empty) {
  static const std::regex kName(R"(^[A-Za-z0-9._+:@%=,-]+$)");
  const std::string& v = c.str(name);
  if (v.empty() && allow_empty) return Ok{};
  if (!std::regex_match(v, kName)) {
    return Error{fmt::format("{}: '{}' may only use letters, digits and . _ + : @ % = , -", origin(c, name), v)};
  }
  return Ok{};
}

}  // namespace

Result<LaunchConfig> make_launch_config(const config::Config& given, const std::string& cwd,
                                        const std::string& self_exe, LaunchPurpose purpose) {
  auto resolved = resolve_itwinai(given, cwd, purpose == LaunchPurpose::kTraining);
  if (!resolved) return resolved.error();
  const config::Config& c = resolved.value().config;
  LaunchConfig l;
  l.submit_job = resolved.value().submit_job;
  l.save_script = resolved.value().save_script;
  l.notes = c.notes();
  l.notes.insert(l.notes.end(), resolved.value().notes.begin(), resolved.value().notes.end());
  l.warnings = resolved.value().warnings;
  l.mode = c.str("mode");
  for (const char* name :
       {"job_name", "account", "partition", "qos", "reservation", "constraint", "mem", "time", "std_out", "std_err"}) {
    if (auto ok = sbatch_safe(c, name); !ok) return ok.error();
  }
  for (const char* name : {"account", "partition", "qos", "reservation", "mem"}) {
    if (auto ok = plain_name(c, name, true); !ok) return ok.error();
  }
  if (auto ok = plain_name(c, "job_name", false); !ok) return ok.error();
  l.job_name = c.str("job_name");
  l.account = c.str("account");
  l.partition = c.str("partition");
  l.qos = c.str("qos");
  l.reservation = c.str("reservation");
  l.constraint = c.str("constraint");
  l.mem = c.str("mem");
  if (!l.mem.empty() && !std::regex_match(l.mem, std::regex(R"(^\d+[KMGT]?B?$)"))) {
    return Error{fmt::format("{}: '{}' is not a memory size like 64G or 4000M", origin(c, "mem"), l.mem)};
  }
  l.time = c.str("time");
  if (!valid_time(l.time)) {
    return Error{
        fmt::format("{}: '{}' is not a SLURM time (minutes, HH:MM:SS, D-HH:MM:SS, ...)", origin(c, "time"), l.time)};
  }
  l.std_out = c.str("std_out");
  l.std_err = c.str("std_err");
  for (const char* name : {"std_out", "std_err"}) {
    if (c.str(name).empty()) return Error{fmt::format("{}: must not be empty", origin(c, name))};
  }
  l.num_nodes = c.integer("num_nodes");
  l.gpus_per_node = c.integer("gpus_per_node");
  l.cpus_per_task = c.integer("cpus_per_task");
  l.repetitions = c.integer("repetitions");
  l.rdzv_port = c.integer("rdzv_port");
  l.cpu_bind = c.str("cpu_bind");
  l.slurm_timeout_s = c.integer("slurm_timeout");
  l.exclusive = c.boolean("exclusive");
  l.profiler = c.boolean("profiler");
  l.nsys = c.boolean("nsys");
  l.report = c.boolean("report");
  l.dist_strategy = c.str("dist_strategy");
  l.strategies = c.string_list("strategies");
  l.scalability_nodes = c.int_list("scalability_nodes");
  {
    // Duplicates would submit the same configuration twice under one script name.
    std::vector<std::string> s = l.strategies;
    std::sort(s.begin(), s.end());
    if (std::adjacent_find(s.begin(), s.end()) != s.end()) {
      return Error{fmt::format("{}: a strategy is listed twice", origin(c, "strategies"))};
    }
    std::vector<int64_t> n = l.scalability_nodes;
    std::sort(n.begin(), n.end());
    if (std::adjacent_find(n.begin(), n.end()) != n.end()) {
      return Error{fmt::format("{}: a node count is listed twice", origin(c, "scalability_nodes"))};
    }
  }
  {
    // Every job is a script on disk, a line of submitted.jsonl and a job in the queue: a typo in
    // repetitions or node counts must not become 400,000 of them.
    const auto strategies = static_cast<int64_t>(l.strategies.size());
    const auto node_counts = static_cast<int64_t>(l.scalability_nodes.size());
    if (l.mode == "runall" && strategies > kMaxJobs) {
      return Error{fmt::format("{}: runall would submit {} jobs; at most {} per launch", origin(c, "strategies"),
                               strategies, kMaxJobs),
                   ErrorKind::kTooLarge};
    }
    if (l.mode == "scaling-test" && strategies * node_counts * l.repetitions > kMaxJobs) {
      return Error{fmt::format("scaling-test would submit {} jobs ({} node counts x {} strategies x {} repetitions, "
                               "from {}, {} and {}); "
                               "at most {} per launch: split it into several experiments",
                               strategies * node_counts * l.repetitions, node_counts, strategies, l.repetitions,
                               c.entry("scalability_nodes").source, c.entry("strategies").source,
                               c.entry("repetitions").source, kMaxJobs),
                   ErrorKind::kTooLarge};
    }
  }
  // The analysis jobs write their own command line: no training command to check. Shell code is
  // checked for what would break the script around it (resolve_itwinai named the rest).
  if (purpose == LaunchPurpose::kTraining) {
    l.training_cmd = c.str("training_cmd");
    if (l.training_cmd.find_first_not_of(" \t") == std::string::npos) {
      return Error{fmt::format("{}: no command", origin(c, "training_cmd"))};
    }
  }
  for (const std::string& line : c.string_list("pre_exec")) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      return Error{fmt::format("{}: an empty command", origin(c, "pre_exec"))};
    }
    if (auto ok = shell_quoting(line); !ok) {
      return Error{fmt::format("{}: '{}': {}", origin(c, "pre_exec"), line, ok.error().message)};
    }
    l.pre_exec.push_back(line);
  }
  for (const auto& [name, value] : c.string_map("env")) {
    if (auto ok = shell_quoting(value); !ok) {
      return Error{fmt::format("{}: {}: '{}': {}", origin(c, "env"), name, value, ok.error().message)};
    }
  }
  static const std::regex kEnvName(R"(^[A-Za-z_][A-Za-z0-9_]*$)");
  for (const auto& [k, v] : c.string_map("env")) {
    if (!std::regex_match(k, kEnvName)) {
      return Error{fmt::format("{}: '{}' is not a valid environment variable name", origin(c, "env"), k)};
    }
  }
  l.env = c.string_map("env");
  l.python_venv = c.str("python_venv");
  l.container = c.str("container");
  l.container_runtime = c.str("container_runtime");
  l.experiment = c.str("experiment");
  if (auto ok = collect::check_name("experiment", l.experiment); !ok) {
    return Error{fmt::format("{}: {}", origin(c, "experiment"), ok.error().message)};
  }
  l.root = c.str("root");
  if (l.root.empty()) return Error{fmt::format("{}: must not be empty", origin(c, "root"))};
  if (l.root.front() != '/') l.root = cwd + "/" + l.root;
  l.gpu_interval = c.str("gpu_interval");
  if (!std::regex_match(l.gpu_interval, std::regex(R"(^[0-9]+(\.[0-9]+)?(ms|s)?$)"))) {
    return Error{
        fmt::format("{}: '{}' is not an interval like 1s or 100ms", origin(c, "gpu_interval"), l.gpu_interval)};
  }
  l.script_dir = c.str("script_dir");
  if (l.script_dir.empty()) return Error{fmt::format("{}: must not be empty", origin(c, "script_dir"))};
  l.scaleprof_bin = c.str("scaleprof_bin").empty() ? self_exe : c.str("scaleprof_bin");
  l.report_html = c.str("report_html");
  if (l.report_html.empty()) l.report_html = fmt::format("{}/{}-report.html", l.script_dir, l.experiment);
  if (l.report_html.front() != '/') l.report_html = cwd + "/" + l.report_html;
  // Paths completed from the current folder or this executable reach the scripts too: held to the
  // same characters as values (a bidi override in a folder name would make a script read differently).
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"root", &l.root},
                                    {"report_html", &l.report_html},
                                    {"scaleprof_bin", &l.scaleprof_bin}}) {
    if (std::string problem = config::control_character_problem(*value); !problem.empty()) {
      return Error{fmt::format("{}: {}", origin(c, name), problem)};
    }
  }
  return l;
}

}  // namespace scaleprof::launch
