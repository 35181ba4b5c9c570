// The scaleprof binary as a user runs it: help, formats, exit codes, errors on stderr.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_harness.h"
#include "scratch_dir.h"

namespace {

namespace fs = std::filesystem;

using scaleprof::testing::CliRun;

CliRun run(const std::string& args) {
  return scaleprof::testing::run_cli(args);
}

using TempDir = ::scaleprof::testing::ScratchDir;

// Two kernels on one stream with a gap, launched from one op: enough for every analysis.
std::string tiny_trace(int rank) {
  return "{\"distributedInfo\":{\"rank\":" + std::to_string(rank) + ",\"world_size\":2},\"traceEvents\":[\n" +
         R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"External id":1,"correlation":5}},
{"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":20,"dur":30,"args":{"External id":1,"stream":7,"correlation":5,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":60,"dur":5,"args":{"External id":1,"correlation":6}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":7,"ts":70,"dur":20,"args":{"External id":1,"stream":7,"correlation":6,"device":0}}
]})";
}

TEST(Cli, HelpOnEveryCommand) {
  for (const char* cmd : {"", "trace", "trace summary", "trace breakdown", "trace kernels", "trace idle",
                          "trace overlap", "trace launch", "trace ops", "trace steps"}) {
    CliRun r = run(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << cmd;
  }
  CliRun v = run("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("scaleprof "), std::string::npos);
}

TEST(Cli, UsageErrorsExitWithTwo) {
  TempDir dir;
  std::string t = dir.write("rank0.json", tiny_trace(0));
  EXPECT_EQ(run("").exit_code, 2);
  EXPECT_EQ(run("trace").exit_code, 2);
  EXPECT_EQ(run("trace breakdown").exit_code, 2);
  EXPECT_EQ(run("trace nosuch " + t).exit_code, 2);
  CliRun bad_format = run("trace breakdown --format xml " + t);
  EXPECT_EQ(bad_format.exit_code, 2);
  EXPECT_NE(bad_format.err.find("--format"), std::string::npos);
  CliRun bad_ranks = run("trace breakdown --ranks 1-x " + t);
  EXPECT_EQ(bad_ranks.exit_code, 2);
  EXPECT_NE(bad_ranks.err.find("--ranks"), std::string::npos);
  CliRun absent_rank = run("trace breakdown --ranks 7 " + t);
  EXPECT_EQ(absent_rank.exit_code, 2);
  EXPECT_EQ(run("trace breakdown --rank nonsense " + t).exit_code, 2);
}

TEST(Cli, MissingInputExitsWithOneAndNamesIt) {
  CliRun r = run("trace breakdown /nonexistent/trace.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/trace.json"), std::string::npos);
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, AllInputsBadExitsWithOne) {
  TempDir dir;
  dir.write("rank0.json", "{\"traceEvents\": [");
  CliRun r = run("trace breakdown " + dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("rank0.json:"), std::string::npos);
}

TEST(Cli, OneBadRankGivesPartialResultAndExitThree) {
  TempDir dir;
  dir.write("rank0.json", tiny_trace(0));
  dir.write("rank1.json", tiny_trace(1).substr(0, 150));
  CliRun r = run("trace breakdown --format json " + dir.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("rank1.json:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("partial"), std::string::npos) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::array rows;
  ASSERT_EQ(doc.get_array().get(rows), simdjson::SUCCESS);
  ASSERT_EQ(rows.size(), 1u);
  int64_t rank = -1;
  ASSERT_EQ(rows.at(0)["rank"].get_int64().get(rank), simdjson::SUCCESS);
  EXPECT_EQ(rank, 0);
}

TEST(Cli, OutputFileAndFormats) {
  TempDir dir;
  std::string t = dir.write("rank0.json", tiny_trace(0));
  std::string out = dir.path() + "/out.csv";
  CliRun r = run("trace overlap --format csv -o " + out + " " + t);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  std::ifstream in(out);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find("comm_comp_overlap_pct"), std::string::npos) << header;
  CliRun unwritable = run("trace overlap -o /nonexistent-dir/x.csv " + t);
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("/nonexistent-dir/x.csv"), std::string::npos);
  // Piped output has no colour codes.
  CliRun table = run("trace summary " + t);
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.find("\x1b["), std::string::npos);
  CliRun json = run("trace summary --format json " + t);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
}

TEST(Cli, SummaryOnlyRunsTheNamedAnalyses) {
  TempDir dir;
  std::string t = dir.write("rank0.json", tiny_trace(0));
  CliRun r = run("trace summary --only breakdown,overlap --format json " + t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::object tables;
  ASSERT_EQ(doc.get_object().get(tables), simdjson::SUCCESS);
  std::vector<std::string> keys;
  for (auto field : tables) keys.emplace_back(field.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"inputs", "breakdown", "overlap"}));
  CliRun bad = run("trace summary --only breakdown,bogus " + t);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bogus"), std::string::npos);
}

}  // namespace
