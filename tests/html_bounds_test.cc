// What every HTML page writes (report/html_page.h), against hostile text (issue 30, items 5 and 6):
// names bounded per cell and per chart label (16 ranks of long kernel names made a 29 MB trace page),
// links URL-encoded (a report named "report-10:30.html" made every trace-page link dead, a
// "javascript:" name made them javascript: URLs), and bidi overrides and control characters shown as
// their code, as the terminal shows them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_harness.h"
#include "report/html_page.h"
#include "report/name_shorten.h"
#include "scalability_fixtures.h"

namespace scaleprof {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;
using testing::ScratchDir;
using testing::slurp;

// A C++ kernel name of about `bytes` bytes: a long namespace path with template arguments.
std::string long_kernel_name(size_t bytes, int salt) {
  std::string name = fmt::format("void ns{}::kernel<", salt);
  while (name.size() < bytes) name += "at::native::detail::VeryLongTemplateArgument<float, 128>, ";
  return name + "int>(float*, long)";
}

TEST(HtmlPage, EscapeShowsBidiAndControlCharactersAsTheirCode) {
  // U+202E (right-to-left override) would show "txt.exe" as "exe.txt"; ESC starts a terminal
  // sequence when the page's text is copied to one; U+009B is the C1 CSI; U+200B is invisible.
  EXPECT_EQ(report::html_escape("a\u202Etxt.exe"), "a\\u202etxt.exe");
  EXPECT_EQ(report::html_escape("red\x1b[31m"), "red\\u001b[31m");
  EXPECT_EQ(report::html_escape(std::string("nul\0x", 5)), "nul\\u0000x");
  EXPECT_EQ(report::html_escape("del\x7f"), "del\\u007f");
  EXPECT_EQ(report::html_escape("csi\u009B"), "csi\\u009b");
  EXPECT_EQ(report::html_escape("zero\u200Bwidth\u2066"), "zero\\u200bwidth\\u2066");
  // What is not a control stays: markup escaped, line breaks and tabs, other UTF-8, invalid bytes as U+FFFD.
  EXPECT_EQ(report::html_escape("<b>\"x\" & 'y'</b>\n\t\r"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;\n\t\r");
  EXPECT_EQ(report::html_escape("caf\u00e9 \u4e2d"), "caf\u00e9 \u4e2d");
  EXPECT_EQ(report::html_escape("bad\xff"), "bad\uFFFD");
}

TEST(HtmlPage, CellsAndNamesAreBoundedAsTheTerminalShortensThem) {
  const std::string name = long_kernel_name(100'000, 1);
  const std::string cell = report::html_cell(report::Cell(name));
  EXPECT_EQ(cell, "<td>" + report::html_escape(report::shorten_name(name, report::kMaxHtmlNameWidth)) + "</td>");
  EXPECT_EQ(cell, "<td>void ns1::kernel&lt;\u2026&gt;(\u2026)</td>");  // the terminal's shortening
  // A name with nothing to elide keeps its start and end; escaping never cuts an entity.
  const std::string plain(50'000, '<');
  const std::string bounded = report::html_name(plain);
  EXPECT_LE(report::display_width(report::shorten_name(plain, report::kMaxHtmlNameWidth)), report::kMaxHtmlNameWidth);
  EXPECT_LT(bounded.size(), 5 * report::kMaxHtmlNameWidth);
  EXPECT_EQ(bounded.substr(0, 8), "&lt;&lt;");
  // Short names are whole.
  EXPECT_EQ(report::html_cell(report::Cell(std::string("aten::mm"))), "<td>aten::mm</td>");
}

// Shortening is linear: a name of many brackets that never close was quadratic (every opener scanned
// to the end), and every name of a page now passes through it.
TEST(HtmlPage, ShorteningManyUnclosedBracketsKeepsStartAndEnd) {
  const std::string name = "f" + std::string(2'000'000, '(') + "end";
  const std::string shortened = report::shorten_name(name, 20);
  EXPECT_EQ(report::display_width(shortened), 20u);
  EXPECT_EQ(shortened.substr(0, 2), "f(");
  EXPECT_TRUE(shortened.ends_with("(end")) << shortened;
  // Pairs inside unclosed ones still elide as before.
  EXPECT_EQ(report::shorten_name("g((a, b)", 6), "g((\u2026)");
}

TEST(HtmlPage, UrlPathEncodesEverythingButUnreservedAndSlash) {
  EXPECT_EQ(report::url_path("report-10:30-traces/ddp-4w-run.html"), "report-10%3A30-traces/ddp-4w-run.html");
  EXPECT_EQ(report::url_path("javascript:alert(1)//x"), "javascript%3Aalert%281%29//x");
  EXPECT_EQ(report::url_path("a b#c?d%e&f\"<\xc3\xa9"), "a%20b%23c%3Fd%25e%26f%22%3C%C3%A9");
  EXPECT_EQ(report::url_path("A-Z_a.z~0/9"), "A-Z_a.z~0/9");
}

// 16 ranks, each with a kernel name of 60 kB: the page holds each name shortened, the CSV whole.
TEST(HtmlPage, TracePageOfLongNamesStaysSmall) {
  ScratchDir dir("html-long-names");
  std::string paths;
  std::string names_total;
  for (int r = 0; r < 16; ++r) {
    std::string trace = testing::tiny_trace(r, 80, 10, 20, long_kernel_name(60'000, r));
    const std::string from = "\"world_size\":2";
    trace.replace(trace.find(from), from.size(), "\"world_size\":16");
    paths += " " + dir.write(fmt::format("rank{}.json", r), trace);
  }
  const std::string page = dir / "page.html";
  const auto run = run_cli("trace summary --quiet --format csv --html " + page + paths, "", 120);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string html = slurp(page);
  // Before: every name whole in every table cell and chart tooltip, 16 x 60 kB many times over.
  EXPECT_LT(html.size(), 1'000'000u) << html.size();
  EXPECT_EQ(html.find(long_kernel_name(60'000, 3)), std::string::npos);
  EXPECT_NE(html.find("void ns3::kernel&lt;\u2026&gt;(\u2026)"), std::string::npos);
  EXPECT_NE(run.out.find(long_kernel_name(60'000, 3)), std::string::npos);  // CSV: whole
}

// The trace-page links of `scaleprof report --html NAME`: the folder is named after the page, so a
// name with ':' made every link "report-10:30-traces/...", a URL of scheme "report-10"; "javascript:..."
// made a javascript: URL. Each link is now URL-encoded and still reaches its page.
TEST(HtmlPage, TracePageLinksAreUrlEncoded) {
  ScratchDir root("html-links-root");
  testing::make_run(root, "exp", "ddp-w1", "ddp-w1", "ddp", 1, {{10, 9, 9}});
  testing::make_run(root, "exp", "ddp-w2", "ddp-w2", "ddp", 2, {{6, 5, 5}, {6, 5, 5}});
  root.write("exp/ddp-w1/rank-00000/traces/r0.pt.trace.json", testing::tiny_trace(0, 80, 0, 20));
  ScratchDir out("html-links-out");
  for (const std::string& stem : {std::string("report-10:30"), std::string("javascript:alert(1)")}) {
    SCOPED_TRACE(stem);
    const std::string page = out / (stem + ".html");
    const auto run = run_cli("report --no-plots --root " + root.path() + " --html '" + page + "'", "", 120);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::string html = slurp(page);
    const std::string target = report::url_path(stem + "-traces/ddp-1w-ddp-w1.html");
    EXPECT_NE(html.find("<a href=\"" + target + "\">"), std::string::npos) << html.substr(html.find("trace-pages"));
    EXPECT_EQ(html.find("href=\"" + stem), std::string::npos);
    EXPECT_TRUE(fs::exists(out / (stem + "-traces/ddp-1w-ddp-w1.html")));
  }
}

}  // namespace
}  // namespace scaleprof
