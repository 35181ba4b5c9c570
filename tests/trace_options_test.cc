// `scaleprof trace` options that were accepted and then ignored (issue 30, item 6): a value given is a
// value used or a one-line usage error, never silently the default.
#include <gtest/gtest.h>

#include <string>

#include "cli_harness.h"
#include "scalability_fixtures.h"

namespace scaleprof {
namespace {

using testing::run_cli;

constexpr const char* kTrace = R"({"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":20,"dur":30,"args":{"device":0,"stream":7}}
]})";

// --peak-tflops 0 was accepted and then ignored (0 is how "not given" was stored): MFU came from the
// device table as if the option were absent. Zero, negative and huge peaks are refused.
TEST(TraceOptions, PeakTflopsAtOrBelowZeroIsRefused) {
  testing::ScratchDir dir("trace-options");
  const std::string trace = dir.write("t.json", kTrace);
  for (const char* bad : {"0", "-1", "1e10"}) {
    SCOPED_TRACE(bad);
    const auto run = run_cli(std::string("trace flops --peak-tflops ") + bad + " " + trace, "", 60);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find("--peak-tflops must be a number of TFLOP/s above 0 and at most 1e9"), std::string::npos)
        << run.err;
  }
  const auto good = run_cli("trace flops --format json --peak-tflops 2 " + trace, "", 60);
  EXPECT_EQ(good.exit_code, 0) << good.err;
  // A peak that is given is the peak used.
  const auto summary = run_cli("trace summary --format json --peak-tflops 0 " + trace, "", 60);
  EXPECT_EQ(summary.exit_code, 2) << summary.err;
}

}  // namespace
}  // namespace scaleprof
