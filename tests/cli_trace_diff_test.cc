// `scaleprof trace diff A B` as a user runs it: bad input named by side with the rest still reported,
// exit codes, and HTA's figures on the shared trace_compare pair.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <string>

#include "cli_harness.h"
#include "collect_test_util.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

using scaleprof::collect::testing::TempDir;
using scaleprof::testing::CliRun;
using scaleprof::testing::run_cli;

// A Kineto trace of `steps` ProfilerSteps of 1000 us (none with steps = 0), each launching one GEMM
// of `gemm_us` from aten::mm.
std::string trace_json(int rank, int steps, int gemm_us = 300) {
  std::string events;
  auto add = [&](const std::string& e) { events += (events.empty() ? "" : ",\n") + e; };
  const int count = steps > 0 ? steps : 3;
  for (int k = 0; k < count; ++k) {
    const int t = 1000 * k;
    const int corr = 100 + k;
    if (steps > 0) {
      add(fmt::format(
          R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{},"dur":1000}})", k, t));
    }
    add(fmt::format(
        R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{},"dur":100,"args":{{"External id":{}}}}})",
        t + 10, corr));
    add(fmt::format(
        R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":10,"args":{{"correlation":{},"External id":{}}}}})",
        t + 20, corr, corr));
    add(fmt::format(
        R"({{"ph":"X","cat":"kernel","name":"sm80_gemm","pid":0,"tid":7,"ts":{},"dur":{},"args":{{"correlation":{},"External id":{},"stream":7,"device":0}}}})",
        t + 40, gemm_us, corr, corr));
  }
  return fmt::format(R"({{"distributedInfo":{{"rank":{}}},"traceEvents":[{}]}})", rank, events);
}

TEST(TraceDiffCli, SideWithoutProfilerStepsIsNamedAndTheRestReported) {
  TempDir dir("diff-cli");
  const std::string a = dir.write("a/rank0.json", trace_json(0, 4));
  const std::string b = dir.write("b/rank0.json", trace_json(0, 0));
  const CliRun r = run_cli("trace diff " + a + " " + b + " --format csv");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("B: rank 0 (" + b + ") has no ProfilerStep#N annotations"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("A: rank"), std::string::npos) << r.err;
  // The kernels and operators are still compared.
  EXPECT_NE(r.out.find("sm80_gemm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("aten::mm"), std::string::npos) << r.out;
}

TEST(TraceDiffCli, DifferentRankCountsAreNamedAndTheRestReported) {
  TempDir dir("diff-cli");
  dir.write("a/rank0.json", trace_json(0, 4));
  dir.write("a/rank1.json", trace_json(1, 4));
  dir.write("b/rank0.json", trace_json(0, 4, 450));
  const CliRun r = run_cli("trace diff " + dir.file("a") + " " + dir.file("b") + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("A has 2 rank(s) (0,1), B has 1 (0); B lacks rank(s) 1"), std::string::npos) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::array kernels;
  ASSERT_EQ(doc["kernels"].get_array().get(kernels), simdjson::SUCCESS);
  simdjson::dom::element first = kernels.at(0);
  EXPECT_EQ(std::string_view(first["name"].get_string()), "sm80_gemm");
  EXPECT_EQ(std::string_view(first["launched_from"].get_string()), "aten::mm");
  EXPECT_DOUBLE_EQ(double(first["a_us"].get_double()), 300.0);
  EXPECT_DOUBLE_EQ(double(first["b_us"].get_double()), 450.0);
  EXPECT_EQ(std::string_view(first["significant"].get_string()), "yes");
}

TEST(TraceDiffCli, SamplesOptionNormalisesAndIsChecked) {
  TempDir dir("diff-cli");
  const std::string a = dir.write("a.json", trace_json(0, 4));
  const std::string b = dir.write("b.json", trace_json(0, 4, 600));
  const CliRun r = run_cli("trace diff " + a + " " + b + " --samples 32,64 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("basis": "per sample")"), std::string::npos) << r.out;
  // 300 us / 32 and 600 us / 64: the same GEMM time per sample.
  EXPECT_NE(r.out.find(R"("a_us": 9.375,)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("b_us": 9.375,)"), std::string::npos) << r.out;
  const CliRun bad = run_cli("trace diff " + a + " " + b + " --samples 32");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--samples expects A,B"), std::string::npos) << bad.err;
}

TEST(TraceDiffCli, MissingSideIsAnError) {
  TempDir dir("diff-cli");
  const std::string a = dir.write("a.json", trace_json(0, 4));
  const CliRun r = run_cli("trace diff " + a + " " + dir.file("nothing.json"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("side B: "), std::string::npos) << r.err;
}

// HTA's compare_traces on its own trace_compare pair (first rank, first iteration, ProfilerStep#1009,
// traceinsight 0.6.1): every name has one call on both sides; the kernel lasts 4 us, aten::empty
// 2 us, cudaEventQuery 10 us, cudaLaunchKernel 4 us. Those are leaves, so self time = HTA's
// inclusive time. tests/python/test_trace_diff.py computes the same with HTA itself.
TEST(TraceDiffCli, AgreesWithHtaOnTheSharedTraceComparePair) {
  const fs::path pair = fs::path(SCALEPROF_SHARED_DIR) / "traces" / "hta" / "trace_compare";
  if (!fs::is_directory(pair)) GTEST_SKIP() << "shared traces not found at " << pair;
  const CliRun r =
      run_cli("trace diff " + (pair / "base").string() + " " + (pair / "test").string() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  int kernels = 0;
  for (simdjson::dom::element k : doc["kernels"].get_array()) {
    ++kernels;
    EXPECT_EQ(std::string_view(k["match"].get_string()), "launch+name");
    EXPECT_DOUBLE_EQ(double(k["a_count"].get_double()), 1.0);
    EXPECT_DOUBLE_EQ(double(k["a_us"].get_double()), 4.0);
    EXPECT_DOUBLE_EQ(double(k["b_us"].get_double()), 4.0);
  }
  EXPECT_EQ(kernels, 1);
  const std::pair<const char*, double> leaves[] = {
      {"aten::empty", 2.0}, {"cudaEventQuery", 10.0}, {"cudaLaunchKernel", 4.0}, {"aten::as_strided", 0.0}};
  int found = 0;
  for (simdjson::dom::element op : doc["operators"].get_array()) {
    const std::string_view name = op["name"].get_string();
    EXPECT_DOUBLE_EQ(double(op["a_calls"].get_double()), 1.0) << name;
    EXPECT_DOUBLE_EQ(double(op["b_calls"].get_double()), 1.0) << name;
    EXPECT_EQ(std::string_view(op["significant"].get_string()), "no") << name;
    for (const auto& [leaf, us] : leaves) {
      if (name != leaf) continue;
      ++found;
      EXPECT_DOUBLE_EQ(double(op["a_us"].get_double()), us) << name;
      EXPECT_DOUBLE_EQ(double(op["b_us"].get_double()), us) << name;
    }
  }
  EXPECT_EQ(found, 4);
}

}  // namespace
