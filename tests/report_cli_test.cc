// `scaleprof report` / `generate-scalability-report` as a user runs them: exit codes, formats,
// warnings, plot files, and the HTML page opened in headless Chromium.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_harness.h"
#include "png_image.h"
#include "scalability_fixtures.h"

namespace {

namespace fs = std::filesystem;
using scaleprof::testing::ScratchDir;

using scaleprof::testing::CliRun;
using scaleprof::testing::slurp;

CliRun shell(const std::string& command) {
  return scaleprof::testing::run_shell(command);
}

CliRun run(const std::string& args, const std::string& env = "") {
  return scaleprof::testing::run_cli(args, env);
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

bool have(const char* program) {
  return scaleprof::testing::have_program(program);
}

using scaleprof::testing::chromium_dom;

// Three scales of ddp with GPU samples and traces at both ends (every table and plot has data).
void build(const ScratchDir& root, const std::string& xss_run_name = "ddp-w1") {
  using scaleprof::testing::make_run;
  make_run(root, "exp", "ddp-w1", xss_run_name, "ddp", 1, {{10, 9, 9}});
  make_run(root, "exp", "ddp-w2", "ddp-w2", "ddp", 2, {{6, 5, 5}, {6, 5, 5}});
  make_run(root, "exp", "ddp-w4", "ddp-w4", "ddp", 4, {{4, 3, 3}, {4, 3, 3}, {4, 3, 3}, {4, 3, 3}});
  make_run(root, "exp", "gloo-w2", "gloo-w2", "gloo", 2, {{7, 6, 6}, {7, 6, 6}});
  for (const char* run : {"ddp-w1", "ddp-w2", "ddp-w4"}) {
    root.write(std::string("exp/") + run + "/rank-00000/gpu.csv",
               "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j\n"
               "0,0,50,100,1,\n1000000000,0,70,200,1,\n2000000000,0,90,300,1,\n");
  }
  root.write("exp/ddp-w1/rank-00000/traces/r0.pt.trace.json", scaleprof::testing::tiny_trace(0, 80, 0, 20));
  root.write("exp/ddp-w4/rank-00000/traces/r0.pt.trace.json", scaleprof::testing::tiny_trace(0, 70, 10, 20));
  // gloo at 2 workers: one all-reduce of 1 MiB, rank 0 from 100 us for 300 us, rank 1 from 200 us for
  // 200 us: latency 200 us, rank 0 waits 100 us for rank 1.
  root.write("exp/gloo-w2/rank-00000/traces/r0.pt.trace.json", scaleprof::testing::gloo_trace(0, 100, 300));
  root.write("exp/gloo-w2/rank-00001/traces/r1.pt.trace.json", scaleprof::testing::gloo_trace(1, 200, 200));
}

TEST(ReportCli, HelpForBothNames) {
  for (const char* cmd : {"report --help", "generate-scalability-report --help"}) {
    CliRun r = run(cmd);
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("--plot-file-suffix"), std::string::npos) << cmd;
    EXPECT_NE(r.out.find("--run-names"), std::string::npos) << cmd;
  }
  EXPECT_NE(run("generate-scalability-report --help").out.find("--experiment-name"), std::string::npos);
}

TEST(ReportCli, ExitCodes) {
  ScratchDir root("report-cli-exit");
  build(root);
  EXPECT_EQ(run("report --no-plots --root " + root.path()).exit_code, 0);
  CliRun missing = run("report --no-plots --root /nonexistent/scaleprof");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("error: /nonexistent/scaleprof: no such directory"), std::string::npos);
  ScratchDir empty("report-cli-empty");
  CliRun none = run("report --no-plots --root " + empty.path());
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no runs found"), std::string::npos);
  EXPECT_EQ(run("report --no-plots --format xml --root " + root.path()).exit_code, 2);
  EXPECT_EQ(run("report --plot-file-suffix .gif --root " + root.path()).exit_code, 2);
  EXPECT_EQ(run("report --skip-epochs -1 --root " + root.path()).exit_code, 2);
  // A bad line: the report still prints, names file and line, exits 3.
  root.write("exp/gloo-w2/rank-00001/epochs.csv", "epoch,duration_s\n0,7\n1,oops\n2,6\n");
  CliRun partial = run("report --no-plots --root " + root.path());
  EXPECT_EQ(partial.exit_code, 3);
  EXPECT_NE(partial.err.find(root / "exp/gloo-w2/rank-00001/epochs.csv" +
                             ":3: a required field is missing or not a number; line skipped"),
            std::string::npos)
      << partial.err;
  EXPECT_NE(partial.out.find("######## Epoch Time Report ########"), std::string::npos);
}

TEST(ReportCli, JsonShapeAndNumbers) {
  ScratchDir root("report-cli-json");
  build(root);
  CliRun r = run("report --no-plots --format json --root " + root.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  EXPECT_EQ(int64_t(doc["skip_epochs"]), 1);
  for (const char* key :
       {"epoch_time", "scaling", "amdahl", "gpu", "gpu_devices", "trace_breakdown", "collective_time",
        "computation_fraction", "scaling_loss", "best_strategy", "runs", "explanation", "warnings", "errors"}) {
    EXPECT_TRUE(doc[key].is_array()) << key;
  }
  // gloo at 2 workers: 2 x 1000 us of steps; latency 200 us on both ranks (20 %), rank 0 waited 100 us (5 %).
  simdjson::dom::element gloo = doc["collective_time"].at(0);
  EXPECT_EQ(std::string_view(gloo["strategy"]), "gloo");
  EXPECT_EQ(int64_t(gloo["calls"]), 1);
  EXPECT_EQ(int64_t(gloo["matched"]), 1);
  EXPECT_DOUBLE_EQ(double(gloo["step_ms"]), 2.0);
  EXPECT_DOUBLE_EQ(double(gloo["communication_pct"]), 20.0);
  EXPECT_DOUBLE_EQ(double(gloo["waiting_pct"]), 5.0);
  // ddp at 4 workers: mean 3 s, speedup 9/3 = 3, efficiency 75 %.
  bool found = false;
  for (simdjson::dom::element row : doc["scaling"].get_array()) {
    if (std::string_view(row["strategy"]) == "ddp" && int64_t(row["workers"]) == 4) {
      EXPECT_DOUBLE_EQ(double(row["mean_s"]), 3.0);
      EXPECT_DOUBLE_EQ(double(row["speedup"]), 3.0);
      EXPECT_DOUBLE_EQ(double(row["efficiency_pct"]), 75.0);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  simdjson::dom::element amdahl = doc["amdahl"].at(0);
  EXPECT_EQ(std::string_view(amdahl["kind"]), "projection");
  EXPECT_NEAR(double(amdahl["serial_fraction_pct"]), 100.0 / 9.0, 1e-9);
  EXPECT_NEAR(double(amdahl["projected_speedup_2x"]), 4.5, 1e-12);
  // One row per scale above the smallest: 1 -> 2 (no traces at 2: unattributed) and 1 -> 4.
  simdjson::dom::array losses = doc["scaling_loss"].get_array();
  ASSERT_EQ(losses.size(), 2u);
  EXPECT_EQ(std::string_view(losses.at(0)["basis"]), "none");
  EXPECT_NEAR(double(losses.at(0)["other_pts"]), 100 - 9.0 / 5.0 / 2 * 100, 1e-9);
  simdjson::dom::element loss = losses.at(1);
  EXPECT_EQ(int64_t(loss["to_workers"]), 4);
  EXPECT_NEAR(double(loss["communication_pts"]), 5.0, 1e-9);
  EXPECT_NEAR(double(loss["idle_pts"]), 10.0, 1e-9);
  EXPECT_NEAR(double(loss["other_pts"]), 10.0, 1e-9);
  EXPECT_GE(doc["explanation"].get_array().size(), 3u);
  // CSV: every table under a "# key" line.
  CliRun csv = run("report --no-plots --format csv --root " + root.path());
  EXPECT_EQ(csv.exit_code, 0);
  EXPECT_NE(csv.out.find("# epoch_time\nstrategy,workers,nodes,runs,epochs,mean_s"), std::string::npos) << csv.out;
}

TEST(ReportCli, WarningsForMissingPiecesAndNoGnuplot) {
  ScratchDir root("report-cli-warn");
  scaleprof::testing::make_run(root, "exp", "a", "a", "ddp", 1, {{2, 1}});
  scaleprof::testing::make_run(root, "exp", "b", "b", "ddp", 2, {{2, 1}, {2, 1}});
  ScratchDir plots("report-cli-warn-plots");
  CliRun r = run("report --root " + root.path() + " --plot-dir " + plots.path(), "SCALEPROF_GNUPLOT=");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.err, "gnuplot not found"), 1u) << r.err;
  EXPECT_EQ(count(r.err, "warning: No GPU data found\n"), 1u) << r.err;
  EXPECT_EQ(count(r.err, "warning: No profiler traces found\n"), 1u) << r.err;
  EXPECT_NE(r.out.find("######## Epoch Time Report ########"), std::string::npos);
  EXPECT_NE(r.out.find("The first 1 epoch(s) of every run are skipped as warm-up"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(plots.path()));
  CliRun quiet = run("report --no-warnings --root " + root.path(), "SCALEPROF_GNUPLOT=");
  EXPECT_EQ(quiet.err.find("warning:"), std::string::npos) << quiet.err;
}

TEST(ReportCli, ItwinaiNamesAndPlotFiles) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  ScratchDir root("report-cli-plots");
  build(root);
  ScratchDir plots("report-cli-plot-dir");
  CliRun r =
      run("generate-scalability-report --log-dir " + root.path() +
          " --experiment-name exp --run-names ddp-w1,ddp-w2,ddp-w4 --plot-file-suffix .svg --plot-dir " + plots.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("gloo"), std::string::npos);  // not among --run-names
  // itwinai's five file names (its sixth, computation_vs_communication_plot, belongs to its deprecated
  // communication report), then scaleprof's additions under their own names.
  for (const char* stem : {"absolute_epoch_time", "relative_epoch_time_speedup", "gpu_energy_plot", "utilization_plot",
                           "computation_vs_other_plot", "parallel_efficiency", "energy_per_epoch_plot"}) {
    const std::string file = plots / (std::string(stem) + ".svg");
    ASSERT_TRUE(fs::exists(file)) << file;
    EXPECT_NE(slurp(file).find("<svg"), std::string::npos) << file;
    EXPECT_NE(r.out.find("Saved plot at '" + file + "'."), std::string::npos) << r.out;
  }
  // itwinai's energy plot is the total energy of each group (its total_energy_wh), in Wh.
  EXPECT_NE(slurp(plots / "gpu_energy_plot.svg").find("Energy consumption (Wh)"), std::string::npos);

  // `scaleprof report` keeps its own names: no gpu_energy_plot.
  ScratchDir own("report-cli-plot-dir-own");
  CliRun mine =
      run("report --root " + root.path() +
          " --experiment exp --run-names ddp-w1,ddp-w2,ddp-w4 --plot-file-suffix .svg --plot-dir " + own.path());
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  EXPECT_TRUE(fs::exists(own / "energy_per_epoch_plot.svg"));
  EXPECT_TRUE(fs::exists(own / "utilization_plot.svg"));
  EXPECT_FALSE(fs::exists(own / "gpu_energy_plot.svg"));
  EXPECT_FALSE(fs::exists(plots / "computation_vs_communication_plot.svg"));

  // itwinai's deprecated sixth plot and its table, only on --include-communication.
  ScratchDir comm("report-cli-plot-dir-comm");
  CliRun with =
      run("generate-scalability-report --include-communication --log-dir " + root.path() +
          " --experiment-name exp --run-names ddp-w1,ddp-w2,ddp-w4 --plot-file-suffix .svg --plot-dir " + comm.path());
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_NE(with.out.find("######## Communication Data Report ########"), std::string::npos) << with.out;
  const std::string comm_plot = slurp(comm / "computation_vs_communication_plot.svg");
  EXPECT_NE(comm_plot.find("communication (hatched)"), std::string::npos);
  EXPECT_EQ(r.out.find("Communication Data Report"), std::string::npos);
}

// The text of the figure `plot-<stem>` in a DOM ("" when absent).
std::string figure_text(const std::string& dom, const std::string& stem) {
  const size_t at = dom.find("<figure id=\"plot-" + stem + "\">");
  if (at == std::string::npos) return "";
  return dom.substr(at, dom.find("</figure>", at) - at);
}

TEST(ReportHtml, RendersInChromiumWithEveryTableAndPlot) {
  if (!have("chromium")) GTEST_SKIP() << "chromium not installed";
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (the HTML plots come from it)";
  // The check must be able to fail: a page with a console error is caught.
  ScratchDir scratch("report-html");
  const std::string bad = scratch.write("bad.html", "<html><body><script>console.error('boom')</script></body></html>");
  std::string console;
  chromium_dom(bad, &console);
  ASSERT_NE(console.find("boom"), std::string::npos) << "console capture does not work";

  ScratchDir root("report-html-root");
  build(root, "<script>alert(1)</script>");
  const std::string page = scratch / "report.html";
  CliRun r = run("report --no-plots --root " + root.path() + " --html " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = slurp(page);
  // Self-contained: nothing loaded from anywhere.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);

  const std::string dom = chromium_dom(page, &console);
  EXPECT_TRUE(console.empty()) << console;
  EXPECT_NE(dom.find("<h1>Scalability report</h1>"), std::string::npos) << dom.substr(0, 2000);
  for (const char* table : {"epoch_time", "scaling", "amdahl", "gpu", "gpu_devices", "trace_breakdown",
                            "collective_time", "computation_fraction", "scaling_loss", "best_strategy", "runs"}) {
    const size_t at = dom.find(std::string("<table class=\"data\" id=\"table-") + table + "\">");
    ASSERT_NE(at, std::string::npos) << "table " << table << " missing";
    const size_t body = dom.find("<tbody>", at);
    ASSERT_NE(body, std::string::npos);
    EXPECT_EQ(dom.find_first_not_of(" \n", body + 7), dom.find("<tr>", body)) << "table " << table << " empty";
  }
  for (const char* plot :
       {"absolute_epoch_time", "relative_epoch_time_speedup", "parallel_efficiency", "utilization_plot",
        "energy_per_epoch_plot", "computation_vs_other_plot", "collective_bandwidth", "rank_wait"}) {
    const std::string figure = std::string("<figure id=\"plot-") + plot + "\">";
    const size_t at = dom.find(figure);
    ASSERT_NE(at, std::string::npos) << "plot " << plot << " missing";
    const size_t svg = dom.find_first_not_of(" \n", at + figure.size());
    ASSERT_EQ(dom.compare(svg, 4, "<svg"), 0) << "plot " << plot << " has no svg";
    const size_t end = dom.find("</svg>", svg);
    const size_t path = dom.find("<path", svg);
    EXPECT_TRUE(end != std::string::npos && path < end) << "plot " << plot << " draws nothing";
  }
  // Collectives (gloo at 2 workers): the 1 MiB all-reduce in the bandwidth plot, both ranks in the
  // wait chart with their legend.
  const std::string bandwidth = figure_text(dom, "collective_bandwidth");
  EXPECT_NE(bandwidth.find("gloo, 2 workers"), std::string::npos) << bandwidth;
  EXPECT_NE(bandwidth.find(">1 MiB<"), std::string::npos) << bandwidth;
  const std::string waits = figure_text(dom, "rank_wait");
  EXPECT_NE(waits.find("gloo, 2 workers: waited for the last rank"), std::string::npos) << waits;
  EXPECT_NE(waits.find("gloo, 2 workers: others waited for it"), std::string::npos) << waits;
  EXPECT_NE(waits.find(">Rank<"), std::string::npos) << waits;
  EXPECT_NE(dom.find("Where scaling is lost"), std::string::npos);
  EXPECT_NE(dom.find("communication growth accounts for 5.0 points"), std::string::npos);
  // The run name is text, not markup: escaped in the DOM, and no script element exists.
  EXPECT_NE(dom.find("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"), std::string::npos);
  EXPECT_EQ(dom.find("<script"), std::string::npos);

  // Beside the page, in report-traces/, the trace page of each of the three runs with traces, linked
  // from a "Trace pages" section; the hostile run name is a safe file name and escaped link text.
  const std::string traces = scratch / "report-traces";
  const std::string xss_page = "ddp-1w-_script_alert_1___script_.html";
  for (const std::string& name : {xss_page, std::string("ddp-4w-ddp-w4.html"), std::string("gloo-2w-gloo-w2.html")}) {
    ASSERT_TRUE(fs::exists(traces + "/" + name)) << name;
    EXPECT_NE(html.find("<a href=\"report-traces/" + name + "\">"), std::string::npos) << name;
    EXPECT_NE(slurp(traces + "/" + name).find("<figure"), std::string::npos) << name << " draws nothing";
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(traces), fs::directory_iterator()), 3);
  EXPECT_NE(dom.find(">ddp, 1 worker(s): run &lt;script&gt;alert(1)&lt;/script&gt;</a> (1 trace file(s))"),
            std::string::npos);
  EXPECT_NE(dom.find(">gloo, 2 worker(s): run gloo-w2</a> (2 trace file(s))"), std::string::npos);
  EXPECT_NE(r.err.find("Saved 3 trace page(s) in"), std::string::npos) << r.err;
  // --no-trace-pages: neither the pages nor the links.
  ScratchDir bare("report-html-bare");
  CliRun no_pages = run("report --no-plots --no-trace-pages --root " + root.path() + " --html " + (bare / "r.html"));
  ASSERT_EQ(no_pages.exit_code, 0) << no_pages.err;
  EXPECT_FALSE(fs::exists(bare / "r-traces"));
  EXPECT_EQ(slurp(bare / "r.html").find("trace-pages"), std::string::npos);
}

// Pixels of `img` inside [x0, x1) x [y0, y1) within 40 of the colour (r, g, b) on every channel.
size_t pixels_near(const scaleprof::testing::PngImage& img, int x0, int y0, int x1, int y1, int r, int g, int b) {
  size_t n = 0;
  for (int y = y0; y < std::min(y1, img.height); ++y) {
    for (int x = x0; x < std::min(x1, img.width); ++x) {
      const uint8_t* p = img.at(x, y);
      n += std::abs(p[0] - r) <= 40 && std::abs(p[1] - g) <= 40 && std::abs(p[2] - b) <= 40 ? 1 : 0;
    }
  }
  return n;
}

// The page opens with the answer: the key figures are the first section, and a browser window of
// 1280 x 900 shows them and the lost-efficiency chart without scrolling. "Where scaling is lost"
// is one section with one contents entry.
TEST(ReportHtml, FirstScreenShowsKeyFiguresAndLossChart) {
  if (!have("chromium")) GTEST_SKIP() << "chromium not installed";
  ScratchDir root("report-html-first-root");
  build(root);
  // At 4 workers: 60 us computation, 20 us idle, 20 us communication.
  root.write("exp/ddp-w4/rank-00000/traces/r0.pt.trace.json", scaleprof::testing::tiny_trace(0, 60, 20, 20));
  ScratchDir scratch("report-html-first");
  const std::string page = scratch / "report.html";
  CliRun r = run("report --no-plots --root " + root.path() + " --html " + page, "SCALEPROF_GNUPLOT=");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  std::string console;
  const std::string dom = chromium_dom(page, &console);
  EXPECT_TRUE(console.empty()) << console;
  const size_t first_section = dom.find("<section");
  ASSERT_NE(first_section, std::string::npos);
  EXPECT_EQ(dom.compare(first_section, 30, "<section id=\"key-figures\">\n<h2"), 0) << dom.substr(first_section, 80);
  const size_t end = dom.find("</section>", first_section);
  const std::string key = dom.substr(first_section, end - first_section);
  // ddp: 1 -> 4 workers, 9 s -> 3 s: efficiency 75%, 25 points lost; communication 20% -> 20% of the
  // span: 0.6 s vs 1.8/4 = 0.45 s, 5.0 points; idle 0 -> 20%: 0.6 s, 20.0 points; nothing else.
  EXPECT_NE(key.find("Best strategy per scale"), std::string::npos);
  EXPECT_NE(key.find("<b>2 workers</b>: ddp"), std::string::npos) << key;
  EXPECT_NE(key.find("<b>ddp</b>: <span class=\"big\">75.0%</span> at 4 workers (vs. 1)"), std::string::npos) << key;
  EXPECT_NE(key.find("<b>ddp</b>: <span class=\"big\">idle</span> — 20.0 of 25.0 points"), std::string::npos) << key;
  EXPECT_NE(key.find("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"loss-chart\""), std::string::npos);
  EXPECT_EQ(count(dom, ">Where Scaling Is Lost</"), 2u);  // the contents entry and the section heading
  EXPECT_EQ(count(dom, "<h2>Where Scaling Is Lost</h2>"), 1u);
  EXPECT_EQ(count(dom, "href=\"#section-scaling_loss\">Where Scaling Is Lost"), 1u);

  // The first screen, as a person sees it.
  ScratchDir profile("report-chromium-shot");
  const std::string shot = scratch / "first-screen.png";
  CliRun c = shell(
      "timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars "
      "--user-data-dir=" +
      profile.path() + " --window-size=1280,900 --screenshot=" + shot + " file://" + page);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const scaleprof::testing::PngImage img = scaleprof::testing::read_png(shot);
  ASSERT_TRUE(img.error.empty()) << img.error;
  ASSERT_EQ(img.width, 1280);
  ASSERT_EQ(img.height, 900);
  // Not blank: text and boxes cover a real part of the screen.
  size_t ink = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      const uint8_t* p = img.at(x, y);
      ink += p[0] < 200 || p[1] < 200 || p[2] < 200 ? 1 : 0;
    }
  }
  EXPECT_GT(ink, 20000u);
  // The chart's bars, in the colours of their causes, lie within the first screen: communication
  // (#D55E00, 5 points) and idle (#E69F00, 10 points), at least a bar's height of each.
  EXPECT_GT(pixels_near(img, 0, 0, 1280, 900, 0xD5, 0x5E, 0x00), 400u);
  EXPECT_GT(pixels_near(img, 0, 0, 1280, 900, 0xE6, 0x9F, 0x00), 800u);
  // And the key-figure cards (their blue top border, #0072B2) above the chart.
  EXPECT_GT(pixels_near(img, 0, 0, 1280, 450, 0x00, 0x72, 0xB2), 1000u);
}

// Two strategies with the same epoch times have the same Amdahl projection: both dashed lines must
// stay visible (their own dash patterns), and the computation plot labels its bars in percent.
TEST(ReportCli, ProjectionsStayVisibleAndComputationBarsAreLabelled) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  ScratchDir root("report-cli-overlap");
  using scaleprof::testing::make_run;
  for (const char* strategy : {"ddp", "gloo"}) {
    make_run(root, "exp", std::string(strategy) + "-w1", std::string(strategy) + "-w1", strategy, 1, {{10, 8, 8}});
    make_run(root, "exp", std::string(strategy) + "-w2", std::string(strategy) + "-w2", strategy, 2,
             {{6, 5, 5}, {6, 5, 5}});
  }
  // itwinai's computation data (another root): 754.7 of 1000 us is computation -> "75.5%".
  ScratchDir itw("report-cli-labels");
  itw.write("itw/epoch-time/epochtime_deepspeed_1N.csv",
            "epoch_id,time,name,nodes\n1,5,deepspeed,1\n2,4,deepspeed,1\n");
  itw.write("itw/computation-data/deepspeed_4_0.csv",
            ",name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,"
            "global_rank\n0,ProfilerStep*,0,1000.0,0,,1,deepspeed,4,0\n1,aten::mm,0,754.7,0,,1,deepspeed,4,0\n"
            "2,ncclKernel,0,245.3,0,,1,deepspeed,4,0\n");
  ScratchDir plots("report-cli-overlap-plots");
  CliRun r = run("report --root " + root.path() + " --plot-file-suffix .svg --plot-dir " + plots.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string speedup = slurp(plots / "relative_epoch_time_speedup.svg");
  // gnuplot writes each line as <g id="gnuplot_plot_N"> with its key text <text>NAME</text> and then
  // its path, dashed with stroke-dasharray='...'.
  auto dash_of = [&](const std::string& title) {
    const size_t at = speedup.find("<text>" + title + "</text>");
    if (at == std::string::npos) return std::string("missing");
    const size_t end = speedup.find("gnuplot_plot_", at);
    const size_t dash = speedup.find("stroke-dasharray='", at);
    if (dash == std::string::npos || dash > end) return std::string("solid");
    return speedup.substr(dash, speedup.find('\'', dash + 18) - dash);
  };
  const std::string ddp = dash_of("ddp (Amdahl projection)");
  const std::string gloo = dash_of("gloo (Amdahl projection)");
  EXPECT_NE(ddp, "missing");
  EXPECT_NE(gloo, "missing");
  EXPECT_NE(ddp, "solid");
  EXPECT_NE(ddp, gloo) << "coinciding projections drawn with the same dashes";
  CliRun c = run("report --root " + itw.path() + " --plot-file-suffix .svg --plot-dir " + plots.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::string comp = slurp(plots / "computation_vs_other_plot.svg");
  EXPECT_NE(comp.find(">75.5%<"), std::string::npos) << "no percentage label on the computation bar";
}

// The console shows one row per configuration: the per-GPU table (one row per GPU of every run) is
// only named there, with where to find it; CSV and JSON keep it.
TEST(ReportCli, ConsoleLeavesPerGpuDetailToOtherForms) {
  ScratchDir root("report-cli-console");
  build(root);
  CliRun r = run("report --no-plots --root " + root.path(), "SCALEPROF_GNUPLOT=");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("rank-00000 gpu 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Per-GPU detail: 3 row(s), one per GPU of every run: see --format csv or json, or the --html "
                       "page."),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPU utilization and energy per strategy and number of workers"), std::string::npos);
  CliRun csv = run("report --no-plots --format csv --root " + root.path(), "SCALEPROF_GNUPLOT=");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(count(csv.out, "rank-00000 gpu 0"), 3u) << csv.out;
}

// `scaleprof runs` lists runs in itwinai's CSV layout too (one per run-id folder, strategy, workers).
TEST(RunsCli, ListsItwinaiLayoutRuns) {
  ScratchDir root("runs-cli-itwinai");
  build(root);
  root.write("job7/epoch-time/epochtime_deepspeed_2N.csv",
             "epoch_id,time,name,nodes\n1,6,deepspeed,2\n2,5,deepspeed,2\n3,5,deepspeed,2\n");
  CliRun r = run("runs -q --format csv --root " + root.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n,job7,deepspeed,8,2,3,,,,itwinai\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nexp,ddp-w4,ddp,4,1,3,completed,"), std::string::npos) << r.out;
  // itwinai's layout has no experiment names: an experiment filter lists scaleprof runs only.
  CliRun e = run("runs -q --format csv --experiment exp --root " + root.path());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.out.find("job7"), std::string::npos) << e.out;
}

}  // namespace
