// The scalability report's FLOPs and MFU against workers (issue 23): the FLOPs of every traced rank's
// profiled steps from recorded shapes, the runs' sums, per GPU and for all workers, and MFU against
// the trace's device (analysis/device_peaks.h). Values known by construction.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <string>

#include "cli_harness.h"
#include "scalability_fixtures.h"

namespace {

using scaleprof::testing::ScratchDir;

// One rank: a ProfilerStep of `step_us` holding one bf16 4096^3 matrix product, on an H100 SXM.
std::string matmul_trace(int step_us, const std::string& device = "NVIDIA H100 80GB HBM3") {
  return fmt::format(
      R"({{"deviceProperties":[{{"id":0,"name":"{}"}}],"traceEvents":[)"
      R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":{},"args":{{}}}},)"
      R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50,)"
      R"("args":{{"Input Dims":[[4096,4096],[4096,4096]],"Input type":["c10::BFloat16","c10::BFloat16"]}}}}]}})",
      device, step_us);
}

constexpr double kFlops = 2.0 * 4096 * 4096 * 4096;  // FlopCounterMode's count of one such mm
constexpr double kBf16PeakFlops = 989.4e12;          // H100 SXM, dense bf16 (docs/flops.md's table)

TEST(ReportFlops, TflopsPerGpuAndMfuAgainstWorkers) {
  ScratchDir root("report-flops");
  using scaleprof::testing::make_run;
  make_run(root, "exp", "ddp-w1", "ddp-w1", "ddp", 1, {{10, 9, 9}});
  make_run(root, "exp", "ddp-w2", "ddp-w2", "ddp", 2, {{6, 5, 5}, {6, 5, 5}});
  make_run(root, "exp", "cpu-w1", "cpu-w1", "cpu", 1, {{10, 9, 9}});
  root.write("exp/ddp-w1/rank-00000/traces/r0.pt.trace.json", matmul_trace(100'000));
  // At 2 workers rank 1's step takes twice as long: the GPUs' rank-seconds are 0.3 s for 2 products.
  root.write("exp/ddp-w2/rank-00000/traces/r0.pt.trace.json", matmul_trace(100'000));
  root.write("exp/ddp-w2/rank-00001/traces/r1.pt.trace.json", matmul_trace(200'000));
  // A device without a peak in the table: TFLOP/s, and MFU null.
  root.write("exp/cpu-w1/rank-00000/traces/r0.pt.trace.json", matmul_trace(100'000, "Some CPU"));
  scaleprof::testing::CliRun r = scaleprof::testing::run_cli("report --no-plots --format json --root " + root.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::array rows;
  ASSERT_EQ(doc["flops"].get_array().get(rows), simdjson::SUCCESS) << r.out.substr(0, 2000);
  ASSERT_EQ(rows.size(), 3u);
  struct Want {
    std::string strategy;
    int64_t workers;
    double per_gpu;
    double mfu_pct;  // NaN: null
  };
  const Want want[] = {
      {"cpu", 1, kFlops / 0.1 / 1e12, NAN},
      {"ddp", 1, kFlops / 0.1 / 1e12, kFlops / kBf16PeakFlops / 0.1 * 100},
      {"ddp", 2, 2 * kFlops / 0.3 / 1e12, 2 * kFlops / kBf16PeakFlops / 0.3 * 100},
  };
  size_t i = 0;
  for (simdjson::dom::element row : rows) {
    const Want& w = want[i++];
    EXPECT_EQ(std::string(row["strategy"].get_string().value()), w.strategy);
    EXPECT_EQ(row["workers"].get_int64().value(), w.workers) << w.strategy;
    EXPECT_NEAR(row["tflops_per_gpu"].get_double().value(), w.per_gpu, 1e-9) << w.strategy << w.workers;
    EXPECT_NEAR(row["tflops_total"].get_double().value(), w.per_gpu * static_cast<double>(w.workers), 1e-9);
    if (std::isnan(w.mfu_pct)) {
      EXPECT_TRUE(row["mfu_pct"].is_null()) << w.strategy;
    } else {
      EXPECT_NEAR(row["mfu_pct"].get_double().value(), w.mfu_pct, 1e-9) << w.strategy << w.workers;
    }
  }
  // The console names the section.
  scaleprof::testing::CliRun text = scaleprof::testing::run_cli("report --no-plots --root " + root.path());
  EXPECT_NE(text.out.find("FLOPs and MFU per GPU"), std::string::npos) << text.out;
}

// Traces whose shapes count no FLOP (a gloo all-reduce's annotation only): no FLOPs section.
TEST(ReportFlops, NoCountedCallNoSection) {
  ScratchDir root("report-flops-none");
  scaleprof::testing::make_run(root, "exp", "gloo-w2", "gloo-w2", "gloo", 2, {{7, 6, 6}, {7, 6, 6}});
  root.write("exp/gloo-w2/rank-00000/traces/r0.pt.trace.json", scaleprof::testing::gloo_trace(0, 100, 300));
  root.write("exp/gloo-w2/rank-00001/traces/r1.pt.trace.json", scaleprof::testing::gloo_trace(1, 200, 200));
  scaleprof::testing::CliRun r = scaleprof::testing::run_cli("report --no-plots --format json --root " + root.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("\"flops\""), std::string::npos) << r.out.substr(0, 2000);
}

}  // namespace
