// Issue 12: reading one file on several threads gives the same RankTrace, byte for byte, as the
// serial reader: every column, string id, track, warning and counter, on every shared trace and on
// windows small enough to cut everywhere.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "test_paths.h"
#include "trace/byte_stream.h"
#include "trace/kineto_reader.h"
#include "trace_expect_same.h"

namespace scaleprof::trace {
namespace {

namespace fs = std::filesystem;

void expect_same(const RankTrace& a, const RankTrace& b, const std::string& what) {
  expect_same_tables(a, b, what);
  SCOPED_TRACE(what);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(a.stats.json_bytes, b.stats.json_bytes);
}

std::vector<std::string> shared_traces() {
  std::vector<std::string> out;
  const fs::path root = fs::path(SCALEPROF_SHARED_DIR) / "traces" / "hta";
  if (!fs::exists(root)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string p = entry.path().string();
    if (entry.is_regular_file() && (p.ends_with(".json") || p.ends_with(".json.gz"))) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ParallelReader, SameAsSerialOnEverySharedTrace) {
  const std::vector<std::string> traces = shared_traces();
  if (traces.empty()) GTEST_SKIP() << "../shared/traces/hta not present";
  for (const std::string& path : traces) {
    ParseOptions serial;
    // Default windows (512 KiB) on 2 and 3 threads, and windows of 4 kB and 600 bytes that cut between
    // almost every pair of events. Tiny windows only on files under 1 MB: they prove the cutting on
    // every shape of trace without re-reading a 54 MB trace eight times (minutes under ASan in CI).
    const bool small = fs::file_size(path) < (1U << 20);
    for (auto [threads, window] : {std::pair{2U, size_t{0}}, {3U, size_t{0}}, {2U, size_t{4096}}, {4U, size_t{600}}}) {
      if (window != 0 && !small) continue;
      ParseOptions parallel;
      parallel.threads = threads;
      parallel.window_bytes = window;
      ParseOptions serial_same_window;
      serial_same_window.window_bytes = window;
      auto want = window == 0 ? read_kineto_trace(path, serial) : read_kineto_trace(path, serial_same_window);
      auto got = read_kineto_trace(path, parallel);
      const std::string what = path + " threads " + std::to_string(threads) + " window " + std::to_string(window);
      ASSERT_EQ(want.ok(), got.ok()) << what;
      if (!want.ok()) {
        EXPECT_EQ(want.error().message, got.error().message) << what;
        continue;
      }
      expect_same(want.value(), got.value(), what);
    }
  }
}

// A generated trace with every kind of row, long enough for many windows; and the same trace with a
// defect in the middle: the parallel reader gives the serial reader's error, offset included.
TEST(ParallelReader, SameAsSerialOnGeneratedTraceAndItsErrors) {
  std::string text = R"({"schemaVersion":1,"traceEvents":[)";
  text += "\n";
  auto out = std::back_inserter(text);
  for (int i = 0; i < 3000; ++i) {
    fmt::format_to(out,
                   R"(  {{"ph":"X","cat":"kernel","name":"k{}","pid":0,"tid":{},"ts":{}.5,"dur":3,"args":{{"stream":7,)"
                   R"("correlation":{},"grid":[1,2,3],"Collective name":"allreduce","dtype":"Float"}}}},)"
                   "\n",
                   i % 37, 7 + i % 3, i, i);
    fmt::format_to(out,
                   R"(  {{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":{},)"
                   R"("args":{{"Bytes":{},"Device Id":0}}}},)"
                   "\n",
                   i, i % 5 - 2);
    fmt::format_to(out,
                   R"(  {{"ph":"s","id":1,"pid":1,"tid":"thread {}","ts":1,"cat":"ac2g","name":"ac2g"}},)"
                   "\n",
                   i % 4);
    if (i % 500 == 7) {
      text += R"(  {"ph":"X","name":"bad","pid":1,"tid":1,"ts":1,"dur":-5},)"
              "\n";
    }
    fmt::format_to(out,
                   R"(  {{"ph":"X","cat":"cpu_op","name":"aten::op{}","pid":1,"tid":"t{}","ts":{},"dur":2,)"
                   R"("args":{{"Input Dims":[[1,2]]}}}},)"
                   "\n",
                   i % 11, i % 2, i);
  }
  text.resize(text.size() - 2);
  text += "\n],\"displayTimeUnit\":\"ms\"}";
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-parallel-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream((dir / name).string(), std::ios::binary) << bytes;
    return (dir / name).string();
  };
  const std::string good = write("good.json", text);
  std::string broken = text;
  broken.replace(broken.size() / 2, 0, "{]");
  const std::string bad = write("bad.json", broken);
  for (size_t window : {size_t{700}, size_t{5000}, size_t{60000}}) {
    ParseOptions serial;
    serial.window_bytes = window;
    ParseOptions parallel = serial;
    parallel.threads = 2;
    auto want = read_kineto_trace(good, serial);
    auto got = read_kineto_trace(good, parallel);
    ASSERT_TRUE(want.ok()) << want.error().message;
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(want.value().events.size(), 9'000U);  // the flow events are counted, not kept
    EXPECT_GT(want.value().warnings.size(), 0U);
    expect_same(want.value(), got.value(), "window " + std::to_string(window));
    auto want_bad = read_kineto_trace(bad, serial);
    auto got_bad = read_kineto_trace(bad, parallel);
    ASSERT_FALSE(want_bad.ok());
    ASSERT_FALSE(got_bad.ok());
    EXPECT_EQ(want_bad.error().message, got_bad.error().message);
  }
  fs::remove_all(dir);
}

// Window parts are reused with their strings (up to StreamingParser::kKeptPartStrings, 1 MiB) and the
// rank id of each: names met again in a later window, by the same part or another, and parts whose
// pools pass the limit and start again empty, must all give the serial reader's string ids.
TEST(ParallelReader, ReusedPartsKeepTheSerialStringIds) {
  std::string text = R"({"schemaVersion":1,"traceEvents":[)";
  auto out = std::back_inserter(text);
  const std::string pad(900, 'x');
  for (int i = 0; i < 12000; ++i) {
    // 6,000 distinct long names (5.4 MB), each met twice, 6,000 events apart.
    fmt::format_to(out,
                   R"({{"ph":"X","cat":"kernel","name":"n{}_{}","pid":0,"tid":{},"ts":{},"dur":3,)"
                   R"("args":{{"stream":7,"correlation":{}}}}},)",
                   i % 6000, pad, 7 + i % 3, i, i);
    fmt::format_to(out, R"({{"ph":"X","cat":"cpu_op","name":"aten::op{}","pid":1,"tid":"t{}","ts":{},"dur":2}},)",
                   i % 13, i % 2, i);
  }
  text.resize(text.size() - 1);
  text += "]}";
  const fs::path path = fs::temp_directory_path() / ("scaleprof-parts-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path.string(), std::ios::binary) << text;
  ParseOptions serial;
  serial.window_bytes = 256 << 10;
  auto want = read_kineto_trace(path.string(), serial);
  ASSERT_TRUE(want.ok()) << want.error().message;
  EXPECT_EQ(want.value().events.size(), 24'000U);
  EXPECT_EQ(want.value().strings.size(), 1U + 6000U + 13U + 2U + 2U);  // "", names, ops, labels, cats
  for (unsigned threads : {2U, 3U}) {
    ParseOptions parallel = serial;
    parallel.threads = threads;
    auto got = read_kineto_trace(path.string(), parallel);
    ASSERT_TRUE(got.ok()) << got.error().message;
    expect_same(want.value(), got.value(), fmt::format("{} threads", threads));
  }
  fs::remove(path);
}

// Issue 12: the two fuzzer findings kept as seeds (their first byte picks the fuzzer's window). With
// windows smaller than one event the serial reader counted and warned about an element that is not
// an object again at each window doubling (seed ...-duplicate-warning), and failed on one window size
// where the parallel reader succeeded (seed ...-error-vs-ok: a ']' just after the window in the file
// made On-Demand check bracket balance). Every window size must give the serial reader the result of
// one window holding the whole file, and the parallel reader that result too.
TEST(ParallelReader, FuzzerSeedsReadTheSameWithEveryWindow) {
  const fs::path corpus = fs::path(SCALEPROF_SOURCE_DIR) / "fuzz" / "corpus" / "trace_reader";
  for (const char* seed : {"parallel-vs-serial-duplicate-warning", "parallel-vs-serial-error-vs-ok"}) {
    std::ifstream file((corpus / seed).string(), std::ios::binary);
    ASSERT_TRUE(file) << seed;
    const std::string data((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    ASSERT_GT(data.size(), 1U);
    const std::string_view bytes = std::string_view(data).substr(1);
    auto serial_read = [&](size_t window) {
      ParseOptions options;
      options.window_bytes = window;
      auto in = memory_stream("seed", bytes);
      return parse_kineto_stream("seed", *in, options);
    };
    // The reference: one window holds the whole file. The first seed's first element is not JSON
    // (a ':'): the document fails there. The second's elements are a number and a string, each
    // skipped with a warning (what On-Demand skips after them is not validated).
    auto want = serial_read(1 << 16);
    if (std::string_view(seed).ends_with("duplicate-warning")) {
      ASSERT_FALSE(want.ok());
      EXPECT_EQ(want.error().message,
                "seed:2: invalid or truncated JSON (The JSON document has an improper structure: missing or "
                "superfluous commas, braces, missing keys, etc.)");
    } else {
      ASSERT_TRUE(want.ok()) << want.error().message;
      EXPECT_EQ(want.value().stats.events_total, 2U);
      EXPECT_EQ(want.value().stats.rejected_events, 2U);
      EXPECT_EQ(want.value().events.size(), 0U);
      EXPECT_EQ(texts(want.value().warnings),
                (std::vector<std::string>{"seed:2: event is not a JSON object; skipped",
                                          "seed:5: event is not a JSON object; skipped"}));
    }
    for (size_t window = 16; window <= 16 + 255 * 8; window += 8) {
      const std::string what = std::string(seed) + " window " + std::to_string(window);
      auto serial = serial_read(window);
      ParseOptions parallel;
      parallel.window_bytes = window;
      parallel.threads = 2;
      auto open = [&](std::string* /*error*/) { return memory_stream("seed", bytes); };
      auto par = parse_kineto_stream("seed", open, parallel);
      for (const auto* got : {&serial, &par}) {
        ASSERT_EQ(want.ok(), got->ok()) << what << ": " << (want.ok() ? got->error().message : want.error().message);
        if (!want.ok()) {
          EXPECT_EQ(want.error().message, got->error().message) << what;
        } else {
          expect_same(want.value(), got->value(), what);
        }
      }
    }
  }
}

}  // namespace
}  // namespace scaleprof::trace
