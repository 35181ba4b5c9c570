// Issue 18 (finding 20): the reader's memory and result do not depend on how the JSON is laid out.
// The same events are written in Kineto's layout (one event over several lines), one event per line,
// every value on its own line (Python's json.dump(indent=2)) and all on one line; the streaming
// reader alone (never the whole-document parser) must read each, serially with windows of every
// size and on several threads, into the same tables as one window holding the compact text.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "trace/byte_stream.h"
#include "trace/kineto_reader.h"
#include "trace/window_cut.h"
#include "trace_expect_same.h"

namespace scaleprof::trace {
namespace {

// A JSON value for writing one document in several layouts: a scalar is its JSON text.
struct Json {
  using Members = std::vector<std::pair<std::string, Json>>;
  using Items = std::vector<Json>;
  std::variant<std::string, Items, Members> v;
};
Json scalar(std::string text) {
  return Json{std::move(text)};
}
Json str(std::string_view text) {
  return scalar(fmt::format("\"{}\"", text));
}  // text already escaped
Json num(int64_t n) {
  return scalar(std::to_string(n));
}
Json list(Json::Items items) {
  return Json{std::move(items)};
}
Json object(Json::Members members) {
  return Json{std::move(members)};
}

// Compact, as json.dumps without indent: `{"a": 1, "b": [1, 2]}`.
void write_compact(const Json& j, std::string& out) {
  if (const auto* s = std::get_if<std::string>(&j.v)) {
    out += *s;
  } else if (const auto* items = std::get_if<Json::Items>(&j.v)) {
    out += '[';
    for (size_t i = 0; i < items->size(); ++i) {
      if (i > 0) out += ", ";
      write_compact((*items)[i], out);
    }
    out += ']';
  } else {
    const auto& members = std::get<Json::Members>(j.v);
    out += '{';
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out += ", ";
      out += fmt::format("\"{}\": ", members[i].first);
      write_compact(members[i].second, out);
    }
    out += '}';
  }
}

// As json.dump(indent=2): every value of a non-empty list or object on a line of its own.
void write_indented(const Json& j, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  if (const auto* s = std::get_if<std::string>(&j.v)) {
    out += *s;
  } else if (const auto* items = std::get_if<Json::Items>(&j.v)) {
    if (items->empty()) {
      out += "[]";
      return;
    }
    out += "[\n";
    for (size_t i = 0; i < items->size(); ++i) {
      out += pad;
      write_indented((*items)[i], indent + 2, out);
      out += i + 1 < items->size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<size_t>(indent), ' ') + "]";
  } else {
    const auto& members = std::get<Json::Members>(j.v);
    if (members.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    for (size_t i = 0; i < members.size(); ++i) {
      out += pad + fmt::format("\"{}\": ", members[i].first);
      write_indented(members[i].second, indent + 2, out);
      out += i + 1 < members.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<size_t>(indent), ' ') + "}";
  }
}

// Kineto's writer: an event's fields on one line, its args one member a line.
void write_kineto_event(const Json& event, std::string& out) {
  const auto& members = std::get<Json::Members>(event.v);
  out += "  {\n    ";
  bool first = true;
  for (const auto& [key, value] : members) {
    if (key == "args") continue;
    if (!first) out += ", ";
    first = false;
    out += fmt::format("\"{}\": ", key);
    write_compact(value, out);
  }
  for (const auto& [key, value] : members) {
    if (key != "args") continue;
    out += ",\n    \"args\": {\n";
    const auto& args = std::get<Json::Members>(value.v);
    for (size_t i = 0; i < args.size(); ++i) {
      out += fmt::format("      \"{}\": ", args[i].first);
      write_compact(args[i].second, out);
      out += i + 1 < args.size() ? ",\n" : "\n";
    }
    out += "    }";
  }
  out += "\n  }";
}

enum class Layout { kKineto, kOnePerLine, kIndent2, kOneLine };

// Events of every shape the reader keeps or skips, with lists and objects nested in args (lists of
// lists, lists of objects), strings holding brackets, commas, quotes and backslashes, and an envelope
// with lists of objects before and after traceEvents.
std::string trace_text(Layout layout, int repeats) {
  Json::Items events;
  for (int i = 0; i < repeats; ++i) {
    events.push_back(
        object({{"ph", str("X")},
                {"cat", str("cpu_op")},
                {"name", str(i % 3 == 0 ? R"(aten::cat \"},{\" [x], y\\)" : "aten::linear")},
                {"pid", num(1)},
                {"tid", num(2 + i % 2)},
                {"ts", scalar(fmt::format("{}.125", 1000 + 10 * i))},
                {"dur", num(7)},
                {"args", object({{"External id", num(i)},
                                 {"Input Dims", list({list({num(512), num(i)}), list({}), list({num(3)})})},
                                 {"Input type", list({str("float"), str("Scalar"), str("")})},
                                 {"Call stack", str("a.py(1): f;b.py(2): g],[{")}})}}));
    events.push_back(object(
        {{"ph", str("X")},
         {"cat", str("kernel")},
         {"name", str(fmt::format("gemm_{}", i % 5))},
         {"pid", num(0)},
         {"tid", num(7)},
         {"ts", num(1002 + 10 * i)},
         {"dur", num(3)},
         {"args", object({{"External id", num(i)},
                          {"correlation", num(100 + i)},
                          {"stream", num(7)},
                          {"grid", list({num(1), num(2), num(3)})},
                          {"block", list({num(128), num(1), num(1)})},
                          {"occupancy",
                           object({{"limits", list({object({{"regs", num(1)}}), object({{"smem", num(2)}})})}})}})}}));
    events.push_back(
        object({{"ph", str("M")},
                {"name", str("thread_name")},
                {"pid", num(1)},
                {"tid", num(2)},
                {"args", object({{"labels", list({object({{"a", num(1)}}), object({{"b", list({})}})})}})}}));
    events.push_back(object({{"ph", str("s")},
                             {"id", num(i)},
                             {"pid", num(1)},
                             {"tid", num(2)},
                             {"ts", num(1001 + 10 * i)},
                             {"cat", str("ac2g")},
                             {"name", str("ac2g")}}));
    events.push_back(object({{"ph", str("i")},
                             {"cat", str("cpu_instant_event")},
                             {"s", str("t")},
                             {"name", str("[memory]")},
                             {"pid", num(1)},
                             {"tid", num(2)},
                             {"ts", num(1003 + 10 * i)},
                             {"args", object({{"Bytes", num(i % 7 - 3)}, {"Device Id", num(0)}})}}));
    events.push_back(object({{"ph", str("X")},
                             {"cat", str("cpu_op")},
                             {"name", str("record_param_comms")},
                             {"pid", num(1)},
                             {"tid", num(2)},
                             {"ts", num(1004 + 10 * i)},
                             {"dur", num(2)},
                             {"args", object({{"Collective name", str("allreduce")},
                                              {"dtype", str("Float")},
                                              {"In msg nelems", num(64)},
                                              {"Process Group Ranks", list({num(0), num(1)})},
                                              {"In split size", list({})}})}}));
  }
  const Json devices = list({object({{"id", num(0)}, {"name", str(R"(GPU, \"A\")")}, {"numSms", num(80)}})});
  const Json distributed =
      object({{"backend", str("nccl")},
              {"rank", num(3)},
              {"pg_config", list({object({{"pg_name", str("0")}, {"ranks", list({num(0), num(1)})}}),
                                  object({{"pg_name", str("1")}, {"ranks", list({num(3)})}})})}});
  const Json::Members before = {{"schemaVersion", num(1)}, {"deviceProperties", devices}};
  const Json::Members after = {{"distributedInfo", distributed}, {"traceName", str("t.json")}};
  if (layout == Layout::kIndent2 || layout == Layout::kOneLine) {
    Json::Members all = before;
    all.emplace_back("traceEvents", list(std::move(events)));
    all.insert(all.end(), after.begin(), after.end());
    std::string out;
    if (layout == Layout::kIndent2) {
      write_indented(object(std::move(all)), 0, out);
    } else {
      write_compact(object(std::move(all)), out);
    }
    return out;
  }
  std::string out = "{\n";
  for (const auto& [key, value] : before) {
    out += fmt::format("  \"{}\": ", key);
    write_compact(value, out);
    out += ",\n";
  }
  out += "  \"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    if (layout == Layout::kKineto) {
      write_kineto_event(events[i], out);
    } else {
      write_compact(events[i], out);
    }
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  out += "  ]";
  for (const auto& [key, value] : after) {
    out += fmt::format(",\n  \"{}\": ", key);
    write_compact(value, out);
  }
  return out + "\n}\n";
}

// `*largest_read`, when given: the most bytes read from the input for one window.
Result<RankTrace> read_serial(std::string_view text, size_t window, uint64_t* largest_read = nullptr) {
  ParseOptions options;
  options.window_bytes = window;
  uint64_t last = 0;
  options.on_bytes_read = [&](uint64_t bytes) {
    if (largest_read != nullptr) *largest_read = std::max(*largest_read, bytes - last);
    last = bytes;
  };
  auto in = memory_stream("t.json", text);
  return parse_kineto_stream("t.json", *in, options);
}

// The layouts are what they claim: the tests below would prove nothing on four copies of one text.
TEST(TraceLayout, TheFourLayoutsDiffer) {
  const std::string kineto = trace_text(Layout::kKineto, 1);
  const std::string one_line = trace_text(Layout::kOneLine, 1);
  const std::string indent2 = trace_text(Layout::kIndent2, 1);
  EXPECT_NE(kineto.find("  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\""), std::string::npos) << kineto;
  EXPECT_NE(trace_text(Layout::kOnePerLine, 1).find("\n{\"ph\": \"X\", \"cat\": \"kernel\""), std::string::npos);
  EXPECT_NE(indent2.find("\"Input Dims\": [\n          [\n            512,\n"), std::string::npos) << indent2;
  EXPECT_EQ(one_line.find('\n'), std::string::npos);
}

// The text of a list kept as written (Input Dims, Process Group Ranks: read_raw keeps the JSON's
// own white space) without that white space.
std::string without_spaces(std::string_view raw) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (in_string && c == '\\' && i + 1 < raw.size()) {
      out += c;
      out += raw[++i];
      continue;
    }
    if (c == '"') in_string = !in_string;
    if (in_string || (c != ' ' && c != '\n')) out += c;
  }
  return out;
}

// Two layouts of one trace: the same rows and values; strings compared as text (their ids follow the
// order strings are first met, and a list kept as raw text is met with its layout's white space).
void expect_same_events(const RankTrace& a, const RankTrace& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.events.size(), b.events.size());
  EXPECT_EQ(a.events.ts, b.events.ts);
  EXPECT_EQ(a.events.dur.to_vector(), b.events.dur.to_vector());
  EXPECT_EQ(a.events.cat, b.events.cat);
  EXPECT_EQ(a.events.phase, b.events.phase);
  EXPECT_EQ(a.events.track, b.events.track);
  EXPECT_EQ(a.events.correlation.to_vector(), b.events.correlation.to_vector());
  EXPECT_EQ(a.events.external_id.to_vector(), b.events.external_id.to_vector());
  EXPECT_EQ(a.events.file_index, b.events.file_index);
  for (size_t i = 0; i < a.events.size(); ++i) {
    ASSERT_EQ(a.strings.view(a.events.name[i]), b.strings.view(b.events.name[i])) << i;
  }
  EXPECT_EQ(a.device_args.event, b.device_args.event);
  EXPECT_EQ(a.device_args.grid_z, b.device_args.grid_z);
  EXPECT_EQ(a.device_args.block_x, b.device_args.block_x);
  EXPECT_EQ(a.memory.event, b.memory.event);
  EXPECT_EQ(a.memory.bytes, b.memory.bytes);
  EXPECT_EQ(a.collectives.event, b.collectives.event);
  ASSERT_EQ(a.shapes.event, b.shapes.event);
  for (size_t i = 0; i < a.shapes.event.size(); ++i) {
    ASSERT_EQ(without_spaces(a.strings.view(a.shapes.input_dims[i])),
              without_spaces(b.strings.view(b.shapes.input_dims[i])))
        << i;
  }
  for (size_t i = 0; i < a.collectives.event.size(); ++i) {
    ASSERT_EQ(without_spaces(a.strings.view(a.collectives.process_group_ranks[i])),
              without_spaces(b.strings.view(b.collectives.process_group_ranks[i])))
        << i;
  }
  EXPECT_EQ(a.stats.events_total, b.stats.events_total);
  EXPECT_EQ(a.stats.flow_events, b.stats.flow_events);
  EXPECT_EQ(a.stats.metadata_events, b.stats.metadata_events);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.metadata.devices.size(), b.metadata.devices.size());
}

// Every layout, read by the streaming reader alone with windows from a few events to the default,
// serially and on 2 and 3 threads, gives the tables of one window holding it, and the events of the
// compact layout; it never needs the whole document. Before issue 18 a window cut at a line break
// inside a list spread over lines ended with a ']' that closed the list, was taken for the end of
// traceEvents and failed ("expected a key"), and a file without line breaks could not be cut at all;
// read_kineto_trace then parsed both whole (1.96x the JSON in memory).
TEST(TraceLayout, EveryLayoutStreamsIntoTheSameTables) {
  const int repeats = 300;
  const std::string compact_text = trace_text(Layout::kOnePerLine, repeats);
  auto compact = read_serial(compact_text, compact_text.size() + 64);
  ASSERT_TRUE(compact.ok()) << compact.error().message;
  ASSERT_EQ(compact.value().events.size(), 4U * repeats);  // X, X, memory, X per repeat
  EXPECT_EQ(compact.value().rank, 3);
  EXPECT_EQ(compact.value().stats.rejected_events, 0U);
  EXPECT_EQ(compact.value().stats.flow_events, static_cast<uint64_t>(repeats));
  EXPECT_EQ(compact.value().stats.metadata_events, static_cast<uint64_t>(repeats));
  EXPECT_EQ(compact.value().name(0), R"(aten::cat "},{" [x], y\)");
  EXPECT_EQ(compact.value().strings.view(compact.value().shapes.input_dims[1]), "[[512, 1], [], [3]]");
  EXPECT_TRUE(compact.value().warnings.empty());
  for (Layout layout : {Layout::kKineto, Layout::kOnePerLine, Layout::kOneLine, Layout::kIndent2}) {
    const std::string text = trace_text(layout, repeats);
    auto whole = read_serial(text, text.size() + 64);
    ASSERT_TRUE(whole.ok()) << static_cast<int>(layout) << ": " << whole.error().message;
    expect_same_events(compact.value(), whole.value(), fmt::format("layout {}", static_cast<int>(layout)));
    for (size_t window : {size_t{300}, size_t{1000}, size_t{4096}, size_t{65536}, size_t{0}}) {
      const std::string what = fmt::format("layout {} window {}", static_cast<int>(layout), window);
      uint64_t largest_read = 0;
      auto serial = read_serial(text, window, &largest_read);
      ASSERT_TRUE(serial.ok()) << what << ": " << serial.error().message;
      expect_same_tables(whole.value(), serial.value(), what);
      EXPECT_TRUE(serial.value().warnings.empty()) << what;
      // Windows stay at their size (every event here is under 1000 bytes in every layout; the first
      // read holds the envelope too): a file on one line was one window as large as the file.
      if (window >= 1000) {
        EXPECT_LE(largest_read, 2 * window) << what;
      }
      for (unsigned threads : {2U, 3U}) {
        ParseOptions options;
        options.window_bytes = window;
        options.threads = threads;
        int opened = 0;
        auto open = [&](std::string* /*error*/) {
          ++opened;
          return memory_stream("t.json", text);
        };
        auto parallel = parse_kineto_stream("t.json", open, options);
        ASSERT_TRUE(parallel.ok()) << what << " threads " << threads << ": " << parallel.error().message;
        expect_same_tables(whole.value(), parallel.value(), what + " threads " + std::to_string(threads));
        // The parallel phase never gave up and read the file again serially (lists of objects
        // inside events and after traceEvents are no boundary between two events).
        EXPECT_EQ(opened, 1) << what << " threads " << threads;
      }
    }
  }
}

// The cutter follows strings as simdjson does (an escaped quote does not end one, an escaped
// backslash does not escape the quote after it) and stops at the array's closing bracket.
TEST(TraceLayout, WindowCutFollowsStringsAndDepth) {
  // Elements: an object, a string holding brackets, commas and escapes, a list, a number.
  const std::string text = R"({"a": [1, {"b": "},{"}]}, "x\"],\\", [[1], 2], 7, {"c": 1)";
  const WindowCut cut = find_window_cut(text);
  EXPECT_FALSE(cut.array_closed);
  EXPECT_EQ(text.substr(0, cut.element_end), R"({"a": [1, {"b": "},{"}]}, "x\"],\\", [[1], 2], 7)");
  const std::string closed = R"({"a": 1}, 2], "k": {"d": 1, "e": 2})";
  const WindowCut end = find_window_cut(closed);
  EXPECT_TRUE(end.array_closed);
  EXPECT_EQ(end.array_close, closed.find(']'));
  EXPECT_EQ(end.element_end, closed.find(','));  // not the ',' inside "k" after the array's end
  // One element, not whole yet: no cut.
  EXPECT_EQ(find_window_cut(R"({"a": [1, 2, {"b": ",)").element_end, 0U);
  // Longer than one 64-byte block, the string running across blocks.
  const std::string long_string = "\"" + std::string(100, ',') + "\\\"" + std::string(70, '}') + "\", 1";
  EXPECT_EQ(find_window_cut(long_string).element_end, long_string.size() - 3);
}

}  // namespace
}  // namespace scaleprof::trace
