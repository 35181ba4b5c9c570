// itwinai's SLURM configurations in `scaleprof slurm` (launch/itwinai_keys.h): every key itwinai
// 0.4.2's builder reads mapped or refused with what to write, its placeholders and OmegaConf
// interpolations filled or named before anything is written, multi-line values; and the
// resubmission rules (--force supersedes, --append adds repetitions) with the report leaving the
// superseded runs out.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "config/config.h"
#include "launch/itwinai_keys.h"
#include "launch/launch_config.h"
#include "launch/slurm_script.h"
#include "scalability_fixtures.h"

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

TEST(ItwinaiConfig, TutorialStyleConfigListsEveryChangeAtOnce) {
  auto l = launch_from(kTutorialStyle);
  ASSERT_FALSE(l);
  const std::vector<std::string> lines = lines_of(l.error().message);
  ASSERT_EQ(lines.size(), 13u) << l.error().message;
  EXPECT_EQ(lines[0], "12 things to change in the configuration:");
  // The keys, in the order the builder's fields are checked; each says what to write instead.
  EXPECT_EQ(lines[1],
            "  - it.yaml:16: itwinai's 'config_name: config' is part of its training command; scaleprof has only "
            "training_cmd: write '--config-name=config' there and remove config_name");
  EXPECT_EQ(lines[2],
            "  - it.yaml:17: itwinai's 'config_path: .' is part of its training command; scaleprof has only "
            "training_cmd: write '--config-path=.' there and remove config_path");
  EXPECT_EQ(lines[3],
            "  - it.yaml:15: itwinai's 'pipe_key: training_pipeline' is part of its training command; scaleprof has "
            "only training_cmd: write '+pipe_key=training_pipeline' there and remove pipe_key");
  // ${distributed_strategy} in std_out would name one strategy for every job of the scaling test.
  EXPECT_EQ(lines[4].rfind("  - it.yaml:10: std_out: '${distributed_strategy}' is this file's dist_strategy (ddp), "
                           "the same for every job of mode scaling-test; in std_out and std_err write %x",
                           0),
            0u)
      << lines[4];
  EXPECT_NE(lines[5].find("std_out: '${num_nodes}'"), std::string::npos) << lines[5];
  EXPECT_NE(lines[6].find("std_err: '${distributed_strategy}'"), std::string::npos) << lines[6];
  EXPECT_NE(lines[7].find("std_err: '${num_nodes}'"), std::string::npos) << lines[7];
  // Placeholders of itwinai-only keys: named, with their values.
  EXPECT_EQ(lines[8],
            "  - it.yaml:18: training_cmd: itwinai's placeholder {config_name} (config_name's value: config) has no "
            "scaleprof field; write the value in its place");
  EXPECT_NE(lines[9].find("{config_path} (config_path's value: .)"), std::string::npos) << lines[9];
  EXPECT_NE(lines[10].find("{pipe_key} (pipe_key's value: training_pipeline)"), std::string::npos) << lines[10];
  // The whole command with those values, ready to paste; then $(which itwinai), which no shell expands.
  EXPECT_EQ(lines[11],
            "  - training_cmd with itwinai's values written in: \"$(which itwinai) exec-pipeline --config-name=config "
            "--config-path=. strategy={strategy} +pipe_key=training_pipeline\"");
  EXPECT_EQ(lines[12],
            "  - it.yaml:18: training_cmd: '$(which itwinai)' would reach the command as that literal text (every "
            "word of the script is quoted and no shell expands it); write 'itwinai' (found on the job's PATH, or "
            "/work/.venv/bin/itwinai)");
}

TEST(ItwinaiConfig, FollowingTheAdviceGivesScriptsWithoutLiteralPlaceholders) {
  // The tutorial-style file after its changes: itwinai-only keys gone, values written into training_cmd.
  auto l = launch_from(R"(mode: scaling-test
distributed_strategy: ddp
strategies: [ddp, deepspeed]
account: intertwin
num_tasks_per_node: 1
gpus_per_node: 4
std_out: slurm_job_logs/%x-%j.out
python_venv: /p/venv
scalability_nodes: "1, 2"
training_cmd: |
  {itwinai_launcher} exec-pipeline \
  --config-name=config \
  --strategy={distributed_strategy} --run-name={run_name} \
  +pipe_key=training_pipeline
)");
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(
      l.value().training_cmd,
      (std::vector<std::string>{"/p/venv/bin/itwinai", "exec-pipeline", "--config-name=config", "--strategy={strategy}",
                                "--run-name={strategy}-n{num_nodes}-r{repetition}", "+pipe_key=training_pipeline"}));
  const std::vector<JobPlan> jobs = plan_jobs(l.value());
  ASSERT_EQ(jobs.size(), 4u);
  const std::string script = render_job_script(l.value(), jobs[3]);  // deepspeed on 2 nodes
  // (inside srun's bash -c '...': the quoted word's quotes are escaped once more)
  EXPECT_NE(script.find("/p/venv/bin/itwinai exec-pipeline --config-name=config --strategy=deepspeed "
                        "--run-name=deepspeed-n2-r1 '\\''+pipe_key=training_pipeline'\\''"),
            std::string::npos)
      << script;
  const size_t training = script.find("/p/venv/bin/itwinai exec-pipeline");
  ASSERT_NE(training, std::string::npos);
  const std::string line = script.substr(training, script.find('\n', training) - training);
  for (const char* literal : {"{", "}", "$("}) EXPECT_EQ(line.find(literal), std::string::npos) << literal << line;
}

TEST(ItwinaiConfig, SingleModeFillsInterpolationsFromTheFile) {
  auto l = launch_from(
      "distributed_strategy: horovod\nnum_nodes: 2\nstd_out: logs/${distributed_strategy}-${num_nodes}.out\n"
      "job_name: tut-${dist_strat}\nroot: ${itwinai.cwd:}/metrics\ntraining_cmd: python t.py -s ${dist_strat}\n");
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l.value().std_out, "logs/horovod-2.out");
  EXPECT_EQ(l.value().job_name, "tut-horovod");
  EXPECT_EQ(l.value().root, "/work/metrics");
  EXPECT_EQ(l.value().training_cmd, (std::vector<std::string>{"python", "t.py", "-s", "{strategy}"}));
  auto unknown = launch_from("training_cmd: python t.py --data ${data_dir}\n");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "it.yaml:1: training_cmd: '${data_dir}' is an OmegaConf interpolation of a key this configuration does "
            "not have (and the scripts never expand shell variables): write the value itself");
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
  EXPECT_EQ(mapped, 22);
  EXPECT_EQ(refused, 11);  // num_tasks(_per_node), exec_*, pre_exec_file, use_ray, config_*, pipe_key, py_spy, run_name
}

TEST(ItwinaiConfig, MultiLineValues) {
  config::Config c(launch_fields());
  auto l = launch_from(
      "training_cmd: python t.py\npre_exec_command: |\n  ml Stages/2025\n  # a comment\n\n  ml GCC \\\n    "
      "OpenMPI\n",
      &c);
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l.value().pre_exec,
            (std::vector<std::vector<std::string>>{{"ml", "Stages/2025"}, {"ml", "GCC", "OpenMPI"}}));
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

TEST(ItwinaiConfig, ShellExpansionsAreNamedNotPassedLiterally) {
  EXPECT_EQ(shell_expansion_in("$(which itwinai) exec"), "$(which itwinai)");
  EXPECT_EQ(shell_expansion_in("python t.py --seed \"$SLURM_PROCID\""), "$SLURM_PROCID");
  EXPECT_EQ(shell_expansion_in("a `date` b"), "`date`");
  EXPECT_EQ(shell_expansion_in("a ${HOME}/x"), "${HOME}");
  EXPECT_EQ(shell_expansion_in("a '$(x)' \\$HOME b$ $1"), "");
  auto which = launch_from("python_venv: /v\ntraining_cmd: $(which itwinai) exec-pipeline\n");
  ASSERT_FALSE(which);
  EXPECT_EQ(which.error().message,
            "it.yaml:2: training_cmd: '$(which itwinai)' would reach the command as that literal text (every word of "
            "the script is quoted and no shell expands it); write 'itwinai' (found on the job's PATH, or "
            "/v/bin/itwinai)");
  auto pre = launch_from("training_cmd: t\npre_exec: [\"source $HOME/env.sh\"]\n");
  ASSERT_FALSE(pre);
  EXPECT_NE(pre.error().message.find("pre_exec: '$HOME' would reach the command as that literal text"),
            std::string::npos)
      << pre.error().message;
}

TEST(ItwinaiConfig, PrintConfigHidesItwinaiKeys) {
  ScratchDir dir("itwinai-print");
  dir.write("a.yaml", "training_cmd: t\nnum_tasks_per_node: 1\n");
  const testing::CliRun r = testing::run_cli("slurm -c " + dir / "a.yaml" + " --print-config");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("num_tasks_per_node"), std::string::npos);
  EXPECT_NE(r.out.find("training_cmd: t"), std::string::npos);
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
