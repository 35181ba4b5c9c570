#include "launch/slurm_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "launch/itwinai_keys.h"
#include "launch/shell_text.h"

namespace scaleprof::launch {

namespace {

bool is_torchrun(const std::string& strategy) {
  return strategy != "horovod";
}

// Processes per node: one per GPU, or one per node for CPU training.
int64_t procs_per_node(const LaunchConfig& c) {
  return std::max<int64_t>(1, c.gpus_per_node);
}

// training_cmd with the values of this job in place of its job_placeholder()s, each quoted for the
// place it stands (outside quotes, in "..." or in '...'): the rest is the user's shell code.
std::string fill_placeholders(const LaunchConfig& c, const JobPlan& job) {
  const std::vector<std::pair<std::string, std::string>> values = {
      {job_placeholder("strategy"), job.strategy},
      {job_placeholder("num_nodes"), std::to_string(job.nodes)},
      {job_placeholder("gpus_per_node"), std::to_string(c.gpus_per_node)},
      {job_placeholder("repetition"), std::to_string(job.repetition)},
      {job_placeholder("experiment"), c.experiment},
      {job_placeholder("run_name"), job.run_prefix},
      {job_placeholder("job_name"), job.job_name}};
  auto next = [&](std::string_view text, size_t from) -> std::optional<Placeholder> {
    std::optional<Placeholder> first;
    for (const auto& [key, value] : values) {
      const size_t at = text.find(key, from);
      if (at != std::string_view::npos && (!first || at < first->at)) first = Placeholder{at, key.size(), value, true};
    }
    return first;
  };
  auto filled = fill_shell_placeholders(c.training_cmd, next);
  // The text was read as shell code when the configuration was checked; a LaunchConfig made by hand
  // that cannot be read keeps its text (no placeholder is filled unquoted).
  return filled ? filled.value() : c.training_cmd;
}

// srun's CPU options: SLURM >= 22.05 no longer hands SLURM_CPUS_PER_TASK from sbatch to srun, so
// without them every task (torchrun and all its workers) may get one CPU.
std::string srun_cpu_options(const LaunchConfig& c) {
  if (c.cpus_per_task <= 0) return "";
  std::string o = fmt::format(" --cpus-per-task={}", c.cpus_per_task);
  if (c.cpu_bind != "none") o += " --cpu-bind=" + c.cpu_bind;
  return o;
}

std::string cpu_note(const LaunchConfig& c) {
  if (c.cpus_per_task <= 0) return "";
  return "# --cpus-per-task given to srun as well: SLURM >= 22.05 no longer passes it on from sbatch.\n";
}

}  // namespace

// An #SBATCH value: sbatch reads these lines itself (bash sees comments), splitting at blanks
// outside double quotes; '"' and '\' were refused when the configuration was checked.
std::string sbatch_value(const std::string& v) {
  if (v.find_first_of(" '#") == std::string::npos) return v;
  return "\"" + v + "\"";
}

void sbatch_header(std::string& s, const LaunchConfig& c, const std::string& job_name) {
  s += "#!/bin/bash\n";
  s += fmt::format("#SBATCH --job-name={}\n", sbatch_value(job_name));
  auto optional = [&s](const char* option, const std::string& value) {
    if (!value.empty()) s += fmt::format("#SBATCH --{}={}\n", option, sbatch_value(value));
  };
  optional("account", c.account);
  optional("partition", c.partition);
  optional("qos", c.qos);
  optional("reservation", c.reservation);
  s += fmt::format("#SBATCH --time={}\n", sbatch_value(c.time));
  s += fmt::format("#SBATCH --output={}\n", sbatch_value(c.std_out));
  s += fmt::format("#SBATCH --error={}\n", sbatch_value(c.std_err));
}

// The common part of every job: environment, pre-exec commands, venv.
void job_environment(std::string& s, const LaunchConfig& c) {
  s += "set -eo pipefail\n";
  if (!c.env.empty()) {
    s += "\n# Environment (env: the values are expanded by this shell)\n";
    for (const auto& [name, value] : c.env) s += fmt::format("export {}={}\n", name, assignment_value(value));
  }
  if (!c.pre_exec.empty()) {
    s += "\n# Before training (pre_exec: shell code, as the configuration has it)\n";
    for (const std::string& command : c.pre_exec) s += command + "\n";
  }
  if (!c.python_venv.empty()) {
    s += fmt::format("\n# Python environment (python_venv)\nsource {}\n", shell_quote(c.python_venv + "/bin/activate"));
  }
}

std::string shell_quote(std::string_view s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           std::string_view("_./:=,+@%-").find(ch) != std::string_view::npos;
  });
  if (plain && s.front() != '-' && s.find('=') == std::string_view::npos) return std::string(s);
  if (plain && s.front() == '-') return std::string(s);  // options: no shell meaning either
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

std::vector<JobPlan> plan_jobs(const LaunchConfig& c) {
  std::vector<JobPlan> jobs;
  auto add = [&](const std::string& strategy, int64_t nodes, int64_t repetition) {
    JobPlan j;
    j.strategy = strategy;
    j.nodes = nodes;
    j.repetition = repetition;
    j.run_prefix = fmt::format("{}-n{}-r{}", strategy, nodes, repetition);
    j.job_name = fmt::format("{}-{}", c.job_name, j.run_prefix);
    j.script_name = j.run_prefix + ".sh";
    jobs.push_back(std::move(j));
  };
  const int64_t first = c.first_repetition;
  if (c.mode == "single") {
    add(c.dist_strategy, c.num_nodes, first);
  } else if (c.mode == "runall") {
    for (const std::string& s : c.strategies) add(s, c.num_nodes, first);
  } else {
    for (int64_t nodes : c.scalability_nodes) {
      for (const std::string& s : c.strategies) {
        for (int64_t r = first; r < first + c.repetitions; ++r) add(s, nodes, r);
      }
    }
  }
  return jobs;
}

std::string render_job_script(const LaunchConfig& c, const JobPlan& job) {
  std::string s;
  const bool torchrun = is_torchrun(job.strategy);
  const int64_t per_node = procs_per_node(c);
  sbatch_header(s, c, job.job_name);
  s += fmt::format("#SBATCH --nodes={}\n", job.nodes);
  s += fmt::format("#SBATCH --ntasks-per-node={}\n", torchrun ? 1 : per_node);
  if (c.gpus_per_node > 0) s += fmt::format("#SBATCH --gpus-per-node={}\n", c.gpus_per_node);
  if (c.cpus_per_task > 0) s += fmt::format("#SBATCH --cpus-per-task={}\n", c.cpus_per_task);
  if (!c.mem.empty()) s += fmt::format("#SBATCH --mem={}\n", sbatch_value(c.mem));
  if (c.exclusive) s += "#SBATCH --exclusive\n";
  if (!c.constraint.empty()) s += fmt::format("#SBATCH --constraint={}\n", sbatch_value(c.constraint));
  s += fmt::format(
      "\n# scaleprof slurm: experiment {}, strategy {}, {} node(s) x {} process(es), repetition {}.\n"
      "# Self-contained: nothing outside this file is sourced except what the configuration names.\n",
      c.experiment, job.strategy, job.nodes, per_node, job.repetition);
  job_environment(s, c);

  s += "\n# Where scaleprof run records the run (scaleprof report reads it from there)\n";
  s += fmt::format("export SCALEPROF_ROOT={}\n", shell_quote(c.root));
  s += fmt::format("export SCALEPROF_EXPERIMENT={}\n", shell_quote(c.experiment));
  s += fmt::format("export SCALEPROF_PROFILER={}\n", c.profiler ? "on" : "off");
  s += fmt::format("export RUN_NAME={}-slurm\"$SLURM_JOB_ID\"\n", job.run_prefix);
  if (torchrun) {
    s += "\n# torchrun's c10d rendezvous on the first node of the allocation\n";
    s += "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
    if (c.rdzv_port > 0) {
      s += fmt::format("MASTER_PORT={}  # rdzv_port\n", c.rdzv_port);
    } else {
      const int64_t last = kRdzvPortBase + kRdzvPortCount - 1;
      s += fmt::format(
          "# A port per job, so jobs sharing a node never collide: {} + job id % {} ({}-{}).\n"
          "MASTER_PORT=$(({} + SLURM_JOB_ID % {}))\n"
          "# Checked free here (the batch script runs on the allocation's first node, which hosts the store):\n"
          "# a port something listens on already (a job whose id is {} away, another program) is passed over.\n"
          "for _ in $(seq 64); do\n"
          "  timeout 2 bash -c \"exec 3<>/dev/tcp/127.0.0.1/$MASTER_PORT\" 2>/dev/null || break\n"
          "  MASTER_PORT=$((MASTER_PORT == {} ? {} : MASTER_PORT + 1))\n"
          "done\n",
          kRdzvPortBase, kRdzvPortCount, kRdzvPortBase, last, kRdzvPortBase, kRdzvPortCount, kRdzvPortCount, last,
          kRdzvPortBase);
    }
    s += "export MASTER_ADDR MASTER_PORT\n";
  }
  // What the job runs with, at the top of its log: the first thing to read when it fails.
  s += fmt::format(
      "echo \"scaleprof slurm: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST ($SLURM_NNODES node(s)), "
      "cpus per task ${{SLURM_CPUS_PER_TASK:-not set}}{}\"\n",
      torchrun ? ", rendezvous $MASTER_ADDR:$MASTER_PORT" : "");

  // What one task runs: scaleprof run around the launcher (torchrun) or the rank (horovod).
  std::string rank_line = fill_placeholders(c, job);
  if (c.nsys) {
    rank_line = fmt::format(
        "nsys profile -t cuda,nvtx,osrt --gpu-metrics-devices=all -o "
        "\"$SCALEPROF_ROOT/$SCALEPROF_EXPERIMENT/$RUN_NAME/nsys/rank-%q{{{}}}\" {}",
        torchrun ? "RANK" : "SLURM_PROCID", rank_line);
  }
  std::string launcher;
  if (torchrun) {
    launcher = fmt::format(
        "torchrun --nnodes=\"$SLURM_NNODES\" --nproc-per-node={} --rdzv-backend=c10d "
        "--rdzv-endpoint=\"$MASTER_ADDR:$MASTER_PORT\" --rdzv-id=\"$SLURM_JOB_ID\" "
        "--rdzv-conf=is_host=$((SLURM_NODEID == 0 ? 1 : 0)) --no-python {}",
        per_node, rank_line);
  } else {
    launcher = rank_line;
  }
  if (!c.container.empty()) {
    launcher = fmt::format("{} exec{} {} {}", c.container_runtime, c.gpus_per_node > 0 ? " --nv" : "",
                           shell_quote(c.container), launcher);
  }
  std::string task;
  task += "export SCALEPROF_HOST=\"${SLURMD_NODENAME:-$(hostname -s)}\"\n";
  if (c.nsys) task += "mkdir -p \"$SCALEPROF_ROOT/$SCALEPROF_EXPERIMENT/$RUN_NAME/nsys\"\n";
  task += fmt::format("exec {} run --experiment={} --strategy={} --run-name=\"$RUN_NAME\" --gpu-interval={} -- {}\n",
                      shell_quote(c.scaleprof_bin), shell_quote(c.experiment), job.strategy,
                      shell_quote(c.gpu_interval), launcher);
  const char* host_note =
      "# SCALEPROF_HOST: SLURM's node name names the node in the run directory.\n"
      "# training_cmd is shell code: each task's shell expands it ($VAR, $(...), ~) before the launcher starts it.\n";
  if (torchrun) {
    s += "\n# One torchrun per node under scaleprof run; torchrun starts the node's processes.\n";
    s += host_note;
    s += cpu_note(c);
    s += "srun --ntasks-per-node=1" + srun_cpu_options(c) + " --kill-on-bad-exit=1 bash -c " + shell_quote(task) + "\n";
  } else {
    s += "\n# Horovod: srun starts one task per GPU, each under scaleprof run.\n";
    s += host_note;
    s += cpu_note(c);
    s += fmt::format("srun --ntasks-per-node={} --ntasks={}{} --kill-on-bad-exit=1 bash -c {}\n", per_node,
                     per_node * job.nodes, srun_cpu_options(c), shell_quote(task));
  }
  return s;
}

Result<std::vector<std::string>> render_job_scripts(const LaunchConfig& c, const std::vector<JobPlan>& jobs) {
  std::vector<std::string> scripts;
  size_t total = 0;
  for (const JobPlan& job : jobs) {
    scripts.push_back(render_job_script(c, job));
    total += scripts.back().size();
    // Scripts differ only in a few names, so the first one's size times the job count is the total.
    const size_t expected = std::max(total, scripts.front().size() * jobs.size());
    if (expected > kMaxScriptSetBytes) {
      return Error{
          fmt::format(
              "the {} scripts would hold about {} MiB ({} bytes each); at most {} MiB: shorten pre_exec, env or "
              "training_cmd, or plan fewer jobs",
              jobs.size(), expected >> 20, scripts.front().size(), kMaxScriptSetBytes >> 20),
          ErrorKind::kTooLarge};
    }
  }
  return scripts;
}

std::string render_report_script(const LaunchConfig& c) {
  std::string s;
  sbatch_header(s, c, c.job_name + "-report");
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
  s += fmt::format("\n# scaleprof slurm: the scalability report of experiment {}, after every job has ended.\n",
                   c.experiment);
  s += "set -eo pipefail\n";
  // The jobs that never ran (cancelled while pending, ...) are recorded for the report by slurm status;
  // the report is written whatever it says.
  s += fmt::format("{} slurm status --script-dir={} >/dev/null || true\n", shell_quote(c.scaleprof_bin),
                   shell_quote(c.script_dir));
  const std::string html = c.report_html;
  const std::string plots = html.substr(0, html.rfind('/') + 1) + c.experiment + "-plots";
  s += fmt::format("exec {} report --root={} --experiment={} --html={} --plot-dir={}\n", shell_quote(c.scaleprof_bin),
                   shell_quote(c.root), shell_quote(c.experiment), shell_quote(html), shell_quote(plots));
  return s;
}

}  // namespace scaleprof::launch
