// `scaleprof trace` output a person can read: names fit the terminal, titles say what is true,
// `--rank FILE=N` takes one value. Real traces from ../shared where they matter.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_harness.h"
#include "report/name_shorten.h"
#include "scratch_dir.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

using scaleprof::testing::CliRun;

// `env` is prepended to the command line (e.g. "COLUMNS=100").
CliRun run(const std::string& args, const std::string& env = "") {
  return scaleprof::testing::run_cli(args, env);
}

size_t widest_line(const std::string& text) {
  size_t widest = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    widest = std::max(widest, scaleprof::report::display_width(std::string_view(text).substr(start, end - start)));
    start = end + 1;
  }
  return widest;
}

std::string shared_trace(const std::string& relative) {
  const fs::path p = fs::path(SCALEPROF_SHARED_DIR) / "traces/hta" / relative;
  return fs::exists(p) ? p.string() : "";
}

// One op launching one kernel; `comm` names it like an NCCL kernel.
std::string tiny_trace(const std::string& kernel) {
  return R"({"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"External id":1,"correlation":5}},
{"ph":"X","cat":"kernel","name":")" +
         kernel + R"(","pid":0,"tid":7,"ts":20,"dur":30,"args":{"External id":1,"stream":7,"correlation":5}}
]})";
}

using TempDir = ::scaleprof::testing::ScratchDir;

TEST(TraceOutput, OperatorNamesFitTheTerminalAndStayWholeElsewhere) {
  const std::string trace = shared_trace("trace_filter/sampled_rank-0.json.gz");
  if (trace.empty()) GTEST_SKIP() << "../shared/traces/hta not available";
  // Before: lines of 2,129 characters. A wide terminal: every line fits.
  const CliRun wide = run("trace ops --sort self_device --top 20 " + trace, "COLUMNS=300");
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_LE(widest_line(wide.out), 300u) << wide.out;
  EXPECT_GT(widest_line(wide.out), 290u) << wide.out;                           // names use the room there is
  EXPECT_NE(wide.out.find("2ul, 32>(\u2026)"), std::string::npos) << wide.out;  // templates fit, arguments not
  // A narrow one: the other 13 columns of this table need 173 columns; names keep 40.
  const CliRun narrow = run("trace ops --sort self_device --top 20 " + trace, "COLUMNS=100");
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  EXPECT_LE(widest_line(narrow.out), 213u) << narrow.out;
  EXPECT_NE(narrow.out.find("void cutlass::Kernel<\u2026>(\u2026)"), std::string::npos) << narrow.out;

  const CliRun full = run("trace ops --sort self_device --top 20 --full-names " + trace, "COLUMNS=100");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_GT(widest_line(full.out), 1000u);
  EXPECT_EQ(full.out.find("\u2026"), std::string::npos);
  const CliRun csv = run("trace ops --sort self_device --top 20 --format csv " + trace, "COLUMNS=100");
  EXPECT_GT(widest_line(csv.out), 1000u);
  EXPECT_EQ(csv.out.find("\u2026"), std::string::npos);

  // Not a terminal and no COLUMNS: 120. The launch-delay table's names take the room there is; its
  // summary table, all numbers (125 columns on one line), wraps its headers and fits too.
  const CliRun piped = run("trace launch " + trace, "env -u COLUMNS");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  const size_t delays = piped.out.find("Longest launch delays");
  ASSERT_NE(delays, std::string::npos);
  EXPECT_EQ(widest_line(piped.out.substr(delays)), 120u) << piped.out;
  EXPECT_LE(widest_line(piped.out), 120u) << piped.out;
  EXPECT_NE(piped.out.find("elementwise_kernel<\u2026>(\u2026)"), std::string::npos) << piped.out;
  const CliRun kernels = run("trace kernels " + trace, "env -u COLUMNS");
  EXPECT_LE(widest_line(kernels.out), 152u) << kernels.out;
  EXPECT_NE(kernels.out.find("void at::native::"), std::string::npos) << kernels.out;
}

TEST(TraceOutput, SummaryOfBothRanksFitsTheTerminal) {
  const std::string r0 = shared_trace("trace_filter/sampled_rank-0.json.gz");
  const std::string r1 = shared_trace("trace_filter/sampled_rank-1.json.gz");
  if (r0.empty() || r1.empty()) GTEST_SKIP() << "../shared/traces/hta not available";
  // Before: rows of several thousand characters.
  const CliRun r = run("trace summary " + r0 + " " + r1, "COLUMNS=160");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LE(widest_line(r.out), 205u);
  const CliRun full = run("trace summary --full-names " + r0 + " " + r1, "COLUMNS=160");
  EXPECT_GT(widest_line(full.out), 1000u);
}

TEST(TraceOutput, OverlapTitleExplainsEmptyCellsOnlyWhenThereAreSome) {
  const std::string nccl = shared_trace("nccl_parser_config/nccl_data.json.gz");
  if (nccl.empty()) GTEST_SKIP() << "../shared/traces/hta not available";
  const CliRun with_comm = run("trace overlap " + nccl);
  ASSERT_EQ(with_comm.exit_code, 0) << with_comm.err;
  EXPECT_NE(with_comm.out.find("Communication hidden under computation"), std::string::npos);
  EXPECT_EQ(with_comm.out.find("empty: no communication kernels"), std::string::npos) << with_comm.out;

  TempDir dir;
  const CliRun without = run("trace overlap " + dir.write("compute.json", tiny_trace("sgemm")));
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(without.out.find("(empty: no communication kernels)"), std::string::npos) << without.out;
}

TEST(TraceOutput, RankOptionTakesExactlyOneValue) {
  TempDir dir;
  const std::string a = dir.write("a.json", tiny_trace("sgemm"));
  const std::string b = dir.write("b.json", tiny_trace("ncclDevKernel_AllReduce"));
  // Before: `--rank a.json=3` swallowed b.json as a second FILE=N and failed.
  const CliRun r = run("trace overlap --format csv " + a + " --rank " + a + "=3 " + b);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Both files read: rank 3 (a.json) and b.json numbered in file order, plus the pooled row.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
  EXPECT_NE(r.out.find("\n3,"), std::string::npos) << r.out;
}

}  // namespace
