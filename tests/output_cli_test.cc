// Every command's output guarantees, checked through the real binary (docs/cli.md, "Output
// guarantees"): a full standard output fails the command, output files never replace devices or
// follow planted links, hostile names cannot drive the terminal, CSV cells cannot be formulas, and
// JSON output is valid UTF-8 whatever bytes the input held.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_harness.h"
#include "scalability_fixtures.h"

namespace {

namespace fs = std::filesystem;
using scaleprof::testing::ScratchDir;

using scaleprof::testing::CliRun;
using scaleprof::testing::slurp;

// Runs `scaleprof ARGS` through the shell (so ARGS may redirect stdout).
CliRun run_output_cli(const std::string& args) {
  return scaleprof::testing::run_cli(args);
}

void two_runs(const ScratchDir& root, const std::string& strategy = "ddp") {
  scaleprof::testing::make_run(root, "exp", "a", "a", strategy, 1, {{4, 2, 2}});
  scaleprof::testing::make_run(root, "exp", "b", "b", strategy, 2, {{3, 1, 1}, {3, 1, 1}});
}

TEST(OutputCli, FullStandardOutputFailsEveryCommand) {
  ScratchDir root("output-cli-full");
  two_runs(root);
  const std::string trace = root.write("t.json", scaleprof::testing::tiny_trace(0, 80, 10, 20));
  for (const std::string& args :
       {"report --no-plots --root " + root.path(), "report --no-plots --format json --root " + root.path(),
        "generate-scalability-report --no-warnings --format csv --log-dir " + root.path() + " --plot-dir " +
            (root / "plots"),
        "runs --root " + root.path(), "trace summary " + trace, "trace kernels --format csv " + trace,
        std::string("--help"), std::string("report --help")}) {
    CliRun r = run_output_cli(args + " >/dev/full");
    EXPECT_EQ(r.exit_code, 1) << args;
    // --help is written by CLI11 through std::cout in pieces: the reason can be gone by the end.
    const bool help = args.find("--help") != std::string::npos;
    EXPECT_NE(r.err.find(help ? "error: standard output: cannot write: "
                              : "error: standard output: cannot write: No space left on device\n"),
              std::string::npos)
        << args << "\n"
        << r.err;
    EXPECT_EQ(r.err.find("error:"), r.err.rfind("error:")) << args << ": one error line\n" << r.err;
  }
}

TEST(OutputCli, OutputFileGuarantees) {
  ScratchDir root("output-cli-files");
  two_runs(root);
  // -o /dev/null stays a device.
  CliRun null_run = run_output_cli("report --no-plots -o /dev/null --root " + root.path());
  EXPECT_EQ(null_run.exit_code, 0) << null_run.err;
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // -o /dev/stdout (a symlink to a pipe here) is written through, not resolved.
  CliRun via_link = run_output_cli("runs -o /dev/stdout --root " + root.path());
  EXPECT_EQ(via_link.exit_code, 0) << via_link.err;
  EXPECT_NE(via_link.out.find("Runs in " + root.path()), std::string::npos) << via_link.out;
  // A planted FILE.tmp symlink is never followed, for -o and --html alike.
  ScratchDir out("output-cli-planted");
  const std::string victim = out.write("victim", "precious\n");
  fs::create_symlink(victim, out / "report.txt.tmp");
  fs::create_symlink(victim, out / "report.html.tmp");
  CliRun r = run_output_cli("report --no-plots -o " + (out / "report.txt") + " --html " + (out / "report.html") +
                            " --root " + root.path() + " --plot-dir " + (out / "plots"));
  EXPECT_EQ(r.exit_code == 0 || r.exit_code == 3, true) << r.err;
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_NE(slurp(out / "report.txt").find("Epoch Time Report"), std::string::npos);
  EXPECT_NE(slurp(out / "report.html").find("<html"), std::string::npos);
  // A folder as -o: one clear error, exit 1.
  CliRun folder = run_output_cli("runs -o " + out.path() + " --root " + root.path());
  EXPECT_EQ(folder.exit_code, 1);
  EXPECT_EQ(folder.err, "error: " + out.path() + ": cannot write: is a folder\n");
}

TEST(OutputCli, HostileNamesCannotDriveTheTerminal) {
  ScratchDir root("output-cli-hostile");
  // JSON escapes in run.json decode to ESC, BEL, a line feed faking a second error line.
  two_runs(root, R"(\u001b]52;c;ZXZpbA==\u0007ddp\nerror: all fine\u001b[2J)");
  CliRun r = run_output_cli("report --no-plots --root " + root.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.out.find('\x07'), std::string::npos);
  EXPECT_EQ(r.out.find("\nerror: all fine"), std::string::npos);
  EXPECT_NE(r.out.find("\\u001b]52;c;ZXZpbA==\\u0007ddp\\nerror: all fine\\u001b[2J"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
  // Errors quoting a hostile file name stay one line, escapes visible.
  const std::string bad_dir = root / "exp/b/rank-00001";
  const std::string hostile = "\x1b[31mx\nerror: fake";
  fs::rename(bad_dir + "/epochs.csv", bad_dir + "/keep");
  fs::create_directories(root / ("exp/" + hostile));
  root.write("exp/" + hostile + "/run.json", "{broken");
  CliRun e = run_output_cli("report --no-plots --root " + root.path());
  EXPECT_EQ(e.err.find('\x1b'), std::string::npos) << e.err;
  EXPECT_EQ(e.err.find("\nerror: fake"), std::string::npos) << e.err;
}

TEST(OutputCli, CsvCellsCannotBeFormulasAndJsonIsValidUtf8) {
  // itwinai's layout: the strategy name comes straight from a CSV cell, bytes as they are.
  ScratchDir root("output-cli-itwinai");
  const std::string evil = "=cmd|' /C calc'!A0\xff\xfe";
  root.write("epoch-time/epochtime_x_1N.csv",
             "epoch_id,time,name,nodes\n0,10," + evil + ",1\n1,9," + evil + ",1\n2,9," + evil + ",1\n");
  root.write("epoch-time/epochtime_x_2N.csv",
             "epoch_id,time,name,nodes\n0,6," + evil + ",2\n1,5," + evil + ",2\n2,5," + evil + ",2\n");
  CliRun csv = run_output_cli("report --no-plots --no-warnings --format csv --root " + root.path());
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("\n'=cmd|' /C calc'!A0"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.find("\n=cmd"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.find(",=cmd"), std::string::npos) << csv.out;
  CliRun json = run_output_cli("report --no-plots --no-warnings --format json --root " + root.path());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(json.out).get(doc)) << json.out;
  simdjson::dom::element first = doc["epoch_time"].at(0);
  EXPECT_EQ(std::string_view(first["strategy"]), "=cmd|' /C calc'!A0\xEF\xBF\xBD\xEF\xBF\xBD");
  // The terminal table shows the bad bytes as \xff.
  CliRun table = run_output_cli("report --no-plots --no-warnings --root " + root.path());
  EXPECT_NE(table.out.find("=cmd|' /C calc'!A0\\xff\\xfe"), std::string::npos) << table.out;
}

}  // namespace
