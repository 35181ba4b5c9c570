// Issue 7, the trace reader's part: hostile or unlucky input gives right numbers or a clear error.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <thread>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <variant>

#include "kineto_test_text.h"
#include "report/trace_report.h"
#include "scratch_dir.h"
#include "test_paths.h"
#include "trace/kineto_reader.h"
#include "trace/trace_set.h"
#include "trace_report_util.h"

namespace scaleprof::trace {
namespace {

namespace fs = std::filesystem;

using ::scaleprof::testing::gzip_text;

using TempDir = ::scaleprof::testing::ScratchDir;

std::string text_of(const report::Cell& c) {
  return std::holds_alternative<std::string>(c.value) ? std::get<std::string>(c.value) : std::string();
}

// Item 1: the first name interned is a kernel name longer than 16 KiB. Before the fix the short
// names after it were appended to the long name's own buffer, which reallocated and left the long
// name's view dangling: a crash at 200 kB, wrong names and freed heap bytes printed at 20 kB.
TEST(TraceHardening, KernelNameLongerThan16KiBFirstKeepsEveryName) {
  for (size_t long_size : {20'000UL, 200'000UL}) {
    const std::string long_name = "void huge_kernel<" + std::string(long_size, 'T') + ">()";
    const std::string text = R"({"traceEvents":[
{"ph":"X","cat":"kernel","name":")" +
                             long_name +
                             R"J(","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7,"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":8,"dur":1,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING","pid":0,"tid":8,"ts":12,"dur":6,"args":{"stream":8,"correlation":2}},
{"ph":"X","cat":"kernel","name":"Memset (Device)","pid":0,"tid":7,"ts":30,"dur":2,"args":{"stream":7,"correlation":3}}
]})J";
    TempDir dir;
    const std::string gz = gzip_text(text, 9);
    ASSERT_LT(gz.size(), 1200U);  // a tiny file, as in the report
    auto trace = read_kineto_trace(dir.write("long.json.gz", gz));
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    ASSERT_EQ(trace.value().events.size(), 4U);
    EXPECT_EQ(trace.value().name(0), long_name);
    EXPECT_EQ(trace.value().name(1), "cudaLaunchKernel");
    EXPECT_EQ(trace.value().name(2), "ncclKernel_AllReduce_RING");

    report::TraceReport kernels = testing::streamed_report("kernels", {trace.value().path});
    const report::Table* table = nullptr;
    for (size_t i = 0; i < kernels.keys.size(); ++i) {
      if (kernels.keys[i] == "kernels") table = &kernels.tables[i];
    }
    ASSERT_NE(table, nullptr);
    std::map<std::string, std::string> type_of;  // kernel name -> type
    for (const auto& row : table->all_rows()) type_of[text_of(row.back())] = text_of(row[1]);
    ASSERT_EQ(type_of.size(), 3U);
    EXPECT_EQ(type_of[long_name], "COMPUTATION");
    EXPECT_EQ(type_of["ncclKernel_AllReduce_RING"], "COMMUNICATION");
  }
}

// Item 6: a symlink loop named like a trace inside a directory given to `scaleprof trace` is reported
// on one line; the good file is analysed and the exit code says the results are partial (3).
TEST(TraceHardening, SymlinkLoopInADirectoryIsOneErrorNotAnAbort) {
  TempDir dir;
  dir.write("rank0.json", R"({"traceEvents":[
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7}}
]})");
  fs::create_symlink(dir.path() + "/loop.json", dir.path() + "/loop.json");
  const std::string err_file = dir.path() + "/stderr.txt";
  const std::string command =
      std::string(SCALEPROF_CLI_PATH) + " trace kernels --format csv " + dir.path() + " 2>" + err_file;
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  const int status = pclose(p);
  std::stringstream err;
  err << std::ifstream(err_file).rdbuf();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << err.str();
  EXPECT_NE(out.find("gemm"), std::string::npos) << out;
  const std::string e = err.str();
  const size_t at = e.find("loop.json");
  ASSERT_NE(at, std::string::npos) << e;
  const std::string line = e.substr(e.rfind('\n', at) + 1, e.find('\n', at) - e.rfind('\n', at) - 1);
  EXPECT_NE(line.find("symbolic links"), std::string::npos) << line;
}

const char* const kSmallTrace = R"({"schemaVersion":1,"traceEvents":[
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":8,"dur":1}
],"displayTimeUnit":"ms"})";

// Item 10: a UTF-8 byte order mark at the start is accepted (HTA accepts it), on both paths.
TEST(TraceHardening, ByteOrderMarkIsAccepted) {
  TempDir dir;
  const std::string with_bom = std::string("\xEF\xBB\xBF") + kSmallTrace;
  for (const std::string& bytes : {with_bom, gzip_text(with_bom, 9)}) {
    auto r = read_kineto_trace(dir.write("bom.json", bytes));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value().events.size(), 2U);
    EXPECT_EQ(r.value().metadata.display_time_unit, "ms");
  }
  // The whole-document parser (files without line breaks) too.
  simdjson::padded_string text(with_bom);
  auto whole = parse_kineto_trace("bom.json", text);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole.value().events.size(), 2U);
}

// Item 10: bytes after the last gzip member are reported, not silently ignored.
TEST(TraceHardening, GarbageAfterTheLastGzipMemberIsReported) {
  TempDir dir;
  const std::string gz = gzip_text(kSmallTrace, 9);
  auto r = read_kineto_trace(dir.write("tail.json.gz", gz + "JUNK-AFTER-THE-END"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().events.size(), 2U);
  bool reported = false;
  for (const std::string& w : texts(r.value().warnings)) {
    if (w.find("18 bytes after the end of the gzip data (from compressed byte " + std::to_string(gz.size())) !=
        std::string::npos) {
      reported = true;
    }
  }
  EXPECT_TRUE(reported);
  // Two members concatenated are still one stream, with nothing to report.
  const std::string half = R"({"traceEvents":[
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7}}
)";
  auto two = read_kineto_trace(dir.write("two.json.gz", gzip_text(half, 9) + gzip_text("]}", 9)));
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two.value().events.size(), 1U);
  EXPECT_TRUE(two.value().warnings.empty());
}

// Item 10: an error in the keys after traceEvents names its offset in the file, not in a
// re-assembled buffer.
TEST(TraceHardening, ErrorOffsetsAfterTraceEventsAreFileOffsets) {
  TempDir dir;
  const std::string head = R"({"schemaVersion":1,"traceEvents":[
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7}}
],"extra":)";
  const std::string text = head + "{\"a\": \"\xFF\"}}";  // invalid UTF-8 in the value
  auto r = read_kineto_trace(dir.write("tail.json", text));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  // The bad value starts at byte head.size() of the file; the offset must point into it, not into
  // a buffer holding only the keys around the events (which would be smaller).
  const std::string prefix = dir.path() + "/tail.json:";
  ASSERT_EQ(m.rfind(prefix, 0), 0U) << m;
  const size_t offset = std::stoul(m.substr(prefix.size()));
  EXPECT_GE(offset, head.size()) << m;
  EXPECT_LE(offset, text.size()) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

// Item 10: a trace given as a pipe (as `<(gzip -dc x)` gives) is repaired by the lenient retry
// without opening the path a second time (which would read an empty pipe).
TEST(TraceHardening, PipeIsRepairedWithoutReopening) {
  const std::string bad = R"json({"traceEvents":[
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH","pid":0,"tid":7,"ts":1,"dur":0,"args":{"stream":7,"memory bandwidth (GB/s)": N/A}},
{"ph":"X","cat":"cpu_op","name":"say "hi" op","pid":1,"tid":1,"ts":2,"dur":3}
]})json";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    size_t off = 0;
    while (off < bad.size()) {
      ssize_t n = ::write(fds[1], bad.data() + off, bad.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(fds[1]);
  });
  auto r = read_kineto_trace("/dev/fd/" + std::to_string(fds[0]));
  writer.join();
  ::close(fds[0]);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().stats.repairs, 3U);
  ASSERT_EQ(r.value().events.size(), 2U);
  EXPECT_EQ(r.value().name(1), "say \"hi\" op");
}

// Item 5: a value outside traceEvents too large to keep is skipped with a warning naming it, and
// what comes after it is still read; small values around it are kept.
TEST(TraceHardening, HugeValueOutsideTraceEventsIsSkippedNotKept) {
  TempDir dir;
  const std::string huge(17 << 20, 'x');
  const std::string text = R"({"schemaVersion":1,"blob":")" + huge + R"(","traceEvents":[
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7}}
],"after":{"padding":")" + huge +
                           R"("},"displayTimeUnit":"ns","small":[1,2]})";
  auto r = read_kineto_trace(dir.write("huge.json.gz", gzip_text(text, 9)));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().events.size(), 1U);
  EXPECT_EQ(r.value().metadata.display_time_unit, "ns");
  ASSERT_EQ(r.value().metadata.other.size(), 1U);
  EXPECT_EQ(r.value().metadata.other[0].first, "small");
  EXPECT_EQ(r.value().metadata.other[0].second, "[1,2]");
  int skipped = 0;
  for (const std::string& w : texts(r.value().warnings)) {
    if (w.find("larger than 16 MiB; skipped") != std::string::npos) ++skipped;
  }
  EXPECT_EQ(skipped, 2);
  // The whole-document parser and the streaming reader agree on the events.
  ASSERT_EQ(r.value().events.ts.size(), 1U);
  EXPECT_EQ(r.value().events.ts[0], 10'000);
}

// Item 5: a truncated trace fails with its error from the streaming reader, which keeps memory
// bounded; it is not parsed a second time as a whole document (held in memory entirely).
TEST(TraceHardening, TruncatedTraceReportsWhereTheDataEnds) {
  TempDir dir;
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < 2000; ++i) {
    text += R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":)" + std::to_string(10 * i) +
            R"(,"dur":5,"args":{"stream":7}},)" + "\n";
  }
  const std::string cut = text.substr(0, text.size() - 20);
  auto r = read_kineto_trace(dir.write("cut.json", cut));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("cut.json:"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace scaleprof::trace

namespace scaleprof::trace {
namespace {

// Item 7, across ranks: each trace's times are within the reader's bounds, but two ranks whose
// device spans are each about 237 years sum past int64 ns. The pooled row is left out (and the title
// says why) instead of showing a wrapped, negative kernel time.
TEST(TraceHardening, PooledBreakdownNeverWraps) {
  TempDir dir;
  std::vector<std::string> files;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string text = R"({"distributedInfo":{"rank":)" + std::to_string(rank) + R"(},"traceEvents":[
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":-570000000000000,"dur":1,"args":{"stream":7}},
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":6900000000000000,"dur":1,"args":{"stream":7}}
]})";
    auto trace = read_kineto_trace(dir.write("r" + std::to_string(rank) + ".json", text));
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    ASSERT_EQ(trace.value().events.size(), 2U);
    files.push_back(trace.value().path);
  }
  report::TraceReportOptions rank0;
  rank0.ranks = {0};
  const report::TraceReport one = testing::streamed_report("breakdown", files, rank0);
  const auto one_rows = one.tables.at(0).all_rows();
  ASSERT_EQ(one_rows.size(), 1U);
  EXPECT_EQ(std::get<double>(one_rows[0].at(1).value), static_cast<double>(INT64_C(7470000000000001000)) / 1e3);

  const report::TraceReport both = testing::streamed_report("breakdown", files);
  const report::Table& table = both.tables.at(0);
  EXPECT_EQ(table.all_rows().size(), 2U);  // the two ranks, no pooled row
  EXPECT_NE(table.title.find("no pooled row"), std::string::npos) << table.title;
}

}  // namespace
}  // namespace scaleprof::trace
