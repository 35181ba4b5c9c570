// `scaleprof slurm` as a command: scripts saved, never overwritten without --force, previewed,
// written whole or not at all; its bounded, sanitised output; huge records and out of memory.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "config/config.h"
#include "launch/launch_config.h"
#include "launch/slurm_script.h"
#include "test_paths.h"

namespace scaleprof::launch {
namespace {

namespace fs = std::filesystem;

// --- the command: save / print / --force (nothing is submitted) -----------------------------------

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CliResult run_cli(const std::string& dir, const std::string& args) {
  const std::string cmd = "cd " + dir + " && " + SCALEPROF_CLI_PATH + " slurm " + args + " 2>&1";
  CliResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[512];
  while (p != nullptr && std::fgets(buf, sizeof(buf), p) != nullptr) r.output += buf;
  const int status = p != nullptr ? ::pclose(p) : -1;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(SlurmCommand, SavesNeverOverwritesWithoutForceAndPreviews) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-slurm-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "a.yaml") << "experiment: cnn\ntraining_cmd: python train.py\nstrategies: [ddp, horovod]\n";
  const std::string args = "-c a.yaml --mode runall --gpus-per-node 2 ";

  // Both flags: the scripts on stdout, nothing written.
  CliResult preview = run_cli(dir.string(), args + "--no-submit-job --no-save-script");
  EXPECT_EQ(preview.exit_code, 0) << preview.output;
  EXPECT_NE(preview.output.find("#################### ddp-n1-r1.sh ####################\n#!/bin/bash\n"),
            std::string::npos);
  EXPECT_NE(preview.output.find("#################### horovod-n1-r1.sh"), std::string::npos);
  EXPECT_NE(preview.output.find("#################### report.sh"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "slurm-scripts"));

  CliResult saved = run_cli(dir.string(), args + "--no-submit-job");
  EXPECT_EQ(saved.exit_code, 0) << saved.output;
  EXPECT_TRUE(fs::exists(dir / "slurm-scripts" / "ddp-n1-r1.sh"));
  EXPECT_TRUE(fs::exists(dir / "slurm-scripts" / "horovod-n1-r1.sh"));
  EXPECT_TRUE(fs::exists(dir / "slurm-scripts" / "report.sh"));
  EXPECT_FALSE(fs::exists(dir / "slurm-scripts" / "submitted.jsonl"));

  std::ofstream(dir / "slurm-scripts" / "ddp-n1-r1.sh") << "# edited by hand\n";
  CliResult refused = run_cli(dir.string(), args + "--no-submit-job --num_nodes 1");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.output,
            "error: slurm-scripts/ddp-n1-r1.sh exists already; --force replaces the earlier submission, --append adds "
            "repetitions to it\n");
  std::ifstream edited(dir / "slurm-scripts" / "ddp-n1-r1.sh");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(edited)), std::istreambuf_iterator<char>()),
            "# edited by hand\n");

  CliResult forced = run_cli(dir.string(), args + "--no-submit-job --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  std::ifstream regenerated(dir / "slurm-scripts" / "ddp-n1-r1.sh");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(regenerated)), std::istreambuf_iterator<char>())
                .rfind("#!/bin/bash\n", 0),
            0u);

  CliResult bad = run_cli(dir.string(), "-c a.yaml --num-node 2 --no-submit-job");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.output, "error: unknown option '--num_node' (did you mean '--num_nodes'?)\n");
  CliResult provenance = run_cli(dir.string(), "-c a.yaml --num-nodes 3 --print-config");
  EXPECT_EQ(provenance.exit_code, 0);
  EXPECT_NE(provenance.output.find("\nnum_nodes: 3 "), std::string::npos) << provenance.output;
  EXPECT_NE(provenance.output.find("# --num_nodes\n"), std::string::npos);
  EXPECT_NE(provenance.output.find("experiment: cnn"), std::string::npos);
  EXPECT_NE(provenance.output.find("# a.yaml:1\n"), std::string::npos);
  fs::remove_all(dir);
}

// Issue 18: a dangling symlink at a later script path left a half-written set. Every path is now
// checked (lstat) before the first write, and the set is written whole or not at all.
TEST(SlurmCommand, ScriptSetIsWrittenWholeOrNotAtAll) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-slurm-atomic-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "slurm-scripts");
  std::ofstream(dir / "a.yaml") << "experiment: cnn\ntraining_cmd: python train.py\nstrategies: [ddp, horovod]\n";
  fs::create_symlink(dir / "elsewhere" / "planted.sh", dir / "slurm-scripts" / "report.sh");  // dangling
  for (const std::string force : {"", "--force "}) {
    CliResult r = run_cli(dir.string(), "-c a.yaml --mode runall --no-submit-job " + force);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(r.output, "error: slurm-scripts/report.sh is a symbolic link; not replaced (remove it first)\n");
    EXPECT_FALSE(fs::exists(dir / "slurm-scripts" / "ddp-n1-r1.sh")) << force;
    EXPECT_FALSE(fs::exists(dir / "slurm-scripts" / "horovod-n1-r1.sh")) << force;
    EXPECT_FALSE(fs::exists(dir / "elsewhere"));
    EXPECT_TRUE(fs::is_symlink(dir / "slurm-scripts" / "report.sh"));
  }
  // A folder where a script goes is refused too, before anything is written.
  fs::remove(dir / "slurm-scripts" / "report.sh");
  fs::create_directories(dir / "slurm-scripts" / "horovod-n1-r1.sh");
  CliResult folder = run_cli(dir.string(), "-c a.yaml --mode runall --no-submit-job --force");
  EXPECT_EQ(folder.output, "error: slurm-scripts/horovod-n1-r1.sh exists and is not a regular file\n");
  EXPECT_FALSE(fs::exists(dir / "slurm-scripts" / "ddp-n1-r1.sh"));
  fs::remove(dir / "slurm-scripts" / "horovod-n1-r1.sh");
  CliResult ok = run_cli(dir.string(), "-c a.yaml --mode runall --no-submit-job");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "slurm-scripts")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"ddp-n1-r1.sh", "horovod-n1-r1.sh", "report.sh"}));  // no staging left
  fs::remove_all(dir);
}

// Issue 18: --print-config padded every line to the longest value (a 5 MB value gave 175 MB), and
// printed sources raw.
TEST(SlurmCommand, PrintConfigIsBoundedAndSanitised) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-slurm-print-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string name = "a\xE2\x80\xAE\xC2\x9B.yaml";  // U+202E and the C1 CSI in the file name
  std::ofstream(dir / name) << "training_cmd: python train.py --tag " << std::string(60'000, 'x') << "\n";
  CliResult r = run_cli(dir.string(), "-c '" + name + "' --print-config");
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(0, 300);
  EXPECT_LT(r.output.size(), 60'000u + 6'000u);  // the long value once, no padding to its width
  EXPECT_NE(r.output.find("\nnum_nodes: 1                                 # default\n"), std::string::npos)
      << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("# a\\u202e\\u009b.yaml:1; shell code: each task's shell expands it, {placeholders} "
                          "filled per job\n"),
            std::string::npos);
  EXPECT_EQ(r.output.find("\xE2\x80\xAE"), std::string::npos);
  EXPECT_EQ(r.output.find("\xC2\x9B"), std::string::npos);
  // A bidi override in a value is refused before any script is generated.
  CliResult bidi = run_cli(dir.string(), "--training_cmd 'python t\xE2\x80\xAEyp.x' --no-submit-job --no-save-script");
  EXPECT_EQ(bidi.exit_code, 2);
  EXPECT_EQ(bidi.output,
            "error: --training_cmd: the bidirectional control U+202E at character 9 is not allowed (values end up "
            "in scripts and file names)\n");
  fs::remove_all(dir);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SCALEPROF_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SCALEPROF_TEST_SANITIZED 1
#endif

CliResult run_shell(const std::string& cmd) {
  CliResult r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  char buf[512];
  while (p != nullptr && std::fgets(buf, sizeof(buf), p) != nullptr) r.output += buf;
  const int status = p != nullptr ? ::pclose(p) : -1;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Issue 18: std::bad_alloc never named the input. Out of memory now ends in one line saying what
// the command was reading. (A gigabyte line used to be lost silently: getline's bad_alloc only set
// the stream's badbit, and status printed an empty table with exit code 0.)
TEST(SlurmCommand, HugeRecordsAreSkippedAndOutOfMemoryNamesTheInput) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-slurm-oom-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "s");
  {
    // A sparse gigabyte without a line break: skipped, never held.
    std::ofstream f(dir / "s" / "submitted.jsonl");
    f.seekp((std::streamoff{1} << 30) - 1);
    f.put('x');
  }
#ifdef SCALEPROF_TEST_SANITIZED
  const std::string limit;  // a sanitizer reserves terabytes of address space: no ulimit -v there
#else
  const std::string limit = " && ulimit -v 2000000";
#endif
  CliResult huge = run_shell("cd " + dir.string() + limit + " && " + SCALEPROF_CLI_PATH +
                             " slurm status --script-dir s --format csv");
  EXPECT_EQ(huge.exit_code, 0) << huge.output;
  EXPECT_NE(huge.output.find("warning: s/submitted.jsonl:1: longer than 65536 bytes; line skipped\n"),
            std::string::npos)
      << huge.output;
#ifdef SCALEPROF_TEST_SANITIZED
  GTEST_SKIP() << "address-space limits do not apply under a sanitizer";
#else
  {
    // Three million tiny records: past the 200,000 jobs and array tasks the reader takes (issue 30),
    // refused in one line naming the file and line, before any of them could fill the memory limit.
    std::ofstream f(dir / "s" / "submitted.jsonl", std::ios::trunc);
    const std::string record = "{\"job_id\": \"1\"}\n";
    std::string block;
    for (int i = 0; i < 10'000; ++i) block += record;
    for (int i = 0; i < 300; ++i) f << block;
  }
  CliResult oom = run_shell("cd " + dir.string() + " && ulimit -v 600000 && " + SCALEPROF_CLI_PATH +
                            " slurm status --script-dir s");
  EXPECT_EQ(oom.exit_code, 1) << oom.output;
  EXPECT_EQ(oom.output,
            "error: s/submitted.jsonl:200001: more than 200000 jobs and array tasks recorded; not read (move old "
            "records away) (nothing was submitted from this script folder?)\n");
#endif
  fs::remove_all(dir);
}

}  // namespace
}  // namespace scaleprof::launch
