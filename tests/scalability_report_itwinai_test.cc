// The scalability report on itwinai's CSV layout (split from scalability_report_test.cc): every number
// checked against values worked out by hand (in the comments).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/scalability.h"
#include "importers/csv.h"
#include "importers/run_data_reader.h"
#include "report/plot_specs.h"
#include "report/scalability_explanation.h"
#include "report/scalability_report.h"
#include "scalability_fixtures.h"
#include "scalability_report_helpers.h"

namespace scaleprof::report {
namespace {

using importers::CsvFile;
using importers::parse_csv;
using testing::find_group;
using testing::ScratchDir;
using namespace report_test;  // NOLINT(google-build-using-namespace): the helpers of these tests

// itwinai's CSV layout, modelled on the MNIST example of its documentation (epoch times 2.65 s ... and
// computation fractions 75.47 % ...), in two nodes counts with 4 GPUs per node.
void build_itwinai(const ScratchDir& root) {
  // deepspeed 1 node: warm-up 5.00, then 2.60 and 2.70 -> mean 2.65 (the documented value).
  root.write("run1/epoch-time/epochtime_deepspeed_1N.csv",
             "epoch_id,time,name,nodes\n1,5.00,deepspeed,1\n2,2.60,deepspeed,1\n3,2.70,deepspeed,1\n");
  // deepspeed 2 nodes: 3.00, then 1.68, 1.70 -> 1.69.
  root.write("run1/epoch-time/epochtime_deepspeed_2N.csv",
             "epoch_id,time,name,nodes\n1,3.00,deepspeed,2\n2,1.68,deepspeed,2\n3,1.70,deepspeed,2\n");
  // torch-ddp 1 node: 6.00, 2.90, 2.94 -> 2.92; 2 nodes: 4.00, 1.98, 2.00 -> 1.99.
  root.write("run1/epoch-time/epochtime_torch-ddp_1N.csv",
             "epoch_id,time,name,nodes\n1,6.00,torch-ddp,1\n2,2.90,torch-ddp,1\n3,2.94,torch-ddp,1\n");
  root.write("run1/epoch-time/epochtime_torch-ddp_2N.csv",
             "epoch_id,time,name,nodes\n1,4.00,torch-ddp,2\n2,1.98,torch-ddp,2\n3,2.00,torch-ddp,2\n");
  // Computation data of deepspeed on 4 GPUs, two ranks (pandas index column first; a kernel name with
  // commas is quoted). Sum 2000 us, ProfilerStep* 1000 us, ATen/at:: 300+300+154.7 = 754.7 us:
  // fraction 754.7 / 1000 = 75.47 %.
  const std::string header =
      ",name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank\n";
  root.write("run1/computation-data/deepspeed_4_0.csv",
             header +
                 "0,ProfilerStep*,0,500.0,900.0,900us,2,deepspeed,4,0\n1,aten::mm,0,300.0,300.0,300us,10,"
                 "deepspeed,4,0\n2,\"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<"
                 "float>, at::detail::Array<char*, 1> >(int, float, char*)\",0,154.7,154.7,154us,3,deepspeed,4,"
                 "0\n");
  root.write("run1/computation-data/deepspeed_4_1.csv",
             header +
                 "0,ProfilerStep*,0,500.0,900.0,900us,2,deepspeed,4,1\n1,aten::mm,0,300.0,300.0,300us,10,"
                 "deepspeed,4,1\n2,ncclKernel_AllReduce_RING_LL_Sum_float,0,245.3,245.3,245us,4,deepspeed,4,1\n");
  // deepspeed on 8 GPUs: 100 us ProfilerStep*, 30.66 us aten::add_, 69.34 us NCCL: 30.66 %.
  root.write("run1/computation-data/deepspeed_8_0.csv",
             header +
                 "0,ProfilerStep*,0,100.0,0,,1,deepspeed,8,0\n1,aten::add_,0,30.66,0,,1,deepspeed,8,0\n"
                 "2,ncclDevKernel_AllReduce,0,69.34,0,,1,deepspeed,8,0\n");
  // GPU data of deepspeed on 4 GPUs: two GPUs x 3 samples every 2 s. Energy (itwinai's rule):
  // (100 + 200 + 300 + 50 + 50 + 50) W x 2 s = 1500 J; utilization mean of 10..60 = 35 %.
  root.write("run1/gpu-energy-data/deepspeed_4.csv",
             "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n"
             "0,10,100,0,0,4,deepspeed,2\n1,20,200,0,0,4,deepspeed,2\n2,30,300,0,0,4,deepspeed,2\n"
             "0,40,50,1,0,4,deepspeed,2\n1,50,50,1,0,4,deepspeed,2\n2,60,50,1,0,4,deepspeed,2\n");
}

TEST(ScalabilityReport, ItwinaiCsvLayout) {
  ScratchDir root("report-itwinai");
  build_itwinai(root);
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  EXPECT_TRUE(a.errors.empty()) << a.errors.front();
  const ScaleGroup* ds4 = find_group(a, "deepspeed", 4);
  const ScaleGroup* ds8 = find_group(a, "deepspeed", 8);
  const ScaleGroup* ddp4 = find_group(a, "torch-ddp", 4);
  const ScaleGroup* ddp8 = find_group(a, "torch-ddp", 8);
  ASSERT_TRUE(ds4 && ds8 && ddp4 && ddp8);
  EXPECT_EQ(ds4->nodes, 1);
  EXPECT_EQ(ds8->nodes, 2);
  // Epoch times after the warm-up epoch: the documented table.
  EXPECT_NEAR(ds4->epoch.mean, 2.65, 1e-12);
  EXPECT_NEAR(ds8->epoch.mean, 1.69, 1e-12);
  EXPECT_NEAR(ddp4->epoch.mean, 2.92, 1e-12);
  EXPECT_NEAR(ddp8->epoch.mean, 1.99, 1e-12);
  EXPECT_EQ(ds4->epoch.count, 2);
  EXPECT_NEAR(ds4->epoch.std, std::sqrt(0.005), 1e-12);  // 2.60, 2.70: (0.05^2 x 2) / 1
  // Speedup 2.65 / 1.69 and 2.92 / 1.99; efficiency half of it (8 vs 4 workers).
  EXPECT_NEAR(ds8->scaling.speedup, 2.65 / 1.69, 1e-12);
  EXPECT_NEAR(ds8->scaling.efficiency, 2.65 / 1.69 / 2, 1e-12);
  EXPECT_NEAR(ddp8->scaling.speedup, 2.92 / 1.99, 1e-12);
  // Computation fraction 75.47 % and 30.66 %, pooled over ranks.
  ASSERT_TRUE(ds4->computation.has_value());
  EXPECT_EQ(ds4->computation->total_ns, 2'000'000);
  EXPECT_EQ(ds4->computation->profiler_step_ns, 1'000'000);
  EXPECT_EQ(ds4->computation->computation_ns, 754'700);
  EXPECT_EQ(ds4->computation->ranks, 2);
  EXPECT_NEAR(ds4->computation_fraction, 0.7547, 1e-12);
  EXPECT_NEAR(ds8->computation_fraction, 0.3066, 1e-12);
  EXPECT_FALSE(ddp4->computation.has_value());
  // Energy by itwinai's rule: 1500 J over deepspeed's 3 epochs on 4 GPUs.
  EXPECT_DOUBLE_EQ(ds4->energy_wh_total, 1500.0 / 3600.0);
  EXPECT_DOUBLE_EQ(ds4->energy_wh_per_epoch, 500.0 / 3600.0);
  EXPECT_DOUBLE_EQ(ds4->utilization_pct, 35.0);
  EXPECT_EQ(ds4->energy_method, "rectangle");
  // Without traces only itwinai's computation fraction is known (deepspeed has it at both scales): a
  // share of operator self time, not of the epoch time, so nothing is attributed: efficiency
  // E = 2.65 x 4 / (1.69 x 8), all of 1 - E unattributed; the non-computation share 24.53% -> 69.34%
  // is an indication in words, with itwinai's caveat.
  const SeriesResult* ds = find_series(a, "deepspeed");
  ASSERT_NE(ds, nullptr);
  const analysis::ScaleLoss& dl = ds->largest_loss();
  EXPECT_EQ(dl.basis, analysis::LossBasis::kComputationFraction);
  EXPECT_NEAR(dl.efficiency, 2.65 * 4 / (1.69 * 8), 1e-12);
  EXPECT_TRUE(dl.causes.empty());
  EXPECT_NEAR(dl.rest, 1 - 2.65 * 4 / (1.69 * 8), 1e-12);
  EXPECT_NEAR(dl.non_computation0, 0.2453, 1e-12);
  EXPECT_NEAR(dl.non_computation1, 0.6934, 1e-12);
  const std::vector<std::string> why = loss_sentences(*ds);
  ASSERT_EQ(why.size(), 3u);
  EXPECT_FALSE(contains(why, "accounts for"));
  EXPECT_NE(why[1].find("the data cannot say where"), std::string::npos) << why[1];
  EXPECT_NE(why[1].find("a share of summed operator self time, not of the epoch time (itwinai's caveat"),
            std::string::npos)
      << why[1];
  EXPECT_NE(why[2].find("took 24.5% of the summed operator self time at 4 workers and 69.3% at 8; a growing share"),
            std::string::npos)
      << why[2];
  EXPECT_EQ(find_series(a, "torch-ddp")->largest_loss().basis, analysis::LossBasis::kNone);
  // Two scale points: the Amdahl fit passes through both, so its residual says nothing.
  const std::vector<ReportSection> amdahl = scalability_sections(a);
  bool exact_shown = false;
  for (const ReportSection& sec : amdahl) {
    if (sec.key != "amdahl") continue;
    for (const auto& row : sec.tables[0].rows) {
      EXPECT_TRUE(std::holds_alternative<std::monostate>(row[5].value)) << "RMS shown for a 2-point fit";
      exact_shown |=
          std::get<std::string>(row.back().value) == "projection (exact through 2 points: no evidence of fit quality)";
    }
  }
  EXPECT_TRUE(exact_shown);

  // itwinai's own numbers: every epoch pooled (--skip-epochs 0): (5.00 + 2.60 + 2.70) / 3.
  ScalabilityData data_all;  // `a` still points into `data`
  const ScalabilityAnalysis all = analyse(root.path(), 0, &data_all);
  EXPECT_NEAR(find_group(all, "deepspeed", 4)->epoch.mean, 10.3 / 3, 1e-12);

  // The tables show the same numbers.
  const std::vector<ReportSection> sections = scalability_sections(a);
  EXPECT_NEAR(table_value(sections, "epoch_time", "deepspeed", 4, "mean_s"), 2.65, 1e-12);
  EXPECT_NEAR(table_value(sections, "epoch_time", "torch-ddp", 8, "mean_s"), 1.99, 1e-12);
  EXPECT_NEAR(table_value(sections, "scaling", "deepspeed", 8, "speedup"), 2.65 / 1.69, 1e-12);
  EXPECT_NEAR(table_value(sections, "scaling", "deepspeed", 8, "efficiency_pct"), 2.65 / 1.69 / 2 * 100, 1e-9);
  EXPECT_NEAR(table_value(sections, "scaling", "torch-ddp", 8, "speedup"), 2.92 / 1.99, 1e-12);
  EXPECT_NEAR(table_value(sections, "computation_fraction", "deepspeed", 4, "computation_fraction_pct"), 75.47, 1e-9);
  EXPECT_NEAR(table_value(sections, "computation_fraction", "deepspeed", 8, "computation_fraction_pct"), 30.66, 1e-9);
  EXPECT_NEAR(table_value(sections, "gpu", "deepspeed", 4, "energy_wh_total"), 1500.0 / 3600.0, 1e-12);
  // Text form: itwinai-style heading and two-decimal cells.
  const std::string text = render_sections_text(sections, RenderOptions{});
  EXPECT_NE(text.find("######## Epoch Time Report ########"), std::string::npos);
  EXPECT_NE(text.find("######## Computation Data Report ########"), std::string::npos);
  EXPECT_NE(text.find("75.47"), std::string::npos);
}

// itwinai's deprecated --include-communication report: computation / (computation + communication) by
// its NCCL name rule (utils.py calculate_comp_and_comm_time). Rows: aten::mm 600 us (computation),
// nccl:all_reduce 300 us and cudaStreamSynchronize 50 us (communication), ncclKernel_AllReduce 50 us
// (neither: the rule matches record_function names, not kernels), ProfilerStep* 1000 us (neither):
// 600 / (600 + 350) = 63.157...%, while computation vs. other is 600 / 1000 = 60 %.
TEST(ScalabilityReport, ItwinaiDeprecatedCommunicationReport) {
  ScratchDir root("report-itwinai-comm");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,2,ddp,1\n2,1,ddp,1\n");
  root.write("computation-data/ddp_4_0.csv",
             ",name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,"
             "global_rank\n0,ProfilerStep*,0,1000,0,,1,ddp,4,0\n1,aten::mm,0,600,0,,1,ddp,4,0\n"
             "2,nccl:all_reduce,0,300,0,,1,ddp,4,0\n3,cudaStreamSynchronize,0,50,0,,1,ddp,4,0\n"
             "4,ncclKernel_AllReduce_RING_LL_Sum_float,0,50,0,,1,ddp,4,0\n");
  ScalabilityData data;
  ScalabilityReadOptions read;
  read.root = root.path();
  auto loaded = read_scalability_data(read);
  ASSERT_TRUE(loaded.ok());
  data = std::move(loaded).value();
  ScalabilityOptions options;
  const ScalabilityAnalysis plain = analyse_scalability(data, options);
  const ScaleGroup* g = find_group(plain, "ddp", 4);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->computation.has_value());
  EXPECT_EQ(g->computation->communication_ns, 350'000);
  EXPECT_NEAR(g->computation_fraction, 0.6, 1e-12);
  EXPECT_NEAR(g->computation_vs_communication, 600.0 / 950.0, 1e-12);
  for (const ReportSection& s : scalability_sections(plain)) EXPECT_NE(s.key, "communication");

  options.include_communication = true;
  const ScalabilityAnalysis with = analyse_scalability(data, options);
  const std::vector<ReportSection> sections = scalability_sections(with);
  EXPECT_NEAR(table_value(sections, "computation_vs_communication", "ddp", 4, "computation_fraction_pct"),
              600.0 / 950.0 * 100, 1e-9);
  EXPECT_NEAR(table_value(sections, "computation_vs_communication", "ddp", 4, "communication_s"), 350e-6, 1e-15);
  EXPECT_NEAR(table_value(sections, "computation_fraction", "ddp", 4, "computation_fraction_pct"), 60.0, 1e-9);
  const std::string text = render_sections_text(sections, RenderOptions{});
  EXPECT_NE(text.find("######## Communication Data Report ########"), std::string::npos) << text;
  EXPECT_NE(text.find("63.16"), std::string::npos) << text;
}

// Issue 7 item 7: each self time is within bounds (1e12 us), but 9,225 of them pass int64 ns: the
// first 9,223 rows are summed (9.223e18 ns), each row after is skipped with an error naming its line,
// never wrapped into a negative sum.
TEST(ScalabilityReport, ItwinaiProfilingSumsPastInt64SkipTheLine) {
  ScratchDir root("report-itwinai-overflow");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,2,ddp,1\n2,1,ddp,1\n");
  std::string csv =
      ",name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,"
      "global_rank\n";
  for (int i = 0; i < 9225; ++i) csv += std::to_string(i) + ",aten::mm,0,1e12,0,,1,ddp,4,0\n";
  root.write("computation-data/ddp_4_0.csv", csv);
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  const ScaleGroup* g = find_group(a, "ddp", 4);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->computation.has_value());
  EXPECT_EQ(g->computation->total_ns, INT64_C(9'223'000'000'000'000'000));
  EXPECT_EQ(g->computation->computation_ns, INT64_C(9'223'000'000'000'000'000));
  EXPECT_TRUE(contains(a.errors, root / "computation-data/ddp_4_0.csv" +
                                     ":9225: the sum of self_cuda_time_total overflows; line skipped"));
  EXPECT_TRUE(contains(a.errors, root / "computation-data/ddp_4_0.csv" +
                                     ":9226: the sum of self_cuda_time_total overflows; line skipped"));
  // The place is a field of its own: the file and line, apart from what is wrong there (the first
  // line skipped).
  const auto overflow = std::find_if(a.errors.begin(), a.errors.end(), [](const Diagnostic& d) {
    return d.message == "the sum of self_cuda_time_total overflows; line skipped";
  });
  ASSERT_NE(overflow, a.errors.end());
  EXPECT_EQ(overflow->where, root / "computation-data/ddp_4_0.csv" + ":9225");
  EXPECT_EQ(overflow->severity, Severity::kError);
}

TEST(ScalabilityReport, ItwinaiInconsistentProbingInterval) {
  ScratchDir root("report-itwinai-bad");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,2,ddp,1\n2,1,ddp,1\n");
  root.write("gpu-energy-data/ddp_4.csv",
             "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n"
             "0,10,100,0,0,4,ddp,1\n1,10,100,0,0,4,ddp,2\n");
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  EXPECT_TRUE(
      contains(a.errors, root / "gpu-energy-data/ddp_4.csv" + ":3: probing_interval 2 differs from 1 on line 2"));
  // The root itself is the run: run name = folder name; 1 node x 4 GPUs.
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].workers, 4);
  EXPECT_DOUBLE_EQ(a.groups[0].epoch.mean, 1.0);
  EXPECT_DOUBLE_EQ(a.groups[0].energy_wh_total, 100.0 / 3600.0);
}

TEST(ScalabilityReport, CsvParserQuotesAndTornLines) {
  std::vector<Diagnostic> warnings;
  std::vector<Diagnostic> errors;
  CsvFile f = parse_csv("a,b\n\"x,\"\"y\"\"\",2\n\"multi\nline\",3\n1,2,3\n4", "f.csv", true, &warnings, &errors);
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.rows[0][0], "x,\"y\"");
  EXPECT_EQ(f.rows[1][0], "multi\nline");
  EXPECT_EQ(f.lines[1], 3);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "f.csv:5: 3 fields, the header has 2; line skipped");
  EXPECT_EQ(errors[0].where, "f.csv:5");  // the place apart from the problem
  EXPECT_EQ(errors[0].severity, Severity::kError);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "f.csv:6: torn last line (the writer stopped mid-record); line skipped");
  EXPECT_EQ(warnings[0].severity, Severity::kWarning);
  // Not appended (itwinai's whole-file CSVs): a last line without newline is a record.
  warnings.clear();
  CsvFile g = parse_csv("a,b\r\n1,2", "g.csv", false, &warnings, &errors);
  ASSERT_EQ(g.rows.size(), 1u);
  EXPECT_EQ(g.rows[0][1], "2");
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace scaleprof::report
