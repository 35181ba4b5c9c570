// itwinai's SLURM configurations in `scaleprof slurm` (launch/itwinai_keys.h): every key itwinai
// 0.4.2's builder reads mapped or refused with what to write, its placeholders and OmegaConf
// interpolations filled or named before anything is written, multi-line values; and the
// resubmission rules (--force supersedes, --append adds repetitions) with the report leaving the
// superseded runs out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "config/config.h"
#include "launch/itwinai_keys.h"
#include "launch/launch_config.h"
#include "launch/slurm_script.h"
#include "scalability_fixtures.h"
#include "test_paths.h"

namespace scaleprof::launch {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

Result<LaunchConfig> launch_from(const std::string& yaml, config::Config* out = nullptr) {
  config::Config c(launch_fields());
  if (auto ok = c.merge_text(yaml, "it.yaml"); !ok) return ok.error();
  if (out != nullptr) *out = c;
  return make_launch_config(c, "/work", "/opt/scaleprof");
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= text.size()) {
    size_t end = text.find('\n', from);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(from, end - from));
    from = end + 1;
  }
  return out;
}

// A configuration in the style of itwinai 0.4.2's tutorials (torch-scaling-test, the builder's
// sample): written here, not copied, with the keys and values they use.
const char* kTutorialStyle = R"(mode: scaling-test
distributed_strategy: ddp
account: intertwin
partition: develbooster
time: 00:15:00
num_nodes: 1
num_tasks_per_node: 1
gpus_per_node: 4
cpus_per_task: 16
std_out: slurm_job_logs/${distributed_strategy}-${num_nodes}x${gpus_per_node}.out
err_out: slurm_job_logs/${distributed_strategy}-${num_nodes}x${gpus_per_node}.err
job_name: tutorial-job
python_venv: .venv
scalability_nodes: "1, 2, 4"
pipe_key: training_pipeline
config_name: config
config_path: .
training_cmd: |
  $(which itwinai) exec-pipeline \
  --config-name={config_name} \
  --config-path={config_path} \
  strategy={distributed_strategy} \
  +pipe_key={pipe_key}
)";

// The text of every script of `l`, with no job_placeholder, no str.format placeholder of an itwinai
// key and no OmegaConf interpolation left in it.
std::vector<std::string> scripts_without_placeholders(const LaunchConfig& l) {
  std::vector<std::string> out;
  for (const JobPlan& job : plan_jobs(l)) {
    out.push_back(render_job_script(l, job));
    const std::string& s = out.back();
    EXPECT_EQ(s.find('\x01'), std::string::npos) << s;
    for (const char* left :
         {"{config_name}", "{config_path}", "{pipe_key}", "{distributed_strategy}", "{run_name}", "{itwinai_launcher}",
          "{strategy}", "{num_nodes}", "${distributed_strategy}", "${num_nodes}", "${itwinai"}) {
      EXPECT_EQ(s.find(left), std::string::npos) << left << "\n" << s;
    }
  }
  return out;
}

// The line of `script` that starts the training (scaleprof run's exec line).
std::string exec_line(const std::string& script) {
  const size_t at = script.find("\nexec ");
  return at == std::string::npos ? std::string() : script.substr(at + 1, script.find('\n', at + 1) - at - 1);
}

// itwinai 0.4.2's configurations run as they are (issue 32): its placeholders filled from the file's
// own keys, $(which itwinai) left for the job's shell, per-job std_out/err_out/job_name of a scaling
// test reset as itwinai resets them (a warning each), keys with no effect warned about.
TEST(ItwinaiConfig, TutorialStyleConfigRunsAsItIs) {
  config::Config c(launch_fields());
  auto l = launch_from(kTutorialStyle, &c);
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l.value().std_out, "slurm-job-logs/%x-%j.out");
  EXPECT_EQ(l.value().std_err, "slurm-job-logs/%x-%j.err");
  ASSERT_EQ(l.value().warnings.size(), 2u);
  EXPECT_EQ(l.value().warnings[0],
            "it.yaml:10: std_out: '${distributed_strategy}' differs per job in mode scaling-test; as itwinai does for "
            "runall and scaling-test, every job gets the default slurm-job-logs/%x-%j.out instead (%x: the job's "
            "name, which holds strategy, nodes and repetition)");
  EXPECT_NE(l.value().warnings[1].find("it.yaml:11: std_err: '${distributed_strategy}' differs per job"),
            std::string::npos);
  const std::vector<std::string> scripts = scripts_without_placeholders(l.value());
  ASSERT_EQ(scripts.size(), 12u);  // 4 strategies x 3 node counts
  // deepspeed on 2 nodes (node counts, then strategies): the file's values written in, the job's strategy in its place.
  const std::string line = exec_line(scripts[6]);
  EXPECT_NE(line.find("--no-python $(which itwinai) exec-pipeline --config-name=config --config-path=. "
                      "strategy=deepspeed +pipe_key=training_pipeline"),
            std::string::npos)
      << line;
  EXPECT_NE(scripts[6].find("#SBATCH --job-name=tutorial-job-deepspeed-n2-r1\n"), std::string::npos);
  EXPECT_NE(scripts[6].find("source .venv/bin/activate\n"), std::string::npos);
}

// itwinai 0.4.2's own tutorial and use-case SLURM configurations, read from a clone of its repository
// where there is one (SCALEPROF_ITWINAI_GIT: its git folder, default the mirror this project's
// sessions fetch); not part of this repository. Each makes scripts as it is, in its own mode and as a
// scaling test.
TEST(ItwinaiConfig, Itwinai042RepositoryConfigsRunAsTheyAre) {
  const char* env = std::getenv("SCALEPROF_ITWINAI_GIT");
  const std::string git = env != nullptr ? env : "/work/.mirror/interTwin-eu+itwinai/repo";
  if (!fs::exists(git)) GTEST_SKIP() << "no clone of itwinai at " << git << " (SCALEPROF_ITWINAI_GIT)";
  const std::vector<std::string> paths = {"tutorials/distributed-ml/torch-scaling-test/slurm_config.yaml",
                                          "tutorials/distributed-ml/torch-tutorial-0-basics/slurm_config.yaml",
                                          "tutorials/distributed-ml/torch-tutorial-1-mnist/slurm_config.yaml",
                                          "tutorials/distributed-ml/torch-tutorial-2-trainer-class/slurm_config.yaml",
                                          "tutorials/distributed-ml/torch-tutorial-GAN/slurm_config.yaml",
                                          "use-cases/eurac/slurm_config.yaml",
                                          "use-cases/mnist/torch/slurm_config.yaml",
                                          "use-cases/virgo/slurm_config.yaml"};
  for (const std::string& path : paths) {
    const testing::CliRun shown = testing::run_shell("git --git-dir=" + git + " show v0.4.2:" + path);
    if (shown.exit_code != 0) GTEST_SKIP() << "the clone at " << git << " has no v0.4.2:" << path;
    for (const char* mode : {"", "scaling-test"}) {
      config::Config c(launch_fields());
      ASSERT_TRUE(c.merge_text(shown.out, path)) << path;
      if (*mode != '\0') {
        ASSERT_TRUE(c.set_override("--mode", mode));
      }
      auto l = make_launch_config(c, "/work", "/opt/scaleprof");
      ASSERT_TRUE(l) << path << " " << mode << ": " << l.error().message;
      for (const std::string& script : scripts_without_placeholders(l.value())) {
        EXPECT_NE(exec_line(script).find("--gpu-interval=1s -- "), std::string::npos) << path << "\n" << script;
      }
    }
  }
}

TEST(ItwinaiConfig, WhatCannotWorkIsListedAtOnce) {
  auto l = launch_from(
      "num_tasks: 8\nexec_command: srun x\nuse_ray: true\npy_spy: true\ntraining_cmd: python t.py --x {unknown}\n");
  ASSERT_FALSE(l);
  const std::vector<std::string> lines = lines_of(l.error().message);
  ASSERT_EQ(lines.size(), 6u) << l.error().message;
  EXPECT_EQ(lines[0], "5 things to change in the configuration:");
  EXPECT_EQ(lines[1],
            "  - it.yaml:1: itwinai's 'num_tasks: 8' (sbatch --ntasks): scaleprof gives each job its tasks from "
            "num_nodes and gpus_per_node; remove num_tasks");
  EXPECT_NE(lines[2].find("'exec_command' replaces the launch line"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("'use_ray: true'"), std::string::npos) << lines[3];
  EXPECT_NE(lines[4].find("'py_spy: true'"), std::string::npos) << lines[4];
  EXPECT_EQ(lines[5].rfind("  - it.yaml:5: training_cmd: {unknown} is not a placeholder scaleprof fills", 0), 0u)
      << lines[5];
}

TEST(ItwinaiConfig, DefaultTrainingCmdAndKeysWithoutEffect) {
  // No training_cmd in an itwinai configuration: itwinai's default, with the file's values.
  auto l = launch_from(
      "distributed_strategy: horovod\npython_venv: /p/venv\nconfig_name: c1\nrun_name: mine\n"
      "itwinai_trainer: false\nprofiling_sampling_rate: 20\n");
  ASSERT_TRUE(l) << l.error().message;
  const std::vector<std::string> scripts = scripts_without_placeholders(l.value());
  ASSERT_EQ(scripts.size(), 1u);
  EXPECT_NE(exec_line(scripts[0])
                .find("-- /p/venv/bin/itwinai exec-pipeline --config-name=c1 --config-path=. "
                      "--strategy=horovod --run-name=horovod-n1-r1 +pipe_key=training_pipeline"),
            std::string::npos)
      << exec_line(scripts[0]);
  ASSERT_EQ(l.value().notes.size(), 1u);
  EXPECT_EQ(l.value().notes[0].rfind("training_cmd is not set: itwinai's default", 0), 0u);
  ASSERT_EQ(l.value().warnings.size(), 3u);
  EXPECT_NE(l.value().warnings[0].find("'profiling_sampling_rate' (py-spy's sampling rate) has no effect"),
            std::string::npos);
  EXPECT_NE(l.value().warnings[1].find("'itwinai_trainer' is itwinai 0.3's"), std::string::npos);
  EXPECT_NE(l.value().warnings[2].find("'run_name: mine' has no effect"), std::string::npos);
  // A key that only a placeholder uses, with no placeholder: a warning, not an error.
  auto unused = launch_from("pipe_key: k\ntraining_cmd: python t.py\n");
  ASSERT_TRUE(unused) << unused.error().message;
  ASSERT_EQ(unused.value().warnings.size(), 1u);
  EXPECT_EQ(unused.value().warnings[0],
            "it.yaml:1: itwinai's 'pipe_key' has no effect: training_cmd has no {pipe_key} placeholder");
  // A plain scaleprof configuration without training_cmd is still an error.
  auto none = launch_from("num_nodes: 2\n");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message.rfind("training_cmd is not set", 0), 0u);
}

TEST(ItwinaiConfig, SingleModeFillsInterpolationsFromTheFile) {
  auto l = launch_from(
      "distributed_strategy: horovod\nnum_nodes: 2\nstd_out: logs/${distributed_strategy}-${num_nodes}.out\n"
      "job_name: tut-${dist_strat}\nroot: ${itwinai.cwd:}/metrics\ntraining_cmd: python t.py -s ${dist_strat} "
      "--data ${data_dir} --home ${oc.env:HOME} --cwd ${itwinai.cwd:}\n");
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l.value().std_out, "logs/horovod-2.out");
  EXPECT_EQ(l.value().job_name, "tut-horovod");
  EXPECT_EQ(l.value().root, "/work/metrics");
  // ${data_dir} is no key: the job's shell expands it; ${oc.env:HOME} is the job's $HOME.
  EXPECT_EQ(l.value().training_cmd,
            "python t.py -s " + job_placeholder("strategy") + " --data ${data_dir} --home ${HOME} --cwd /work");
  // In data (SLURM reads std_out itself, no shell), an interpolation of no key is an error.
  auto unknown = launch_from("training_cmd: t\nstd_out: ${log_dir}/x.out\n");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "it.yaml:2: std_out: '${log_dir}' is an OmegaConf interpolation of a key this configuration does not "
            "have (and SLURM does not expand shell variables in std_out): write the value itself");
}

TEST(ItwinaiConfig, EveryBuilderKeyIsMappedOrRefusedWithWhatToWrite) {
  // Every field of itwinai 0.4.2's MLSlurmBuilderConfig (and SlurmScriptConfiguration), each with a
  // value other than its default, alone in a configuration that otherwise works.
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"job_name", "j"},
      {"account", "a"},
      {"partition", "p"},
      {"time", "01:00:00"},
      {"std_out", "o/x.out"},
      {"err_out", "o/x.err"},
      {"num_nodes", "2"},
      {"num_tasks", "8"},
      {"num_tasks_per_node", "4"},
      {"gpus_per_node", "2"},
      {"cpus_per_task", "8"},
      {"memory", "64G"},
      {"exclusive", "true"},
      {"pre_exec_command", "ml Python"},
      {"exec_command", "srun x"},
      {"save_script", "true"},
      {"submit_job", "true"},
      {"save_dir", "s"},
      {"pre_exec_file", "https://example.org/pre.sh"},
      {"exec_file", "exec.sh"},
      {"use_ray", "true"},
      {"container_path", "/c.sif"},
      {"distributed_strategy", "deepspeed"},
      {"mode", "runall"},
      {"training_cmd", "train.py -s {distributed_strategy}"},
      {"python_venv", ".venv"},
      {"config_name", "c"},
      {"config_path", "p"},
      {"pipe_key", "k"},
      {"scalability_nodes", "1,2"},
      {"py_spy", "true"},
      {"profiling_sampling_rate", "20"},
      {"run_name", "r"},
  };
  int mapped = 0, refused = 0;
  for (const auto& [key, value] : keys) {
    std::string yaml = key + ": \"" + value + "\"\n";
    if (key != "training_cmd") yaml += "training_cmd: python t.py\n";
    auto l = launch_from(yaml);
    if (l) {
      ++mapped;
      continue;
    }
    ++refused;
    const std::string& m = l.error().message;
    EXPECT_NE(m.find("'" + key), std::string::npos) << key << ": " << m;
    EXPECT_TRUE(m.find("write") != std::string::npos || m.find("remove") != std::string::npos) << key << ": " << m;
  }
  EXPECT_EQ(mapped, 26);
  EXPECT_EQ(refused, 7);  // num_tasks(_per_node), exec_*, pre_exec_file, use_ray, py_spy
}

TEST(ItwinaiConfig, MultiLineValues) {
  config::Config c(launch_fields());
  auto l = launch_from(
      "training_cmd: python t.py\npre_exec_command: |\n  ml Stages/2025\n  # a comment\n\n  ml GCC \\\n    "
      "OpenMPI\n",
      &c);
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l.value().pre_exec, (std::vector<std::string>{"ml Stages/2025", "ml GCC OpenMPI"}));
  ASSERT_EQ(l.value().notes.size(), 1u);
  EXPECT_EQ(l.value().notes[0],
            "it.yaml:2:19: pre_exec: a multi-line string, taken as 2 command(s), one per line (pre_exec is a list: "
            "write it as '- command' lines to say so)");
  auto two = launch_from("training_cmd: |\n  python t.py\n  rm -rf x\n");
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().message,
            "it.yaml:1:15: training_cmd: line 2 of the value starts a second command ('rm -rf x'): the line before it "
            "does not end in '\\'; a training command is one command: end every line but the last with '\\'");
}

TEST(ItwinaiConfig, ShellCodeIsLeftToTheJobsShell) {
  // $(which itwinai) and $HOME are the job shell's to expand; what would cut the launch line is refused.
  auto which =
      launch_from("python_venv: /v\ntraining_cmd: $(which itwinai) exec-pipeline\npre_exec: ['source $HOME/e.sh']\n");
  ASSERT_TRUE(which) << which.error().message;
  EXPECT_EQ(which.value().training_cmd, "$(which itwinai) exec-pipeline");
  EXPECT_EQ(which.value().pre_exec, (std::vector<std::string>{"source $HOME/e.sh"}));
  auto two = launch_from("training_cmd: python t.py; python u.py\n");
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().message,
            "training_cmd (it.yaml:1): ';' at character 12 would end the command the launcher starts (torchrun or "
            "srun run training_cmd as one program with its arguments); put the commands in a script and run that, or "
            "the ones that prepare the job in pre_exec");
  auto open = launch_from("training_cmd: t\npre_exec: ['echo \"a']\n");
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().message, "pre_exec (it.yaml:2): 'echo \"a': unclosed \" at character 6");
}

TEST(ItwinaiConfig, PrintConfigShowsSetItwinaiKeysAndMarksShellCode) {
  ScratchDir dir("itwinai-print");
  dir.write("a.yaml", "training_cmd: python t.py --data $SCRATCH/d\nnum_tasks_per_node: 1\nenv: {A: $HOME}\n");
  const testing::CliRun r = testing::run_cli("slurm -c " + dir / "a.yaml" + " --print-config");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("num_tasks_per_node: 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a.yaml:2; itwinai's key\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("pipe_key"), std::string::npos) << r.out;  // not set: not shown
  EXPECT_NE(r.out.find("training_cmd: python t.py --data $SCRATCH/d"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a.yaml:1; shell code: each task's shell expands it, {placeholders} filled per job\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("a.yaml:3; shell code: the job's shell expands each value (NAME=value)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# default; shell code: the job's shell runs each line as written\n"), std::string::npos)
      << r.out;
}

// --- itwinai's flags and defaults ---------------------------------------------------------------

TEST(ItwinaiFlags, SaveOnlyPreviewAndItwinaiKeys) {
  ScratchDir dir("itwinai-flags");
  dir.write("a.yaml", "training_cmd: python t.py\ngpus_per_node: 0\n");
  const std::string cd = "cd " + dir.path() + " && ";
  // -s alone: itwinai's rule, saved and not submitted (no sbatch is called: none is on this PATH).
  testing::CliRun saved = testing::run_shell(cd + SCALEPROF_CLI_PATH + " slurm -c a.yaml -s");
  EXPECT_EQ(saved.exit_code, 0) << saved.err;
  EXPECT_NE(saved.out.find("(not submitted)"), std::string::npos) << saved.out;
  EXPECT_TRUE(fs::exists(dir / "slurm-scripts/ddp-n1-r1.sh"));
  // --preview: printed only.
  testing::CliRun preview = testing::run_shell(cd + SCALEPROF_CLI_PATH + " slurm -c a.yaml --preview --experiment x");
  EXPECT_EQ(preview.exit_code, 0) << preview.err;
  EXPECT_NE(preview.out.find("#################### ddp-n1-r1.sh"), std::string::npos);
  // itwinai's keys decide when given: submit_job false and no save_script is itwinai's preview.
  dir.write("b.yaml", "training_cmd: python t.py\nsubmit_job: false\nsave_dir: b-scripts\n");
  testing::CliRun keys = testing::run_shell(cd + SCALEPROF_CLI_PATH + " slurm -c b.yaml");
  EXPECT_EQ(keys.exit_code, 0) << keys.err;
  EXPECT_NE(keys.out.find("#################### ddp-n1-r1.sh"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "b-scripts"));
  testing::CliRun both = testing::run_shell(cd + SCALEPROF_CLI_PATH + " slurm -c a.yaml --preview -j");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--preview prints the scripts only"), std::string::npos) << both.err;
}

// --- --force supersedes, --append adds ------------------------------------------------------------

// A stand-in sbatch on PATH that answers with increasing job ids (a counter file beside it).
std::string fake_sbatch(const ScratchDir& dir) {
  dir.write("bin/sbatch",
            "#!/bin/bash\nf=\"$(dirname \"$0\")/next\"\nn=$(cat \"$f\" 2>/dev/null || echo 100)\n"
            "echo $((n + 1)) > \"$f\"\necho \"$n\"\n");
  fs::permissions(dir / "bin/sbatch", fs::perms::owner_all);
  return "cd " + dir.path() + " && PATH=" + (dir / "bin") + ":$PATH ";
}

TEST(Resubmission, ForceLeavesOnlyTheNewSubmissionsRunsInTheReport) {
  ScratchDir dir("itwinai-force");
  ScratchDir metrics("itwinai-force-metrics");
  const std::string env = fake_sbatch(dir);
  dir.write("a.yaml", "experiment: cnn\nroot: " + metrics.path() +
                          "\ntraining_cmd: python t.py\ngpus_per_node: 0\nmode: scaling-test\n"
                          "strategies: [ddp]\nscalability_nodes: [1, 2]\nreport: false\n");
  const std::string report_args = " report --root " + metrics.path() + " --experiment cnn --no-plots --format csv";
  testing::CliRun first = testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm -c a.yaml");
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;  // jobs 100 (1 node) and 101 (2 nodes)
  // Their runs, as the jobs would have recorded them; the 2-node run failed half-way.
  testing::make_run(metrics, "cnn", "ddp-n1-r1-slurm100", "ddp-n1-r1-slurm100", "ddp", 1, {{50, 50, 50}});
  testing::make_run(metrics, "cnn", "ddp-n2-r1-slurm101", "ddp-n2-r1-slurm101", "ddp", 2, {{90, 90}, {90, 90}}, 2);
  // Resubmitted with --force: the same scripts, jobs 102 and 103.
  testing::CliRun again = testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm -c a.yaml");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("--force replaces the earlier submission"), std::string::npos) << again.err;
  testing::CliRun forced = testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm -c a.yaml --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.err << forced.out;
  EXPECT_NE(forced.err.find("superseded the earlier submission of experiment cnn: job(s) 100, 101"), std::string::npos)
      << forced.err;
  testing::make_run(metrics, "cnn", "ddp-n1-r1-slurm102", "ddp-n1-r1-slurm102", "ddp", 1, {{40, 40, 40}});
  testing::make_run(metrics, "cnn", "ddp-n2-r1-slurm103", "ddp-n2-r1-slurm103", "ddp", 2, {{20, 20}, {20, 20}}, 2);
  EXPECT_EQ(testing::slurp(metrics / "cnn/superseded-jobs.txt"), "100\n101\n");
  const std::string record = testing::slurp(dir / "slurm-scripts/submitted.jsonl");
  EXPECT_EQ(std::count(record.begin(), record.end(), '\n'), 4);
  EXPECT_EQ(lines_of(record)[0].find("\"job_id\": \"100\"") != std::string::npos &&
                lines_of(record)[0].find("\"superseded\": true") != std::string::npos,
            true)
      << record;
  EXPECT_EQ(lines_of(record)[2].find("superseded"), std::string::npos) << record;

  testing::CliRun report = testing::run_shell(env + SCALEPROF_CLI_PATH + report_args);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.err.find("left out 2 run(s) of SLURM jobs that a later 'scaleprof slurm --force' superseded "
                            "(superseded-jobs.txt lists them): ddp-n1-r1-slurm100, ddp-n2-r1-slurm101"),
            std::string::npos)
      << report.err;
  EXPECT_EQ(report.out.find("slurm100"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("slurm101"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("slurm103"), std::string::npos) << report.out;
  testing::CliRun all = testing::run_shell(env + SCALEPROF_CLI_PATH + report_args + " --include-superseded");
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("slurm101"), std::string::npos) << all.out;
  EXPECT_EQ(all.err.find("left out"), std::string::npos) << all.err;

  // --append: repetitions numbered after the recorded ones, nothing superseded.
  testing::CliRun appended = testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm -c a.yaml --append");
  ASSERT_EQ(appended.exit_code, 0) << appended.err << appended.out;
  EXPECT_NE(appended.out.find("submitted job 104: ddp on 1 node(s), repetition 2"), std::string::npos) << appended.out;
  EXPECT_TRUE(fs::exists(dir / "slurm-scripts/ddp-n2-r2.sh"));
  EXPECT_TRUE(fs::exists(dir / "slurm-scripts/ddp-n2-r1.sh"));
  EXPECT_EQ(testing::slurp(metrics / "cnn/superseded-jobs.txt"), "100\n101\n");
}

TEST(Resubmission, ForceRemovesTheEarlierScriptsTheNewSetDoesNotReplace) {
  ScratchDir dir("itwinai-force-scripts");
  const std::string env = fake_sbatch(dir);
  dir.write("a.yaml",
            "experiment: cnn\ntraining_cmd: python t.py\nmode: scaling-test\nstrategies: [ddp]\n"
            "report: false\n");
  ASSERT_EQ(testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm -c a.yaml --scalability_nodes 1,2,4").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir / "slurm-scripts/ddp-n4-r1.sh"));
  testing::CliRun forced =
      testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm -c a.yaml --scalability_nodes 1,2 --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_FALSE(fs::exists(dir / "slurm-scripts/ddp-n4-r1.sh"));
  EXPECT_TRUE(fs::exists(dir / "slurm-scripts/ddp-n2-r1.sh"));
  EXPECT_NE(forced.err.find("1 script(s) of it removed"), std::string::npos) << forced.err;
  EXPECT_EQ(testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm -c a.yaml --force --append").exit_code, 2);
}

}  // namespace
}  // namespace scaleprof::launch
