// The report's "Straggler Causes" section lists only ranks that sampled a GPU, and is left out when
// none did: a CPU run's step-time jitter says nothing about a GPU clock.
#include <gtest/gtest.h>

#include "report/straggler_causes_report.h"

namespace scaleprof::report {
namespace {

analysis::StragglerCauseRow cause_row(int64_t rank, std::string gpu_source) {
  analysis::StragglerCauseRow row;
  row.series = "ddp";
  row.workers = 2;
  row.run = "ddp-w2";
  row.gpu_source = std::move(gpu_source);
  row.cause.rank = rank;
  row.cause.slow_steps = 3;
  return row;
}

TEST(StragglerCausesSection, OnlyRanksWithGpuSamplesAndNoneWithout) {
  ScalabilityAnalysis cpu_only;
  cpu_only.straggler_causes = {cause_row(0, ""), cause_row(1, "")};
  EXPECT_FALSE(straggler_causes_section(cpu_only).has_value());

  ScalabilityAnalysis mixed;
  mixed.straggler_causes = {cause_row(0, ""), cause_row(1, "rank-00001/gpu.csv gpu 0")};
  auto section = straggler_causes_section(mixed);
  ASSERT_TRUE(section.has_value());
  ASSERT_EQ(section->tables.size(), 1U);
  ASSERT_EQ(section->tables[0].rows.size(), 1U);
}

}  // namespace
}  // namespace scaleprof::report
