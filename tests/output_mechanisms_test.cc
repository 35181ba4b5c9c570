// The shared output mechanisms: the output-file writer, the terminal sanitiser, the CSV cell writer
// and the JSON string writer (docs/cli.md, "Output guarantees").
#include <fcntl.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cli_harness.h"
#include "core/csv_cell.h"
#include "core/json_string.h"
#include "core/output_file.h"
#include "core/terminal_text.h"
#include "report/table.h"
#include "scalability_fixtures.h"

namespace {

namespace fs = std::filesystem;
using scaleprof::testing::ScratchDir;

using scaleprof::testing::slurp;

size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// --- output-file writer -------------------------------------------------------------------------

TEST(OutputFile, CreatesAndReplacesRegularFilesKeepingTheirMode) {
  ScratchDir dir("out-regular");
  const std::string file = dir / "report.txt";
  ASSERT_TRUE(scaleprof::write_output_file(file, "first\n"));
  EXPECT_EQ(slurp(file), "first\n");
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  ASSERT_TRUE(scaleprof::write_output_file(file, "second\n"));
  EXPECT_EQ(slurp(file), "second\n");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(entries(dir.path()), 1u);  // no temporary file left behind
}

TEST(OutputFile, PlantedTmpSymlinkIsNeverFollowed) {
  ScratchDir dir("out-planted");
  const std::string victim = dir.write("victim.txt", "precious\n");
  const std::string file = dir / "report.txt";
  fs::create_symlink(victim, file + ".tmp");
  ASSERT_TRUE(scaleprof::write_output_file(file, "report\n"));
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_TRUE(fs::is_symlink(file + ".tmp"));
  EXPECT_EQ(slurp(file), "report\n");
}

TEST(OutputFile, SymlinkIsWrittenThroughAndStaysALink) {
  ScratchDir dir("out-symlink");
  const std::string target = dir.write("real/target.html", "old\n");
  const std::string link = dir / "report.html";
  fs::create_symlink(target, link);
  ASSERT_TRUE(scaleprof::write_output_file(link, "new\n"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "new\n");
  EXPECT_EQ(entries(dir / "real"), 1u);
}

TEST(OutputFile, DanglingSymlinkIsRefused) {
  ScratchDir dir("out-dangling");
  const std::string link = dir / "report.html";
  fs::create_symlink(dir / "elsewhere/new-file", link);
  fs::create_directories(dir / "elsewhere");
  scaleprof::Status st = scaleprof::write_output_file(link, "x");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, link + ": cannot write: a symbolic link to a missing file (refused)");
  EXPECT_FALSE(fs::exists(dir / "elsewhere/new-file"));
}

TEST(OutputFile, DevicesStayDevices) {
  ASSERT_TRUE(scaleprof::write_output_file("/dev/null", "discarded\n"));
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A full device: the error is reported, not swallowed.
  scaleprof::Status full = scaleprof::write_output_file("/dev/full", "x");
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().message, "/dev/full: cannot write: No space left on device");
}

TEST(OutputFile, PipeIsWrittenStraight) {
  ScratchDir dir("out-fifo");
  const std::string fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  ASSERT_TRUE(scaleprof::write_output_file(fifo, "through the pipe\n"));
  reader.join();
  EXPECT_EQ(got, "through the pipe\n");
  EXPECT_EQ(fs::status(fifo).type(), fs::file_type::fifo);
}

TEST(OutputFile, FolderAndMissingParentAreErrors) {
  ScratchDir dir("out-folder");
  scaleprof::Status folder = scaleprof::write_output_file(dir.path(), "x");
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error().message, dir.path() + ": cannot write: is a folder");
  scaleprof::Status missing = scaleprof::write_output_file(dir / "no/such/file", "x");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, dir / "no/such/file" + ": cannot write: No such file or directory");
}

// The producer form: the text comes piece by piece (more than one 64 KiB block), the old file stays
// whole until the last piece is written, and a full device's error is returned once at the end.
TEST(OutputFile, PiecesReplaceTheFileOnlyWhenAllAreWritten) {
  ScratchDir dir("out-pieces");
  const std::string file = dir.write("report.csv", "old\n");
  std::string want;
  bool old_kept_while_writing = true;
  ASSERT_TRUE(scaleprof::write_output_file(file, [&](const scaleprof::TextSink& put) {
    for (int i = 0; i < 20000; ++i) {
      const std::string line = "row " + std::to_string(i) + ",some cells to make it long\n";
      want += line;
      put(line);
      if (i % 5000 == 0) old_kept_while_writing = old_kept_while_writing && slurp(file) == "old\n";
    }
  }));
  EXPECT_TRUE(old_kept_while_writing);
  EXPECT_GT(want.size(), size_t{3} * 65536);
  EXPECT_EQ(slurp(file), want);
  EXPECT_EQ(entries(dir.path()), 1u);
  int pieces = 0;
  scaleprof::Status full = scaleprof::write_output_file("/dev/full", [&](const scaleprof::TextSink& put) {
    for (int i = 0; i < 100; ++i, ++pieces) put(std::string(4096, 'x'));
  });
  ASSERT_FALSE(full);
  EXPECT_EQ(pieces, 100);  // the producer never sees the error; it is returned once
  EXPECT_EQ(full.error().message, "/dev/full: cannot write: No space left on device");
}

// A table whose rows are made on demand renders exactly like the same rows stored, in every format,
// whole or piece by piece.
TEST(TableRowSource, RendersLikeStoredRowsInEveryFormat) {
  namespace r = scaleprof::report;
  r::Table stored;
  stored.title = "calls";
  stored.columns = {{"name", "Name"}, {"n", "N"}, {"us", "Time (us)"}};
  stored.add_row({"first", int64_t{1}, r::Cell(1.5, 3)});
  r::Table made = stored;
  for (int i = 2; i < 50; ++i) {
    stored.add_row({"call " + std::to_string(i), int64_t{i}, r::Cell(i * 0.25, 3)});
  }
  made.row_source = [](const r::RowVisitor& visit) {
    for (int i = 2; i < 50; ++i) visit({"call " + std::to_string(i), int64_t{i}, r::Cell(i * 0.25, 3)});
  };
  for (r::Format f : {r::Format::kTable, r::Format::kCsv, r::Format::kJson}) {
    r::RenderOptions options;
    options.format = f;
    const std::string want = r::render(stored, options);
    EXPECT_EQ(r::render(made, options), want);
    std::string pieces;
    r::render_many_to({made, stored}, {"a", "b"}, options, [&](std::string_view p) { pieces += p; });
    EXPECT_EQ(pieces, r::render_many({stored, stored}, {"a", "b"}, options));
    EXPECT_NE(want.find("call 49"), std::string::npos);
  }
}

// --- terminal sanitiser -------------------------------------------------------------------------

TEST(TerminalText, ControlSequencesBecomeVisible) {
  using scaleprof::terminal_safe;
  EXPECT_EQ(terminal_safe("plain ascii, 100 %"), "plain ascii, 100 %");
  EXPECT_EQ(terminal_safe("gr\xC3\xBC\xC3\x9F \xE6\x97\xA5"), "gr\xC3\xBC\xC3\x9F \xE6\x97\xA5");  // UTF-8 stays
  EXPECT_EQ(terminal_safe("\x1b[31mred\x1b[0m"), "\\u001b[31mred\\u001b[0m");
  EXPECT_EQ(terminal_safe("\x1b]52;c;ZXZpbA==\x07"), "\\u001b]52;c;ZXZpbA==\\u0007");  // OSC 52 clipboard
  EXPECT_EQ(terminal_safe("run\nerror: fake"), "run\\nerror: fake");
  EXPECT_EQ(terminal_safe("100%\rdone"), "100%\\rdone");
  EXPECT_EQ(terminal_safe("a\tb\x7f"), "a\\tb\\u007f");
  EXPECT_EQ(terminal_safe("\xC2\x9B"
                          "2J"),
            "\\u009b2J");  // C1 CSI
  EXPECT_EQ(terminal_safe("abc\xE2\x80\xAE"
                          "fdp"),
            "abc\\u202efdp");  // right-to-left override
  EXPECT_EQ(terminal_safe("bad \xff\xC3"), "bad \\xff\\xc3");
}

TEST(TerminalText, PrintMessageIsOneLine) {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* stream = open_memstream(&buffer, &size);
  scaleprof::print_message(stream, "error", "x.csv: name \"a\nerror: all good\" rejected");
  std::fclose(stream);
  EXPECT_EQ(std::string(buffer, size), "error: x.csv: name \"a\\nerror: all good\" rejected\n");
  std::free(buffer);
}

// --- CSV cell writer -----------------------------------------------------------------------------

TEST(CsvCell, FormulaLeadsAreNeutralisedNumbersStayNumbers) {
  using scaleprof::csv_cell;
  EXPECT_EQ(csv_cell("ddp"), "ddp");
  EXPECT_EQ(csv_cell("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
  EXPECT_EQ(csv_cell("+1+1"), "'+1+1");
  EXPECT_EQ(csv_cell("-2+3"), "'-2+3");
  EXPECT_EQ(csv_cell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv_cell("\tx"), "'\tx");
  EXPECT_EQ(csv_cell("\rx"), "\"'\rx\"");
  EXPECT_EQ(csv_cell("=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  EXPECT_EQ(csv_cell("-3.5"), "-3.5");
  EXPECT_EQ(csv_cell("+2"), "+2");
  EXPECT_EQ(csv_cell("-1e-3"), "-1e-3");
  EXPECT_EQ(csv_cell("-"), "'-");
  EXPECT_EQ(csv_cell("a,b"), "\"a,b\"");
}

// --- JSON string writer --------------------------------------------------------------------------

TEST(JsonString, InvalidUtf8BecomesReplacementCharacterAndParses) {
  using scaleprof::json_quote;
  EXPECT_EQ(json_quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(json_quote("\xC3\xBC"), "\"\xC3\xBC\"");
  EXPECT_EQ(json_quote("x\xff"), "\"x\xEF\xBF\xBD\"");
  EXPECT_EQ(json_quote("\xC0\xAF"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");                  // overlong '/'
  EXPECT_EQ(json_quote("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate
  EXPECT_EQ(json_quote("\xF4\x90\x80\x80").size(), 2 + 4 * 3u);                       // above U+10FFFF
  EXPECT_EQ(json_quote("cut \xE6\x97"), "\"cut \xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(json_quote("\xF0\x9F\x98\x80"), "\"\xF0\x9F\x98\x80\"");  // 4-byte emoji stays
  // Every byte string gives a document simdjson accepts.
  simdjson::dom::parser parser;
  for (int b = 0; b < 256; ++b) {
    for (int c = 0; c < 256; c += 15) {
      const std::string raw = {'[', static_cast<char>(b), static_cast<char>(c), static_cast<char>(0x80), ']'};
      const std::string doc = "[" + json_quote(raw) + "]";
      simdjson::dom::element e;
      EXPECT_FALSE(parser.parse(doc).get(e)) << b << " " << c;
    }
  }
}

}  // namespace
