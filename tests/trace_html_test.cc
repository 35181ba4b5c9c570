// `scaleprof trace summary --html`: the page's charts (bounded by construction, every name escaped),
// and the page itself in headless Chromium for 2 ranks of a real trace and for 1,024 generated ranks.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "cli_harness.h"
#include "report/svg_charts.h"
#include "scalability_fixtures.h"
#include "test_paths.h"

namespace scaleprof {
namespace {

namespace fs = std::filesystem;
using testing::chromium_dom;
using testing::CliRun;
using testing::ScratchDir;
using testing::slurp;

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

// The text of the figure `figure-<id>` in a page ("" when absent).
std::string figure(const std::string& page, const std::string& id) {
  const size_t at = page.find("<figure id=\"figure-" + id + "\">");
  if (at == std::string::npos) return "";
  return page.substr(at, page.find("</figure>", at) - at);
}

TEST(SvgCharts, AreBoundedWhateverTheData) {
  report::BarChart bars{"b", "t", "axis", 0, {}};
  for (int i = 0; i < 10'000; ++i) bars.bars.push_back({fmt::format("r{}", i), {{"a", 1.0 + i}, {"b", 1e308}}});
  const std::string b = report::bar_chart_svg(bars);
  EXPECT_EQ(count(b, "<rect x="), report::kMaxChartBars * 2 + 2);  // 2 legend swatches, 2 segments a bar
  EXPECT_LT(b.size(), 200'000u);

  report::ScatterChart scatter{"s", "t", "x", "y", true, true, {}};
  for (int i = 0; i < 100'000; ++i) scatter.points.push_back({1.0 + i, 1e-3 * (i + 1), i % 2 == 0 ? "even" : "odd"});
  scatter.points.push_back({-1, std::nan(""), "bad"});  // not drawable on log axes: left out, no legend entry
  const std::string s = report::scatter_chart_svg(scatter);
  EXPECT_EQ(count(s, "<circle"), report::kMaxChartPoints);
  EXPECT_EQ(s.find(">bad<"), std::string::npos);
  EXPECT_LE(count(s, "<line"), 24u);

  report::Heatmap map{"h", "t", "ms", {}, {}, {}};
  for (int r = 0; r < 1000; ++r) map.row_labels.push_back(fmt::format("rank {}", r));
  for (int c = 0; c < 1000; ++c) map.column_labels.push_back(fmt::format("step {}", c));
  map.values.assign(1000 * 1000, 1.0);
  const std::string h = report::heatmap_svg(map);
  EXPECT_EQ(count(h, "<rect x="), report::kMaxHeatmapRows * report::kMaxHeatmapColumns + 1);
}

TEST(SvgCharts, EscapeEveryNameAndDrawValuesInProportion) {
  report::BarChart bars{"id\"><script>", "<title>", "<axis>", 100, {}};
  bars.bars.push_back({"<img src=x>", {{"<b>", 25}, {"ok", 50}}});
  const std::string b = report::bar_chart_svg(bars, 1000);
  EXPECT_EQ(b.find("<script"), std::string::npos);
  EXPECT_EQ(b.find("<img"), std::string::npos);
  EXPECT_EQ(b.find("<b>"), std::string::npos);
  EXPECT_NE(b.find("&lt;img src=x&gt;"), std::string::npos);
  // The axis runs from x = 210 to 984 for 0..100: 25 is 193.5 px wide, 50 is 387.0.
  EXPECT_NE(b.find("x=\"210.0\" y=\"40\" width=\"193.5\""), std::string::npos) << b;
  EXPECT_NE(b.find("x=\"403.5\" y=\"40\" width=\"387.0\""), std::string::npos) << b;
}

// N ranks of a gloo job with a GPU each: three ProfilerSteps, a computation kernel per step (no NCCL
// kernel: a GPU trace's collectives are its NCCL kernels), and one all-reduce over all N ranks per
// step on a gloo thread; rank `late` starts its all-reduce 300 us after the others, who wait for it.
std::string generated_rank(int rank, int world, int late) {
  std::string ranks;
  for (int r = 0; r < world; ++r) ranks += (r == 0 ? "" : ",") + std::to_string(r);
  std::string events;
  for (int s = 0; s < 3; ++s) {
    const int t = s * 1000;
    const int compute = 100 + (rank % 5) * 20;
    const int call = rank == late ? 500 : 200;
    events += fmt::format(
        R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{0}","pid":1,"tid":1,"ts":{1},"dur":1000,"args":{{}}}},
{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{2},"dur":60,"args":{{"External id":{0}}}}},
{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{3},"dur":5,"args":{{"External id":{0},"correlation":{0}}}}},
{{"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":{4},"dur":{5},"args":{{"External id":{0},"stream":7,"correlation":{0},"device":0}}}},
{{"ph":"X","cat":"user_annotation","name":"gloo:all_reduce","pid":1,"tid":2,"ts":{6},"dur":{7},"args":{{"Input type":["float"],"Input Dims":[[262144]]}}}},
)",
        s + 1, t, t + 10, t + 20, t + 30, compute, t + call, 700 - call);
  }
  events += R"({"ph":"i","cat":"cpu_op","name":"end","pid":1,"tid":1,"ts":3000,"s":"t","args":{}})";
  return fmt::format(
      R"({{"distributedInfo":{{"backend":"gloo","rank":{},"world_size":{},"pg_count":1,"pg_config":[{{"pg_name":"0","pg_desc":"default_pg","pg_size":{},"ranks":[{}]}}]}},"traceEvents":[
{}
]}})",
      rank, world, world, ranks, events);
}

TEST(TraceHtml, ThousandRanksAreBinnedBoundedAndDrawnInChromium) {
  ScratchDir dir("trace-html-1024");
  constexpr int kRanks = 1024;
  for (int r = 0; r < kRanks; ++r) dir.write(fmt::format("traces/rank-{}.json", r), generated_rank(r, kRanks, 7));
  const std::string page = dir / "summary.html";
  CliRun r = testing::run_cli("trace summary -q " + (dir / "traces") + " --format csv -o /dev/null --html " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = slurp(page);
  // Bounded: charts binned to 64 bars and 64 heatmap rows; tables cut (a line says so).
  EXPECT_LT(html.size(), 4u << 20) << "page of " << html.size() << " bytes";
  const std::string breakdown = figure(html, "breakdown");
  ASSERT_FALSE(breakdown.empty());
  EXPECT_NE(breakdown.find("1024 ranks in 64 bins of 16 consecutive ranks"), std::string::npos) << breakdown;
  EXPECT_NE(breakdown.find(">ranks 0-15<"), std::string::npos);
  EXPECT_EQ(breakdown.find(">rank 7<"), std::string::npos);  // no bar of its own at 1,024 ranks
  const std::string heat = figure(html, "collective-lateness");
  ASSERT_FALSE(heat.empty()) << html.substr(0, 3000);
  EXPECT_NE(heat.find("1024 ranks x 3 steps; each cell the latest of 16 rank(s) x 1 step(s)"), std::string::npos)
      << heat.substr(heat.size() - 600);
  EXPECT_LE(count(heat, "<rect x="), 64u * 3 + 1);
  // Rank 7 arrives 300 us after the others at every step: its bin is the only dark row (0.3 ms per
  // cell; every other bin 0, the white end of the scale).
  EXPECT_EQ(count(heat, "fill=\"rgb(213,94,0)\"><title>ranks 0-15, step"), 3u) << heat.substr(0, 3000);
  EXPECT_EQ(count(heat, "fill=\"rgb(213,94,0)\""), 3u);
  // Everyone waits for rank 7: 300 us per step, and the page says so first.
  EXPECT_NE(html.find("the others waited most for <b>rank 7</b>"), std::string::npos);
  if (!testing::have_program("chromium")) GTEST_SKIP() << "chromium not installed: the page was not opened";
  std::string console;
  const std::string dom = chromium_dom(page, &console);
  EXPECT_TRUE(console.empty()) << console;
  for (const char* id : {"breakdown", "kernel-types", "top-kernels", "idle", "collective-lateness"}) {
    const std::string f = figure(dom, id);
    EXPECT_NE(f.find("<svg"), std::string::npos) << id << " not drawn";
    EXPECT_NE(f.find("<rect x="), std::string::npos) << id << " draws nothing";
  }
}

// Two ranks of HTA's df_index_resolver trace: every chart drawn, the operator table sortable by a click
// (its script ran without an error), the kernels named (escaped) as in the kernel table.
TEST(TraceHtml, TwoRanksOfARealTraceDrawEveryChart) {
  const fs::path trace = fs::path(SCALEPROF_SHARED_DIR) / "traces/hta/df_index_resolver/df_index_resolver.json.gz";
  if (!fs::exists(trace)) GTEST_SKIP() << trace << " not found (../shared)";
  ScratchDir dir("trace-html-2");
  const std::string a = dir / "a.json.gz", b = dir / "b.json.gz";
  fs::copy_file(trace, a);
  fs::copy_file(trace, b);
  const std::string page = dir / "summary.html";
  CliRun r = testing::run_cli("trace summary -q " + a + " " + b + " --rank " + a + "=0 --rank " + b +
                              "=1 -o /dev/null --html " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = slurp(page);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(count(html, "<script"), 1u);  // the page's own: sorting tables
  EXPECT_NE(html.find("device idle <b>46.1%</b> on average"), std::string::npos);
  const std::string top = figure(html, "top-kernels");
  EXPECT_NE(top.find("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem): COMMUNICATION"), std::string::npos)
      << top.substr(0, 2000);
  // Memory (issue 23): allocated and reserved over time, one series each per rank and device.
  const std::string memory = figure(html, "memory");
  for (const char* series : {"rank 0 CUDA 1 allocated", "rank 1 CUDA 1 reserved", "rank 1 CPU allocated"}) {
    EXPECT_NE(memory.find(series), std::string::npos) << series;
  }
  EXPECT_NE(html.find("id=\"table-memory-at-peak\""), std::string::npos);
  if (!testing::have_program("chromium")) GTEST_SKIP() << "chromium not installed: the page was not opened";
  std::string console;
  const std::string dom = chromium_dom(page, &console);
  EXPECT_TRUE(console.empty()) << console;
  for (const char* id : {"breakdown", "kernel-types", "top-kernels", "idle"}) {
    EXPECT_NE(figure(dom, id).find("<rect x="), std::string::npos) << id << " draws nothing";
  }
  // No communication kernel overlaps computation in this trace: 0 % per rank, written beside the axis.
  EXPECT_NE(figure(dom, "overlap").find(">rank 1<"), std::string::npos);
  EXPECT_NE(dom.find("<table class=\"data sortable\" id=\"table-operators\">"), std::string::npos);
}

}  // namespace
}  // namespace scaleprof
