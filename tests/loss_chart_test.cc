// The lost-efficiency chart of the HTML report: its size is bounded by the number of bars and causes,
// never by the values (a fuzzed epoch time once made a 2.4 GB axis).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "report/loss_chart.h"
#include "scalability_fixtures.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using scaleprof::report::loss_chart_svg;
using scaleprof::report::LossChartBar;

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

LossChartBar bar(double points) {
  return LossChartBar{"ddp", 2, 1, 50.0, {{"communication", points}, {"unattributed", 1.0}}};
}

TEST(LossChart, AxisTicksAreBoundedWhateverTheValues) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kMax = std::numeric_limits<double>::max();
  for (double points : {1.6666666666666666e17, 1e308, -1e308, kMax, -kMax, kInf, -kInf, std::nan(""), 3e-300}) {
    const std::string svg = loss_chart_svg({bar(points), bar(-points), bar(points)});
    // One grid line per tick; a handful, never one per 100 points.
    EXPECT_LE(count(svg, "<line "), 13) << points;
    EXPECT_LE(svg.size(), 8000U) << points;
    // Every x coordinate stays inside the picture.
    EXPECT_EQ(svg.find("x=\"-"), std::string::npos) << points;
    EXPECT_EQ(svg.find("inf"), std::string::npos) << points;
    EXPECT_EQ(svg.find("nan"), std::string::npos) << points;
  }
}

TEST(LossChart, OrdinaryLossesKeepRoundTicks) {
  // 0 to 40 points: ticks at 0, 10, 20, 30, 40 (five grid lines, the zero line among them).
  const std::string svg = loss_chart_svg({bar(39.0)});
  EXPECT_EQ(count(svg, "<line "), 5);
  for (const char* tick : {">0</text>", ">10</text>", ">20</text>", ">30</text>", ">40</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
}

// The input that made `make test`'s fuzz stage fail (../shared/regressions), as an itwinai epoch-time CSV:
// `report --html` used to reach 2.4 GB and end in std::bad_alloc.
TEST(LossChart, RegressionInputRendersAPageOfBoundedSize) {
  const fs::path input = fs::path(SCALEPROF_SHARED_DIR) / "regressions" / "itwinai_csv-oom-loss-chart";
  if (!fs::exists(input)) GTEST_SKIP() << "no " << input << " (../shared is absent)";
  const scaleprof::testing::ScratchDir scratch("loss-chart");
  const fs::path root = scratch.path();
  fs::create_directories(root / "scalability-metrics" / "epoch-time");
  fs::copy_file(input, root / "scalability-metrics" / "epoch-time" / "epochtime_ddp_1N.csv");
  const fs::path html = root / "r.html";
  const std::string command = std::string(SCALEPROF_CLI_PATH) + " report --no-plots --root " +
                              (root / "scalability-metrics").string() + " --html " + html.string() +
                              " >/dev/null 2>&1; echo $?";
  FILE* p = popen(command.c_str(), "r");
  char buf[64] = {};
  const size_t n = fread(buf, 1, sizeof(buf) - 1, p);
  pclose(p);
  const int exit_code = std::stoi(std::string(buf, n));
  EXPECT_TRUE(exit_code == 0 || exit_code == 3) << exit_code;  // 3: rows of the CSV rejected, the rest reported
  ASSERT_TRUE(fs::exists(html));
  EXPECT_LT(fs::file_size(html), 1U << 20);
}

}  // namespace
