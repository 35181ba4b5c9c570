// Text tables fit the terminal (report/table_layout.h): headers wrap, the least important columns are
// left out with a note, what is left folds; --wide keeps the layout of old; CSV and JSON keep all.
#include "report/table_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/name_shorten.h"
#include "report/table.h"

namespace scaleprof::report {
namespace {

// Two key columns, two essential ones (one with a long title over short numbers), two of detail and
// one useful: 96 columns on one line.
Table scaling_table() {
  Table t;
  t.title = "Scaling";
  t.columns = {{"strategy", "Strategy"},
               {"workers", "Workers"},
               {"waiting_pts", "Waiting for stragglers (pts)"},
               {"efficiency_pct", "Efficiency (%)"},
               {"nodes", "Nodes"},
               {"runs", "Runs"},
               {"ideal", "Ideal speedup (x)"}};
  t.set_importance(Importance::kKey, {"strategy", "workers", "no_such_column"});
  t.set_importance(Importance::kDetail, {"nodes", "runs"});
  t.set_importance(Importance::kUseful, {"ideal"});
  t.add_row({"ddp", 4, 12.5, 81.25, 1, 2, 4.0});
  t.add_row({"deepspeed", 8, 3.0, 60.0, 2, 1, 8.0});
  return t;
}

RenderOptions width(size_t max_width) {
  RenderOptions o;
  o.max_width = max_width;
  return o;
}

size_t widest_line(const std::string& text) {
  size_t widest = 0, start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    widest = std::max(widest, display_width(std::string_view(text).substr(start, end - start)));
    start = end + 1;
  }
  return widest;
}

TEST(TableLayout, ATableThatFitsIsPrintedAsBefore) {
  const std::string expected =
      "Scaling\n"
      "Strategy   Workers  Waiting for stragglers (pts)  Efficiency (%)  Nodes  Runs  Ideal speedup (x)\n"
      "------------------------------------------------------------------------------------------------\n"
      "ddp              4                         12.50           81.25      1     2               4.00\n"
      "deepspeed        8                          3.00           60.00      2     1               8.00\n";
  EXPECT_EQ(render(scaling_table(), width(96)), expected);
  EXPECT_EQ(render(scaling_table(), RenderOptions{}), expected);  // no limit
}

TEST(TableLayout, HeadersWrapThenTheLeastImportantColumnGoesWithANote) {
  // Wrapped headers take 65 columns; leaving out Runs (detail, the rightmost) fits 60.
  const std::string text = render(scaling_table(), width(60));
  EXPECT_EQ(text,
            "Scaling\n"
            "                    Waiting for                       Ideal\n"
            "                     stragglers  Efficiency         speedup\n"
            "Strategy   Workers        (pts)         (%)  Nodes      (x)\n"
            "-----------------------------------------------------------\n"
            "ddp              4        12.50       81.25      1     4.00\n"
            "deepspeed        8         3.00       60.00      2     8.00\n"
            "Left out to fit 60 columns: Runs. --wide shows every column\n"
            "(so do --format csv and json).\n");
  EXPECT_LE(widest_line(text), 60u);
}

TEST(TableLayout, EssentialColumnsThatDoNotFitAreFoldedWithTheKeysRepeated) {
  // At 40: Runs and Nodes (detail) go, then Ideal speedup (useful); the rest needs 43, so it folds.
  // Headers sit on the rule.
  const std::string text = render(scaling_table(), width(40));
  EXPECT_EQ(text,
            "Scaling\n"
            "                    Waiting for\n"
            "                     stragglers\n"
            "Strategy   Workers        (pts)\n"
            "-------------------------------\n"
            "ddp              4        12.50\n"
            "deepspeed        8         3.00\n"
            "\n"
            "Scaling (continued)\n"
            "                    Efficiency\n"
            "Strategy   Workers         (%)\n"
            "------------------------------\n"
            "ddp              4       81.25\n"
            "deepspeed        8       60.00\n"
            "Left out to fit 40 columns: Nodes, Runs,\n"
            "Ideal speedup (x). --wide shows every\n"
            "column (so do --format csv and json).\n");
  EXPECT_LE(widest_line(text), 40u);
}

TEST(TableLayout, WideKeepsEveryColumnOnOneHeaderLine) {
  RenderOptions wide = width(40);
  wide.wide = true;
  EXPECT_EQ(render(scaling_table(), wide), render(scaling_table(), RenderOptions{}));
}

TEST(TableLayout, CsvAndJsonKeepEveryColumn) {
  for (Format f : {Format::kCsv, Format::kJson}) {
    RenderOptions narrow = width(40);
    narrow.format = f;
    RenderOptions unlimited;
    unlimited.format = f;
    EXPECT_EQ(render(scaling_table(), narrow), render(scaling_table(), unlimited));
  }
  RenderOptions csv = width(40);
  csv.format = Format::kCsv;
  EXPECT_EQ(render(scaling_table(), csv),
            "strategy,workers,waiting_pts,efficiency_pct,nodes,runs,ideal\n"
            "ddp,4,12.5,81.25,1,2,4\n"
            "deepspeed,8,3,60,2,1,8\n");
}

TEST(TableLayout, WithoutKeysTheFirstColumnStartsEveryPart) {
  Table t;
  t.columns = {{"a", "Alpha alpha"}, {"b", "Beta beta"}, {"c", "Gamma gamma"}};
  t.add_row({1, 2, 3});
  const std::string text = render(t, width(12));
  EXPECT_EQ(text,
            "Alpha  Beta\n"
            "alpha  beta\n"
            "-----------\n"
            "    1     2\n"
            "\n"
            "(continued)\n"
            "Alpha  Gamma\n"
            "alpha  gamma\n"
            "------------\n"
            "    1      3\n");
}

TEST(TableLayout, NamesNarrowOnlyAsFarAsTheKeptColumnsNeed) {
  Table t;
  t.columns = {{"name", "Name"}, {"time", "Time (us)"}, {"extra", "Some detail nobody needs"}};
  t.set_importance(Importance::kKey, {"name"});
  t.set_importance(Importance::kDetail, {"extra"});
  const std::string name(70, 'x');
  t.add_row({name, 1.5, 2.5});
  // 70 + 2 + 9 + 2 + 24 = 107 on one line. At 80, with the headers wrapped, narrowing the name to 61
  // is enough: nothing is left out.
  const std::string at80 = render(t, width(80));
  EXPECT_NE(at80.find(std::string(40, 'x') + "\u2026" + std::string(20, 'x') + "  1.50         2.50\n"),
            std::string::npos)
      << at80;
  EXPECT_EQ(at80.find("Left out"), std::string::npos) << at80;
  EXPECT_EQ(widest_line(at80), 80u) << at80;
  // At 50 the name at its narrowest (40) and the rest need 59: the detail column goes, and the name
  // takes the room left (44).
  const std::string at50 = render(t, width(50));
  EXPECT_NE(at50.find(std::string(29, 'x') + "\u2026" + std::string(14, 'x') + "  1.50\n"), std::string::npos) << at50;
  EXPECT_NE(at50.find("Left out to fit 50 columns: Some detail nobody\nneeds."), std::string::npos) << at50;
  EXPECT_LE(widest_line(at50), 50u) << at50;
  // --full-names: the name stays whole (the line is then wider), the detail column still goes.
  RenderOptions full = width(50);
  full.full_names = true;
  const std::string whole = render(t, full);
  EXPECT_NE(whole.find(name + "  1.50\n"), std::string::npos) << whole;
  EXPECT_NE(whole.find("Left out to fit 50 columns: Some detail nobody\nneeds."), std::string::npos) << whole;
}

TEST(TableLayout, WrapWords) {
  EXPECT_EQ(wrap_words("Waiting for stragglers (pts)", 11),
            (std::vector<std::string>{"Waiting for", "stragglers", "(pts)"}));
  EXPECT_EQ(wrap_words("short", 0), (std::vector<std::string>{"short"}));
  EXPECT_EQ(wrap_words("a verylongword b", 4), (std::vector<std::string>{"a", "verylongword", "b"}));
  EXPECT_EQ(wrap_words("\u00e9t\u00e9 \u00e9t\u00e9", 7), (std::vector<std::string>{"\u00e9t\u00e9 \u00e9t\u00e9"}));
}

}  // namespace
}  // namespace scaleprof::report
