// Generated sbatch scripts: every mode and strategy against expected text, hostile values in every
// field (the script stays valid bash and nothing is executed), and the scaleprof slurm command's
// save / print / --force behaviour (no SLURM needed: nothing is submitted here).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "collect/run_records.h"
#include "config/config.h"
#include "launch/job_status.h"
#include "launch/launch_config.h"
#include "launch/shell_text.h"
#include "launch/slurm_script.h"
#include "launch/submission.h"

namespace scaleprof::launch {
namespace {

namespace fs = std::filesystem;

config::Config base_config(const std::string& extra = {}) {
  config::Config c(launch_fields());
  const std::string text =
      "experiment: cnn\n"
      "training_cmd: python train.py --epochs 5\n"
      "root: /data/metrics\n"
      "scaleprof_bin: /opt/scaleprof/bin/scaleprof\n" +
      extra;
  auto ok = c.merge_text(text, "test.yaml");
  EXPECT_TRUE(ok) << (ok ? "" : ok.error().message);
  return c;
}

LaunchConfig make(const config::Config& c) {
  auto l = make_launch_config(c, "/home/u/work", "/self/scaleprof");
  EXPECT_TRUE(l) << (l ? "" : l.error().message);
  return l ? l.value() : LaunchConfig{};
}

const char* kDdpScript = R"(#!/bin/bash
#SBATCH --job-name=scaleprof-ddp-n2-r1
#SBATCH --account=proj1
#SBATCH --partition=booster
#SBATCH --time=01:00:00
#SBATCH --output=slurm-job-logs/%x-%j.out
#SBATCH --error=slurm-job-logs/%x-%j.err
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=32
#SBATCH --exclusive

# scaleprof slurm: experiment cnn, strategy ddp, 2 node(s) x 4 process(es), repetition 1.
# Self-contained: nothing outside this file is sourced except what the configuration names.
set -eo pipefail

# Environment (env: the values are expanded by this shell)
export NCCL_DEBUG=WARN

# Before training (pre_exec: shell code, as the configuration has it)
module load CUDA/12

# Python environment (python_venv)
source /home/u/venv/bin/activate

# Where scaleprof run records the run (scaleprof report reads it from there)
export SCALEPROF_ROOT=/data/metrics
export SCALEPROF_EXPERIMENT=cnn
export SCALEPROF_PROFILER=off
export RUN_NAME=ddp-n2-r1-slurm"$SLURM_JOB_ID"

# torchrun's c10d rendezvous on the first node of the allocation
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
# A port per job, so jobs sharing a node never collide: 20000 + job id % 12000 (20000-31999).
MASTER_PORT=$((20000 + SLURM_JOB_ID % 12000))
# Checked free here (the batch script runs on the allocation's first node, which hosts the store):
# a port something listens on already (a job whose id is 12000 away, another program) is passed over.
for _ in $(seq 64); do
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$MASTER_PORT" 2>/dev/null || break
  MASTER_PORT=$((MASTER_PORT == 31999 ? 20000 : MASTER_PORT + 1))
done
export MASTER_ADDR MASTER_PORT
echo "scaleprof slurm: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST ($SLURM_NNODES node(s)), cpus per task ${SLURM_CPUS_PER_TASK:-not set}, rendezvous $MASTER_ADDR:$MASTER_PORT"

# One torchrun per node under scaleprof run; torchrun starts the node's processes.
# SCALEPROF_HOST: SLURM's node name names the node in the run directory.
# training_cmd is shell code: each task's shell expands it ($VAR, $(...), ~) before the launcher starts it.
# --cpus-per-task given to srun as well: SLURM >= 22.05 no longer passes it on from sbatch.
srun --ntasks-per-node=1 --cpus-per-task=32 --cpu-bind=cores --kill-on-bad-exit=1 bash -c 'export SCALEPROF_HOST="${SLURMD_NODENAME:-$(hostname -s)}"
exec /opt/scaleprof/bin/scaleprof run --experiment=cnn --strategy=ddp --run-name="$RUN_NAME" --gpu-interval=1s -- torchrun --nnodes="$SLURM_NNODES" --nproc-per-node=4 --rdzv-backend=c10d --rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT" --rdzv-id="$SLURM_JOB_ID" --rdzv-conf=is_host=$((SLURM_NODEID == 0 ? 1 : 0)) --no-python python train.py --epochs 5
'
)";

const char* kSingleExtra =
    "account: proj1\npartition: booster\ntime: '01:00:00'\nnum_nodes: 2\ncpus_per_task: 32\nexclusive: true\n"
    "env: {NCCL_DEBUG: WARN}\npre_exec: ['module load CUDA/12']\npython_venv: /home/u/venv\n";

TEST(SlurmScript, SingleDdpExpectedText) {
  const LaunchConfig c = make(base_config(kSingleExtra));
  const std::vector<JobPlan> jobs = plan_jobs(c);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].script_name, "ddp-n2-r1.sh");
  EXPECT_EQ(render_job_script(c, jobs[0]), kDdpScript);
}

// fsdp and deepspeed launch exactly like ddp (torchrun); only the names differ.
std::string as_strategy(std::string text, const std::string& strategy) {
  for (const std::string from : {"ddp-n2", "strategy ddp", "--strategy=ddp"}) {
    std::string to = from;
    to.replace(to.find("ddp"), 3, strategy);
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

TEST(SlurmScript, SingleFsdpAndDeepspeedExpectedText) {
  for (const std::string s : {"fsdp", "deepspeed"}) {
    const LaunchConfig c = make(base_config(std::string(kSingleExtra) + "dist_strategy: " + s + "\n"));
    const std::vector<JobPlan> jobs = plan_jobs(c);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(render_job_script(c, jobs[0]), as_strategy(kDdpScript, s)) << s;
  }
}

const char* kHorovodScript = R"(#!/bin/bash
#SBATCH --job-name=scaleprof-horovod-n2-r1
#SBATCH --time=00:30:00
#SBATCH --output=slurm-job-logs/%x-%j.out
#SBATCH --error=slurm-job-logs/%x-%j.err
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4

# scaleprof slurm: experiment cnn, strategy horovod, 2 node(s) x 4 process(es), repetition 1.
# Self-contained: nothing outside this file is sourced except what the configuration names.
set -eo pipefail

# Where scaleprof run records the run (scaleprof report reads it from there)
export SCALEPROF_ROOT=/data/metrics
export SCALEPROF_EXPERIMENT=cnn
export SCALEPROF_PROFILER=on
export RUN_NAME=horovod-n2-r1-slurm"$SLURM_JOB_ID"
echo "scaleprof slurm: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST ($SLURM_NNODES node(s)), cpus per task ${SLURM_CPUS_PER_TASK:-not set}"

# Horovod: srun starts one task per GPU, each under scaleprof run.
# SCALEPROF_HOST: SLURM's node name names the node in the run directory.
# training_cmd is shell code: each task's shell expands it ($VAR, $(...), ~) before the launcher starts it.
srun --ntasks-per-node=4 --ntasks=8 --kill-on-bad-exit=1 bash -c 'export SCALEPROF_HOST="${SLURMD_NODENAME:-$(hostname -s)}"
mkdir -p "$SCALEPROF_ROOT/$SCALEPROF_EXPERIMENT/$RUN_NAME/nsys"
exec /opt/scaleprof/bin/scaleprof run --experiment=cnn --strategy=horovod --run-name="$RUN_NAME" --gpu-interval=1s -- nsys profile -t cuda,nvtx,osrt --gpu-metrics-devices=all -o "$SCALEPROF_ROOT/$SCALEPROF_EXPERIMENT/$RUN_NAME/nsys/rank-%q{SLURM_PROCID}" python train.py --epochs 5
'
)";

TEST(SlurmScript, SingleHorovodWithNsysExpectedText) {
  const LaunchConfig c = make(base_config("dist_strategy: horovod\nnum_nodes: 2\nnsys: true\nprofiler: on\n"));
  const std::vector<JobPlan> jobs = plan_jobs(c);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(render_job_script(c, jobs[0]), kHorovodScript);
}

// Issue 21: SLURM >= 22.05 no longer passes SLURM_CPUS_PER_TASK from sbatch to srun, so srun gets the
// count itself, with a binding (cpu_bind; "none" leaves SLURM's default), and nothing without it.
TEST(SlurmScript, SrunGetsTheCpusPerTask) {
  const LaunchConfig hvd = make(base_config("dist_strategy: horovod\nnum_nodes: 2\ncpus_per_task: 8\n"));
  EXPECT_NE(render_job_script(hvd, plan_jobs(hvd)[0])
                .find("srun --ntasks-per-node=4 --ntasks=8 --cpus-per-task=8 --cpu-bind=cores --kill-on-bad-exit=1 "),
            std::string::npos);
  const LaunchConfig unbound = make(base_config("cpus_per_task: 16\ncpu_bind: none\n"));
  EXPECT_NE(render_job_script(unbound, plan_jobs(unbound)[0])
                .find("srun --ntasks-per-node=1 --cpus-per-task=16 --kill-on-bad-exit=1 "),
            std::string::npos);
  const LaunchConfig threads = make(base_config("cpus_per_task: 16\ncpu_bind: threads\n"));
  EXPECT_NE(render_job_script(threads, plan_jobs(threads)[0]).find("--cpus-per-task=16 --cpu-bind=threads "),
            std::string::npos);
  const LaunchConfig unset = make(base_config());
  const std::string plain = render_job_script(unset, plan_jobs(unset)[0]);
  EXPECT_NE(plain.find("srun --ntasks-per-node=1 --kill-on-bad-exit=1 "), std::string::npos);
  EXPECT_EQ(plain.find("--cpu"), std::string::npos);
  config::Config bad = base_config();
  const auto refused = bad.set_override("--cpu_bind", "core");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("did you mean 'cores'"), std::string::npos) << refused.error().message;
}

TEST(SlurmScript, TorchrunWithNsysAndContainer) {
  const LaunchConfig c = make(base_config("nsys: true\ncontainer: /images/torch.sif\ngpus_per_node: 2\n"));
  const std::string s = render_job_script(c, plan_jobs(c)[0]);
  EXPECT_NE(
      s.find(" -- apptainer exec --nv /images/torch.sif torchrun --nnodes=\"$SLURM_NNODES\" --nproc-per-node=2 "
             "--rdzv-backend=c10d --rdzv-endpoint=\"$MASTER_ADDR:$MASTER_PORT\" --rdzv-id=\"$SLURM_JOB_ID\" "
             "--rdzv-conf=is_host=$((SLURM_NODEID == 0 ? 1 : 0)) --no-python nsys profile -t cuda,nvtx,osrt "
             "--gpu-metrics-devices=all -o \"$SCALEPROF_ROOT/$SCALEPROF_EXPERIMENT/$RUN_NAME/nsys/rank-%q{RANK}\" "
             "python train.py --epochs 5\n"),
      std::string::npos)
      << s;
}

TEST(SlurmScript, CpuTrainingRequestsNoGpus) {
  const LaunchConfig c = make(base_config("gpus_per_node: 0\n"));
  const std::string s = render_job_script(c, plan_jobs(c)[0]);
  EXPECT_EQ(s.find("--gpus-per-node"), std::string::npos);
  EXPECT_NE(s.find("--nproc-per-node=1 "), std::string::npos);
}

TEST(SlurmScript, RunallOneScriptPerStrategy) {
  const LaunchConfig c = make(base_config(std::string(kSingleExtra) + "mode: runall\n"));
  const std::vector<JobPlan> jobs = plan_jobs(c);
  std::vector<std::string> names;
  for (const JobPlan& j : jobs) names.push_back(j.script_name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"ddp-n2-r1.sh", "fsdp-n2-r1.sh", "deepspeed-n2-r1.sh", "horovod-n2-r1.sh"}));
  EXPECT_EQ(render_job_script(c, jobs[0]), kDdpScript);
  EXPECT_EQ(render_job_script(c, jobs[1]), as_strategy(kDdpScript, "fsdp"));
  EXPECT_EQ(render_job_script(c, jobs[2]), as_strategy(kDdpScript, "deepspeed"));
  EXPECT_NE(render_job_script(c, jobs[3]).find("srun --ntasks-per-node=4 --ntasks=8 "), std::string::npos);
}

TEST(SlurmScript, ScalingTestStrategyTimesNodesTimesRepetition) {
  config::Config cfg =
      base_config("mode: scaling-test\nstrategies: [ddp, horovod]\nscalability_nodes: [1, 4]\nrepetitions: 2\n");
  ASSERT_TRUE(cfg.set_override(
      "--training_cmd", "python train.py --tag {strategy}-{num_nodes}-{repetition}-{experiment}-{gpus_per_node}"));
  const LaunchConfig c = make(cfg);
  const std::vector<JobPlan> jobs = plan_jobs(c);
  std::vector<std::string> names;
  for (const JobPlan& j : jobs) names.push_back(j.job_name);
  EXPECT_EQ(names, (std::vector<std::string>{"scaleprof-ddp-n1-r1", "scaleprof-ddp-n1-r2", "scaleprof-horovod-n1-r1",
                                             "scaleprof-horovod-n1-r2", "scaleprof-ddp-n4-r1", "scaleprof-ddp-n4-r2",
                                             "scaleprof-horovod-n4-r1", "scaleprof-horovod-n4-r2"}));
  const std::string ddp4 = render_job_script(c, jobs[5]);
  EXPECT_NE(ddp4.find("#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\n"), std::string::npos);
  EXPECT_NE(ddp4.find("export RUN_NAME=ddp-n4-r2-slurm\"$SLURM_JOB_ID\"\n"), std::string::npos);
  EXPECT_NE(ddp4.find("python train.py --tag ddp-4-2-cnn-4\n"), std::string::npos);
  const std::string hvd4 = render_job_script(c, jobs[6]);
  EXPECT_NE(hvd4.find("#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=4\n"), std::string::npos);
  EXPECT_NE(hvd4.find("srun --ntasks-per-node=4 --ntasks=16 "), std::string::npos);
}

TEST(SlurmScript, ReportScriptExpectedText) {
  const LaunchConfig c = make(base_config("script_dir: scripts\n"));
  EXPECT_EQ(render_report_script(c), R"(#!/bin/bash
#SBATCH --job-name=scaleprof-report
#SBATCH --time=00:30:00
#SBATCH --output=slurm-job-logs/%x-%j.out
#SBATCH --error=slurm-job-logs/%x-%j.err
#SBATCH --nodes=1
#SBATCH --ntasks=1

# scaleprof slurm: the scalability report of experiment cnn, after every job has ended.
set -eo pipefail
/opt/scaleprof/bin/scaleprof slurm status --script-dir=scripts >/dev/null || true
exec /opt/scaleprof/bin/scaleprof report --root=/data/metrics --experiment=cnn --html=/home/u/work/scripts/cnn-report.html --plot-dir=/home/u/work/scripts/cnn-plots
)");
}

TEST(SlurmScript, ValidationErrorsNameFieldAndSource) {
  auto err = [](const std::string& extra) {
    auto l = make_launch_config(base_config(extra), "/w", "/s");
    return l ? std::string("ok") : l.error().message;
  };
  EXPECT_EQ(err("time: soon\n"), "time (test.yaml:5): 'soon' is not a SLURM time (minutes, HH:MM:SS, D-HH:MM:SS, ...)");
  EXPECT_EQ(err("mem: lots\n"), "mem (test.yaml:5): 'lots' is not a memory size like 64G or 4000M");
  EXPECT_EQ(err("env: {'1A': x}\n"), "env (test.yaml:5): '1A' is not a valid environment variable name");
  EXPECT_EQ(err("partition: 'a b'\n"),
            "partition (test.yaml:5): 'a b' may only use letters, digits and . _ + : @ % = , -");
  EXPECT_EQ(err("job_name: 'x\"y'\n"), "job_name (test.yaml:5): '\"' and '\\' cannot be passed on an #SBATCH line");
  auto flag_err = [](const std::string& flag, const std::string& value) {
    config::Config c = base_config();
    EXPECT_TRUE(c.set_override(flag, value));
    auto l = make_launch_config(c, "/w", "/s");
    return l ? std::string("ok") : l.error().message;
  };
  EXPECT_EQ(flag_err("--training_cmd", "python 'x.py"), "training_cmd (--training_cmd): unclosed ' at character 8");
  EXPECT_EQ(flag_err("--experiment", "a/b"),
            "experiment (--experiment): experiment 'a/b' may only use letters, digits, '.', '_', '-' and '+' (it "
            "names a folder)");
  EXPECT_EQ(err("strategies: [ddp, ddp]\n"), "strategies (test.yaml:5): a strategy is listed twice");
  config::Config no_cmd(launch_fields());
  auto l = make_launch_config(no_cmd, "/w", "/s");
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().message.rfind("training_cmd is not set", 0), 0u);
}

TEST(SlurmScript, ShellTextIsReadAsBashReadsIt) {
  // Unclosed constructs would swallow the script's lines after them: refused, with where they open.
  EXPECT_EQ(shell_quoting("python 'x.py").error().message, "unclosed ' at character 8");
  EXPECT_EQ(shell_quoting("a \"b $(c").error().message, "unclosed $( at character 6");
  EXPECT_EQ(shell_quoting("a ${B").error().message, "unclosed ${ at character 3");
  EXPECT_EQ(shell_quoting("a `b").error().message, "unclosed ` at character 3");
  EXPECT_EQ(shell_quoting("a b\\").error().message, "trailing backslash");
  EXPECT_TRUE(shell_quoting("echo $((1 + (2))) \"$(echo ')')\" # it's a comment"));
  const std::vector<Quoting> q = shell_quoting("a'b'\"c$(d)\"").value();
  EXPECT_EQ(q[0], Quoting::kNone);
  EXPECT_EQ(q[2], Quoting::kSingle);
  EXPECT_EQ(q[5], Quoting::kDouble);
  EXPECT_EQ(q[8], Quoting::kNone);  // inside $(...) within "...": a command of its own
  // Values are quoted for where they land.
  EXPECT_EQ(quote_in(Quoting::kNone, "it's $x"), "'it'\\''s $x'");
  EXPECT_EQ(quote_in(Quoting::kDouble, "a\"$`\\b"), "a\\\"\\$\\`\\\\b");
  EXPECT_EQ(quote_in(Quoting::kSingle, "it's"), "it'\\''s");
  // Where training_cmd would stop being one command.
  EXPECT_EQ(command_separator_in("python t.py; rm x"),
            std::make_optional(std::make_pair(std::string(";"), size_t{12})));
  EXPECT_EQ(command_separator_in("a && b")->first, "&&");
  EXPECT_EQ(command_separator_in("a | b")->first, "|");
  EXPECT_FALSE(command_separator_in("python t.py > log 2>&1 &>all 'a;b' \"c|d\" $(e; f) \\; # g; h"));
  // env values: one word, blanks kept, the user's quotes and expansions working.
  EXPECT_EQ(assignment_value("--a --b"), "--a\\ --b");
  EXPECT_EQ(assignment_value("~/x:$HOME/y \"a b\" $(c d)"), "~/x:$HOME/y\\ \"a b\"\\ $(c d)");
  EXPECT_EQ(shell_quote("plain-word_1.2/x:y"), "plain-word_1.2/x:y");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("A=b"), "'A=b'");
  EXPECT_EQ(shell_quote("--flag=b"), "--flag=b");
  EXPECT_EQ(shell_quote("~"), "'~'");
}

// --- hostile values -----------------------------------------------------------------------------

// Runs `bash -n` (syntax only) on the script; true when bash accepts it.
bool bash_syntax_ok(const std::string& script, std::string* output) {
  const fs::path path = fs::temp_directory_path() / ("scaleprof-hostile-" + std::to_string(::getpid()) + ".sh");
  std::ofstream(path) << script;
  const std::string cmd = "bash -n " + path.string() + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[512];
  while (p != nullptr && std::fgets(buf, sizeof(buf), p) != nullptr) *output += buf;
  const int rc = p != nullptr ? ::pclose(p) : -1;
  fs::remove(path);
  return rc == 0;
}

TEST(SlurmScript, HostileValuesInEveryFieldStayInert) {
  // Each value would create a marker file if any shell ever executed it.
  const fs::path marker = fs::temp_directory_path() / ("scaleprof-pwned-" + std::to_string(::getpid()));
  fs::remove(marker);
  const std::string m = marker.string();
  const std::vector<std::string> hostile = {
      "; touch " + m,
      "$(touch " + m + ")",
      "`touch " + m + "`",
      "' ; touch " + m + " ; '",
      "\" ; touch " + m + " ; \"",
      "a\nb",
      "x; rm -rf ~",
      "${IFS}touch${IFS}" + m,
      "|| touch " + m,
      "\\'$(touch " + m + ")",
  };
  int accepted = 0, rejected = 0;
  for (const config::FieldSpec& field : launch_fields()) {
    // training_cmd, pre_exec and env values are the user's own shell code, run as written (the threat
    // model of docs/launch.md): what is tested here is every field that is data, and env's names.
    if (is_shell_code_field(field.name) && field.kind != config::Kind::kStringMap) continue;
    for (const std::string& value : hostile) {
      config::Config c(launch_fields());
      ASSERT_TRUE(c.merge_text("training_cmd: python train.py\nscaleprof_bin: /bin/scaleprof\n", "base.yaml"));
      // Through the command line, as a user (or a script building a command line) would pass it.
      std::string flag_value = value;
      if (field.kind == config::Kind::kStringMap) flag_value = "HOSTILE=x";  // the value is shell code
      auto set = c.set_override("--" + field.name, flag_value);
      if (set && field.kind == config::Kind::kStringMap) {
        // ... and as a hostile variable name.
        ASSERT_FALSE(c.set_override("--env", value + "=x") && make_launch_config(c, "/w", "/s"));
      }
      if (!set) {
        ++rejected;
        continue;
      }
      auto l = make_launch_config(c, "/home/u", "/s/scaleprof");
      if (!l) {
        ++rejected;
        EXPECT_FALSE(l.error().message.empty());
        continue;
      }
      ++accepted;
      for (const JobPlan& job : plan_jobs(l.value())) {
        std::string output;
        const std::string script = render_job_script(l.value(), job);
        EXPECT_TRUE(bash_syntax_ok(script, &output)) << field.name << " = " << value << "\n" << output << script;
        EXPECT_EQ(script.find("\ntouch"), std::string::npos);
      }
      std::string output;
      EXPECT_TRUE(bash_syntax_ok(render_report_script(l.value()), &output)) << field.name << ": " << output;
    }
  }
  EXPECT_GT(accepted, 50);  // quoting, not only rejection, is what is tested
  EXPECT_GT(rejected, 50);
  EXPECT_FALSE(fs::exists(marker));
}

// Executes a script whose every value is hostile, with stand-ins for srun and scontrol that print
// their arguments: the values arrive as plain words and nothing runs.
TEST(SlurmScript, HostileScriptRunsWithValuesAsPlainWords) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-hostile-run-" + std::to_string(::getpid()));
  fs::create_directories(dir / "bin");
  const fs::path marker = dir / "pwned";
  const std::string m = marker.string();
  for (const char* tool : {"srun", "scontrol", "scaleprof"}) {
    std::ofstream(dir / "bin" / tool) << "#!/bin/bash\n"
                                      << (std::string(tool) == "srun"
                                              ? "while [ \"$1\" != bash ]; do shift; done; shift 2; SLURM_NODEID=0 "
                                                "SLURM_NNODES=1 SLURM_JOB_ID=7 bash -c \"$1\"\n"
                                          : std::string(tool) == "scontrol" ? "echo n1\n"
                                                                            : "printf '<%s>\\n' \"$@\"; printf "
                                                                              "'root<%s>\\nX<%s>\\n' "
                                                                              "\"$SCALEPROF_ROOT\" \"$X\"\n");
    fs::permissions(dir / "bin" / tool, fs::perms::owner_all);
  }
  config::Config c(launch_fields());
  const std::string h = "$(touch " + m + ")';`touch " + m + "`\"";
  std::string escaped;  // "train " + h as one word, every character backslash-escaped
  for (char ch : "train " + h) escaped += std::string("\\") + ch;
  ASSERT_TRUE(c.set_override("--training_cmd", "python " + escaped));
  ASSERT_TRUE(c.set_override("--scaleprof_bin", (dir / "bin" / "scaleprof").string()));
  // env values and pre_exec are shell code: the user's backslashes make these values literal, as in
  // training_cmd. root is data: quoted by scaleprof, whatever it holds.
  ASSERT_TRUE(c.set_override("--env", "X=" + escaped.substr(escaped.find(' ') + 1)));
  ASSERT_TRUE(c.set_override("--root", (dir / h).string()));
  std::string yaml_h;  // h, backslash-escaped, inside a YAML double-quoted string
  for (char ch : h) {
    const std::string shell_escaped = std::string("\\") + ch;  // one word for pre_exec's splitting
    for (char e : shell_escaped) yaml_h += (e == '"' || e == '\\') ? std::string("\\") + e : std::string(1, e);
  }
  ASSERT_TRUE(c.set_override("--pre_exec", "[\"echo " + yaml_h + "\"]"));
  ASSERT_TRUE(c.set_override("--gpus_per_node", "0"));
  auto l = make_launch_config(c, dir.string(), "/unused");
  ASSERT_TRUE(l) << l.error().message;
  const std::string script = render_job_script(l.value(), plan_jobs(l.value())[0]);
  std::ofstream(dir / "job.sh") << script;
  const std::string cmd = "cd " + dir.string() + " && PATH=" + (dir / "bin").string() + ":$PATH bash job.sh 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  ASSERT_EQ(::pclose(p), 0) << out << script;
  EXPECT_FALSE(fs::exists(marker)) << out;
  EXPECT_NE(out.find("<train " + h + ">"), std::string::npos) << out;
  EXPECT_NE(out.find("$(touch " + m + ")';`touch " + m + "`\""), std::string::npos) << out;  // pre_exec's echo
  EXPECT_NE(out.find("root<" + (dir / h).string() + ">\n"), std::string::npos) << out;
  EXPECT_NE(out.find("X<" + h + ">\n"), std::string::npos) << out;
  fs::remove_all(dir);
}

// The user's shell code is expanded by the job's shell (issue 32): $SCRATCH, $HOME,
// $SLURM_CPUS_PER_TASK, $(...) and ~ in training_cmd, pre_exec and env arrive expanded at the
// training program; values scaleprof puts into that code (a configuration key's value, the job's
// name) arrive as exactly themselves, outside quotes, in "..." and in '...', and run nothing.
TEST(SlurmScript, ShellCodeIsExpandedByTheJobsShell) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-shell-code-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  fs::create_directories(dir / "home/venv/bin");
  std::ofstream(dir / "home/venv/bin/activate") << "export FROM_VENV=1\n";
  const fs::path marker = dir / "pwned";
  const std::map<std::string, std::string> stubs = {
      // srun runs the task's bash -c with what SLURM gives a task; scaleprof run starts its command.
      {"srun",
       "while [ \"$1\" != bash ]; do shift; done; shift 2\nSLURM_NODEID=0 SLURM_NNODES=1 exec bash -c \"$1\"\n"},
      {"scontrol", "echo n1\n"},
      {"scaleprof", "while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n"},
      {"torchrun",
       "printf '<%s>\\n' \"$@\" >\"$RECORD/torchrun.args\"\nwhile [ \"$1\" != --no-python ]; do shift; done; shift\n"
       "exec \"$@\"\n"},
      {"python", "printf '<%s>\\n' \"$@\" >\"$RECORD/python.args\"\nenv >\"$RECORD/python.env\"\n"}};
  for (const auto& [tool, body] : stubs) {
    std::ofstream(dir / "bin" / tool) << "#!/bin/bash\n" << body;
    fs::permissions(dir / "bin" / tool, fs::perms::owner_all);
  }
  const std::string hostile = "it's $(touch " + marker.string() + ") \"x\" `touch " + marker.string() + "`";
  config::Config c(launch_fields());
  ASSERT_TRUE(
      c.merge_text("training_cmd: python train.py --data $SCRATCH/data --home ~ --cpus \"$SLURM_CPUS_PER_TASK\" "
                   "--sub $(echo a b) --cfg {config_path} --q \"{config_path}\" --s '{config_path}' --job {job_name} "
                   "--run \"{run_name}\" {{literal}}\n"
                   "pre_exec: ['source $HOME/venv/bin/activate', 'export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK']\n"
                   "env: {DATA: $SCRATCH/d, OPTS: --a --b, TILDE: ~/x, SUB: \"$(echo hi there)\"}\n"
                   "gpus_per_node: 0\njob_name: j=1@x\n",
                   "code.yaml"));
  ASSERT_TRUE(c.set_override("--config_path", hostile));
  ASSERT_TRUE(c.set_override("--scaleprof_bin", (dir / "bin/scaleprof").string()));
  auto l = make_launch_config(c, dir.string(), "/unused");
  ASSERT_TRUE(l) << l.error().message;
  const std::string script = render_job_script(l.value(), plan_jobs(l.value())[0]);
  std::ofstream(dir / "job.sh") << script;
  const std::string cmd = "cd " + dir.string() + " && RECORD=" + dir.string() + " HOME=" + (dir / "home").string() +
                          " SCRATCH=/scratch/u SLURM_CPUS_PER_TASK=6 SLURM_JOB_ID=7 PATH=" + (dir / "bin").string() +
                          ":$PATH bash job.sh 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  ASSERT_EQ(::pclose(p), 0) << out << script;
  std::ifstream args_in(dir / "python.args");
  const std::string args((std::istreambuf_iterator<char>(args_in)), std::istreambuf_iterator<char>());
  const std::string home = (dir / "home").string();
  EXPECT_EQ(args, "<train.py>\n<--data>\n</scratch/u/data>\n<--home>\n<" + home +
                      ">\n<--cpus>\n<6>\n<--sub>\n<a>\n<b>\n<--cfg>\n<" + hostile + ">\n<--q>\n<" + hostile +
                      ">\n<--s>\n<" + hostile + ">\n<--job>\n<j=1@x-ddp-n1-r1>\n<--run>\n<ddp-n1-r1>\n<{literal}>\n")
      << script;
  std::ifstream env_in(dir / "python.env");
  std::set<std::string> env;
  for (std::string line; std::getline(env_in, line);) env.insert(line);
  for (const std::string& expected :
       {std::string("DATA=/scratch/u/d"), std::string("OPTS=--a --b"), "TILDE=" + home + "/x",
        std::string("SUB=hi there"), std::string("OMP_NUM_THREADS=6"), std::string("FROM_VENV=1")}) {
    EXPECT_EQ(env.count(expected), 1u) << expected << "\n" << script;
  }
  EXPECT_FALSE(fs::exists(marker));
  fs::remove_all(dir);
}

// A folder name with a bidi override would reach the scripts through `root` made absolute: refused.
TEST(SlurmScript, DerivedPathsAreCheckedLikeValues) {
  config::Config c = base_config();
  ASSERT_TRUE(c.set_override("--root", "metrics"));
  auto l = make_launch_config(c, "/home/u/\xE2\x80\xAEwork", "/s");
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().message,
            "root (--root): the bidirectional control U+202E at character 9 is not allowed (values end up in "
            "scripts and file names)");
  config::Config from_self = base_config();
  ASSERT_TRUE(from_self.set_override("--scaleprof_bin", ""));
  auto exe = make_launch_config(from_self, "/w", "/opt/\xC2\x9B/scaleprof");
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.error().message,
            "scaleprof_bin (--scaleprof_bin): the control character U+009B at character 6 is not allowed (values "
            "end up in scripts and file names)");
}

// Every script repeats the configuration: 2,000 jobs of a long configuration would be gigabytes.
TEST(SlurmScript, ScriptSetSizeIsBounded) {
  config::Config cfg = base_config("mode: scaling-test\nstrategies: [ddp, fsdp]\nrepetitions: 100\n");
  ASSERT_TRUE(cfg.set_override("--scalability_nodes", "1,2,3,4,5,6,7,8,9,10"));
  ASSERT_TRUE(cfg.set_override("--env", "BIG=" + std::string(60'000, 'x')));
  const LaunchConfig c = make(cfg);
  const std::vector<JobPlan> jobs = plan_jobs(c);
  ASSERT_EQ(jobs.size(), 2000u);
  auto scripts = render_job_scripts(c, jobs);
  ASSERT_FALSE(scripts);
  const size_t each = render_job_script(c, jobs[0]).size();
  EXPECT_EQ(scripts.error().message,
            "the 2000 scripts would hold about " + std::to_string((each * 2000) >> 20) + " MiB (" +
                std::to_string(each) +
                " bytes each); at most 64 MiB: shorten pre_exec, env or training_cmd, or plan fewer jobs");
  ASSERT_TRUE(cfg.set_override("--repetitions", "10"));
  auto fewer = render_job_scripts(make(cfg), plan_jobs(make(cfg)));
  ASSERT_TRUE(fewer) << fewer.error().message;
  EXPECT_EQ(fewer.value().size(), 200u);
}

// A socket listening on 127.0.0.1:port, or -1.
int listen_on(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Issue 19: every job used port 29500, so jobs sharing a node failed with EADDRINUSE. The port now
// comes from the job id, computed by the script when it runs; rdzv_port still overrides it.
TEST(SlurmScript, ConcurrentJobsGetTheirOwnRendezvousPort) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-rdzv-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  // srun runs the task; scaleprof prints the rendezvous endpoint the job would use.
  std::ofstream(dir / "bin" / "srun") << "#!/bin/bash\nwhile [ \"$1\" != bash ]; do shift; done; shift 2; "
                                         "SLURM_NODEID=0 SLURM_NNODES=1 bash -c \"$1\"\n";
  std::ofstream(dir / "bin" / "scontrol") << "#!/bin/bash\necho n1\n";
  std::ofstream(dir / "bin" / "scaleprof") << "#!/bin/bash\necho \"$MASTER_ADDR:$MASTER_PORT\"\n";
  for (const char* tool : {"srun", "scontrol", "scaleprof"}) fs::permissions(dir / "bin" / tool, fs::perms::owner_all);
  auto endpoint = [&](const LaunchConfig& c, const std::string& job_id) {
    std::ofstream(dir / "job.sh") << render_job_script(c, plan_jobs(c)[0]);
    const std::string cmd = "cd " + dir.string() + " && PATH=" + (dir / "bin").string() +
                            ":$PATH SLURM_JOB_ID=" + job_id + " bash job.sh 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[256];
    while (p != nullptr && std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
    ::pclose(p);
    // The script's own first line says what it runs with; the endpoint the launcher got is the last.
    if (out.rfind("scaleprof slurm: job " + job_id + " ", 0) != 0) return "no header line: " + out;
    return out.substr(out.find('\n') + 1);
  };
  config::Config cfg = base_config("mode: scaling-test\nscalability_nodes: [1, 2, 4]\nstrategies: [ddp]\n");
  ASSERT_TRUE(cfg.set_override("--scaleprof_bin", (dir / "bin" / "scaleprof").string()));
  const LaunchConfig c = make(cfg);
  EXPECT_EQ(endpoint(c, "4711"), "n1:24711\n");
  EXPECT_EQ(endpoint(c, "4712"), "n1:24712\n");
  EXPECT_EQ(endpoint(c, "123456"), "n1:" + std::to_string(20000 + 123456 % 12000) + "\n");
  // Jobs submitted together get consecutive ids, so distinct ports: up to 12,000 of them at once.
  std::set<std::string> ports;
  for (int id = 50000; id < 50009; ++id) ports.insert(endpoint(c, std::to_string(id)));
  EXPECT_EQ(ports.size(), 9u);
  // A port something listens on already (a job whose id is 12,000 away, any other program) is passed
  // over: the first free one after it is used.
  {
    const int busy = listen_on(24711);
    const int busy_next = listen_on(24712);
    ASSERT_GE(busy, 0);
    ASSERT_GE(busy_next, 0);
    EXPECT_EQ(endpoint(c, "4711"), "n1:24713\n");
    EXPECT_EQ(endpoint(c, "16711"), "n1:24713\n");
    ::close(busy_next);
    EXPECT_EQ(endpoint(c, "4711"), "n1:24712\n");
    ::close(busy);
  }
  ASSERT_TRUE(cfg.set_override("--rdzv_port", "29400"));
  const LaunchConfig fixed = make(cfg);
  EXPECT_EQ(endpoint(fixed, "4711"), "n1:29400\n");
  EXPECT_NE(render_job_script(fixed, plan_jobs(fixed)[0]).find("MASTER_PORT=29400  # rdzv_port\n"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace scaleprof::launch
